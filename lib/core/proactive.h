/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A group's proactive controller (lib/core/proactive.c): its settings,
 * the measurements of each interval fed to the step law of
 * lib/core/steplaw.h, the floor of lib/core/floor.h, the reclaim, and the
 * statistics. mr_group_set_proactive() describes the behaviour. */
#ifndef MR_PROACTIVE_H
#define MR_PROACTIVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"
#include "steplaw.h"

struct mr_group;

/* Intervals without a step after the group's own memory.high changed. */
#define MRI_PROACTIVE_EXTERNAL_HOLD 8U

/* What mr_group_read_proactive_stats() reads. */
struct mri_proactive_stats {
	_Atomic int enabled, dry_run, io_gate;
	_Atomic uint64_t intervals, usage_bytes, floor_bytes, target_bytes;
	_Atomic uint64_t step_bytes;
	_Atomic uint32_t step_ppm, refault_ratio_ppm;
	_Atomic uint64_t stall_ns, target_stall_ns, io_stall_ns;
	_Atomic uint64_t refault_bytes, dry_run_bytes, reclaimed_bytes;
	_Atomic uint64_t pauses_pressure, pauses_refaults, pauses_io;
	_Atomic uint64_t pauses_external, external_high_changes;
	_Atomic uint64_t last_external_high_bytes;
};

/* The group's counters an interval is measured between (has_*: which
 * the backend has). */
struct mri_proactive_counters {
	uint64_t stall_us, io_stall_us;
	uint64_t refault_file_bytes, refault_anon_bytes, pgsteal_bytes;
	uint64_t own_high_bytes;
	uint64_t swap_bytes;        /* swap charged to the group */
	bool has_io, has_pgsteal, has_high, has_swap;
};

struct mri_proactive {
	/* The settings and their generation, under lock (the setter's
	 * side); the worker copies them at each pass. */
	pthread_mutex_t lock;
	struct mr_proactive cfg;
	bool on;
	uint64_t gen;
	/* The rest under the group's reclaim_lock (the worker's passes). */
	uint64_t seen_gen;
	bool started;                /* an interval runs */
	uint64_t retry_ns;           /* not started: no read before this */
	bool read_failing;           /* the last read failed (logged once) */
	uint64_t start_ns;           /* its start, in the group's clock */
	struct mri_proactive_counters start;
	uint64_t own_freed_bytes;    /* the controller's reclaim in it */
	/* What its steps freed beyond their asks, which the next step asks
	 * less (mri_reclaim_carried()); 0 after a step held back. */
	uint64_t carry_bytes;
	unsigned external_hold;      /* intervals left without a step */
	uint64_t dry_bytes;          /* a dry run's size, MR_UNLIMITED:
					none yet */
	struct mri_steplaw law;
	struct mri_proactive_stats stats;
};

void mri_proactive_init(struct mri_proactive *p);
void mri_proactive_destroy(struct mri_proactive *p);

/* The controller's pass over g in the worker: ends the interval when it
 * is over (or starts the first), decides and takes the step. stop (may
 * be NULL) ends a reclaim early. Returns 0, or -ENOENT when the group is
 * gone (the worker gives it up). Caller holds g->reclaim_lock. */
int mri_proactive_pass(struct mr_group *g, const atomic_bool *stop);

#endif /* MR_PROACTIVE_H */
