/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy math: batch size, throttle curves, THP decision. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "group.h"
#include "memreclaim.h"
#include "worker.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define CURVE_SIZE sizeof(struct mr_throttle_curve)
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
	.size = CURVE_SIZE,
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
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_NONE, .max_delay_ns = UINT64_MAX },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_LINEAR, .max_delay_ns = UINT64_MAX,
		  .scale_ns = UINT64_MAX },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_KERNEL, .max_delay_ns = UINT64_MAX },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = UINT64_MAX,
		  .scale_ns = UINT64_MAX, .doubling_ppm = 1 },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_TABLE, .max_delay_ns = UINT64_MAX,
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
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_LINEAR, .max_delay_ns = 2000000000,
		  .scale_ns = 1000000000 },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_KERNEL, .max_delay_ns = 2000000000 },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = 2000000000,
		  .scale_ns = 1000000, .doubling_ppm = 20000 },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_TABLE, .max_delay_ns = 2000000000,
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
	struct mr_throttle_curve lin = { .size = CURVE_SIZE,
		.kind = MR_THROTTLE_LINEAR,
		.max_delay_ns = UINT64_MAX, .scale_ns = 1000000000 };
	struct mr_throttle_curve exp = { .size = CURVE_SIZE,
		.kind = MR_THROTTLE_EXPONENTIAL,
		.max_delay_ns = UINT64_MAX, .scale_ns = 1000000,
		.doubling_ppm = 100000 };
	struct mr_throttle_curve tab = { .size = CURVE_SIZE,
		.kind = MR_THROTTLE_TABLE,
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
	struct mr_throttle_curve c = {
		.size = CURVE_SIZE, .kind = MR_THROTTLE_TABLE,
	};
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
	/* A curve of another size: an unset one (0), and a larger one whose
	 * appended fields this library could not read. */
	c = kernel_curve;
	c.size = 0;
	ck_assert_int_eq(mr_throttle_delay_ns(&c, 2, 1, 1, &d), -EINVAL);
	c.size = CURVE_SIZE + 8;
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
				.hysteresis_bytes = 32 * MiB,
				.margin_limit_bytes = 256 * MiB };
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
	/* A hysteresis the setter accepted at this limit is whole, up to
	 * all of limit - margin; the cap starts only below that limit (or
	 * for any limit, when the margin was set with none). */
	p = (struct mri_policy){ .margin_bytes = 8 * MiB,
				 .hysteresis_bytes = 56 * MiB,
				 .margin_limit_bytes = 64 * MiB };
	ck_assert_int_eq(mri_margin_marks(&p, 64 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(hi, 56 * MiB);
	ck_assert_uint_eq(lo, 0);
	ck_assert_int_eq(mri_margin_marks(&p, 96 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(lo, 32 * MiB);
	ck_assert_int_eq(mri_margin_marks(&p, 48 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(hi, 40 * MiB);
	ck_assert_uint_eq(lo, 20 * MiB);
	p.margin_limit_bytes = MR_UNLIMITED;
	ck_assert_int_eq(mri_margin_marks(&p, 64 * MiB, &hi, &lo), 0);
	ck_assert_uint_eq(lo, 28 * MiB);
}
END_TEST

/* ------------------------------------------- the loop and the worker pass,
 * on a fake backend: a group of `usage` bytes, `file` of them reclaimable
 * page cache, under `limit`, living in a clock of its own that only a
 * reclaim call moves. A group's priv holds a pointer to its struct fake. */

struct fake {
	uint64_t usage, limit, file;
	uint64_t usage_read;      /* read_usage answers this when not 0 (a
				     program gave memory back meanwhile) */
	uint64_t per_call;        /* most a reclaim call frees */
	int fail;                 /* every call answers this (0: none) */
	unsigned reclaim_calls;
	int reclaim_policy;       /* scheduling policy of the last caller */
	uint64_t clock_ns;        /* the group's clock */
	uint64_t ns_per_call;     /* what a reclaim call takes in it */
	uint64_t threshold;       /* armed usage threshold */
	int efd;                  /* its event fd, once opened (0: none) */
	void (*on_reclaim)(struct fake *f); /* called in each reclaim call */
};

static struct fake *fk(void *priv)
{
	return *(struct fake **)priv;
}

static int fake_read_usage(void *priv, uint64_t *usage)
{
	struct fake *f = fk(priv);

	if (f->fail)
		return f->fail;
	*usage = f->usage_read ? f->usage_read : f->usage;
	return 0;
}

static int fake_read_limits(void *priv, struct mr_limits *l)
{
	struct fake *f = fk(priv);

	if (f->fail)
		return f->fail;
	l->usage_bytes = f->usage;
	l->limit_bytes = l->own_limit_bytes = f->limit;
	return 0;
}

static int fake_read_memstat(void *priv, struct mr_memstat *m)
{
	struct fake *f = fk(priv);

	if (f->fail)
		return f->fail;
	m->present = (1ULL << MR_MEMSTAT_INACTIVE_FILE) |
		     (1ULL << MR_MEMSTAT_ACTIVE_FILE) |
		     (1ULL << MR_MEMSTAT_FILE) | (1ULL << MR_MEMSTAT_ANON);
	m->inactive_file_bytes = f->file / 2;
	m->active_file_bytes = f->file - f->file / 2;
	m->file_bytes = f->file;
	m->anon_bytes = f->usage - f->file;
	return 0;
}

static int fake_reclaim(void *priv, uint64_t bytes, uint64_t *asked,
			uint64_t *freed)
{
	struct fake *f = fk(priv);
	uint64_t n = bytes;

	if (f->fail)
		return f->fail;
	if (!f->file)
		return -EAGAIN;
	f->reclaim_calls++;
	f->reclaim_policy = sched_getscheduler(0);
	f->clock_ns += f->ns_per_call;
	if (f->on_reclaim)
		f->on_reclaim(f);
	if (f->per_call && n > f->per_call)
		n = f->per_call;
	if (n > f->file)
		n = f->file;
	f->file -= n;
	f->usage -= n;
	*asked = bytes;
	*freed = n;
	return 0;
}

static int fake_threshold(void *priv, uint64_t bytes)
{
	struct fake *f = fk(priv);

	if (!f->fail)
		f->threshold = bytes;
	return f->fail;
}

static int fake_event_ack(void *priv)
{
	struct fake *f = fk(priv);
	uint64_t n;

	if (f->efd <= 0)
		return 0;
	if (read(f->efd, &n, sizeof(n)) < 0)
		return errno == EAGAIN ? 0 : -errno;
	return 1;
}

/* The kernel's side: usage crossed the armed threshold. */
static void fake_cross(struct fake *f)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(f->efd, &one, sizeof(one)), sizeof(one));
}

/* The struct fake the next open takes (tests open one group at a time). */
static struct fake *opening;

static int fake_open(void *priv, const char *path,
		     const struct mri_open_env *env)
{
	struct fake *f = opening;

	(void)path;
	if (!f)
		return -ENOENT;
	*(struct fake **)priv = f;
	f->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->efd < 0)
		return -errno;
	return mri_event_sink_set(&env->events, f->efd, EPOLLIN);
}

static void fake_forget(void *priv)
{
	struct fake *f = fk(priv);

	if (f->efd > 0)
		close(f->efd);
	f->efd = 0;
}

static int fake_close(void *priv)
{
	fake_forget(priv);
	return 0;
}

static uint64_t fake_now_ns(void *priv)
{
	struct fake *f = fk(priv);

	return f->clock_ns;
}

static const struct mri_backend fake_backend = {
	.name = "fake",
	.caps = MRI_CAP_RECLAIM | MRI_CAP_THRESHOLD,
	.priv_size = sizeof(struct fake *),
	.open = fake_open,
	.close = fake_close,
	.forget = fake_forget,
	.read_usage = fake_read_usage,
	.read_limits = fake_read_limits,
	.read_memstat = fake_read_memstat,
	.reclaim = fake_reclaim,
	.set_usage_threshold = fake_threshold,
	.event_ack = fake_event_ack,
	.now_ns = fake_now_ns,
};

/* A group of ctx on the fake backend, not in ctx's list (the worker never
 * sees it), with a margin of margin_bytes and no hysteresis. */
static struct mr_group *fake_group(mr_ctx_t *c, struct fake *f,
				   uint64_t margin_bytes)
{
	struct mr_group *g = calloc(1, sizeof(*g));

	ck_assert_ptr_nonnull(g);
	pthread_mutex_init(&g->policy_lock, NULL);
	pthread_mutex_init(&g->reclaim_lock, NULL);
	g->ctx = c;
	g->be = &fake_backend;
	g->priv = malloc(sizeof(f));
	ck_assert_ptr_nonnull(g->priv);
	*(struct fake **)g->priv = f;
	g->path = strdup("/fake");
	g->armed_threshold_bytes = MR_UNLIMITED;
	atomic_init(&g->reclaim_swappiness, -1);
	g->policy = calloc(1, sizeof(*g->policy));
	ck_assert_ptr_nonnull(g->policy);
	g->policy->batch_bytes = SCM;
	g->policy->margin_bytes = margin_bytes;
	g->policy->soft_limit_bytes = MR_UNLIMITED;
	return g;
}

static void fake_group_free(struct mr_group *g)
{
	pthread_mutex_destroy(&g->policy_lock);
	pthread_mutex_destroy(&g->reclaim_lock);
	free(g->policy);
	free(g->priv);
	free(g->path);
	free(g);
}

/* A group of ctx on a fake backend, opened like any group: on ctx's list,
 * its event fd in ctx's epoll set, with the default policy. */
static mr_group_t *open_fake_on(mr_ctx_t *c, struct fake *f, const char *path,
				const struct mri_backend *be)
{
	mr_group_t *g = NULL;

	opening = f;
	ck_assert_int_eq(mri_group_open(c, path, be, &g), 0);
	return g;
}

static mr_group_t *open_fake(mr_ctx_t *c, struct fake *f, const char *path)
{
	return open_fake_on(c, f, path, &fake_backend);
}

/* Log lines by level, and the last one. */
struct logged {
	unsigned by_level[8];
	unsigned matching;        /* lines containing `match` */
	const char *match;
	char last[512];
};

static void count_log(int level, const char *msg, void *userdata)
{
	struct logged *lg = userdata;

	if (level >= 0 && level < 8)
		lg->by_level[level]++;
	if (lg->match && strstr(msg, lg->match))
		lg->matching++;
	snprintf(lg->last, sizeof(lg->last), "%s", msg);
}

/* A timeout of MR_UNLIMITED (or any that would wrap the clock) is no
 * bound: the deadline saturates instead of wrapping to a time passed. The
 * group's clock is near the end of its range, so every one of these
 * timeouts would wrap. */
START_TEST(reclaim_timeout_unbounded)
{
	static const uint64_t timeouts[] = { MR_UNLIMITED, UINT64_MAX - 1000,
					     UINT64_MAX / 2 + 1, 0 };
	struct fake f;
	struct mr_group *g;
	mr_ctx_t *c;
	uint64_t freed;
	size_t i;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	for (i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		f = (struct fake){ .usage = 256 * MiB, .file = 256 * MiB,
				   .limit = 512 * MiB,
				   .clock_ns = UINT64_MAX - 2000,
				   .ns_per_call = 1 };
		g = fake_group(c, &f, 0);
		freed = 0;
		ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, timeouts[i],
						  &freed), 0);
		ck_assert_msg(freed == 16 * MiB,
			      "timeout %llu: freed %llu of 16 MiB in %u calls",
			      (unsigned long long)timeouts[i],
			      (unsigned long long)freed, f.reclaim_calls);
		ck_assert_uint_eq(f.reclaim_calls, 16 * MiB / SCM);
		fake_group_free(g);
	}
	mr_ctx_free(c);
}
END_TEST

