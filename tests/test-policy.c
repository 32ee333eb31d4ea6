/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy math: batch size, throttle curves, THP decision. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "group.h"
#include "memreclaim.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define SCM MR_SWAP_CLUSTER_MAX_BYTES

/* ---------------------------------------------------------------- batch */

START_TEST(batch_floor_and_ceiling)
{
	uint64_t excess, b;

	/* Never below 128 KiB unless the excess is smaller. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(0, GiB, 250000,
						      64 * MiB, 0), 0);
	ck_assert_uint_eq(mr_batch_proportional_bytes(4 * KiB, GiB, 250000,
						      64 * MiB, 0), 4 * KiB);
	ck_assert_uint_eq(mr_batch_proportional_bytes(100, GiB, 250000,
						      64 * MiB, 0), 100);
	ck_assert_uint_eq(mr_batch_proportional_bytes(200 * KiB, GiB, 250000,
						      64 * MiB, 0), SCM);
	for (excess = 4 * KiB; excess < 64 * GiB; excess = excess * 3 / 2 + 4096) {
		b = mr_batch_proportional_bytes(excess, 2 * GiB, 250000,
						64 * MiB, 125000);
		ck_assert_uint_le(b, excess);
		ck_assert_uint_le(b, 64 * MiB);
		ck_assert_uint_le(b, 2 * GiB / 8);
		if (excess >= SCM)
			ck_assert_uint_ge(b, SCM);
		if (b >= 4096)
			ck_assert_uint_eq(b % 4096, 0);
	}
	/* A quarter of the excess in the middle range. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(16 * MiB, GiB, 250000,
						      64 * MiB, 0), 4 * MiB);
	/* The relative ceiling binds when smaller than max_bytes. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(GiB, 100 * MiB, 1000000,
						      64 * MiB, 100000),
			  10 * MiB);
	/* No relative ceiling without a limit. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(GiB, MR_UNLIMITED,
						      1000000, 64 * MiB,
						      100000),
			  64 * MiB);
	/* A ceiling below the floor is raised to the floor. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(GiB, 256 * KiB, 1000000,
						      MR_UNLIMITED, 1),
			  SCM);
}
END_TEST

START_TEST(batch_no_overflow)
{
	uint64_t b = mr_batch_proportional_bytes(UINT64_MAX, UINT64_MAX - 1,
						 1000000, MR_UNLIMITED,
						 1000000);

	ck_assert_uint_eq(b, (UINT64_MAX - 1) & ~4095ULL);
	ck_assert_uint_eq(mr_batch_proportional_bytes(UINT64_MAX, MR_UNLIMITED,
						      1000000, MR_UNLIMITED,
						      0),
			  UINT64_MAX & ~4095ULL);
	/* Out-of-range shares are clamped, not trusted. */
	ck_assert_uint_eq(mr_batch_proportional_bytes(GiB, MR_UNLIMITED,
						      5000000, MR_UNLIMITED,
						      0),
			  GiB);
	ck_assert_uint_eq(mr_batch_proportional_bytes(GiB, MR_UNLIMITED, 0,
						      MR_UNLIMITED, 0),
			  SCM);
}
END_TEST

/* Calls to free `total` bytes when every call frees what it asks. */
static unsigned calls_to_free(uint64_t total, uint64_t limit, int fixed)
{
	uint64_t left = total, b;
	unsigned calls = 0;

	while (left) {
		b = fixed ? (left < SCM ? left : SCM) :
			mr_batch_proportional_bytes(left, limit,
						    MR_BATCH_DEFAULT_SHARE_PPM,
						    MR_BATCH_DEFAULT_MAX_BYTES,
						    MR_BATCH_DEFAULT_MAX_PPM);
		ck_assert_uint_gt(b, 0);
		left -= b;
		calls++;
	}
	return calls;
}

