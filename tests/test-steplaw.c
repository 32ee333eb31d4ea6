/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller's step law (lib/core/steplaw.c) as the pure
 * function it is: on a model of a group with a hot and a cold set it
 * converges to the hot set, quickly and without oscillating; it backs
 * off on pressure and on refaults; it never crosses the floor.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "steplaw.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define MS 1000000ULL

/* Senpai's 10 ms per 6 s, for a 1 s interval. */
#define TARGET_STALL_NS (10 * MS / 6)

static const struct mri_steplaw_params params = {
	.step_ppm = 100000,
	.refault_ppm = 10000,
	.target_stall_ns = TARGET_STALL_NS,
};

/*
 * A group of hot page cache, used every interval, and cold cache, read
 * once. Reclaim takes the cold pages first (they are on the inactive
 * list; the hot ones are referenced and activated), then hot ones, which
 * refault within the interval: each refaulted MiB stalls the group's
 * tasks stall_ns_per_mib (reading it back from disk). The group's usage
 * is hot + cold: the hot pages taken are back by the interval's end.
 */
struct model {
	uint64_t hot_bytes, cold_bytes, floor_bytes;
	uint64_t stall_ns_per_mib;
	/* what the last step did, seen by the next sample */
	uint64_t steal_bytes, hot_taken_bytes;
	/* totals */
	uint64_t refault_bytes, stall_ns;
};

static struct mri_steplaw_sample sample_of(const struct model *m)
{
	struct mri_steplaw_sample x = {
		.usage_bytes = m->hot_bytes + m->cold_bytes,
		.floor_bytes = m->floor_bytes,
		.reclaimable_bytes = m->hot_bytes + m->cold_bytes,
		.stall_ns = m->hot_taken_bytes * m->stall_ns_per_mib / MiB,
		.refault_bytes = m->hot_taken_bytes,
		.steal_bytes = m->steal_bytes,
	};

	return x;
}

/* Reclaims step_bytes from the model: cold first. */
static void apply(struct model *m, uint64_t step_bytes)
{
	uint64_t cold = step_bytes < m->cold_bytes ? step_bytes :
			m->cold_bytes;

	m->cold_bytes -= cold;
	m->hot_taken_bytes = step_bytes - cold;
	m->steal_bytes = step_bytes;
	m->refault_bytes += m->hot_taken_bytes;
	m->stall_ns += m->hot_taken_bytes * m->stall_ns_per_mib / MiB;
}

/* One interval: the law sees the last one and steps. */
static void interval(struct model *m, struct mri_steplaw *s,
		     struct mri_steplaw_decision *d)
{
	struct mri_steplaw_sample x = sample_of(m);

	mri_steplaw_update(s, &params, &x, d);
	ck_assert_uint_ge(d->target_bytes, m->floor_bytes);
	apply(m, d->step_bytes);
}

/* 200 MiB cold, 20 MiB hot: within 10% of the hot set in at most 30
 * intervals (Senpai's default, at most 1% of usage per 6 s, takes at
 * least ln(10) / 0.01 x 6 s = 1380 s); then 600 intervals at the hot
 * set: usage stays within 10% of it, the probes into the hot set are
 * rare and none larger than the first contact (when the geometric steps
 * reach the hot set before they touch it there is none: then none larger
 * than a twentieth of it), and the stall stays far below the target. */