/* Time is the group's: elapsed_ns and the timeout follow the backend's
 * clock (a simulated group's virtual time), not CLOCK_MONOTONIC, in which
 * these calls take microseconds. */
START_TEST(reclaim_in_group_clock)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct fake f = { .usage = 256 * MiB, .file = 256 * MiB,
			  .limit = 512 * MiB, .clock_ns = 1000,
			  .ns_per_call = 7000000 };
	struct mr_group *g;
	mr_ctx_t *c;
	uint64_t freed = 0;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = fake_group(c, &f, 0);
	/* No bound: 16 MiB in 128 calls of 7 ms each. */
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 16 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.calls, 128);
	ck_assert_uint_eq(st.elapsed_ns, 128 * 7000000ULL);
	ck_assert_uint_eq(f.clock_ns, 1000 + 128 * 7000000ULL);
	/* 50 ms: the batch that starts at 49 ms is the last (a batch
	 * started finishes), 8 in all. */
	f.reclaim_calls = 0;
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 50000000, &freed), 0);
	ck_assert_uint_eq(f.reclaim_calls, 8);
	ck_assert_uint_eq(freed, 8 * SCM);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.elapsed_ns, 136 * 7000000ULL);
	fake_group_free(g);
	mr_ctx_free(c);
}
END_TEST

/* A SCHED_IDLE worker runs its reclaim as SCHED_OTHER (a step preempted
 * with the limit lowered is a priority inversion), and goes back to idle
 * after. */
START_TEST(worker_pass_leaves_idle)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB, .reclaim_policy = -1 };
	struct logged lg = { .match = "SCHED_IDLE" };
	struct mr_group *g;
	mr_ctx_t *c;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	ck_assert_int_eq(mr_ctx_set_log(c, count_log, &lg, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_ctx_set_worker_sched(c, MR_SCHED_IDLE, 0), 0);
	g = fake_group(c, &f, 32 * MiB);
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_IDLE,
					       &sp), 0);
	pthread_mutex_lock(&g->reclaim_lock);
	ck_assert(!mri_keep_margin(g, NULL, true, 0, false));
	pthread_mutex_unlock(&g->reclaim_lock);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_IDLE);
	ck_assert_uint_gt(f.reclaim_calls, 0);
	ck_assert_int_eq(f.reclaim_policy, SCHED_OTHER);
	ck_assert_uint_eq(f.usage, 224 * MiB);
	ck_assert_uint_eq(lg.matching, 0);
	/* The class MR_SCHED_NICE never touches the thread's policy. */
	ck_assert_int_eq(mr_ctx_set_worker_sched(c, MR_SCHED_NICE, 0), 0);
	f.usage += 8 * MiB;
	f.file += 8 * MiB;
	pthread_mutex_lock(&g->reclaim_lock);
	ck_assert(!mri_keep_margin(g, NULL, true, 0, false));
	pthread_mutex_unlock(&g->reclaim_lock);
	ck_assert_int_eq(f.reclaim_policy, SCHED_IDLE);
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_OTHER,
					       &sp), 0);
	fake_group_free(g);
	mr_ctx_free(c);
}
END_TEST

