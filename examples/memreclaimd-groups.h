/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The groups memreclaimd keeps, in one context (one worker), and how it
 * finds them: each [group PATTERN] section of the configuration is walked
 * from `/` (memreclaimd-pattern.h), and every directory of a cgroup file
 * system that a pattern can descend into is watched with inotify
 * (IN_CREATE, IN_DELETE, IN_MOVED_*: a cgroup's mkdir and rmdir show in
 * its parent on v1 and v2), so a group created later is opened, and a
 * group removed is dropped, within the main loop's next wake-up, with no
 * poll of the tree. A path that several sections match takes the first
 * section's policy.
 *
 * Reloading (mrd_groups_apply()) walks again with the new configuration:
 * a group matched by a section with the same pattern and keys as before
 * is left as it is (its margin, its adaptive state, its counters); one
 * whose section changed gets the new policy on its open handle, all or
 * nothing (policyopt_apply(): a setting refused puts back those made
 * before it, and the group keeps its former policy, logged with the
 * cause); one no longer matched is closed.
 *
 * A container runtime's hook names a group in a drop-in file instead
 * (memreclaimd-runtime.h), with a [group NAME] section of runtime = yes
 * as its policy: mrd_groups_take() opens it, mrd_groups_release() closes
 * it. The walk leaves such a group to its drop-in, and a drop-in cannot
 * take a group the walk keeps.
 *
 * The table is sorted by path and guarded by `lock`, which the main
 * thread holds while it changes the table, and a reader on another
 * thread (the metrics endpoint) while it walks it.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_GROUPS_H
#define MR_EXAMPLES_MEMRECLAIMD_GROUPS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <memreclaim.h>

#include "memreclaimd-config.h"

struct mrd_group {
	char *path;
	mr_group_t *g;           /* NULL: matched, but refused (logged) */
	char *key;               /* pattern and keys it was configured from */
	struct policy_bytes applied; /* the policy they came to, in force
					(a reconfigure starts from it) */
	uint64_t start_ns;       /* CLOCK_MONOTONIC, when opened */
	uint64_t limit_hits_base; /* its limit hits then */
	bool seen;               /* found by the walk in progress */
	char *container;         /* a runtime's drop-in's container id:
				    taken by mrd_groups_take(), never by
				    the walk; NULL: the walk's */
};

struct mrd_groups;

/* Called after a group was opened and configured, and before one is
 * closed (why: "removed" when the cgroup is gone and nothing is left to
 * read; else "no longer matched ...", "stopping", or a drop-in's
 * reason). */
struct mrd_groups_hooks {
	void (*opened)(struct mrd_groups *gs, struct mrd_group *grp);
	void (*closing)(struct mrd_groups *gs, struct mrd_group *grp,
			const char *why);
};

struct mrd_watch {
	int wd;
	char *path;
};

struct mrd_groups {
	mr_ctx_t *ctx;
	const struct mrd_config *cfg;  /* NULL: one group, no discovery */
	struct mrd_groups_hooks hooks;
	void *userdata;
	pthread_mutex_t lock;
	struct mrd_group **v;          /* sorted by path */
	size_t n, cap;
	int ifd;                       /* inotify; -1 without discovery */
	struct mrd_watch *w;           /* sorted by wd */
	size_t nw, capw;
};

/* Sets gs up for ctx; no group, no inotify yet. */
void mrd_groups_init(struct mrd_groups *gs, mr_ctx_t *ctx,
		     const struct mrd_groups_hooks *hooks, void *userdata);

/* Applies cfg (kept by pointer until the next call or
 * mrd_groups_free()): a new inotify instance, a walk of every section,
 * groups opened, reconfigured and closed as the header says. Returns 0,
 * or a negative errno when inotify cannot be had (nothing changed then). */
int mrd_groups_apply(struct mrd_groups *gs, const struct mrd_config *cfg);

/* Adds the group g, opened and configured by the caller, as path (the
 * single-group mode of the command line). Returns 0 or -ENOMEM. */
int mrd_groups_adopt(struct mrd_groups *gs, mr_group_t *g, const char *path);

/* Takes the group at path for the container id (a drop-in's), with the
 * policy of section s (runtime = yes): opened and configured as a walked
 * group is. A group already taken for id with the same path and policy
 * is left as it is; with another path it is released first; with another
 * policy it is reconfigured. Returns 0, -EEXIST (the walk, or another
 * container's drop-in, keeps path), -ENOMEM, or mr_group_open()'s or the
 * policy's negative errno (each logged; the table is as it was). */
int mrd_groups_take(struct mrd_groups *gs, const char *id, const char *path,
		    const struct mrd_section *s);

/* Releases the group taken for the container id (its limit restored, as
 * every group closed); none is no error. why: for the log and the final
 * record's hook. */
void mrd_groups_release(struct mrd_groups *gs, const char *id,
			const char *why);

/* Releases the groups taken for containers whose cgroup is gone (the
 * runtime removed it, and no poststop hook removed the drop-in: the
 * runtime was killed, or the hook failed), each logged. The drop-in
 * stays: the runtime directory is the hooks'. Call it now and then
 * (memreclaimd: every second while it follows a runtime directory). */
void mrd_groups_release_gone(struct mrd_groups *gs);

/* The container ids of the groups taken, into a new array of n strings
 * (the table's own, valid until it changes); NULL with n 0 when none.
 * Returns 0 or -ENOMEM. */
int mrd_groups_containers(const struct mrd_groups *gs, const char ***ids,
			  size_t *n);

/* The inotify fd to poll (POLLIN), or -1. */
int mrd_groups_fd(const struct mrd_groups *gs);

/* Reads the pending inotify events and acts on them. Returns 0 or a
 * negative errno from read(2). */
int mrd_groups_dispatch(struct mrd_groups *gs);

/* Closes every group (hooks->closing with "stopping") and the inotify
 * fd. Returns 0, or the first negative errno of mr_group_close(). */
int mrd_groups_free(struct mrd_groups *gs);

uint64_t mrd_now_ns(void);

#endif /* MR_EXAMPLES_MEMRECLAIMD_GROUPS_H */