START_TEST(converges_to_the_hot_set)
{
	struct model m = {
		.hot_bytes = 20 * MiB,
		.cold_bytes = 200 * MiB,
		.stall_ns_per_mib = 2 * MS,
	};
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	uint64_t first_contact = 0, largest_later = 0, refaults_before;
	unsigned k, reached = 0, probes = 0;

	mri_steplaw_init(&s);
	for (k = 1; k <= 30 && !reached; k++) {
		interval(&m, &s, &d);
		if (m.hot_taken_bytes && !first_contact)
			first_contact = m.hot_taken_bytes;
		if (m.hot_bytes + m.cold_bytes <= m.hot_bytes * 11 / 10)
			reached = k;
	}
	ck_assert_msg(reached, "not within 10%% of the hot set after 30 "
		      "intervals: %.1f MiB", (double)m.cold_bytes / MiB);
	fprintf(stderr, "reached in %u intervals; first contact %.2f MiB\n",
		reached, (double)first_contact / MiB);
	refaults_before = m.refault_bytes;
	m.stall_ns = 0;
	for (k = 0; k < 600; k++) {
		interval(&m, &s, &d);
		if (!first_contact && m.hot_taken_bytes)
			first_contact = m.hot_taken_bytes;
		else if (m.hot_taken_bytes > largest_later)
			largest_later = m.hot_taken_bytes;
		probes += m.hot_taken_bytes > 0;
		ck_assert_uint_le(m.hot_bytes + m.cold_bytes,
				  m.hot_bytes * 11 / 10);
	}
	fprintf(stderr, "600 intervals at the hot set: %u probes, largest "
		"%.2f MiB, refaults %.2f MiB, stall %.1f ms\n", probes,
		(double)largest_later / MiB,
		(double)(m.refault_bytes - refaults_before) / MiB,
		(double)m.stall_ns / MS);
	ck_assert_uint_le(largest_later, first_contact ? first_contact :
			  m.hot_bytes / 20);
	/* The stall over the 600 intervals: a twentieth of the target's. */
	ck_assert_uint_le(m.stall_ns, 600 * TARGET_STALL_NS / 20);
	/* What the probes cost: at most one probe in 10 intervals, and
	 * less than the hot set read back in the 10 minutes (the hot set
	 * is read every interval: a miss rate below 1/600). */
	ck_assert_uint_le(probes, 60);
	ck_assert_uint_le(m.refault_bytes - refaults_before, m.hot_bytes);
}
END_TEST

/* Stall at the target: no step; half of it: at most half a step; and
 * after the stall, steps come back gradually, not at once. */
START_TEST(backs_off_on_pressure)
{
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	struct mri_steplaw_sample x = {
		.usage_bytes = 100 * MiB,
		.reclaimable_bytes = 100 * MiB,
	};
	uint64_t full, prev;
	unsigned k;

	mri_steplaw_init(&s);
	mri_steplaw_update(&s, &params, &x, &d);
	full = d.step_bytes;
	ck_assert_uint_eq(full, 10 * MiB);
	ck_assert_int_eq(d.hold, MRI_HOLD_NONE);

	mri_steplaw_init(&s);
	x.stall_ns = TARGET_STALL_NS;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_uint_eq(d.step_bytes, 0);
	ck_assert_int_eq(d.hold, MRI_HOLD_PRESSURE);
	ck_assert_uint_eq(d.target_bytes, x.usage_bytes);

	mri_steplaw_init(&s);
	x.stall_ns = TARGET_STALL_NS / 2;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_uint_le(d.step_bytes, full / 2);
	ck_assert_uint_gt(d.step_bytes, 0);

	/* A stall of 4 targets, then none: held, then growing steps. */
	mri_steplaw_init(&s);
	x.stall_ns = 4 * TARGET_STALL_NS;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_uint_eq(d.step_bytes, 0);
	x.stall_ns = 0;
	prev = 0;
	for (k = 0; k < 30; k++) {
		mri_steplaw_update(&s, &params, &x, &d);
		ck_assert_uint_ge(d.step_bytes, prev);
		ck_assert_uint_le(d.step_bytes, full);
		if (k < 4)
			ck_assert_int_eq(d.hold, MRI_HOLD_PRESSURE);
		prev = d.step_bytes;
	}
	ck_assert_uint_ge(prev, full * 9 / 10);
}
END_TEST

/* Refaults at the ratio: no step; refaults with nothing reclaimed (the
 * group thrashes on its own): no step; refaults lagging one interval
 * count against the reclaim of the interval before. */
