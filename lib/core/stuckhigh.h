/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A group stuck at memory.high (lib/core/stuckhigh.c): no usable swap,
 * nearly all its memory anonymous, and a memory.high below what it
 * needs. The kernel then neither fails its charges nor OOM-kills it: each
 * charge over high reclaims what little it can on the way back to user
 * space and sleeps (mm/memcontrol.c, mem_cgroup_handle_over_high(),
 * calculate_high_delay(): up to MEMCG_MAX_HIGH_DELAY_JIFFIES, 2 s, per
 * return), so the group crawls for as long as high stays where it is (86
 * s before an OOM in one run under qemu, docs/kernels.md). What it shows:
 * memory.events `high` rising steadily (reclaim_high() counts MEMCG_HIGH
 * at every reclaim over high a returning task makes: up to 17 a return,
 * MAX_RECLAIM_RETRIES retries and the first, before each sleep of up to
 * 2 s, so a few a second for one throttled task and thousands a second
 * for a group of many threads), `max` and `oom` still, PSI `full` high (the tasks stall in reclaim and in the
 * throttle's sleep, both memstalls).
 *
 * The worker samples every group of its context at its safety round
 * (MR_WORKER_SAFETY_NS): memory.events alone while `high` stands still,
 * and memory.pressure, memory.stat and the limits too while it rises
 * (the stall's growth is weighed from the previous sample's PSI total,
 * so a group is judged once `high` rose in two intervals in a row).
 * Entering and leaving the condition make the group's conditions fd
 * readable (mr_group_conditions_fd()).
 */
#ifndef MR_STUCKHIGH_H
#define MR_STUCKHIGH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

struct mr_group;

/* The rule's thresholds: high events per second (one: a single
 * throttled task makes a few; the simulator's made 5-84 a second in
 * tests/test-sim-faults), the share of the interval all tasks stalled
 * (PSI full), and the share of high that what reclaim cannot take fills.
 * The events only gate the reading of the rest: it is the stall, no
 * usable swap and what reclaim cannot take that tell a group stuck at
 * high from one merely over it. */
#define MRI_STUCK_HIGH_EVENTS_PER_S 1
#define MRI_STUCK_FULL_PPM 100000
#define MRI_STUCK_FILL_PPM 900000
/* Intervals shorter than this are not judged (a safety round that came
 * early): the rates would be noise. */
#define MRI_STUCK_MIN_INTERVAL_NS 500000000ULL

/* One interval of a group, for the rule. */
struct mri_stuck_input {
	uint64_t interval_ns;
	/* Growth of memory.events over the interval. */
	uint64_t high_events;
	uint64_t max_events;        /* max, oom and oom_kill together */
	uint64_t full_stall_ns;     /* growth of PSI full's total */
	uint64_t high_bytes;        /* the high that binds (lowest up) */
	uint64_t usage_bytes;       /* usage at the sample */
	/* What reclaim cannot take now (mri_floor_bytes() without the
	 * protections and the caller's minimum: unevictable, kernel
	 * memory, and the anon the group's swap room cannot hold), and
	 * whether the group may swap all of its anon out. */
	uint64_t unreclaimable_bytes;
	bool swap_usable;
};

/* The figures the rule weighed, for the caller's report. */
struct mri_stuck_figures {
	uint64_t high_events_per_s;
	uint32_t full_ppm;
	uint32_t fill_ppm;          /* unreclaimable over high */
};

/* Whether the interval shows a group stuck at memory.high: high events
 * at MRI_STUCK_HIGH_EVENTS_PER_S or more, no max, oom nor oom_kill,
 * full stall at MRI_STUCK_FULL_PPM of the interval or more, no usable
 * swap, a high set (not MR_UNLIMITED), usage at or above it at the
 * sample and what reclaim cannot take at MRI_STUCK_FILL_PPM of it or
 * more. The usage tells a group held over high (the throttled tasks
 * sleep with their memory charged: mem_cgroup_handle_over_high() sleeps
 * while the group is still over high after its reclaim) from one whose
 * reclaim at high keeps bringing it back under, as a group of 90 %
 * anonymous memory that streams file I/O through its last 10 % (high
 * events and stall every second, but the cache is reclaimed and the
 * tasks go on). *fig (may be NULL) receives the figures. Pure. */
bool mri_stuck_high(const struct mri_stuck_input *in,
		    struct mri_stuck_figures *fig);

/* A group's state of the detection. The sampler's own fields are the
 * worker's alone (one worker per context); the rest is under the lock. */
struct mri_stuck {
	/* The sampler's: the last sample. */
	bool sampled;
	uint64_t last_ns;
	uint64_t last_high, last_max, last_full_us;
	bool has_full;
	/* The backend reports no `high` event (cgroup v1: no memory.high):
	 * the group is not sampled again. */
	bool no_high;
	/* Under the lock. */
	pthread_mutex_t lock;
	bool stuck;
	uint64_t entered;           /* times the condition was entered */
	struct mri_stuck_figures fig;
	uint64_t high_bytes, unreclaimable_bytes;
	/* memory.stat and the library's own reclaim (the bytes freed,
	 * every reason) at the last sample that read them, for the tasks'
	 * own direct reclaim over the next (lib/core/reclaimcount.h). */
	bool has_stat;
	struct mr_memstat stat;
	uint64_t own_freed_bytes;
	uint64_t direct_bytes_per_s;
	uint32_t efficiency_ppm;
	int fd;                     /* the conditions eventfd, -1: none */
	bool warned;
};

void mri_stuck_init(struct mri_stuck *s);
/* Closes the conditions fd (if any). */
void mri_stuck_fini(struct mri_stuck *s);

/* The worker's sample of g (its safety round): ends the interval since
 * the last one, judges it, and signals the conditions fd on a change.
 * Takes no group lock but the detection's own; reads only. */
void mri_stuck_sample(struct mr_group *g);

#endif /* MR_STUCKHIGH_H */
