/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller's step law (lib/core/steplaw.c): how much to
 * reclaim from a group in the next interval, from what the last one
 * measured. Pure functions on a state the caller keeps; the measuring
 * side is lib/core/proactive.c, the law's reasoning docs/design.md
 * ("Proactive reclaim").
 *
 * step = step_ppm x R x max(0, 1 - P) x W,
 * W = (Rf x max(0, 1 - Qf) + Ra x max(0, 1 - Qa)) / (Rf + Ra)
 *
 * R: what reclaim can take without crossing the floor (the page cache Rf
 *    and the anonymous memory Ra the group may swap out, at most
 *    usage - floor);
 * P: the memory pressure, the interval's PSI "some" stall over the target
 *    stall of an interval, held: P = max(p, decayed P of the interval
 *    before), so that one quiet interval after a stall does not bring
 *    back whole steps;
 * Qf, Qa: the refault ratio of each kind, file and anonymous (memory.stat
 *    workingset_refault_file and _anon), over refault_ppm, held the same
 *    way. A ratio is the interval's refaults of that kind over what
 *    reclaim took from the group in it and in the interval before (a
 *    reclaimed page refaults within an interval or two if it is used at
 *    all); when nothing was reclaimed, over the group's usage (pages
 *    another reclaim took: the kernel's, another manager's; that many a
 *    group thrashes). Each kind is held apart: hot file pages coming back
 *    say the page cache is at its working set, not the anonymous memory
 *    that reclaim has not reached yet (memory.reclaim before Linux 6.11
 *    takes no swappiness= and may take hot file pages before cold
 *    anonymous ones; mm/vmscan.c get_scan_count() then turns to anon as
 *    the file refaults raise the file LRU's cost). W weighs each kind's
 *    room by its own hold, so steps go on, sized from the kind still
 *    quiet, and stop only when every kind with room is held. A kind is
 *    judged by what reclaim took of it: when the steps of this interval
 *    and the one before took no anonymous memory at all (the group's
 *    swap did not grow), the anonymous share bought nothing but the
 *    file refaults, and Qa weighs every refault (a group whose anonymous
 *    memory is all hot, a server's heap, is otherwise probed every
 *    interval through its hot file, held by the stall alone).
 *
 * The form is TMO's (Weiner et al., "TMO: Transparent Memory Offloading
 * in Datacenters", ASPLOS '22: reclaim usage x ratio x max(0, 1 -
 * psi/target)), with the refault check of ByteDance's Katalyst (1 -
 * refaults/pgsteal >= 0.99) as a second factor of the same shape, and a
 * step relative to what is reclaimable above the floor rather than to
 * usage.
 */
#ifndef MR_STEPLAW_H
#define MR_STEPLAW_H

#include <stdbool.h>
#include <stdint.h>

/* The held P and Q decay by this factor (in ppm) each interval: a stall
 * or a refault burst keeps steps small for a few intervals (from 1 to
 * below 1/10 in 8). */
#define MRI_STEPLAW_DECAY_PPM 750000U
/* A step smaller than this is not taken (SWAP_CLUSTER_MAX pages of 4 KiB,
 * the kernel's own reclaim batch): the group is at its target. */
#define MRI_STEPLAW_MIN_STEP_BYTES (32ULL * 4096)

/* Why an interval took no step. */
enum mri_steplaw_hold {
	MRI_HOLD_NONE = 0,     /* a step was taken */
	MRI_HOLD_PRESSURE,     /* P >= 1: the stall reached its target */
	MRI_HOLD_REFAULTS,     /* Qf, Qa >= 1 (of every kind with room):
				  reclaimed pages come back */
	MRI_HOLD_FLOOR,        /* nothing reclaimable above the floor, or a
				  step below MRI_STEPLAW_MIN_STEP_BYTES */
};

struct mri_steplaw_params {
	uint32_t step_ppm;          /* the largest step, 1 .. 10^6 of R */
	uint32_t refault_ppm;       /* the refault ratio that stops steps,
				       1 .. 10^6 */
	uint64_t target_stall_ns;   /* the stall allowed in one interval,
				       > 0 */
};

/* What one interval measured. */
struct mri_steplaw_sample {
	uint64_t usage_bytes;       /* at its end */
	uint64_t floor_bytes;       /* lib/core/floor.h */
	uint64_t file_bytes;        /* reclaimable page cache */
	uint64_t anon_bytes;        /* swappable anonymous memory */
	uint64_t stall_ns;          /* PSI some growth over it */
	uint64_t refault_file_bytes; /* workingset refaults in it, file */
	uint64_t refault_anon_bytes; /* and anonymous */
	uint64_t steal_bytes;       /* reclaimed from the group in it */
	/* What reclaim took of the anonymous memory in it: the growth of
	 * the group's swap (zswap and zram included). */
	uint64_t anon_steal_bytes;
	bool anon_steal_known;      /* false: the backend reads no swap */
};

struct mri_steplaw {
	double pressure;            /* P held */
	double refaults_file;       /* Qf held */
	double refaults_anon;       /* Qa held */
	uint64_t prev_steal_bytes;  /* steal of the interval before */
	uint64_t prev_anon_steal_bytes; /* and its anonymous part */
};

struct mri_steplaw_decision {
	uint64_t step_bytes;        /* to reclaim in the next interval */
	uint64_t target_bytes;      /* usage - step, at least the floor */
	uint32_t step_ppm;          /* step over R, in ppm */
	uint32_t refault_ratio_ppm; /* the interval's ratio, both kinds */
	enum mri_steplaw_hold hold;
};

/* A new state: no pressure, no refaults held. */
void mri_steplaw_init(struct mri_steplaw *s);

/* Folds the interval x into s and decides the next step into *d. */
void mri_steplaw_update(struct mri_steplaw *s,
			const struct mri_steplaw_params *p,
			const struct mri_steplaw_sample *x,
			struct mri_steplaw_decision *d);

#endif /* MR_STEPLAW_H */