START_TEST(backs_off_on_refaults)
{
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	struct mri_steplaw_sample x = {
		.usage_bytes = 100 * MiB,
		.reclaimable_bytes = 100 * MiB,
		.steal_bytes = 10 * MiB,
		.refault_bytes = 110 * KiB, /* above 1% of 10 MiB */
	};

	mri_steplaw_init(&s);
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_REFAULTS);
	ck_assert_uint_eq(d.step_bytes, 0);
	ck_assert_uint_eq(d.refault_ratio_ppm, 10742); /* 110 KiB / 10 MiB */

	mri_steplaw_init(&s);
	x.steal_bytes = 0;
	x.refault_bytes = 4 * KiB;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_REFAULTS);
	ck_assert_uint_eq(d.refault_ratio_ppm, 1000000);

	/* 10 MiB reclaimed, then 20 KiB refault in the next interval,
	 * with nothing reclaimed in it: 0.2%, a fifth of the ratio. */
	mri_steplaw_init(&s);
	x.steal_bytes = 10 * MiB;
	x.refault_bytes = 0;
	mri_steplaw_update(&s, &params, &x, &d);
	x.steal_bytes = 0;
	x.refault_bytes = 20 * KiB;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_NONE);
	ck_assert_uint_eq(d.refault_ratio_ppm, 1953);
	ck_assert_uint_lt(d.step_bytes, 10 * MiB * 85 / 100);
	ck_assert_uint_gt(d.step_bytes, 10 * MiB * 75 / 100);
}
END_TEST

static uint64_t next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

/* Whatever the sample: the target is never below the floor, the step
 * never more than what lies above the floor nor than what is
 * reclaimable, and never above step_ppm of it. */
START_TEST(never_crosses_the_floor)
{
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	struct mri_steplaw_sample x;
	uint64_t rng = 88172645463325252ULL, room;
	unsigned k;

	mri_steplaw_init(&s);
	for (k = 0; k < 100000; k++) {
		x.usage_bytes = next(&rng) % (1024 * MiB);
		x.floor_bytes = next(&rng) % (1024 * MiB);
		x.reclaimable_bytes = next(&rng) % (1024 * MiB);
		x.stall_ns = next(&rng) % 4 ? 0 : next(&rng) % (4 * MS);
		x.refault_bytes = next(&rng) % 4 ? 0 : next(&rng) % MiB;
		x.steal_bytes = next(&rng) % (64 * MiB);
		if (k % 1000 == 0)
			mri_steplaw_init(&s);
		mri_steplaw_update(&s, &params, &x, &d);
		room = x.usage_bytes > x.floor_bytes ?
		       x.usage_bytes - x.floor_bytes : 0;
		ck_assert_uint_ge(d.target_bytes, x.floor_bytes);
		ck_assert_uint_le(d.step_bytes, room);
		ck_assert_uint_le(d.step_bytes, x.reclaimable_bytes);
		ck_assert_uint_le(d.step_bytes,
				  (room < x.reclaimable_bytes ? room :
				   x.reclaimable_bytes) / 10 + 1);
		if (d.step_bytes)
			ck_assert_uint_eq(d.target_bytes,
					  x.usage_bytes - d.step_bytes);
	}
}
END_TEST

/* A floor above the hot set: the model stops at the floor and takes
 * nothing hot. */
START_TEST(stops_at_the_floor)
{
	struct model m = {
		.hot_bytes = 20 * MiB,
		.cold_bytes = 200 * MiB,
		.floor_bytes = 64 * MiB,
		.stall_ns_per_mib = 2 * MS,
	};
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	unsigned k;

	mri_steplaw_init(&s);
	for (k = 0; k < 200; k++) {
		interval(&m, &s, &d);
		ck_assert_uint_ge(m.hot_bytes + m.cold_bytes, 64 * MiB);
	}
	ck_assert_uint_eq(m.refault_bytes, 0);
	ck_assert_uint_le(m.hot_bytes + m.cold_bytes,
			  64 * MiB + 10 * MRI_STEPLAW_MIN_STEP_BYTES);
	ck_assert_int_eq(d.hold, MRI_HOLD_FLOOR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("steplaw");
	TCase *tc = tcase_create("law");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, converges_to_the_hot_set);
	tcase_add_test(tc, backs_off_on_pressure);
	tcase_add_test(tc, backs_off_on_refaults);
	tcase_add_test(tc, never_crosses_the_floor);
	tcase_add_test(tc, stops_at_the_floor);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
