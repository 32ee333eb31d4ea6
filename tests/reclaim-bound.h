/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How far a real kernel's reclaim may stray from what was asked, for the
 * tests that reclaim page cache on a real cgroup (tests/test-real-cgroup1.c,
 * tests/conformance, tests/kernel/guest/v2-backend.c). One definition, so
 * the three agree.
 *
 * mr_group_reclaim() stops as soon as `ask` bytes are freed, so only its
 * last kernel call overshoots. That call frees at most:
 *  - the batch it asked for;
 *  - one reclaim cluster (SWAP_CLUSTER_MAX pages, the unit of
 *    shrink_inactive_list());
 *  - one page-cache folio less a page: reclaim frees whole folios, and a
 *    file read with a large readahead window sits in folios of up to
 *    PMD size (page_cache_ra_order(), MAX_PAGECACHE_ORDER; XFS since 5.18,
 *    ext4 since 6.16). This is what CI met on stop 9: a 128 KiB call
 *    freeing a 2 MiB folio;
 *  - the kernel's per-CPU charge stock (MEMCG_CHARGE_BATCH, 64 pages per
 *    CPU), which a limit write drains (drain_all_stock()) and so shows as
 *    a fall in usage that no reclaim made.
 * The fall in usage and the bytes reported differ by at most the stock and
 * a cluster.
 */
#ifndef MEMRECLAIM_TESTS_RECLAIM_BOUND_H
#define MEMRECLAIM_TESTS_RECLAIM_BOUND_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define RECLAIM_CLUSTER_BYTES (32 * 4096ULL)

/* The per-CPU charge stock of every online CPU, in bytes. */
static inline uint64_t reclaim_stock_bytes(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	return 64 * 4096ULL * (uint64_t)(ncpu > 0 ? ncpu : 1);
}

/* The largest page-cache folio: the PMD size the kernel reports, or
 * x86-64's 2 MiB where the kernel has no THP sysfs directory. */
static inline uint64_t reclaim_folio_bytes(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			"re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? (uint64_t)v : 2 * 1024 * 1024ULL;
}

/* What one call's overshoot may reach beyond `ask`, for a batch of
 * `batch_bytes`: freed < ask + reclaim_overshoot_bytes(batch). */
static inline uint64_t reclaim_overshoot_bytes(uint64_t batch_bytes)
{
	return batch_bytes + RECLAIM_CLUSTER_BYTES + reclaim_folio_bytes() -
	       4096 + reclaim_stock_bytes();
}

#endif