/* A program answering the shrink request (mr_group_shrink_fd()) from a
 * thread of its own, as jemalloc-extents' purger does: each request read
 * is answered. */
struct answerer {
	mr_group_t *g;
	int fd, stop_fd;
	_Atomic uint64_t asked_bytes;
};

static void *answer_main(void *arg)
{
	struct answerer *a = arg;
	struct pollfd p[2] = { { .fd = a->fd, .events = POLLIN },
			       { .fd = a->stop_fd, .events = POLLIN } };
	uint64_t n;

	for (;;) {
		if (poll(p, 2, -1) < 0)
			continue; /* EINTR */
		if (p[1].revents)
			return NULL;
		if (read(a->fd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
			atomic_fetch_add(&a->asked_bytes, n);
			ck_assert_int_eq(mr_group_shrink_done(a->g), 0);
		}
	}
}

/* One margin pass on the worker thread's terms (it waits for an
 * answer) or on mr_ctx_worker_dispatch()'s (it does not). */
static void shrink_pass(mr_group_t *g, bool thread,
			struct mr_shrink_stats *st)
{
	static atomic_bool stop;

	pthread_mutex_lock(&g->reclaim_lock);
	mri_keep_margin(g, thread ? &stop : NULL, false, 0, false);
	pthread_mutex_unlock(&g->reclaim_lock);
	ck_assert_int_eq(mr_group_read_shrink_stats(g, st), 0);
}

/* A worker's pass of g from usage 240 MiB (200 of it page cache) whose
 * request is answered in time: run again while the answer came after the
 * grace (a loaded machine; the late answer stands for the next request,
 * which is waited for again). Returns f's reclaim calls before it. */
static unsigned answered_pass(mr_group_t *g, struct fake *f,
			      struct mr_shrink_stats *st)
{
	uint64_t answered;
	unsigned tries, calls;

	for (tries = 0; ; tries++) {
		f->usage = 240 * MiB;
		f->file = 200 * MiB;
		calls = f->reclaim_calls;
		answered = st->answered;
		shrink_pass(g, true, st);
		if (st->answered > answered)
			return calls;
		ck_assert_uint_lt(tries, 20);
	}
}

/* The shrink request before a margin pass (lib/core/shrink.c): usage
 * 240 MiB, limit 256 MiB, margin 32 MiB, hysteresis 16 MiB: the worker
 * asks for usage - 208 MiB. Nobody answers: one grace is waited, the pass
 * reclaims, and the next requests are not waited for until an answer
 * comes. Then a thread answers: the answer that brings usage to the mark
 * avoids the pass; one that does not, does not. A dispatch's pass asks
 * without waiting. No time is asserted: an unanswered request is one
 * nobody answers, and a pass whose answer came late is run again
 * (answered_pass()). */
START_TEST(shrink_request_before_margin_pass)
{
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB };
	struct mr_shrink_stats st = { .size = sizeof(st) };
	struct answerer a = { .stop_fd = -1 };
	uint64_t asked, one = 1, timeouts;
	unsigned calls;
	pthread_t th;
	mr_group_t *g;
	mr_ctx_t *c;
	int fd;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake(c, &f, "/fake/a");
	ck_assert_int_eq(mr_group_set_margin(g, 32 * MiB, 0, 16 * MiB), 0);
	fd = mr_group_shrink_fd(g, 1000000);
	ck_assert_int_ge(fd, 0);

	/* Nobody answers. */
	shrink_pass(g, true, &st);
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.requested_bytes, 32 * MiB);
	ck_assert_uint_eq(st.timeouts, 1);
	ck_assert_uint_eq(st.answered, 0);
	ck_assert_uint_eq(st.avoided, 0);
	ck_assert_uint_gt(f.reclaim_calls, 0);
	ck_assert_uint_eq(f.usage, 208 * MiB);
	ck_assert_int_eq(read(fd, &asked, sizeof(asked)), sizeof(asked));
	ck_assert_uint_eq(asked, 32 * MiB);
	/* Still nobody: asked, not waited for. */
	f.usage = 240 * MiB;
	f.file = 200 * MiB;
	calls = f.reclaim_calls;
	shrink_pass(g, true, &st);
	ck_assert_uint_eq(st.requests, 2);
	ck_assert_uint_eq(st.timeouts, 1);
	ck_assert_uint_gt(f.reclaim_calls, calls);
	ck_assert_int_eq(read(fd, &asked, sizeof(asked)), sizeof(asked));

	/* An answer comes (late): the program answers again, and the next
	 * request is waited for. It gave back 20 MiB: at the mark, no pass. */
	ck_assert_int_eq(mr_group_shrink_done(g), 0);
	ck_assert_int_eq(mr_group_shrink_fd(g, MR_SHRINK_GRACE_MAX_NS), fd);
	a.g = g;
	a.fd = fd;
	a.stop_fd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(a.stop_fd, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, answer_main, &a), 0);
	f.usage_read = 220 * MiB;
	calls = answered_pass(g, &f, &st);
	ck_assert_uint_eq(st.avoided, 1);
	ck_assert_uint_ge(st.answered, 1);
	ck_assert_uint_eq(f.reclaim_calls, calls);
	ck_assert_uint_eq(f.usage, 240 * MiB);
	/* It gave back 10 MiB: above the mark, the pass runs. */
	f.usage_read = 230 * MiB;
	calls = answered_pass(g, &f, &st);
	ck_assert_uint_eq(st.avoided, 1);
	ck_assert_uint_gt(f.reclaim_calls, calls);
	f.usage_read = 0;

	/* Nobody answers any more; a dispatch's pass asks and does not
	 * wait (a wait would have timed out). */
	ck_assert_int_eq(write(a.stop_fd, &one, sizeof(one)), sizeof(one));
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(a.stop_fd);
	f.usage = 240 * MiB;
	f.file = 200 * MiB;
	asked = st.requests;
	timeouts = st.timeouts;
	shrink_pass(g, false, &st);
	ck_assert_uint_eq(st.requests, asked + 1);
	ck_assert_uint_eq(st.timeouts, timeouts);
	ck_assert_uint_eq(f.usage, 208 * MiB);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

/* Where the kernel refuses to lift the thread out of SCHED_IDLE (no
 * CAP_SYS_NICE, RLIMIT_NICE 0), the pass runs idle and one warning says
 * so, however many passes follow. */
