/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What bench-reclaim (a real cgroup v1 group) and bench-reclaim-sim (the
 * simulator) share: the request, the cache it is taken from, the three
 * ways of asking for it, and the figures they print.
 *
 * The request: free 1 GiB of clean page cache from a group, asked
 *  - through mr_group_reclaim() in fixed batches of 128 KiB
 *    (SWAP_CLUSTER_MAX pages, the kernel's own reclaim batch);
 *  - through mr_group_reclaim() with the proportional batch chosen for
 *    a request of this kind (below), and with the library's default one
 *    (memreclaimd --batch auto), for comparison;
 *  - as one kernel request: on cgroup v1 one write lowering
 *    memory.limit_in_bytes to usage - 1 GiB, then the write restoring it
 *    (mem_cgroup_resize_max() in mm/memcontrol-v1.c drains the per-CPU
 *    charge stock, then calls try_to_free_mem_cgroup_pages() for
 *    SWAP_CLUSTER_MAX pages at a time until usage fits); on the simulator
 *    one backend reclaim call of 1 GiB.
 * Figures: the time, the calls (kernel requests) and the over-reclaim
 * (fall in usage - 1 GiB) of each, the one kernel request as baseline.
 */
#ifndef MEMRECLAIM_BENCH_RECLAIM_H
#define MEMRECLAIM_BENCH_RECLAIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <memreclaim.h>

#include "bench.h"

#define RECLAIM_ASK_BYTES (1ULL << 30)

/* The clean page cache in the group when a run starts: the ask plus four
 * of the proportional batches' largest calls. A v1 step asks at most
 * half of the group's clean, unmapped page cache (the core's batch,
 * cap_step_batch() in lib/core/reclaim.c), so with 256 MiB still cached after the
 * last step no step of either library mode is ever capped: each asks what
 * its batch policy says. The one kernel request starts from the same
 * cache. */
#define RECLAIM_CACHE_BYTES (RECLAIM_ASK_BYTES + 4 * MR_BATCH_DEFAULT_MAX_BYTES)

/* The group's limit: above the cache, so filling it never reclaims. */
#define RECLAIM_LIMIT_BYTES (2ULL << 30)

#define RECLAIM_FIXED_BATCH_BYTES MR_SWAP_CLUSTER_MAX_BYTES

/*
 * The proportional batch for a request to free N bytes now: all of what
 * is left (share 10^6 ppm), at most 64 MiB and at most 1/8 of the limit
 * a call. 1 GiB takes 16 calls (and one more when the kernel fell short),
 * where 128 KiB batches take 8192 / (what the kernel frees per 128 KiB
 * call: one to two clusters of 4 KiB pages, or a whole folio of up to
 * 2 MiB). The 64 MiB bound is what a step may cost the group on v1:
 * while a step has the limit lowered, the group's own charges meet it
 * and reclaim too, and other managers wait for the group's lock (they
 * give up with -EBUSY after 200 ms); 64 MiB of 4 KiB pages take about
 * 5 ms of CPU to reclaim here (docs/PERFORMANCE.md). A share below the whole excess only adds calls
 * for a one-shot request: the overshoot is the kernel's (the limit write
 * stops as soon as usage fits; memory.reclaim as soon as the request is
 * met), one cluster or one folio past the last call's ask, whatever its
 * size. The library's default (MODE_PROPORTIONAL_DEFAULT: a quarter of
 * the excess, for the margin worker, which chases a moving excess) is
 * measured beside it.
 */
#define RECLAIM_SHARE_PPM 1000000u
#define RECLAIM_MAX_BYTES MR_BATCH_DEFAULT_MAX_BYTES
#define RECLAIM_MAX_PPM MR_BATCH_DEFAULT_MAX_PPM

enum reclaim_mode {
	MODE_FIXED = 0,
	MODE_PROPORTIONAL,
	MODE_PROPORTIONAL_DEFAULT,
	MODE_ONE_CALL,
	MODE_COUNT
};

static const char *const reclaim_mode_name[MODE_COUNT] = {
	[MODE_FIXED] = "fixed_128k",
	[MODE_PROPORTIONAL] = "proportional",
	[MODE_PROPORTIONAL_DEFAULT] = "proportional_default",
	[MODE_ONE_CALL] = "one_kernel_call",
};

/* One run of one mode. */
struct reclaim_sample {
	double time_ms;
	/* CPU time of the calling process (user + system) over the same
	 * span: the reclaim runs in the caller's context (the limit write
	 * reclaims in the writer's), so this is its cost without the time
	 * other processes of a shared machine took the CPU meanwhile.
	 * Negative: not measured (the simulator's time is virtual). */
	double cpu_ms;
	double calls;
	double over_reclaim_kib; /* fall in usage - ask; negative: short */
};

/* Sets the group's batch for a library mode. */
static inline int reclaim_set_batch(mr_group_t *g, enum reclaim_mode mode)
{
	if (mode == MODE_FIXED)
		return mr_group_set_batch_fixed(g, RECLAIM_FIXED_BATCH_BYTES);
	if (mode == MODE_PROPORTIONAL_DEFAULT)
		return mr_group_set_batch_proportional(
			g, MR_BATCH_DEFAULT_SHARE_PPM,
			MR_BATCH_DEFAULT_MAX_BYTES, MR_BATCH_DEFAULT_MAX_PPM);
	return mr_group_set_batch_proportional(g, RECLAIM_SHARE_PPM,
					       RECLAIM_MAX_BYTES,
					       RECLAIM_MAX_PPM);
}

static int reclaim_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorted in place); n >= 1. */
static inline double reclaim_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), reclaim_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints the figures of `med` (one sample per mode: medians, or the one
 * run of a deterministic simulation; a figure whose baseline is negative
 * was not measured and is left out), each named with `suffix` (e.g.
 * "_4k_pages_median_of_5"): the library modes against the one kernel
 * request, and the proportional batch's calls against the 128 KiB
 * batches'. */
