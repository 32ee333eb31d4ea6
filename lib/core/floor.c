/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The floor of a group's size: lib/core/floor.h. */
#include "floor.h"

#include <string.h>

#include "policy.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

uint64_t mri_floor_bytes(const struct mri_floor_input *in)
{
	uint64_t unreclaimable, floor;

	if (!in)
		return 0;
	unreclaimable = sat_add(in->unevictable_bytes, in->kernel_bytes);
	if (!in->swap_usable)
		unreclaimable = sat_add(unreclaimable, in->anon_bytes);
	floor = max_u64(in->caller_min_bytes, in->min_bytes);
	floor = max_u64(floor, in->effective_low_bytes);
	return max_u64(floor, unreclaimable);
}

void mri_floor_input_of(const struct mr_memstat *ms,
			const struct mr_limits *l,
			const struct mr_protection *prot,
			int reclaim_swappiness, uint64_t caller_min_bytes,
			struct mri_floor_input *out)
{
	const uint64_t lru = (1ULL << MR_MEMSTAT_INACTIVE_ANON) |
			     (1ULL << MR_MEMSTAT_ACTIVE_ANON);
	uint64_t anon = 0, swappable;

	memset(out, 0, sizeof(*out));
	out->caller_min_bytes = caller_min_bytes;
	if (prot) {
		out->min_bytes = prot->min_bytes;
		out->effective_low_bytes = prot->effective_low_bytes;
	}
	if ((ms->present & lru) == lru) {
		anon = sat_add(ms->inactive_anon_bytes, ms->active_anon_bytes);
	} else {
		if (ms->present & (1ULL << MR_MEMSTAT_ANON))
			anon = ms->anon_bytes;
		if (ms->present & (1ULL << MR_MEMSTAT_SHMEM))
			anon = sat_add(anon, ms->shmem_bytes);
	}
	swappable = l ? mri_swap_anon_reclaimable(l, ms, reclaim_swappiness) :
		    0;
	/* mri_swap_anon_reclaimable() counts anon_bytes alone where the
	 * LRUs are absent; the floor counts shmem too. */
	out->anon_bytes = anon > swappable ? anon - swappable : 0;
	out->swap_usable = out->anon_bytes == 0;
	if (ms->present & (1ULL << MR_MEMSTAT_UNEVICTABLE))
		out->unevictable_bytes = ms->unevictable_bytes;
	if (ms->present & (1ULL << MR_MEMSTAT_KERNEL))
		out->kernel_bytes = ms->kernel_bytes;
	/* Kernel memory less what its shrinkers give back: reclaim rooted
	 * at the group shrinks its reclaimable slab (dentries, inodes) too,
	 * mm/vmscan.c shrink_node_memcgs() -> shrink_slab(). */
	if (ms->present & (1ULL << MR_MEMSTAT_SLAB_RECLAIMABLE))
		out->kernel_bytes -= ms->slab_reclaimable_bytes <
				     out->kernel_bytes ?
				     ms->slab_reclaimable_bytes :
				     out->kernel_bytes;
}