START_TEST(worker_pass_idle_refused_warns_once)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		return; /* needs to drop privileges it has */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 0 };
		struct rlimit rl = { 0, 0 };
		struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
				  .limit = 256 * MiB, .reclaim_policy = -1 };
		struct logged lg = { .match = "SCHED_IDLE" };
		struct mr_group *g;
		mr_ctx_t *c;
		int i;

		if (mr_ctx_new(&c) < 0 ||
		    mr_ctx_set_log(c, count_log, &lg, MR_LOG_DEBUG) < 0 ||
		    mr_ctx_set_worker_sched(c, MR_SCHED_IDLE, 0) < 0)
			_exit(10);
		g = fake_group(c, &f, 32 * MiB);
		if (setrlimit(RLIMIT_NICE, &rl) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(11);
		if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
			_exit(12);
		for (i = 0; i < 3; i++) {
			f.usage += 16 * MiB;
			f.file += 16 * MiB;
			pthread_mutex_lock(&g->reclaim_lock);
			mri_keep_margin(g, NULL, true, 0, false);
			pthread_mutex_unlock(&g->reclaim_lock);
		}
		if (f.reclaim_calls == 0)
			_exit(13);
		if (f.reclaim_policy != SCHED_IDLE)
			_exit(14);
		if (lg.matching != 1 || lg.by_level[MR_LOG_WARNING] != 1)
			_exit(15);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static bool pass(struct mr_group *g)
{
	bool again;

	pthread_mutex_lock(&g->reclaim_lock);
	again = mri_keep_margin(g, NULL, true, 0, false);
	pthread_mutex_unlock(&g->reclaim_lock);
	return again;
}

/* A margin pass gives the other groups a turn after 100 ms of the
 * group's clock: with 30 ms calls, four calls, and the group is still
 * above its margin (another pass is due). */
START_TEST(worker_pass_in_group_clock)
{
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB, .ns_per_call = 30000000 };
	struct mr_group *g;
	mr_ctx_t *c;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = fake_group(c, &f, 32 * MiB);
	ck_assert(pass(g));
	ck_assert_uint_eq(f.reclaim_calls, 4);
	ck_assert_uint_eq(f.usage, 240 * MiB - 4 * SCM);
	ck_assert_uint_eq(f.clock_ns, 120000000);
	fake_group_free(g);
	mr_ctx_free(c);
}
END_TEST

/* What is not page cache alone is above limit - margin: reclaim could only
 * strip the cache, at every tick. No reclaim, one warning (with the
 * numbers) until the margin is reachable again. */
START_TEST(worker_margin_unreachable)
{
	struct fake f = { .usage = 56 * MiB, .file = 8 * MiB,
			  .limit = 64 * MiB };
	struct logged lg = { .match = "unreachable" };
	struct mr_group *g;
	mr_ctx_t *c;
	int i;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	ck_assert_int_eq(mr_ctx_set_log(c, count_log, &lg, MR_LOG_DEBUG), 0);
	g = fake_group(c, &f, 32 * MiB);
	for (i = 0; i < 5; i++)
		ck_assert(!pass(g));
	ck_assert_uint_eq(f.reclaim_calls, 0);
	ck_assert_uint_eq(f.file, 8 * MiB);
	ck_assert_uint_eq(lg.matching, 1);
	ck_assert_uint_eq(lg.by_level[MR_LOG_WARNING], 1);
	ck_assert_uint_eq(lg.by_level[MR_LOG_ERR], 0);
	ck_assert_msg(strstr(lg.last, "56.0 MiB") && strstr(lg.last, "8.0 MiB") &&
		      strstr(lg.last, "48.0 MiB") && strstr(lg.last, "32.0 MiB"),
		      "%s", lg.last);
	/* The anonymous memory shrinks to 24 MiB: reachable, reclaimed down
	 * to the mark (32 MiB). */
	f.usage = 40 * MiB;
	f.file = 16 * MiB;
	ck_assert(!pass(g));
	ck_assert_uint_gt(f.reclaim_calls, 0);
	ck_assert_uint_eq(f.usage, 32 * MiB);
	/* Unreachable again: warned again, once. */
	f.usage = 60 * MiB;
	f.file = 4 * MiB;
	f.reclaim_calls = 0;
	for (i = 0; i < 3; i++)
		ck_assert(!pass(g));
	ck_assert_uint_eq(f.reclaim_calls, 0);
	ck_assert_uint_eq(lg.matching, 2);
	/* Exactly at the mark once the cache is gone: reachable. */
	f.usage = 40 * MiB;
	f.file = 8 * MiB;
	ck_assert(!pass(g));
	ck_assert_uint_eq(f.usage, 32 * MiB);
	ck_assert_uint_eq(lg.matching, 2);
	fake_group_free(g);
	mr_ctx_free(c);
}
END_TEST

/* A removed cgroup (every call answers -ENOENT): one warning, then the
 * group is left alone, with no error at every tick. */
START_TEST(worker_group_gone)
{
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB };
	struct logged lg = { .match = "cgroup is gone; no longer served" };
	struct mr_group *g;
	mr_ctx_t *c;
	int i;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	ck_assert_int_eq(mr_ctx_set_log(c, count_log, &lg, MR_LOG_DEBUG), 0);
	g = fake_group(c, &f, 32 * MiB);
	f.fail = -ENOENT;
	for (i = 0; i < 5; i++)
		ck_assert(!pass(g));
	ck_assert(g->gone);
	ck_assert_uint_eq(lg.matching, 1);
	ck_assert_uint_eq(lg.by_level[MR_LOG_WARNING], 1);
	ck_assert_uint_eq(lg.by_level[MR_LOG_ERR], 0);
	/* Other errors are still reported as they come. */
	fake_group_free(g);
	g = fake_group(c, &f, 32 * MiB);
	f.fail = -EIO;
	for (i = 0; i < 2; i++)
		ck_assert(!pass(g));
	ck_assert(!g->gone);
	ck_assert_uint_eq(lg.by_level[MR_LOG_ERR], 2);
	fake_group_free(g);
	mr_ctx_free(c);
}
END_TEST

/* ---------------------------------------- the worker in the caller's loop */

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	ck_assert_int_ge(poll(&p, 1, 0), 0);
	return p.revents & POLLIN;
}

/* The context's fd polls readable on a group's threshold event and on a
 * wake-up; a dispatch serves the group down to the margin's low mark,
 * counted under MR_REASON_MARGIN, and takes the events. */
START_TEST(dispatch_serves_events)
{
	struct fake f = { .usage = 100 * MiB, .file = 100 * MiB,
			  .limit = 256 * MiB };
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	mr_group_t *g;
	mr_ctx_t *c;
	int fd;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	fd = mr_ctx_worker_fd(c);
	ck_assert_int_ge(fd, 0);
	ck_assert(!readable(fd));
	/* Opening a group and setting its margin wake the worker. */
	g = open_fake(c, &f, "/fake/a");
	ck_assert(readable(fd));
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert(!readable(fd));
	ck_assert_int_eq(mr_group_set_margin(g, 32 * MiB, 0, 16 * MiB), 0);
	ck_assert(readable(fd));
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.threshold, 224 * MiB);
	ck_assert_uint_eq(f.reclaim_calls, 0);
	ck_assert(!readable(fd));

	/* The workload charges past limit - margin: the backend's event. */
	f.usage = 240 * MiB;
	f.file = 200 * MiB;
	fake_cross(&f);
	ck_assert(readable(fd));
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.usage, 208 * MiB);
	ck_assert(!readable(fd));
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st),
			 0);
	ck_assert_uint_eq(st.calls, 32 * MiB / SCM);
	ck_assert_uint_eq(st.freed_bytes, 32 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.calls, 0);

	/* Someone lowers the limit: no event, so only the caller's safety
	 * tick (MR_DISPATCH_ALL) finds the group above its new mark. */
	f.limit = 232 * MiB;
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.usage, 208 * MiB);
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, MR_DISPATCH_ALL), 0);
	ck_assert_uint_eq(f.usage, 184 * MiB);
	ck_assert_uint_eq(f.threshold, 200 * MiB);
	ck_assert_int_eq(mr_ctx_worker_fd(c), fd);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

