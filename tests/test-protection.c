/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Effective memory.low/min (lib/cgroupfs/protection.c) against examples worked by
 * hand from the kernel's algorithm: Linux 6.1 mm/memcontrol.c,
 * effective_protection() (called by mem_cgroup_calculate_protection()
 * with the parent's children_low_usage/children_min_usage as
 * siblings_protected). All values in pages; "rec" is the
 * memory_recursiveprot mount option (CGRP_ROOT_MEMORY_RECURSIVE_PROT).
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "protection.h"

static const struct {
	const char *what;
	uint64_t usage, parent_usage, setting, parent_effective, siblings;
	bool rec;
	uint64_t want;
} cases[] = {
	/* Within the parent's protection: protected = min(usage, setting)
	 * = min(50, 30) = 30; siblings 60 <= parent 100, so 30. */
	{ "within, no rec", 50, 200, 30, 100, 60, false, 30 },
	/* The same with recursiveprot: unclaimed = (100 - 60) * (50 - 30)
	 * / (200 - 60) = 800 / 140 = 5 (integer division); 30 + 5. */
	{ "within, rec", 50, 200, 30, 100, 60, true, 35 },
	/* Overcommitted: siblings 150 > parent 100, so the share
	 * protected * parent / siblings = 60 * 100 / 150 = 40. */
	{ "overcommitted", 80, 200, 60, 100, 150, false, 40 },
	/* recursiveprot changes nothing when overcommitted. */
	{ "overcommitted, rec", 80, 200, 60, 100, 150, true, 40 },
	/* Usage below the setting: protected = 20; rec adds nothing since
	 * usage is not above protected. */
	{ "usage below setting", 20, 200, 60, 100, 50, false, 20 },
	{ "usage below setting, rec", 20, 200, 60, 100, 50, true, 20 },
	/* No setting of its own: 0 without rec; with rec, the unclaimed
	 * (300 - 100) * (100 - 0) / (400 - 100) = 20000 / 300 = 66. */
	{ "no setting, no rec", 100, 400, 0, 300, 100, false, 0 },
	{ "no setting, rec", 100, 400, 0, 300, 100, true, 66 },
	/* An unprotected parent protects nobody: 50 * 0 / 50 = 0. */
	{ "parent unprotected", 100, 400, 50, 0, 50, true, 0 },
	/* parent_usage not above siblings_protected (read at another
	 * moment than the parent's effective value): the division is
	 * skipped, 30 stays. */
	{ "parent usage guard, rec", 50, 60, 30, 100, 60, true, 30 },
	/* "max" as a setting (PAGE_COUNTER_MAX): protected = usage = 10;
	 * siblings 10 <= parent 100; rec: usage is not above protected. */
	{ "setting max", 10, 100, UINT64_MAX, 100, 10, true, 10 },
	/* Products beyond 64 bits: 2^40 pages claimed by siblings twice
	 * the parent's 2^40: half of 2^40 = 2^39. */
	{ "128-bit product", 1ULL << 40, 1ULL << 42, 1ULL << 40, 1ULL << 40,
	  1ULL << 41, false, 1ULL << 39 },
};

START_TEST(table)
{
	uint64_t got = mri_effective_protection(
		cases[_i].usage, cases[_i].parent_usage, cases[_i].setting,
		cases[_i].parent_effective, cases[_i].siblings,
		cases[_i].rec);

	ck_assert_msg(got == cases[_i].want, "%s: got %llu, want %llu",
		      cases[_i].what, (unsigned long long)got,
		      (unsigned long long)cases[_i].want);
}
END_TEST

/* Two levels, as mem_cgroup_calculate_protection() walks them: A, a
 * child of the root, low 300, usage 400; its children B (usage 100, low
 * 0) and C (usage 300, low 100). A's effective low is its own, 300.
 * children_low_usage of A = min(100, 0) + min(300, 100) = 100.
 * Without rec: B 0, C min(300, 100) = 100.
 * With rec: B 0 + (300 - 100) * (100 - 0) / (400 - 100) = 66;
 * C 100 + 200 * (300 - 100) / 300 = 100 + 133 = 233. */
START_TEST(two_levels)
{
	const uint64_t ea = 300, siblings = 100;

	ck_assert_uint_eq(mri_effective_protection(100, 400, 0, ea, siblings,
						   false), 0);
	ck_assert_uint_eq(mri_effective_protection(300, 400, 100, ea,
						   siblings, false), 100);
	ck_assert_uint_eq(mri_effective_protection(100, 400, 0, ea, siblings,
						   true), 66);
	ck_assert_uint_eq(mri_effective_protection(300, 400, 100, ea,
						   siblings, true), 233);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("protection");
	TCase *tc = tcase_create("effective_protection");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, table, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, two_levels);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
