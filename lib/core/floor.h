/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor of a group's size (lib/core/floor.c): the least its usage may
 * be brought to by the library's own writes (the proactive controller's
 * target, a margin's limit) without reclaiming what is protected or
 * cannot be reclaimed. Pure functions.
 *
 * Why each part:
 * - protection: memory.reclaim on a group is a reclaim rooted at that
 *   group, and the root of a reclaim gets no protection of its own
 *   (mm/memcontrol.c, mem_cgroup_calculate_protection(root, memcg);
 *   from Linux 6.11 mm/page_counter.c, page_counter_calculate_protection()),
 *   so the kernel takes the group below its memory.min and memory.low
 *   when asked: the library keeps to them itself. memory.min is the
 *   group's own (the operator's hard promise, even where an ancestor
 *   leaves less of it effective); memory.low is the effective one as a
 *   reclaim from the top sees it (best effort, shared with the siblings).
 * - what reclaim cannot take: the unevictable LRU (mlocked pages, ramfs,
 *   SHM_LOCK), memory charged to the group that is not on an LRU (kernel
 *   memory: stacks, page tables, slab, sockets), and, where the group can
 *   swap nothing, the swap-backed pages on the anonymous LRUs (anonymous
 *   memory and shmem/tmpfs: mm/vmscan.c, get_scan_count() scans them only
 *   when can_reclaim_anon_pages() and the swappiness allow).
 * - the caller's minimum size.
 *
 * The floor is the largest of the three, not their sum: protection is a
 * bound on the group's whole usage (mem_cgroup_below_min() compares
 * usage with it, whatever the pages are), so what cannot be reclaimed
 * counts towards it. TMO (Weiner et al., ASPLOS '22) adds memory.min to
 * the unreclaimable part, which keeps more than the kernel would ever
 * need to; the kernel's own comparison is the one kept here.
 */
#ifndef MR_FLOOR_H
#define MR_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

struct mri_floor_input {
	uint64_t min_bytes;           /* the group's own memory.min */
	uint64_t effective_low_bytes; /* effective memory.low, from the top */
	/* Swap-backed memory reclaim cannot swap out: with swap_usable
	 * false, all of it counts towards the floor (the anonymous LRUs,
	 * shmem included; mri_floor_input_of() puts there what the group's
	 * swap room cannot take). */
	uint64_t anon_bytes;
	uint64_t unevictable_bytes;   /* the unevictable LRU */
	uint64_t kernel_bytes;        /* kernel memory charged (0: unknown) */
	bool swap_usable;             /* anon_bytes can all be swapped out */
	uint64_t caller_min_bytes;    /* the caller's minimum size */
};

/* The floor in bytes for `in`: the largest of caller_min_bytes,
 * min_bytes, effective_low_bytes and unevictable_bytes + kernel_bytes +
 * (swap_usable ? 0 : anon_bytes). Saturating; MR_UNLIMITED in any input
 * gives MR_UNLIMITED. NULL gives 0. Pure, MT-safe. */
uint64_t mri_floor_bytes(const struct mri_floor_input *in);

/* Fills *out from a group's memory.stat (ms), its limits snapshot (l,
 * for the swap it may use; NULL: none), its protection (prot, read with
 * root_level MR_RECLAIM_ROOT_TOP; NULL: none), the swappiness the
 * library's reclaim passes (reclaim_swappiness, -1: the kernel's) and the
 * caller's minimum size. anon_bytes is the part of the anonymous LRUs
 * (inactive_anon + active_anon, which count shmem; anon_bytes +
 * shmem_bytes where they are absent) that the swap left to the group
 * cannot hold (lib/core/policy.h, mri_swap_anon_reclaimable()), and
 * swap_usable is true when that part is 0. kernel_bytes is memory.stat's
 * `kernel` where present (cgroup v2), less its `slab_reclaimable` (which
 * reclaim shrinks), else 0 (cgroup v1 reports none in memory.stat).
 * Pure, MT-safe. */
void mri_floor_input_of(const struct mr_memstat *ms,
			const struct mr_limits *l,
			const struct mr_protection *prot,
			int reclaim_swappiness, uint64_t caller_min_bytes,
			struct mri_floor_input *out);

#endif /* MR_FLOOR_H */
