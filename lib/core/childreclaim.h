/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim through the children the caller owns, for a group whose own
 * reclaim control the kernel refused: the middle step of the order in
 * which a group degrades (its reclaim control, else its children the
 * caller owns, else statistics and events only). In a delegated cgroup2
 * subtree the delegatee may not write the delegated group's memory.reclaim
 * or memory.high (they belong to the delegator), but owns the children it
 * creates, whose controls it may write
 * (Documentation/admin-guide/cgroup-v2.rst, "Delegation Containment").
 */
#ifndef MR_CHILDRECLAIM_H
#define MR_CHILDRECLAIM_H

#include <stdbool.h>

struct mr_group;

/* One child of a group, opened through the group's backend. */
struct mri_child {
	char *path;
	void *priv;
	bool refused;   /* its reclaim was refused too */
};

/* A group's children, found once, on the first refusal (under the
 * group's reclaim_lock). */
struct mri_children {
	bool scanned;
	size_t n, next;
	struct mri_child *v;
};

/* The backend handle the next batch goes through when the group's own
 * reclaim was refused: a child the group's backend lists (its
 * list_children op: a child directory owned by the caller's effective
 * uid) and opens, taken in turn; NULL when there is none (left: advisory
 * mode). Lists and opens them on the first call. Under reclaim_lock. */
void *mri_children_next(struct mr_group *g);

/* The child whose handle is priv answered r: a refusal takes it out. */
void mri_children_learn(struct mr_group *g, void *priv, int r);

/* In a child process after fork(): closes their fds (backend forget). */
void mri_children_forget(struct mr_group *g);

/* At the group's close: closes (in a child after fork(), forgets) and
 * frees them. */
void mri_children_close(struct mr_group *g, bool forget);

#endif /* MR_CHILDRECLAIM_H */
