/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clocks of the core: CLOCK_MONOTONIC, and a group's own (its
 * backend's now_ns: a simulated group lives in virtual time). Every time
 * measured or bounded for a group (reclaim deadlines, the worker's
 * passes, the fast path's refresh ages, elapsed_ns of the statistics) is
 * taken from mri_group_now_ns(). Inline, so that no file of the core
 * depends on another for the time.
 */
#ifndef MR_CLOCK_H
#define MR_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "group.h"

/* CLOCK_MONOTONIC now, in ns. */
static inline uint64_t mri_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Now in the group's clock (its backend's now_ns, or CLOCK_MONOTONIC). */
static inline uint64_t mri_group_now_ns(struct mr_group *g)
{
	return g->be->now_ns ? g->be->now_ns(g->priv) : mri_now_ns();
}

/* The deadline timeout_ns after now_ns, or 0 (no deadline) for a timeout
 * of 0 or one that does not fit in the clock's range (MR_UNLIMITED
 * included): the sum would wrap to a time already passed. */
static inline uint64_t mri_deadline_ns(uint64_t now_ns, uint64_t timeout_ns)
{
	if (!timeout_ns || timeout_ns > UINT64_MAX - now_ns)
		return 0;
	return now_ns + timeout_ns;
}

#endif /* MR_CLOCK_H */
