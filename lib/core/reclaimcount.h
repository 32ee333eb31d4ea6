/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim of a group over an interval, from two memory.stat snapshots
 * (lib/core/reclaimcount.c): who reclaimed, with the library's own
 * reclaim told apart where the kernel does not, and the ratios a
 * controller weighs, clamped at 1. Pure functions.
 *
 * The kernel counts every page reclaimed once by reclaimer (pgsteal_kswapd,
 * _direct, _khugepaged, _proactive) and once more by type (pgsteal_anon,
 * _file) in /proc/vmstat; memory.stat prints the first set and its sum
 * (pgsteal). Adding every pgsteal_* key counts pages twice (sysstat's
 * sar -B reported twice the rate, and a pgsteal/pgscan efficiency above
 * 100 %, for that: sysstat pull request 426). Here the totals are the
 * kernel's own lines.
 *
 * Before Linux 6.15 (Hao Jia, "mm: vmscan: split proactive reclaim
 * statistics from direct reclaim statistics") memory.reclaim was counted
 * as direct reclaim (mm/vmscan.c, reclaimer_offset()): a controller that
 * reads pgsteal_direct as "the workload's tasks are reclaiming for
 * themselves" sees its own writes there. The group's tasks' own direct
 * reclaim is then pgsteal_direct less what the library freed, at 0 at
 * least; from 6.15 the library's memory.reclaim writes are in
 * pgsteal_proactive, and only its memory.high and limit writes (which
 * reclaim in the writer's context: memory_high_write(),
 * memory_max_write()) are still direct.
 */
#ifndef MR_RECLAIMCOUNT_H
#define MR_RECLAIMCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

/* What the library itself reclaimed from the group over the interval, in
 * bytes freed (the fall in usage its calls measured), by the kind of
 * write: through memory.reclaim (counted as proactive from 6.15, as
 * direct before) and through a lowered memory.high or limit (always
 * direct). */
struct mri_own_reclaim {
	uint64_t reclaim_file_bytes;
	uint64_t limit_write_bytes;
};

struct mri_reclaim_counts {
	/* Both snapshots had the totals (pgscan and pgsteal); else all is
	 * 0 (cgroup v1 has none). */
	bool has_totals;
	/* Both had the direct pair; and the proactive pair (Linux 6.15). */
	bool has_direct;
	bool has_proactive;
	uint64_t scan_bytes;    /* growth of pgscan: every reclaimer */
	uint64_t steal_bytes;   /* growth of pgsteal */
	/* The group's tasks' own direct reclaim: growth of pgsteal_direct
	 * less the library's writes the kernel counted there, at least 0
	 * (0 when has_direct is false). */
	uint64_t direct_steal_bytes;
	/* steal / scan, in ppm, at most 1000000 (0 when nothing was
	 * scanned): a lower figure means reclaim had to look at more pages
	 * for each it could take. */
	uint32_t efficiency_ppm;
};

/* The counts between `then` and `now` (memory.stat of the same group, in
 * that order; a counter that fell, as a group recreated, counts 0) with
 * the library's own reclaim `own` over the same interval (NULL: none).
 * Pure, MT-safe. */
void mri_reclaim_counts(const struct mr_memstat *then,
			const struct mr_memstat *now,
			const struct mri_own_reclaim *own,
			struct mri_reclaim_counts *out);

/* num / den in ppm, clamped at 1000000; 0 when den is 0. The ratios of
 * counters read at different instants (refaults against pages stolen,
 * pages stolen against scanned) can exceed 1 by the pages of the one
 * counted before the other: no such ratio means more than all. Pure. */
uint32_t mri_ratio_ppm(uint64_t num, uint64_t den);

#endif /* MR_RECLAIMCOUNT_H */
