/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reclaim loop of a group (lib/core/reclaim.c). */
#ifndef MR_RECLAIM_H
#define MR_RECLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

struct mr_group;

/* The largest batch of a proactive step (MR_REASON_PROACTIVE), whose
 * size the controller chose: asked whole up to this, not in the group's
 * batches. The bound of one write's over-reclaim and time, as the
 * cgroup2 backend's bound on a memory.reclaim write
 * (MRI_CGROUP2_RECLAIM_CHUNK_BYTES), and of how far the fallback of
 * kernels without memory.reclaim lowers memory.high at once. */
#define MRI_RECLAIM_STEP_BATCH_BYTES (16ULL << 20)

/*
 * When a run of mri_reclaim() brought the group's usage to a mark (the
 * margin keeper's: limit - margin), so that the worker's reaction ends
 * there and not at the run's end: the rest of the run, its hysteresis,
 * is reclaim the worker chose to do, and counted in the reaction it
 * made the reaction, and so the margin, grow with the hysteresis.
 */
struct mri_reclaim_mark {
	uint64_t mark_bytes; /* in: the usage watched for */
	/* out: reached: a read of usage before a step found it at the
	 * mark or below, at reached_ns (the group's clock): at the
	 * crossing the step before it estimated, or else at the read. */
	bool reached;
	uint64_t reached_ns;
	/* out, where not reached: crossed: the run's last step took usage
	 * to the mark or below by its own figures, estimated at crossed_ns
	 * as the share of the step's fall that reached the mark times the
	 * step's time (the pace within a step taken as even); no read has
	 * confirmed it (a backend's freed may be what it reclaimed, not
	 * the fall in usage, with charges meanwhile), which the caller
	 * does with its own read after the run. */
	bool crossed;
	uint64_t crossed_ns;
};

/* The reclaim loop (lib/core/reclaim.c). Frees up to `bytes`, or down to a
 * usage of floor_bytes, whichever comes first, in batches of the group's
 * policy (a proactive step's, where the backend's step cannot OOM-kill:
 * up to MRI_RECLAIM_STEP_BATCH_BYTES); stops at
 * deadline_ns (the group's clock, 0: none), after
 * MR_RECLAIM_MAX_EMPTY_BATCHES empty batches in a row, when the backend has
 * nothing reclaimable, or when *stop becomes true (stop may be NULL).
 * A batch of a MRI_CAP_STEP_CAN_OOM backend asks at most half of what
 * reclaim can take from the group. Counts under `reason`. mark (may be
 * NULL; its outputs cleared first) is watched where floor_bytes is not
 * 0, the run then reading usage before each step. Caller holds
 * g->reclaim_lock. Returns 0 if
 * something was freed or nothing was needed, -EAGAIN if nothing could be
 * freed, or the backend's error; *freed_bytes is set in every case. */
int mri_reclaim(struct mr_group *g, int reason, uint64_t bytes,
		uint64_t floor_bytes, uint64_t deadline_ns,
		const atomic_bool *stop, struct mri_reclaim_mark *mark,
		uint64_t *freed_bytes);

/*
 * What reclaim cannot take from the group now, in *bytes: its unevictable
 * memory, its kernel memory less the reclaimable slab (dentries, inodes:
 * memory.reclaim and a lowered high or limit shrink it, mm/vmscan.c
 * shrink_node_memcgs() and shrink_slab()), and the anonymous memory
 * (shmem included) that the swap left to it cannot hold
 * (mri_floor_bytes() of lib/core/floor.h without protections nor a
 * caller's minimum). No run of mri_reclaim() goes below it: memory.reclaim
 * would scan in vain, and the lowering step of a backend without it (v2
 * memory.high, lib/cgroupfs/lowerstep.h) would set a high below what the
 * group needs, whose tasks the kernel would then throttle at every return
 * to user space (mem_cgroup_handle_over_high()): a group stuck at high of
 * the library's own making (lib/core/stuckhigh.h). l is the group's
 * limits snapshot (for its swap room; NULL: none); *ms receives the
 * memory.stat read for it; *swap_usable (may be NULL) whether the group
 * may swap all of its anonymous memory out. Returns 0 or read_memstat()'s
 * error. Reads files (a backend may log): the worker's stuck-at-high
 * sample calls it with no lock held, mri_reclaim() under reclaim_lock.
 */
int mri_unreclaimable(struct mr_group *g, const struct mr_limits *l,
		      struct mr_memstat *ms, uint64_t *bytes,
		      bool *swap_usable);

/* One step of a controller that reclaims amounts of its own choosing
 * (the proactive controller's step, a fraction of what is reclaimable),
 * with the kernel's over-reclaim carried from one step to the next: a
 * write may free far more than it asked (before Linux 6.6 a memory.reclaim
 * of 1 GiB could take 1.7 GiB, backends/cgroup2/reclaim.c), and a
 * controller that asked its next step in full would take the excess twice.
 * *carry_bytes is what earlier steps freed beyond their asks: the step
 * asks `bytes` less it, and when the carry covers the whole step asks
 * nothing (the carry shrinks by `bytes`, 0 returned, nothing freed).
 * After a step, *carry_bytes is what it freed beyond its ask (0 when it
 * freed no more). The caller owns the carry (one per controller and
 * group) and sets it to 0 to drop it, as when it backs off on pressure:
 * bytes freed long ago do not stand for the next step. freed is the fall
 * in usage (mri_reclaim()), never the ask. Otherwise as mri_reclaim();
 * caller holds g->reclaim_lock. */
int mri_reclaim_carried(struct mr_group *g, int reason, uint64_t bytes,
			uint64_t floor_bytes, uint64_t deadline_ns,
			const atomic_bool *stop, uint64_t *carry_bytes,
			uint64_t *freed_bytes);

#endif /* MR_RECLAIM_H */
