/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rule of a group stuck at memory.high (lib/core/stuckhigh.h): each
 * of its conditions, at and just past its threshold.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "stuckhigh.h"

#define MiB (1024ULL * 1024)
#define SEC 1000000000ULL

/* One second: 5000 high events, no max, full 30 %, no swap, 95 MiB that
 * reclaim cannot take under a high of 100 MiB. */
static struct mri_stuck_input stuck(void)
{
	return (struct mri_stuck_input){
		.interval_ns = SEC, .high_events = 5000, .max_events = 0,
		.full_stall_ns = 300000000, .high_bytes = 100 * MiB,
		.usage_bytes = 100 * MiB, .unreclaimable_bytes = 95 * MiB,
		.swap_usable = false,
	};
}

START_TEST(each_condition)
{
	struct mri_stuck_figures f;
	struct mri_stuck_input in = stuck();

	ck_assert(mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.high_events_per_s, 5000);
	ck_assert_uint_eq(f.full_ppm, 300000);
	ck_assert_uint_eq(f.fill_ppm, 950000);
	/* High events: one a second is enough (a single throttled task),
	 * fewer is not. */
	in.high_events = 2;
	in.interval_ns = 2 * SEC;
	ck_assert(mri_stuck_high(&in, NULL));
	in.high_events = 1;
	ck_assert(!mri_stuck_high(&in, NULL));
	/* A max or oom event: a limit met, not high. */
	in = stuck();
	in.max_events = 1;
	ck_assert(!mri_stuck_high(&in, NULL));
	/* Full stall: 10 % is enough. */
	in = stuck();
	in.full_stall_ns = SEC / 10;
	ck_assert(mri_stuck_high(&in, NULL));
	in.full_stall_ns = SEC / 10 - 1;
	ck_assert(!mri_stuck_high(&in, NULL));
	/* Swap it can use: reclaim can help. */
	in = stuck();
	in.swap_usable = true;
	ck_assert(!mri_stuck_high(&in, NULL));
	/* What reclaim cannot take at 90 % of high. */
	in = stuck();
	in.unreclaimable_bytes = 90 * MiB;
	ck_assert(mri_stuck_high(&in, NULL));
	in.unreclaimable_bytes = 89 * MiB;
	ck_assert(!mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.fill_ppm, 890000);
	/* Above high entirely: filled. */
	in.unreclaimable_bytes = 200 * MiB;
	ck_assert(mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.fill_ppm, 1000000);
	/* Usage under high at the sample: reclaim at high brought it back
	 * under (a group of 95 % anon streaming file I/O through the rest:
	 * events and stall, but not held over high). At high is enough. */
	in = stuck();
	in.usage_bytes = 100 * MiB - 4096;
	ck_assert(!mri_stuck_high(&in, NULL));
	in.usage_bytes = 100 * MiB;
	ck_assert(mri_stuck_high(&in, NULL));
	/* No high. */
	in = stuck();
	in.high_bytes = MR_UNLIMITED;
	ck_assert(!mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.fill_ppm, 0);
	/* An interval too short to judge; none at all. */
	in = stuck();
	in.interval_ns = MRI_STUCK_MIN_INTERVAL_NS - 1;
	ck_assert(!mri_stuck_high(&in, NULL));
	in.interval_ns = 0;
	ck_assert(!mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.high_events_per_s, 0);
	/* Full stall above the interval (counted late): 100 %. */
	in = stuck();
	in.full_stall_ns = 3 * SEC;
	ck_assert(mri_stuck_high(&in, &f));
	ck_assert_uint_eq(f.full_ppm, 1000000);
}
END_TEST

static Suite *stuckhigh_suite(void)
{
	Suite *s = suite_create("stuckhigh");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, each_condition);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stuckhigh_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