/* A pass ends after 100 ms of the group's clock: the dispatch answers 1
 * (call again), and the next one serves the group without an event. */
START_TEST(dispatch_again_until_margin)
{
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB, .ns_per_call = 60000000 };
	mr_group_t *g;
	mr_ctx_t *c;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake(c, &f, "/fake/a");
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 32 * MiB, 0, 0), 0);
	/* Two 4 MiB calls (at 0 and 60 ms), then the pass yields. */
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 1);
	ck_assert_uint_eq(f.usage, 232 * MiB);
	ck_assert(!readable(mr_ctx_worker_fd(c)));
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.usage, 224 * MiB);
	ck_assert_uint_eq(f.reclaim_calls, 4);
	/* Nothing pending and no group above its margin: nothing served. */
	f.usage += 8 * MiB;
	f.file += 8 * MiB;
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.reclaim_calls, 4);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

/* The setter accepts margin + hysteresis up to the limit, and the worker
 * honours all of it while the limit stays: 64 MiB limit, 60 MiB of page
 * cache, margin 8 MiB, hysteresis 56 MiB reclaims down to 0, not to the
 * 28 MiB of the cap for a fallen limit. Once the limit falls to 48 MiB
 * the cap applies: down to half of 40 MiB. */
START_TEST(worker_full_hysteresis)
{
	struct fake f = { .usage = 60 * MiB, .file = 60 * MiB,
			  .limit = 64 * MiB };
	mr_group_t *g;
	mr_ctx_t *c;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake(c, &f, "/fake/a");
	ck_assert_int_eq(mr_group_set_margin(g, 8 * MiB, 0, 56 * MiB + 1),
			 -ERANGE);
	ck_assert_int_eq(mr_group_set_margin(g, 8 * MiB, 0, 56 * MiB), 0);
	while (mr_ctx_worker_dispatch(c, MR_DISPATCH_ALL) == 1)
		;
	ck_assert_uint_eq(f.usage, 0);
	f.usage = f.file = 44 * MiB;
	f.limit = 48 * MiB;
	while (mr_ctx_worker_dispatch(c, MR_DISPATCH_ALL) == 1)
		;
	ck_assert_uint_eq(f.usage, 20 * MiB);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

static mr_ctx_t *hook_ctx;
static int hook_start, hook_dispatch;

static void try_second_worker(struct fake *f)
{
	(void)f;
	hook_start = mr_ctx_worker_start(hook_ctx);
	hook_dispatch = mr_ctx_worker_dispatch(hook_ctx, 0);
}

/* One worker per context: no dispatch while the thread runs, and neither
 * the thread nor a second dispatch while a dispatch runs. */
START_TEST(dispatch_one_worker)
{
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB };
	mr_group_t *g;

	ck_assert_int_eq(mr_ctx_new(&hook_ctx), 0);
	g = open_fake(hook_ctx, &f, "/fake/a");
	ck_assert_int_eq(mr_ctx_worker_start(hook_ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(hook_ctx, 0), -EBUSY);
	ck_assert_int_eq(mr_ctx_worker_dispatch(hook_ctx, MR_DISPATCH_ALL),
			 -EBUSY);
	ck_assert_int_eq(mr_ctx_worker_stop(hook_ctx), 0);

	f.on_reclaim = try_second_worker;
	hook_start = hook_dispatch = 1;
	ck_assert_int_eq(mr_group_set_margin(g, 32 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(hook_ctx, 0), 0);
	ck_assert_uint_eq(f.usage, 224 * MiB);
	ck_assert_int_eq(hook_start, -EBUSY);
	ck_assert_int_eq(hook_dispatch, -EBUSY);
	f.on_reclaim = NULL;
	/* Once it returned, either may run. */
	ck_assert_int_eq(mr_ctx_worker_start(hook_ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_stop(hook_ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(hook_ctx, 0), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(hook_ctx);
}
END_TEST

/* A dispatch runs at the caller's scheduling: even with the worker's class
 * MR_SCHED_IDLE, a SCHED_IDLE caller is not switched for the pass. */
START_TEST(dispatch_at_callers_scheduling)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct fake f = { .usage = 240 * MiB, .file = 200 * MiB,
			  .limit = 256 * MiB, .reclaim_policy = -1 };
	mr_group_t *g;
	mr_ctx_t *c;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	ck_assert_int_eq(mr_ctx_set_worker_sched(c, MR_SCHED_IDLE, 0), 0);
	g = open_fake(c, &f, "/fake/a");
	ck_assert_int_eq(mr_group_set_margin(g, 32 * MiB, 0, 0), 0);
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_IDLE,
					       &sp), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(c, 0), 0);
	ck_assert_uint_eq(f.usage, 224 * MiB);
	ck_assert_int_eq(f.reclaim_policy, SCHED_IDLE);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_IDLE);
	ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_OTHER,
					       &sp), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

/* ------------------------------------------------------------ soft limit */

#define NOSOFT MR_UNLIMITED
#define MAX64 UINT64_MAX

/* A modulus for a random value up to v: never 0. */
static uint64_t usage_cap(uint64_t v)
{
	return v ? v : 1;
}

/* Plans n groups and checks the shares against `want`. */
static void plan_is(size_t n, const uint64_t *usage, const uint64_t *soft,
		    uint64_t goal, const uint64_t *want)
{
	uint64_t share[8];
	size_t i;

	ck_assert_uint_le(n, 8);
	memset(share, 0xa5, sizeof(share));
	ck_assert_int_eq(mr_soft_limit_plan(n, usage, soft, goal, share), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(share[i] == want[i],
			      "goal %llu: share[%zu] = %llu, want %llu",
			      (unsigned long long)goal, i,
			      (unsigned long long)share[i],
			      (unsigned long long)want[i]);
}

START_TEST(soft_plan_proportions)
{
	const uint64_t usage[] = { 100 * MiB, 300 * MiB, 50 * MiB };
	const uint64_t soft[] = { 50 * MiB, 100 * MiB, NOSOFT };

	/* Excess 50 and 200 MiB: 1 to 4, and nothing from the group with
	 * no soft limit. */
	plan_is(3, usage, soft, 100 * MiB,
		(const uint64_t[]){ 20 * MiB, 80 * MiB, 0 });
	/* All the excess exactly. */
	plan_is(3, usage, soft, 250 * MiB,
		(const uint64_t[]){ 50 * MiB, 200 * MiB, 0 });
	/* Beyond it: the excess, then 50 MiB from what is left (50, 100
	 * and 50 MiB), 1 to 2 to 1. */
	plan_is(3, usage, soft, 300 * MiB,
		(const uint64_t[]){ 50 * MiB + 12 * MiB + 512 * KiB,
				    200 * MiB + 25 * MiB,
				    12 * MiB + 512 * KiB });
	/* No soft limit set anywhere: in proportion to usage alone. */
	plan_is(2, (const uint64_t[]){ 100 * MiB, 300 * MiB },
		(const uint64_t[]){ NOSOFT, NOSOFT }, 40 * MiB,
		(const uint64_t[]){ 10 * MiB, 30 * MiB });
	/* A soft limit of 0: all of the usage is excess. */
	plan_is(2, (const uint64_t[]){ 100 * MiB, 300 * MiB },
		(const uint64_t[]){ 0, NOSOFT }, 40 * MiB,
		(const uint64_t[]){ 40 * MiB, 0 });
	/* Goal 0: nothing. */
	plan_is(3, usage, soft, 0, (const uint64_t[]){ 0, 0, 0 });
}
END_TEST

START_TEST(soft_plan_caps)
{
	/* A goal beyond all usage takes all usage and no more. */
	plan_is(3, (const uint64_t[]){ 10, 20, 0 },
		(const uint64_t[]){ 5, NOSOFT, 0 }, MAX64,
		(const uint64_t[]){ 10, 20, 0 });
	plan_is(2, (const uint64_t[]){ 10, 20 },
		(const uint64_t[]){ 5, NOSOFT }, 31,
		(const uint64_t[]){ 10, 20 });
	/* Nothing to take. */
	plan_is(2, (const uint64_t[]){ 0, 0 },
		(const uint64_t[]){ 0, NOSOFT }, 100,
		(const uint64_t[]){ 0, 0 });
	/* The first pass never takes more than the excess, however large
	 * the usage behind it. */
	plan_is(2, (const uint64_t[]){ GiB, 2 * MiB },
		(const uint64_t[]){ GiB - 1, MiB }, MiB + 1,
		(const uint64_t[]){ 1, MiB });
}
END_TEST

START_TEST(soft_plan_remainders)
{
	/* 7 of 60 as 10:20:30 is 1.17, 2.33, 3.5: the byte left over goes
	 * to the largest remainder, the last group. */
	plan_is(3, (const uint64_t[]){ 10, 20, 30 },
		(const uint64_t[]){ 0, 0, 0 }, 7,
		(const uint64_t[]){ 1, 2, 4 });
	/* Equal remainders: the lower indexes first. */
	plan_is(4, (const uint64_t[]){ 3, 3, 3, 3 },
		(const uint64_t[]){ 0, 0, 0, 0 }, 6,
		(const uint64_t[]){ 2, 2, 1, 1 });
	plan_is(3, (const uint64_t[]){ 1, 1, 1 },
		(const uint64_t[]){ 0, 0, 0 }, 2,
		(const uint64_t[]){ 1, 1, 0 });
	/* A larger remainder at a higher index wins over a smaller one at
	 * a lower index: 25/12 = 2 r 1, 35/12 = 2 r 11. */
	plan_is(2, (const uint64_t[]){ 5, 7 },
		(const uint64_t[]){ 0, 0 }, 5,
		(const uint64_t[]){ 2, 3 });
	/* In the second pass too, after the excess: 2 of 3 + 3 + 3 left. */
	plan_is(3, (const uint64_t[]){ 4, 3, 3 },
		(const uint64_t[]){ 3, NOSOFT, NOSOFT }, 3,
		(const uint64_t[]){ 2, 1, 0 });
}
END_TEST

START_TEST(soft_plan_no_overflow)
{
	/* Three times 2^64 - 1 of excess: a third each, exactly. */
	plan_is(3, (const uint64_t[]){ MAX64, MAX64, MAX64 },
		(const uint64_t[]){ 0, 0, 0 }, MAX64,
		(const uint64_t[]){ MAX64 / 3, MAX64 / 3, MAX64 / 3 });
	/* A total excess of 2^64: (2^64 - 1)^2 / 2^64 = 2^64 - 2 rem 1,
	 * and the last byte to the group whose remainder is 2^64 - 1. */
	plan_is(2, (const uint64_t[]){ MAX64, 1 },
		(const uint64_t[]){ 0, 0 }, MAX64,
		(const uint64_t[]){ MAX64 - 1, 1 });
	plan_is(2, (const uint64_t[]){ MAX64, MAX64 },
		(const uint64_t[]){ MAX64 - 1, 0 }, MAX64,
		(const uint64_t[]){ 1, MAX64 - 1 });
	/* No excess, usage 2^65 - 2 in all: 2^63 - 1 each, remainders
	 * equal, the last byte to the first. */
	plan_is(2, (const uint64_t[]){ MAX64, MAX64 },
		(const uint64_t[]){ NOSOFT, NOSOFT }, MAX64,
		(const uint64_t[]){ 1ULL << 63, (1ULL << 63) - 1 });
	/* Both passes at the limit: the excess (2^63), then the rest in
	 * proportion to what is left (2^63 - 1 and 2^64 - 1), which comes
	 * to two thirds and one third of the goal in all. */
	plan_is(2, (const uint64_t[]){ MAX64, MAX64 },
		(const uint64_t[]){ MAX64 / 2, NOSOFT }, MAX64,
		(const uint64_t[]){ MAX64 / 3 * 2, MAX64 / 3 });
}
END_TEST

START_TEST(soft_plan_empty_and_misuse)
{
	uint64_t u = 5, sl = 1, share = 99;

	ck_assert_int_eq(mr_soft_limit_plan(0, NULL, NULL, 100, NULL), 0);
	ck_assert_int_eq(mr_soft_limit_plan(0, &u, &sl, MAX64, &share), 0);
	ck_assert_uint_eq(share, 99);
	ck_assert_int_eq(mr_soft_limit_plan(1, NULL, &sl, 1, &share), -EINVAL);
	ck_assert_int_eq(mr_soft_limit_plan(1, &u, NULL, 1, &share), -EINVAL);
	ck_assert_int_eq(mr_soft_limit_plan(1, &u, &sl, 1, NULL), -EINVAL);
	ck_assert_uint_eq(share, 99);
	ck_assert_int_eq(mr_soft_limit_plan(1, &u, &sl, 1, &share), 0);
	ck_assert_uint_eq(share, 1);
}
END_TEST

/* xorshift64: the same pseudo-random plans every run. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random plans keep every promise: the sum, the caps, the soft-limit
 * order, and in the first pass each share within a byte of its exact
 * proportion. */
START_TEST(soft_plan_properties)
{
	uint64_t usage[8], soft[8], share[8], goal, e, x = 88172645463325252ULL;
	unsigned __int128 tot_e, tot, sum, exact;
	size_t n, i;
	int round;

	for (round = 0; round < 20000; round++) {
		n = 1 + round % 8;
		tot_e = tot = sum = 0;
		for (i = 0; i < n; i++) {
			/* Small, page-sized or full-range values; a soft
			 * limit below the usage, or none. */
			usage[i] = next_random(&x);
			if (round % 3 == 0)
				usage[i] %= 1000;
			else if (round % 3 == 1)
				usage[i] = usage[i] % 4096 * 4096;
			soft[i] = next_random(&x) % 4 == 0 ? NOSOFT :
				  x % usage_cap(usage[i]);
			tot_e += usage[i] - (soft[i] < usage[i] ? soft[i] :
					     usage[i]);
			tot += usage[i];
		}
		/* A goal up to the total usage, or beyond all of it. */
		goal = next_random(&x) % (tot >= MAX64 ? MAX64 :
					  (uint64_t)tot + 1);
		if (round % 5 == 0)
			goal = MAX64;
		ck_assert_int_eq(mr_soft_limit_plan(n, usage, soft, goal,
						    share), 0);
		for (i = 0; i < n; i++) {
			e = usage[i] > soft[i] ? usage[i] - soft[i] : 0;
			ck_assert_uint_le(share[i], usage[i]);
			if (goal > tot_e) {
				ck_assert_uint_ge(share[i], e);
			} else if (goal) {
				ck_assert_uint_le(share[i], e);
				exact = (unsigned __int128)goal * e;
				ck_assert(share[i] == exact / tot_e ||
					  share[i] == exact / tot_e + 1);
			} else {
				ck_assert_uint_eq(share[i], 0);
			}
			sum += share[i];
		}
		ck_assert(sum == (goal < tot ? goal : tot));
	}
}
END_TEST

/* The soft limit lives in the group's policy: none by default, any value
 * accepted, readable in a fork child, settable only in the parent. */
START_TEST(soft_limit_setting)
{
	struct fake f = { .usage = 100 * MiB, .file = 100 * MiB,
			  .limit = 256 * MiB };
	uint64_t v = 7;
	mr_group_t *g;
	mr_ctx_t *c;
	int status;
	pid_t pid;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake(c, &f, "/fake/a");
	ck_assert_int_eq(mr_group_read_soft_limit(g, &v), 0);
	ck_assert_uint_eq(v, MR_UNLIMITED);
	ck_assert_int_eq(mr_group_set_soft_limit(g, 0), 0);
	ck_assert_int_eq(mr_group_read_soft_limit(g, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(mr_group_set_soft_limit(g, 64 * MiB + 1), 0);
	ck_assert_int_eq(mr_group_read_soft_limit(g, &v), 0);
	ck_assert_uint_eq(v, 64 * MiB + 1);
	ck_assert_int_eq(mr_group_read_soft_limit(g, NULL), -EINVAL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		v = 0;
		_exit(mr_group_read_soft_limit(g, &v) != 0 ||
		      v != 64 * MiB + 1 ||
		      mr_group_set_soft_limit(g, 0) != -ECHILD);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(mr_group_set_soft_limit(g, MR_UNLIMITED), 0);
	ck_assert_int_eq(mr_group_read_soft_limit(g, &v), 0);
	ck_assert_uint_eq(v, MR_UNLIMITED);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(c);
}
END_TEST

/* ------------------------------------------ reclaim across a context */

/* n fake groups of a new context, opened in order, with soft limits
 * (NOSOFT: none). */
static mr_ctx_t *soft_ctx(size_t n, struct fake *f, const uint64_t *soft,
			  mr_group_t **g)
{
	mr_ctx_t *c;
	size_t i;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	for (i = 0; i < n; i++) {
		g[i] = open_fake(c, &f[i], "/fake");
		ck_assert_int_eq(mr_group_set_soft_limit(g[i], soft[i]), 0);
	}
	return c;
}

static uint64_t soft_stat(mr_group_t *g, int reason)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(mr_group_read_reclaim_stats(g, reason, &st), 0);
	return st.freed_bytes;
}

/* The groups over their soft limit give first, in proportion to their
 * excess; a group within its soft limit gives nothing. */
START_TEST(ctx_reclaim_over_soft_limit_first)
{
	struct fake f[3] = {
		{ .usage = 128 * MiB, .file = 128 * MiB, .limit = GiB },
		{ .usage = 512 * MiB, .file = 512 * MiB, .limit = GiB },
		{ .usage = 256 * MiB, .file = 256 * MiB, .limit = GiB },
	};
	const uint64_t soft[3] = { 64 * MiB, NOSOFT, 64 * MiB };
	mr_group_t *g[3];
	uint64_t freed = 0;
	mr_ctx_t *c = soft_ctx(3, f, soft, g);

	/* Excess 64 and 192 MiB: 32 and 96 MiB of 128. */
	ck_assert_int_eq(mr_ctx_reclaim(c, 128 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 128 * MiB);
	ck_assert_uint_eq(f[0].usage, 96 * MiB);
	ck_assert_uint_eq(f[1].usage, 512 * MiB);
	ck_assert_uint_eq(f[1].reclaim_calls, 0);
	ck_assert_uint_eq(f[2].usage, 160 * MiB);
	ck_assert_uint_eq(soft_stat(g[0], MR_REASON_SOFT), 32 * MiB);
	ck_assert_uint_eq(soft_stat(g[2], MR_REASON_SOFT), 96 * MiB);
	ck_assert_uint_eq(soft_stat(g[0], MR_REASON_REQUESTED), 0);
	ck_assert_uint_eq(soft_stat(g[0], MR_REASON_MARGIN), 0);
	/* In the group's batches: 32 MiB in 128 KiB calls. */
	ck_assert_uint_eq(f[0].reclaim_calls, 32 * MiB / SCM);
	/* Beyond the excess left (32 + 96 MiB): all of it, then 32 MiB
	 * from what all have, 64 : 512 : 64, that is 3.2, 25.6 and 3.2 MiB,
	 * the byte left over by the integer parts to the largest remainder
	 * (.6). */
	ck_assert_int_eq(mr_ctx_reclaim(c, 160 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 160 * MiB);
	ck_assert_uint_eq(f[0].usage, 64 * MiB - 3355443);
	ck_assert_uint_eq(f[1].usage, 512 * MiB - 26843546);
	ck_assert_uint_eq(f[2].usage, 64 * MiB - 3355443);
	mr_ctx_free(c);
}
END_TEST

/* A group that falls short (its cache runs out) leaves what is missing to
 * one more planned round over the groups that gave their whole share;
 * then the call stops, even short. */
START_TEST(ctx_reclaim_second_round)
{
	struct fake f[2] = {
		{ .usage = 100 * MiB, .file = 10 * MiB, .limit = GiB },
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB },
	};
	const uint64_t soft[2] = { 0, NOSOFT };
	mr_group_t *g[2];
	uint64_t freed = 0;
	mr_ctx_t *c = soft_ctx(2, f, soft, g);

	ck_assert_int_eq(mr_ctx_reclaim(c, 40 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 40 * MiB);
	ck_assert_uint_eq(f[0].usage, 90 * MiB);
	ck_assert_uint_eq(f[1].usage, 70 * MiB);
	/* Both short: two rounds, then a short success. */
	f[1].file = 5 * MiB;
	f[0].file = 2 * MiB;
	f[0].reclaim_calls = f[1].reclaim_calls = 0;
	ck_assert_int_eq(mr_ctx_reclaim(c, GiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 7 * MiB);
	ck_assert_uint_eq(f[0].reclaim_calls, 2 * MiB / SCM);
	ck_assert_uint_eq(f[1].reclaim_calls, 5 * MiB / SCM);
	/* Nothing left anywhere: -EAGAIN. */
	ck_assert_int_eq(mr_ctx_reclaim(c, MiB, 0, &freed), -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	mr_ctx_free(c);
}
END_TEST

/* The timeout bounds the time summed over the groups, each in its own
 * clock: a group is not started once it is spent. */
START_TEST(ctx_reclaim_timeout)
{
	struct fake f[2] = {
		{ .usage = 2 * SCM, .file = 2 * SCM, .limit = GiB,
		  .ns_per_call = 10000000 },
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB,
		  .clock_ns = 5000000000ULL, .ns_per_call = 10000000 },
	};
	const uint64_t soft[2] = { 0, 90 * MiB };
	mr_group_t *g[2];
	uint64_t freed = 0;
	mr_ctx_t *c = soft_ctx(2, f, soft, g);

	/* 50 ms: 20 ms in the first group's clock (its whole share, two
	 * calls), then 30 ms in the second's: three calls. */
	ck_assert_int_eq(mr_ctx_reclaim(c, 2 * SCM + 10 * MiB, 50000000,
					&freed), 0);
	ck_assert_uint_eq(f[0].reclaim_calls, 2);
	ck_assert_uint_eq(f[1].reclaim_calls, 3);
	ck_assert_uint_eq(freed, 5 * SCM);
	/* Spent in the first group: the second is not started, and there
	 * is no second round. */
	f[0].usage = f[0].file = 100 * MiB;
	f[0].reclaim_calls = f[1].reclaim_calls = 0;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 30000000, &freed), 0);
	ck_assert_uint_eq(f[0].reclaim_calls, 3);
	ck_assert_uint_eq(f[1].reclaim_calls, 0);
	ck_assert_uint_eq(freed, 3 * SCM);
	mr_ctx_free(c);
}
END_TEST

static struct fake *vanishing;

static void vanish_other(struct fake *f)
{
	(void)f;
	vanishing->fail = -ENOENT;
}

/* A removed group is left out, not an error: removed before the plan, or
 * between the plan and its share (the others give its share in the
 * second round). Other errors are reported only when nothing was freed. */
START_TEST(ctx_reclaim_gone_and_failing_groups)
{
	struct fake f[2] = {
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB },
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB },
	};
	const uint64_t soft[2] = { 0, 0 };
	mr_group_t *g[2];
	uint64_t freed = 0;
	mr_ctx_t *c = soft_ctx(2, f, soft, g);

	f[0].fail = -ENOENT;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 20 * MiB);
	ck_assert_uint_eq(f[1].usage, 80 * MiB);
	/* The second vanishes while the first reclaims its half. */
	f[0].fail = 0;
	f[0].on_reclaim = vanish_other;
	vanishing = &f[1];
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 20 * MiB);
	ck_assert_uint_eq(f[0].usage, 80 * MiB);
	ck_assert_uint_eq(f[1].usage, 80 * MiB);
	f[0].on_reclaim = NULL;
	/* Gone and empty: nothing freed, and that is -EAGAIN. */
	f[0].file = 0;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), -EAGAIN);
	/* Another error, with nothing freed elsewhere, is the answer. */
	f[1].fail = -EIO;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), -EIO);
	ck_assert_uint_eq(freed, 0);
	/* ... but not when another group gave something. */
	f[0].file = 10 * MiB;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 10 * MiB);
	/* A closed group is no longer planned. */
	f[1].fail = 0;
	f[0].file = 10 * MiB;
	ck_assert_int_eq(mr_group_close(g[1]), 0);
	f[1].reclaim_calls = 0;
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 10 * MiB);
	ck_assert_uint_eq(f[1].reclaim_calls, 0);
	mr_ctx_free(c);
}
END_TEST