static inline void reclaim_emit(const char *bench,
				const struct reclaim_sample med[MODE_COUNT],
				const char *suffix)
{
	static const struct {
		const char *what, *unit;
		size_t off;
	} fig[] = {
		{ "time_ms", "ms", offsetof(struct reclaim_sample, time_ms) },
		{ "cpu_ms", "ms", offsetof(struct reclaim_sample, cpu_ms) },
		{ "calls", "calls", offsetof(struct reclaim_sample, calls) },
		{ "over_reclaim_kib", "KiB",
		  offsetof(struct reclaim_sample, over_reclaim_kib) },
	};
	char name[128], base[128];
	size_t f;
	int m;

#define FIELD(s, o) (*(const double *)((const char *)(s) + (o)))
	for (f = 0; f < sizeof(fig) / sizeof(fig[0]); f++) {
		if (FIELD(&med[MODE_ONE_CALL], fig[f].off) < 0)
			continue;
		snprintf(base, sizeof(base), "%s_%s%s",
			 reclaim_mode_name[MODE_ONE_CALL], fig[f].what, suffix);
		for (m = MODE_FIXED; m < MODE_ONE_CALL; m++) {
			snprintf(name, sizeof(name), "%s_%s%s",
				 reclaim_mode_name[m], fig[f].what, suffix);
			bench_emit(bench, name, FIELD(&med[m], fig[f].off),
				   fig[f].unit, base,
				   FIELD(&med[MODE_ONE_CALL], fig[f].off),
				   fig[f].unit);
		}
	}
#undef FIELD
	snprintf(name, sizeof(name), "proportional_calls_vs_fixed_128k%s",
		 suffix);
	snprintf(base, sizeof(base), "fixed_128k_calls%s", suffix);
	bench_emit(bench, name, med[MODE_PROPORTIONAL].calls, "calls", base,
		   med[MODE_FIXED].calls, "calls");
}

#endif
