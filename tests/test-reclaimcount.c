/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reclaim counters of memory.stat over an interval
 * (lib/core/reclaimcount.h): the kernel's totals are taken as printed,
 * never the sum of every pgsteal_* key; on a kernel without the
 * proactive pair (before 6.15) the library's own memory.reclaim is taken
 * out of direct reclaim, from 6.15 only its memory.high and limit writes
 * are; ratios never exceed 1.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "cgroup2.h"
#include "reclaimcount.h"

#define MiB (1024ULL * 1024)

/* memory.stat of a 6.1 kernel (no khugepaged, no proactive pair) and of
 * a 6.15 one, in pages of 4 KiB: pgsteal is the kernel's sum of the
 * pgsteal_<reclaimer> lines; pgsteal_anon/_file count the same pages by
 * type. */
static void parse(const char *text, struct mr_memstat *ms)
{
	ck_assert_int_eq(mri_cgroup2_parse_memstat(text, 4096, ms), 0);
}

static const char stat_6_1_then[] =
	"anon 0\nfile 0\npgscan 1000\npgsteal 800\n"
	"pgscan_kswapd 200\npgscan_direct 800\n"
	"pgsteal_kswapd 100\npgsteal_direct 700\n";
/* 2560 pages (10 MiB) more stolen, all direct: the library's 8 MiB of
 * memory.reclaim and 2 MiB of the tasks' own. */
static const char stat_6_1_now[] =
	"anon 0\nfile 0\npgscan 4000\npgsteal 3360\n"
	"pgscan_kswapd 200\npgscan_direct 3800\n"
	"pgsteal_kswapd 100\npgsteal_direct 3260\n";

START_TEST(totals_are_the_kernels_lines)
{
	struct mr_memstat ms;

	/* Every pgsteal_* key of 6.15, anon/file included: their sum is
	 * twice the pages. */
	parse("pgscan 300\npgsteal 200\npgscan_kswapd 100\npgscan_direct 50\n"
	      "pgscan_khugepaged 0\npgscan_proactive 150\npgsteal_kswapd 60\n"
	      "pgsteal_direct 40\npgsteal_khugepaged 0\n"
	      "pgsteal_proactive 100\npgsteal_anon 20\npgsteal_file 180\n",
	      &ms);
	ck_assert_uint_eq(ms.pgsteal_bytes, 200 * 4096);
	ck_assert_uint_eq(ms.pgscan_bytes, 300 * 4096);
	ck_assert_uint_eq(ms.pgsteal_proactive_bytes, 100 * 4096);
	ck_assert_uint_eq(ms.pgsteal_direct_bytes, 40 * 4096);
	ck_assert_uint_eq(ms.pgscan_khugepaged_bytes, 0);
	ck_assert(ms.present & (1ULL << MR_MEMSTAT_PGSTEAL_PROACTIVE));
	ck_assert(ms.present & (1ULL << MR_MEMSTAT_PGSCAN_KHUGEPAGED));
	/* 6.1 prints neither khugepaged nor proactive: absent, not 0. */
	parse(stat_6_1_then, &ms);
	ck_assert(!(ms.present & (1ULL << MR_MEMSTAT_PGSTEAL_PROACTIVE)));
	ck_assert(!(ms.present & (1ULL << MR_MEMSTAT_PGSCAN_KHUGEPAGED)));
	ck_assert(ms.present & (1ULL << MR_MEMSTAT_PGSTEAL_DIRECT));
}
END_TEST

