/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shrink request (mr_group_shrink_fd()): before the library reclaims
 * a group's page cache, it asks the program to give memory back first (an
 * allocator's purge, a cache's trim) through an eventfd the program polls,
 * and the worker waits a grace for the answer (mr_group_shrink_done()).
 * The program's own memory is what it knows it will not miss; the page
 * cache is what the kernel thinks is cold.
 */
#ifndef MR_SHRINK_H
#define MR_SHRINK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct mr_group;

struct mri_shrink {
	/* The program's eventfd (its counter: the bytes asked since its
	 * last read) and the answer's (mr_group_shrink_done()); -1: none.
	 * Set once under the group's reclaim_lock, read without it. */
	_Atomic int fd;
	_Atomic int ackfd;
	_Atomic uint64_t grace_ns;
	/* The last request was not answered within its grace: the next
	 * ones are not waited for until an answer comes. Under
	 * reclaim_lock. */
	bool unanswered;
	_Atomic uint64_t requests, requested_bytes, answered, timeouts,
			 avoided;
};

void mri_shrink_init(struct mri_shrink *s);

/* Closes the fds (parent side: the group's close). */
void mri_shrink_close(struct mri_shrink *s);

/* In a child after fork(): its handler closed the fds; forget their
 * numbers. */
void mri_shrink_forget(struct mri_shrink *s);

/* Asks the program for `bytes` (adds them to its eventfd's counter), if
 * it opened the request. No lock, no allocation: async-signal-safe (the
 * charge's RECLAIM verdict). Returns whether it was asked. */
bool mri_shrink_notify(struct mri_shrink *s, uint64_t bytes);

/* The worker, before a margin pass of g that would reclaim down to usage
 * - excess_bytes: asks the program for excess_bytes and, when wait, waits
 * for its answer for the grace; then reads usage again. Returns 1 when
 * usage is at or below high_mark after the answer (the pass is not
 * needed), 0 otherwise (no request, no answer in time, or not enough
 * given back), or -ENOENT (the group is gone). Caller holds
 * g->reclaim_lock. */
int mri_shrink_before_reclaim(struct mr_group *g, uint64_t excess_bytes,
			      uint64_t high_mark, bool wait);

#endif /* MR_SHRINK_H */
