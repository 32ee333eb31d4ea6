/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller's step law (lib/core/steplaw.c): how much to
 * reclaim from a group in the next interval, from what the last one
 * measured. Pure functions on a state the caller keeps; the measuring
 * side is lib/core/proactive.c, the law's reasoning docs/design.md
 * ("Proactive reclaim").
 *
 * step = step_ppm x R x max(0, 1 - P) x max(0, 1 - Q)
 *
 * R: what reclaim can take without crossing the floor (the page cache and
 *    the anonymous memory the group may swap out, at most usage - floor);
 * P: the memory pressure, the interval's PSI "some" stall over the target
 *    stall of an interval, held: P = max(p, decayed P of the interval
 *    before), so that one quiet interval after a stall does not bring
 *    back whole steps;
 * Q: the refault ratio over refault_ppm, held the same way. The ratio is
 *    the interval's refaults over what reclaim took from the group in it
 *    and in the interval before (a reclaimed page refaults within an
 *    interval or two if it is used at all), 1 when pages refault while
 *    nothing was reclaimed (the group thrashes on its own).
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
	MRI_HOLD_REFAULTS,     /* Q >= 1: reclaimed pages come back */
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
	uint64_t reclaimable_bytes; /* page cache + swappable anon */
	uint64_t stall_ns;          /* PSI some growth over it */
	uint64_t refault_bytes;     /* workingset refaults in it */
	uint64_t steal_bytes;       /* reclaimed from the group in it */
};

struct mri_steplaw {
	double pressure;            /* P held */
	double refaults;            /* Q held */
	uint64_t prev_steal_bytes;  /* steal of the interval before */
};

struct mri_steplaw_decision {
	uint64_t step_bytes;        /* to reclaim in the next interval */
	uint64_t target_bytes;      /* usage - step, at least the floor */
	uint32_t step_ppm;          /* step over R, in ppm */
	uint32_t refault_ratio_ppm; /* the interval's ratio */
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