START_TEST(own_reclaim_out_of_direct_before_6_15)
{
	struct mri_own_reclaim own = { .reclaim_file_bytes = 8 * MiB };
	struct mr_memstat a, b;
	struct mri_reclaim_counts c;

	parse(stat_6_1_then, &a);
	parse(stat_6_1_now, &b);
	mri_reclaim_counts(&a, &b, &own, &c);
	ck_assert(c.has_totals && c.has_direct && !c.has_proactive);
	ck_assert_uint_eq(c.steal_bytes, 10 * MiB);
	ck_assert_uint_eq(c.scan_bytes, 3000 * 4096);
	/* The tasks' own: 2 MiB, not 10. */
	ck_assert_uint_eq(c.direct_steal_bytes, 2 * MiB);
	/* Without the library's part, all 10 MiB look like the tasks'. */
	mri_reclaim_counts(&a, &b, NULL, &c);
	ck_assert_uint_eq(c.direct_steal_bytes, 10 * MiB);
	/* The library's count above the kernel's (its fall in usage also
	 * takes in uncharged pages): 0, not a wrap. */
	own.reclaim_file_bytes = 64 * MiB;
	mri_reclaim_counts(&a, &b, &own, &c);
	ck_assert_uint_eq(c.direct_steal_bytes, 0);
}
END_TEST

START_TEST(own_reclaim_is_proactive_from_6_15)
{
	struct mri_own_reclaim own = { .reclaim_file_bytes = 8 * MiB,
				       .limit_write_bytes = 1 * MiB };
	struct mr_memstat a, b;
	struct mri_reclaim_counts c;

	/* 8 MiB by memory.reclaim in the proactive pair; 3 MiB direct, of
	 * which 1 MiB the library's memory.high write. */
	parse("pgscan 0\npgsteal 0\npgscan_direct 0\npgsteal_direct 0\n"
	      "pgscan_proactive 0\npgsteal_proactive 0\n", &a);
	parse("pgscan 2816\npgsteal 2816\npgscan_direct 768\n"
	      "pgsteal_direct 768\npgscan_proactive 2048\n"
	      "pgsteal_proactive 2048\n", &b);
	mri_reclaim_counts(&a, &b, &own, &c);
	ck_assert(c.has_proactive);
	ck_assert_uint_eq(c.steal_bytes, 11 * MiB);
	ck_assert_uint_eq(c.direct_steal_bytes, 2 * MiB);
}
END_TEST

START_TEST(ratios_clamped)
{
	struct mr_memstat a, b;
	struct mri_reclaim_counts c;

	ck_assert_uint_eq(mri_ratio_ppm(1, 4), 250000);
	ck_assert_uint_eq(mri_ratio_ppm(5, 4), 1000000);
	ck_assert_uint_eq(mri_ratio_ppm(UINT64_MAX, UINT64_MAX - 1), 1000000);
	ck_assert_uint_eq(mri_ratio_ppm(UINT64_MAX - 1, UINT64_MAX),
			  999999);
	ck_assert_uint_eq(mri_ratio_ppm(7, 0), 0);
	/* pgsteal read after more pages were stolen than pgscan had seen
	 * scanned in the same read: efficiency 1, never above. */
	parse("pgscan 100\npgsteal 100\n", &a);
	parse("pgscan 150\npgsteal 170\n", &b);
	mri_reclaim_counts(&a, &b, NULL, &c);
	ck_assert_uint_eq(c.efficiency_ppm, 1000000);
	ck_assert(!c.has_direct);
	ck_assert_uint_eq(c.direct_steal_bytes, 0);
	/* A counter that fell (the group recreated): 0. */
	mri_reclaim_counts(&b, &a, NULL, &c);
	ck_assert_uint_eq(c.steal_bytes, 0);
	ck_assert_uint_eq(c.efficiency_ppm, 0);
	/* cgroup v1: no totals, nothing counted. */
	a.present = b.present = 0;
	mri_reclaim_counts(&a, &b, NULL, &c);
	ck_assert(!c.has_totals);
}
END_TEST

static Suite *reclaimcount_suite(void)
{
	Suite *s = suite_create("reclaimcount");
	TCase *tc = tcase_create("counts");

	tcase_add_test(tc, totals_are_the_kernels_lines);
	tcase_add_test(tc, own_reclaim_out_of_direct_before_6_15);
	tcase_add_test(tc, own_reclaim_is_proactive_from_6_15);
	tcase_add_test(tc, ratios_clamped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(reclaimcount_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