START_TEST(batch_proportional_needs_fewer_calls)
{
	static const uint64_t limits[] = { 256 * MiB, GiB, 4 * GiB, 64 * GiB,
					   MR_UNLIMITED };
	unsigned fixed = calls_to_free(GiB, GiB, 1), prop;
	size_t i;

	ck_assert_uint_eq(fixed, 8192);
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		prop = calls_to_free(GiB, limits[i], 0);
		ck_assert_msg(prop * 16 <= fixed,
			      "limit %llu: %u calls vs %u",
			      (unsigned long long)limits[i], prop, fixed);
	}
}
END_TEST

/* ------------------------------------------------------------- throttle */

static const struct mr_throttle_curve kernel_curve = {
	.kind = MR_THROTTLE_KERNEL,
	.max_delay_ns = MR_THROTTLE_KERNEL_MAX_DELAY_NS,
};

static uint64_t delay(const struct mr_throttle_curve *c, uint64_t usage,
		      uint64_t high, uint64_t charge)
{
	uint64_t d = UINT64_MAX;

	ck_assert_int_eq(mr_throttle_delay_ns(c, usage, high, charge, &d), 0);
	return d;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

START_TEST(throttle_kernel_table)
{
	/* mm/memcontrol.c calculate_high_delay(), high = 100 MiB, one
	 * 64-page charge, truncated to ms as the kernel's jiffies are. */
	static const struct { uint64_t usage_mib, ms; } rows[] = {
		{ 101, 6 }, { 105, 159 }, { 110, 639 }, { 115, 1439 },
		{ 118, 2000 }, { 150, 2000 }, { 100000, 2000 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_uint_eq(delay(&kernel_curve, rows[i].usage_mib * MiB,
					100 * MiB, 64 * 4096) / 1000000,
				  rows[i].ms);
}
END_TEST

START_TEST(throttle_zero_at_or_below_high)
{
	static const struct mr_throttle_point pts[] = {
		{ 0, 5000000 }, { 100000, 50000000 },
	};
	struct mr_throttle_curve curves[] = {
		{ .kind = MR_THROTTLE_NONE, .max_delay_ns = UINT64_MAX },
		{ .kind = MR_THROTTLE_LINEAR, .max_delay_ns = UINT64_MAX,
		  .scale_ns = UINT64_MAX },
		{ .kind = MR_THROTTLE_KERNEL, .max_delay_ns = UINT64_MAX },
		{ .kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = UINT64_MAX,
		  .scale_ns = UINT64_MAX, .doubling_ppm = 1 },
		{ .kind = MR_THROTTLE_TABLE, .max_delay_ns = UINT64_MAX,
		  .points = pts, .npoints = 2 },
	};
	static const uint64_t highs[] = { 0, 1, 4096, 100 * MiB, UINT64_MAX };
	size_t i, j;

	for (i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
		for (j = 0; j < sizeof(highs) / sizeof(highs[0]); j++) {
			ck_assert_uint_eq(delay(&curves[i], highs[j], highs[j],
						UINT64_MAX), 0);
			if (highs[j])
				ck_assert_uint_eq(delay(&curves[i], highs[j] - 1,
							highs[j], UINT64_MAX),
						  0);
			ck_assert_uint_eq(delay(&curves[i], 0, highs[j],
						64 * 4096), 0);
		}
	}
}
END_TEST

START_TEST(throttle_monotone_and_clamped)
{
	static const struct mr_throttle_point pts[] = {
		{ 10000, 1000000 }, { 50000, 1000000 }, { 200000, 900000000 },
	};
	struct mr_throttle_curve curves[] = {
		{ .kind = MR_THROTTLE_LINEAR, .max_delay_ns = 2000000000,
		  .scale_ns = 1000000000 },
		{ .kind = MR_THROTTLE_KERNEL, .max_delay_ns = 2000000000 },
		{ .kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = 2000000000,
		  .scale_ns = 1000000, .doubling_ppm = 20000 },
		{ .kind = MR_THROTTLE_TABLE, .max_delay_ns = 2000000000,
		  .points = pts, .npoints = 3 },
	};
	static const uint64_t highs[] = { 0, 4096, 100 * MiB, 3 * GiB,
					  UINT64_MAX / 3 };
	uint64_t usage, prev, d, step;
	size_t i, j;

	for (i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
		for (j = 0; j < sizeof(highs) / sizeof(highs[0]); j++) {
			prev = 0;
			step = highs[j] / 997 + 1;
			for (usage = highs[j];
			     usage - highs[j] < highs[j] * 2 + 8192 &&
			     usage < UINT64_MAX - step;
			     usage += step) {
				d = delay(&curves[i], usage, highs[j], 64 * 4096);
				ck_assert_uint_ge(d, prev);
				ck_assert_uint_le(d, 2000000000);
				prev = d;
			}
			/* The far end saturates: at the clamp, or at the
			 * table's last point where that is lower. */
			ck_assert_uint_eq(delay(&curves[i], UINT64_MAX,
						highs[j], 64 * 4096),
					  curves[i].kind == MR_THROTTLE_TABLE ?
					  900000000 : 2000000000);
		}
	}
}
END_TEST

START_TEST(throttle_no_overflow)
{
	struct mr_throttle_curve c = kernel_curve;

	c.max_delay_ns = UINT64_MAX;
	/* Every extreme gives a defined, non-decreasing answer. */
	ck_assert_uint_eq(delay(&c, UINT64_MAX, 0, UINT64_MAX), UINT64_MAX);
	ck_assert_uint_eq(delay(&c, UINT64_MAX, UINT64_MAX - 1, 0), 0);
	ck_assert_uint_ge(delay(&c, UINT64_MAX, UINT64_MAX - 4096, UINT64_MAX),
			  delay(&c, UINT64_MAX - 1, UINT64_MAX - 4096,
				UINT64_MAX));
	ck_assert_uint_eq(delay(&kernel_curve, UINT64_MAX, 0, 1), 2000000000);
	/* high = 0 counts as one page in the ratio: a usage of one page is
	 * r = 1 (64 s), of two pages r = 2 (256 s). */
	ck_assert_uint_eq(delay(&c, 4096, 0, 64 * 4096), 64000000000ULL);
	ck_assert_uint_eq(delay(&c, 8192, 0, 64 * 4096), 256000000000ULL);
	ck_assert_uint_eq(delay(&kernel_curve, 8192, 0, 64 * 4096),
			  2000000000);
	/* Zero maximum: never a delay. */
	c.max_delay_ns = 0;
	ck_assert_uint_eq(delay(&c, UINT64_MAX, 0, UINT64_MAX), 0);
}
END_TEST

START_TEST(throttle_charge_scaling)
{
	struct mr_throttle_curve c = kernel_curve;
	uint64_t one = delay(&c, 110 * MiB, 100 * MiB, 64 * 4096);
	uint64_t quarter = delay(&c, 110 * MiB, 100 * MiB, 16 * 4096);

	/* Four 16-page charges wait about as long as one 64-page charge. */
	ck_assert_uint_le(one - 4 * quarter, 4);
	ck_assert_uint_eq(delay(&c, 110 * MiB, 100 * MiB, 0), 0);
}
END_TEST

START_TEST(throttle_shapes)
{
	static const struct mr_throttle_point pts[] = {
		{ 100000, 10000000 }, { 300000, 50000000 },
	};
	struct mr_throttle_curve lin = { .kind = MR_THROTTLE_LINEAR,
		.max_delay_ns = UINT64_MAX, .scale_ns = 1000000000 };
	struct mr_throttle_curve exp = { .kind = MR_THROTTLE_EXPONENTIAL,
		.max_delay_ns = UINT64_MAX, .scale_ns = 1000000,
		.doubling_ppm = 100000 };
	struct mr_throttle_curve tab = { .kind = MR_THROTTLE_TABLE,
		.max_delay_ns = UINT64_MAX, .points = pts, .npoints = 2 };
	uint64_t h = 1 << 30; /* a power of two: exact ratios */

	/* Linear: the scale at r = 1, half of it at r = 1/2. */
	ck_assert_uint_eq(delay(&lin, 2 * h, h, 64 * 4096), 1000000000);
	ck_assert_uint_eq(delay(&lin, h + h / 2, h, 64 * 4096), 500000000);
	/* Exponential: 1x the scale at one doubling, 3x at two, 7x at
	 * three (2^n - 1). */
	ck_assert_uint_le(absdiff(1000000, delay(&exp, h + h / 10, h,
						 64 * 4096)), 1000);
	ck_assert_uint_le(absdiff(3000000, delay(&exp, h + h / 5, h,
						 64 * 4096)), 1000);
	ck_assert_uint_le(absdiff(7000000, delay(&exp, h + h / 10 * 3, h,
						 64 * 4096)), 1000);
	/* Table: (0,0) implicit, linear between points, flat after. */
	ck_assert_uint_le(absdiff(5000000, delay(&tab, h + h / 20, h,
						 64 * 4096)), 1000);
	ck_assert_uint_le(absdiff(30000000, delay(&tab, h + h / 5, h,
						  64 * 4096)), 1000);
	ck_assert_uint_eq(delay(&tab, 10 * h, h, 64 * 4096), 50000000);
}
END_TEST

START_TEST(throttle_bad_curves)
{
	static const struct mr_throttle_point unordered[] = {
		{ 200000, 1 }, { 100000, 2 },
	};
	static const struct mr_throttle_point decreasing[] = {
		{ 100000, 5 }, { 200000, 4 },
	};
	struct mr_throttle_curve c = { .kind = MR_THROTTLE_TABLE };
	uint64_t d = 42;

	ck_assert_int_eq(mr_throttle_delay_ns(NULL, 2, 1, 1, &d), -EINVAL);
	ck_assert_int_eq(mr_throttle_delay_ns(&kernel_curve, 2, 1, 1, NULL),
			 -EINVAL);
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.points = unordered;
	c.npoints = 2;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.points = decreasing;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.npoints = MR_THROTTLE_MAX_POINTS + 1;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.kind = MR_THROTTLE_EXPONENTIAL;
	c.doubling_ppm = 0;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.kind = 99;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	/* Bad input leaves the output alone. */
	ck_assert_uint_eq(d, 42);
	/* Even below high, a bad curve is an error, not a silent 0. */
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 0, 1, 1, &d), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ THP */

static int thp(int policy, uint64_t usage, uint64_t limit, uint64_t margin,
	       uint64_t clean, uint64_t budget)
{
	int advice = -1;

	ck_assert_int_eq(mr_thp_decide(policy, 2 * MiB, usage, limit, margin,
				       clean, budget, &advice), 0);
	return advice;
}

START_TEST(thp_decisions)
{
	int p;

	for (p = MR_THP_RECLAIM_FULL; p <= MR_THP_BUDGET; p++) {
		/* Room below limit - margin: a huge page, whatever policy. */
		ck_assert_int_eq(thp(p, 100 * MiB, 256 * MiB, 32 * MiB, 0, 0),
				 MR_THP_ADVICE_HUGE);
		ck_assert_int_eq(thp(p, 222 * MiB, 256 * MiB, 32 * MiB, 0, 0),
				 MR_THP_ADVICE_HUGE);
		ck_assert_int_eq(thp(p, UINT64_MAX, MR_UNLIMITED, 0, 0, 0),
				 MR_THP_ADVICE_HUGE);
		/* Cannot fit even in an empty group. */
		ck_assert_int_eq(thp(p, 0, 3 * MiB, 2 * MiB, GiB, GiB),
				 MR_THP_ADVICE_SMALL);
		ck_assert_int_eq(thp(p, 0, MiB, UINT64_MAX, GiB, GiB),
				 MR_THP_ADVICE_SMALL);
	}
	/* 1 MiB short of room (usage 223 MiB of 224 MiB usable). */
	ck_assert_int_eq(thp(MR_THP_RECLAIM_FULL, 223 * MiB, 256 * MiB,
			     32 * MiB, 0, 0),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(thp(MR_THP_CLEAN_CACHE, 223 * MiB, 256 * MiB,
			     32 * MiB, MiB, 0),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(thp(MR_THP_CLEAN_CACHE, 223 * MiB, 256 * MiB,
			     32 * MiB, MiB - 1, GiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(thp(MR_THP_FALLBACK, 223 * MiB, 256 * MiB, 32 * MiB,
			     GiB, GiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(thp(MR_THP_BUDGET, 223 * MiB, 256 * MiB, 32 * MiB,
			     GiB, MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(thp(MR_THP_BUDGET, 223 * MiB, 256 * MiB, 32 * MiB,
			     GiB, MiB - 1),
			 MR_THP_ADVICE_SMALL);
	/* Usage far above the limit: no overflow, still a shortfall. */
	ck_assert_int_eq(thp(MR_THP_CLEAN_CACHE, UINT64_MAX, 256 * MiB, 0,
			     GiB, 0),
			 MR_THP_ADVICE_SMALL);
}
END_TEST

START_TEST(thp_bad_input)
{
	int advice = 7;

	ck_assert_int_eq(mr_thp_decide(MR_THP_FALLBACK, 2 * MiB, 0, GiB, 0, 0,
				       0, NULL), -EINVAL);
	ck_assert_int_eq(mr_thp_decide(99, 2 * MiB, 0, GiB, 0, 0, 0, &advice),
			 -EINVAL);
	ck_assert_int_eq(mr_thp_decide(-1, 2 * MiB, 0, GiB, 0, 0, 0, &advice),
			 -EINVAL);
	ck_assert_int_eq(mr_thp_decide(MR_THP_FALLBACK, 0, 0, GiB, 0, 0, 0,
				       &advice), -EINVAL);
	ck_assert_int_eq(advice, 7);
}
END_TEST

/* ------------------------------------------------------ worker marks */

START_TEST(margin_marks)
{
	struct mri_policy p = { .margin_bytes = 32 * MiB,
				.hysteresis_bytes = 32 * MiB };
	uint64_t hi = 1, lo = 1;

	ck_assert_int_eq(mri_margin_marks(&p, 256 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(hi, 224 * MiB);
	ck_assert_uint_eq(lo, 192 * MiB);
	/* The limit fell: the hysteresis is capped at half of what is left,
	 * so the worker never empties the group. */
	ck_assert_int_eq(mri_margin_marks(&p, 80 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(hi, 48 * MiB);
	ck_assert_uint_eq(lo, 24 * MiB);
	/* The margin at or above the limit, or no limit: nothing to keep. */
	ck_assert_int_eq(mri_margin_marks(&p, 32 * MiB, &hi, &lo), -ERANGE);
	ck_assert_int_eq(mri_margin_marks(&p, 16 * MiB, &hi, &lo), -ERANGE);
	ck_assert_int_eq(mri_margin_marks(&p, MR_UNLIMITED, &hi, &lo),
			 -ERANGE);
	/* In ppm of the limit, without overflow. */
	p = (struct mri_policy){ .margin_ppm = 125000, .hysteresis_bytes = 0 };
	ck_assert_int_eq(mri_margin_marks(&p, 256 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(hi, 224 * MiB);
	ck_assert_uint_eq(lo, 224 * MiB);
	ck_assert_uint_eq(mri_margin_bytes(&p, UINT64_MAX - 1),
			  (UINT64_MAX - 1) / 8);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc;

	tc = tcase_create("batch");
	tcase_add_test(tc, batch_floor_and_ceiling);
	tcase_add_test(tc, batch_no_overflow);
	tcase_add_test(tc, batch_proportional_needs_fewer_calls);
	suite_add_tcase(s, tc);

	tc = tcase_create("throttle");
	tcase_add_test(tc, throttle_kernel_table);
	tcase_add_test(tc, throttle_zero_at_or_below_high);
	tcase_add_test(tc, throttle_monotone_and_clamped);
	tcase_add_test(tc, throttle_no_overflow);
	tcase_add_test(tc, throttle_charge_scaling);
	tcase_add_test(tc, throttle_shapes);
	tcase_add_test(tc, throttle_bad_curves);
	suite_add_tcase(s, tc);

	tc = tcase_create("margin");
	tcase_add_test(tc, margin_marks);
	suite_add_tcase(s, tc);

	tc = tcase_create("thp");
	tcase_add_test(tc, thp_decisions);
	tcase_add_test(tc, thp_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(policy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
