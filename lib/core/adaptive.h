/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A group's adaptive margin (lib/core/adaptive.c): the measurements of
 * each interval, fed to the rule of lib/core/sizing.h, and the margin
 * published to the worker, the fast path and the statistics. */
#ifndef MR_ADAPTIVE_H
#define MR_ADAPTIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"
#include "sizing.h"

struct mr_group;
struct mri_policy;

/* What mr_group_read_margin_stats() reads, written at each interval. */
struct mri_adaptive_stats {
	_Atomic uint64_t margin_bytes, hysteresis_bytes, sized_bytes;
	_Atomic uint32_t strength_ppm;
	_Atomic uint64_t charge_bytes_per_s, reaction_ns;
	_Atomic uint64_t benefit_ns, cost_ns, refault_bytes, limit_hits;
	_Atomic uint64_t intervals, worker_cpu_ns;
	_Atomic uint64_t pass_cpu_ns, empty_cost_ns_per_gib_s;
	_Atomic uint64_t overshoot_bytes;
};

/* The group's counters an interval is measured between (has_*: which
 * the backend has). */
struct mri_adaptive_counters {
	uint64_t usage_bytes, pgsteal_bytes, refault_bytes, limit_hits;
	uint64_t stall_us;            /* memory PSI some total */
	bool has_pgsteal, has_refaults, has_hits, has_stall;
};

/* The state of one group's adaptive margin, in struct mr_group; all but
 * stats under the group's reclaim_lock (the worker's passes). */
struct mri_adaptive {
	struct mri_sizing sizing;
	uint64_t gen;                 /* the policy's adaptive_gen it is of */
	bool started;                 /* an interval runs */
	uint64_t start_ns;            /* its start, in the group's clock */
	struct mri_adaptive_counters start; /* the counters at its start */
	/* The worker's reclaim in it: freed, CPU, waiting for a CPU, wall,
	 * and the limit hits of charges meeting its own lowered limit. */
	uint64_t freed_bytes, cpu_ns, runq_ns, wall_ns, own_hits;
	unsigned passes;
	/* When the reaction under way began; 0: none pending. */
	uint64_t reaction_start_ns;
	struct mri_adaptive_stats stats;
};

/* For the worker's pass over g, whose policy p keeps an adaptive margin:
 * starts the state afresh when p is a new call's, ends the interval when
 * it is over (reading memory.stat and memory.events once), and gives the
 * margin and hysteresis in force. l: the pass's limits; limit_bytes: the
 * margin limit of l (mri_margin_limit(), not MR_UNLIMITED). Caller holds
 * g->reclaim_lock. */
void mri_adaptive_margin(struct mr_group *g, const struct mri_policy *p,
			 const struct mr_limits *l, uint64_t limit_bytes,
			 uint64_t *margin_bytes, uint64_t *hysteresis_bytes);

/* The calling thread's CPU time and its time waiting for a CPU, in g's
 * clock: the backend's thread_cpu_ns (no wait), or the kernel's
 * schedstat of the thread. */
void mri_adaptive_thread_times(struct mr_group *g, uint64_t *cpu_ns,
			       uint64_t *runq_ns);

/* The limit hits the worker's own steps can cause, read before and after
 * its reclaim: the group's memory.failcnt on a backend whose steps lower
 * the limit (MRI_CAP_STEP_CAN_OOM, cgroup v1), 0 elsewhere. A counter,
 * so only differences mean anything. Caller holds g->reclaim_lock. */
uint64_t mri_adaptive_own_hits(struct mr_group *g);

/* One reclaim of the worker's pass over g: its CPU time, its time
 * waiting for a CPU, its wall time, what it freed, and the limit hits it
 * caused itself (cgroup v1: charges meeting its lowered limit). A
 * reaction begins at start_ns (the group's clock: the wake-up of the
 * round that served the pass, or the read of usage that measured
 * over_bytes), unless one begun in an earlier round still runs; one
 * that begins notes over_bytes, what the group had charged past the mark
 * before the worker could see it (0: not measured), as an overshoot.
 * Caller holds g->reclaim_lock. */
void mri_adaptive_note_reclaim(struct mr_group *g, uint64_t start_ns,
			       uint64_t over_bytes, uint64_t cpu_ns,
			       uint64_t runq_ns, uint64_t wall_ns,
			       uint64_t freed_bytes, uint64_t own_hits);

/* The pass brought usage to limit - margin or below at at_ns (the
 * group's clock: struct mri_reclaim_mark's reached_ns, or the read of
 * usage after the pass), or the crossed_ns that read confirmed: the
 * reaction under way ends there, counted as
 * at most interval_ns. Caller holds g->reclaim_lock. */
void mri_adaptive_note_below(struct mr_group *g, uint64_t at_ns,
			     uint64_t interval_ns);

/* A pass found usage below the mark without reclaiming, or the margin is
 * 0: no reaction is under way. Caller holds g->reclaim_lock. */
void mri_adaptive_forget_reaction(struct mr_group *g);



#endif /* MR_ADAPTIVE_H */
