/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reclaim of a group over an interval (see reclaimcount.h). */
#include "config.h"

#include "reclaimcount.h"

static bool both(const struct mr_memstat *a, const struct mr_memstat *b,
		 uint64_t bits)
{
	return (a->present & bits) == bits && (b->present & bits) == bits;
}

static uint64_t grew(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint32_t mri_ratio_ppm(uint64_t num, uint64_t den)
{
	if (!den)
		return 0;
	if (num >= den)
		return 1000000;
	return (uint32_t)((unsigned __int128)num * 1000000 / den);
}

void mri_reclaim_counts(const struct mr_memstat *then,
			const struct mr_memstat *now,
			const struct mri_own_reclaim *own,
			struct mri_reclaim_counts *out)
{
	const uint64_t totals = (1ULL << MR_MEMSTAT_PGSCAN) |
				(1ULL << MR_MEMSTAT_PGSTEAL);
	const uint64_t direct = (1ULL << MR_MEMSTAT_PGSCAN_DIRECT) |
				(1ULL << MR_MEMSTAT_PGSTEAL_DIRECT);
	const uint64_t proactive = (1ULL << MR_MEMSTAT_PGSCAN_PROACTIVE) |
				   (1ULL << MR_MEMSTAT_PGSTEAL_PROACTIVE);
	uint64_t counted_direct = 0, d;

	*out = (struct mri_reclaim_counts){ 0 };
	out->has_totals = both(then, now, totals);
	if (!out->has_totals)
		return;
	out->has_direct = both(then, now, direct);
	out->has_proactive = both(then, now, proactive);
	out->scan_bytes = grew(then->pgscan_bytes, now->pgscan_bytes);
	out->steal_bytes = grew(then->pgsteal_bytes, now->pgsteal_bytes);
	out->efficiency_ppm = mri_ratio_ppm(out->steal_bytes,
					    out->scan_bytes);
	if (!out->has_direct)
		return;
	/* The library's writes the kernel counted as direct reclaim. */
	if (own) {
		counted_direct = own->limit_write_bytes;
		if (!out->has_proactive)
			counted_direct = sat_add(counted_direct,
						 own->reclaim_file_bytes);
	}
	d = grew(then->pgsteal_direct_bytes, now->pgsteal_direct_bytes);
	out->direct_steal_bytes = d > counted_direct ? d - counted_direct : 0;
}