/* A group whose backend cannot reclaim is left out of the plan. */
START_TEST(ctx_reclaim_skips_groups_without_reclaim)
{
	struct mri_backend ro = fake_backend;
	struct fake f[2] = {
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB },
		{ .usage = 100 * MiB, .file = 100 * MiB, .limit = GiB },
	};
	uint64_t freed = 0;
	mr_group_t *g;
	mr_ctx_t *c;

	ro.caps = 0;
	ro.reclaim = NULL;
	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake_on(c, &f[0], "/fake/ro", &ro);
	ck_assert_int_eq(mr_group_set_soft_limit(g, 0), 0);
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	open_fake(c, &f[1], "/fake/rw");
	ck_assert_int_eq(mr_ctx_reclaim(c, 20 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 20 * MiB);
	ck_assert_uint_eq(f[0].usage, 100 * MiB);
	ck_assert_uint_eq(f[1].usage, 80 * MiB);
	mr_ctx_free(c);
}
END_TEST

/* Nothing asked, no time bound, no freed_bytes, its own statistics
 * slot, and no use in a fork child. (test-misuse.c has the rest.) */
START_TEST(ctx_reclaim_edges)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct fake f = { .usage = 100 * MiB, .file = 100 * MiB,
			  .limit = GiB };
	uint64_t freed = 7;
	mr_group_t *g;
	mr_ctx_t *c;
	int status;
	pid_t pid;

	ck_assert_int_eq(mr_ctx_new(&c), 0);
	g = open_fake(c, &f, "/fake");
	ck_assert_int_eq(mr_group_set_soft_limit(g, 0), 0);
	ck_assert_int_eq(mr_ctx_reclaim(c, 0, 0, &freed), 0);
	ck_assert_uint_eq(freed, 0);
	ck_assert_uint_eq(f.reclaim_calls, 0);
	ck_assert_int_eq(mr_ctx_reclaim(c, MiB, MR_UNLIMITED, NULL), 0);
	ck_assert_uint_eq(f.usage, 99 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_SOFT, &st),
			 0);
	ck_assert_uint_eq(st.freed_bytes, MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_PROACTIVE,
						     &st), 0);
	ck_assert_uint_eq(st.calls, 0);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g,
						     MR_REASON_PROACTIVE + 1,
						     &st), -EINVAL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(mr_ctx_reclaim(c, MiB, 0, &freed) != -ECHILD);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	mr_ctx_free(c);
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
	tcase_add_test(tc, reclaim_timeout_unbounded);
	tcase_add_test(tc, reclaim_in_group_clock);
	tcase_add_test(tc, worker_pass_in_group_clock);
	tcase_add_test(tc, worker_pass_leaves_idle);
	tcase_add_test(tc, worker_pass_idle_refused_warns_once);
	tcase_add_test(tc, worker_margin_unreachable);
	tcase_add_test(tc, worker_group_gone);
	tcase_add_test(tc, shrink_request_before_margin_pass);
	suite_add_tcase(s, tc);

	tc = tcase_create("dispatch");
	tcase_add_test(tc, dispatch_serves_events);
	tcase_add_test(tc, dispatch_again_until_margin);
	tcase_add_test(tc, worker_full_hysteresis);
	tcase_add_test(tc, dispatch_one_worker);
	tcase_add_test(tc, dispatch_at_callers_scheduling);
	suite_add_tcase(s, tc);

	tc = tcase_create("soft");
	tcase_add_test(tc, soft_limit_setting);
	tcase_add_test(tc, soft_plan_proportions);
	tcase_add_test(tc, soft_plan_caps);
	tcase_add_test(tc, soft_plan_remainders);
	tcase_add_test(tc, soft_plan_no_overflow);
	tcase_add_test(tc, soft_plan_empty_and_misuse);
	tcase_add_test(tc, soft_plan_properties);
	tcase_add_test(tc, ctx_reclaim_over_soft_limit_first);
	tcase_add_test(tc, ctx_reclaim_second_round);
	tcase_add_test(tc, ctx_reclaim_timeout);
	tcase_add_test(tc, ctx_reclaim_gone_and_failing_groups);
	tcase_add_test(tc, ctx_reclaim_skips_groups_without_reclaim);
	tcase_add_test(tc, ctx_reclaim_edges);
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
