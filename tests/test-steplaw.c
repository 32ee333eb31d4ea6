/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller's step law (lib/core/steplaw.c) as the pure
 * function it is: on a model of a group with a hot and a cold set it
 * converges to the hot set, quickly and without oscillating; it backs
 * off on pressure and on refaults; it never crosses the floor; refaults
 * of one kind (file, anonymous) leave the other kind's cold pages to it.
 */
#include <check.h>
#include <stdbool.h>
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
		.file_bytes = m->hot_bytes + m->cold_bytes,
		.stall_ns = m->hot_taken_bytes * m->stall_ns_per_mib / MiB,
		.refault_file_bytes = m->hot_taken_bytes,
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
		.file_bytes = 100 * MiB,
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

/* Refaults at the ratio: no step; refaults with nothing reclaimed weigh
 * against the group's size; refaults lagging one interval count against
 * the reclaim of the interval before. */
START_TEST(backs_off_on_refaults)
{
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	struct mri_steplaw_sample x = {
		.usage_bytes = 100 * MiB,
		.file_bytes = 100 * MiB,
		.steal_bytes = 10 * MiB,
		.refault_file_bytes = 110 * KiB, /* above 1% of 10 MiB */
	};

	mri_steplaw_init(&s);
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_REFAULTS);
	ck_assert_uint_eq(d.step_bytes, 0);
	ck_assert_uint_eq(d.refault_ratio_ppm, 10742); /* 110 KiB / 10 MiB */

	/* Nothing reclaimed: refaults against the group's size. A few
	 * pages (another reclaim's) hold nothing; 2% of the group an
	 * interval is a group that thrashes. */
	mri_steplaw_init(&s);
	x.steal_bytes = 0;
	x.refault_file_bytes = 100 * KiB;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_NONE);
	ck_assert_uint_eq(d.refault_ratio_ppm, 977);
	mri_steplaw_init(&s);
	x.refault_file_bytes = 2 * MiB;
	mri_steplaw_update(&s, &params, &x, &d);
	ck_assert_int_eq(d.hold, MRI_HOLD_REFAULTS);
	ck_assert_uint_eq(d.refault_ratio_ppm, 20000);

	/* 10 MiB reclaimed, then 20 KiB refault in the next interval,
	 * with nothing reclaimed in it: 0.2%, a fifth of the ratio. */
	mri_steplaw_init(&s);
	x.steal_bytes = 10 * MiB;
	x.refault_file_bytes = 0;
	mri_steplaw_update(&s, &params, &x, &d);
	x.steal_bytes = 0;
	x.refault_file_bytes = 20 * KiB;
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
	uint64_t rng = 88172645463325252ULL, room, reclaimable;
	unsigned k;

	mri_steplaw_init(&s);
	for (k = 0; k < 100000; k++) {
		x.usage_bytes = next(&rng) % (1024 * MiB);
		x.floor_bytes = next(&rng) % (1024 * MiB);
		x.file_bytes = next(&rng) % (1024 * MiB);
		x.anon_bytes = next(&rng) % 2 ? 0 : next(&rng) % (512 * MiB);
		reclaimable = x.file_bytes + x.anon_bytes;
		x.stall_ns = next(&rng) % 4 ? 0 : next(&rng) % (4 * MS);
		x.refault_file_bytes = next(&rng) % 4 ? 0 :
				       next(&rng) % MiB;
		x.refault_anon_bytes = next(&rng) % 4 ? 0 :
				       next(&rng) % MiB;
		x.steal_bytes = next(&rng) % (64 * MiB);
		if (k % 1000 == 0)
			mri_steplaw_init(&s);
		mri_steplaw_update(&s, &params, &x, &d);
		room = x.usage_bytes > x.floor_bytes ?
		       x.usage_bytes - x.floor_bytes : 0;
		ck_assert_uint_ge(d.target_bytes, x.floor_bytes);
		ck_assert_uint_le(d.step_bytes, room);
		ck_assert_uint_le(d.step_bytes, reclaimable);
		ck_assert_uint_le(d.step_bytes,
				  (room < reclaimable ? room :
				   reclaimable) / 10 + 1);
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

/*
 * A group of page cache and anonymous memory, each with a hot and a cold
 * part, on a kernel whose memory.reclaim takes no swappiness= (before
 * Linux 6.11): once the cold cache is gone, a step's reclaim falls half
 * on the hot file, which refaults within the interval, and half on the
 * anonymous memory, cold first (the kernel's LRU balance: the file
 * refaults raise the file LRU's cost, mm/vmscan.c get_scan_count()). The
 * run of record's `anon` workload: 256 MiB of cold cache, a hot 32 MiB
 * file, 64 MiB of anonymous memory of which 16 MiB hot.
 */
struct kinds {
	uint64_t hot_file_bytes, cold_file_bytes;
	uint64_t hot_anon_bytes, cold_anon_bytes;
	uint64_t floor_bytes, stall_ns_per_mib;
	/* The kernel takes no anonymous memory at all (it is all hot and
	 * active, a server's heap): past the cold cache, only hot file. */
	bool file_only;
	uint64_t steal_bytes, anon_steal_bytes;
	uint64_t file_taken_bytes, anon_taken_bytes;
	uint64_t refault_bytes, stall_ns, probes;
};

static uint64_t kinds_usage(const struct kinds *m)
{
	return m->hot_file_bytes + m->cold_file_bytes + m->hot_anon_bytes +
	       m->cold_anon_bytes;
}

static uint64_t kinds_hot(const struct kinds *m)
{
	return m->hot_file_bytes + m->hot_anon_bytes;
}

static uint64_t take(uint64_t *from, uint64_t bytes)
{
	uint64_t n = bytes < *from ? bytes : *from;

	*from -= n;
	return n;
}

/* One interval: the law sees the last one (its refaults of each kind, or
 * with one_kind, both reported as file as they were before the kinds
 * were told apart) and steps. */
static void kinds_interval(struct kinds *m, struct mri_steplaw *s,
			   bool one_kind, struct mri_steplaw_decision *d)
{
	struct mri_steplaw_sample x = {
		.usage_bytes = kinds_usage(m),
		.floor_bytes = m->floor_bytes,
		.file_bytes = m->hot_file_bytes + m->cold_file_bytes,
		.anon_bytes = m->hot_anon_bytes + m->cold_anon_bytes,
		.stall_ns = (m->file_taken_bytes + m->anon_taken_bytes) *
			    m->stall_ns_per_mib / MiB,
		.refault_file_bytes = m->file_taken_bytes,
		.refault_anon_bytes = m->anon_taken_bytes,
		.steal_bytes = m->steal_bytes,
		.anon_steal_bytes = m->anon_steal_bytes,
		.anon_steal_known = true,
	};
	uint64_t rest, file, anon, cold;

	if (one_kind) {
		x.file_bytes += x.anon_bytes;
		x.anon_bytes = 0;
		x.refault_file_bytes += x.refault_anon_bytes;
		x.refault_anon_bytes = 0;
	}
	mri_steplaw_update(s, &params, &x, d);
	ck_assert_uint_ge(d->target_bytes, m->floor_bytes);
	rest = d->step_bytes - take(&m->cold_file_bytes, d->step_bytes);
	/* Hot pages taken come back by the interval's end. */
	file = m->file_only ? rest : rest / 2;
	if (file > m->hot_file_bytes)
		file = m->hot_file_bytes;
	anon = m->file_only ? 0 : rest - file;
	cold = take(&m->cold_anon_bytes, anon);
	anon -= cold;
	if (anon > m->hot_anon_bytes)
		anon = m->hot_anon_bytes;
	m->file_taken_bytes = file;
	m->anon_taken_bytes = anon;
	m->steal_bytes = d->step_bytes;
	m->anon_steal_bytes = cold + anon;
	m->refault_bytes += file + anon;
	m->stall_ns += (file + anon) * m->stall_ns_per_mib / MiB;
	m->probes += file + anon > 0;
}

/* Hot file pages that come back hold the page cache, not the cold
 * anonymous memory reclaim has not reached: the group reaches its hot
 * set (48 MiB) within 10% in 90 intervals with the stall under its
 * target (each MiB of cold anonymous memory swapped costs about one of
 * hot file refaulted here, and the stall they cost holds the steps), and
 * stays there. With the refaults of both kinds weighed as one (the law
 * before), the same model stops with most of the cold anonymous memory
 * resident, as the run of record did (97.9 MiB, 48 MiB of it cold
 * anonymous). */
START_TEST(refaults_of_one_kind_leave_the_other)
{
	const struct kinds start = {
		.hot_file_bytes = 32 * MiB,
		.cold_file_bytes = 256 * MiB,
		.hot_anon_bytes = 16 * MiB,
		.cold_anon_bytes = 48 * MiB,
		.floor_bytes = 16 * MiB,
		.stall_ns_per_mib = 1 * MS,
	};
	struct kinds m = start;
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	unsigned k, reached = 0;

	mri_steplaw_init(&s);
	for (k = 1; k <= 90; k++)
		kinds_interval(&m, &s, true, &d);
	fprintf(stderr, "one kind: %.1f MiB after 90 intervals, %.1f MiB "
		"cold anon\n", (double)kinds_usage(&m) / MiB,
		(double)m.cold_anon_bytes / MiB);
	ck_assert_uint_gt(m.cold_anon_bytes, 24 * MiB);

	m = start;
	mri_steplaw_init(&s);
	for (k = 1; k <= 90 && !reached; k++) {
		kinds_interval(&m, &s, false, &d);
		if (kinds_usage(&m) <= kinds_hot(&m) * 11 / 10)
			reached = k;
	}
	fprintf(stderr, "two kinds: %.1f MiB after %u intervals, %.1f MiB "
		"cold anon, refaults %.1f MiB, stall %.1f ms\n",
		(double)kinds_usage(&m) / MiB, k - 1,
		(double)m.cold_anon_bytes / MiB,
		(double)m.refault_bytes / MiB, (double)m.stall_ns / MS);
	ck_assert_msg(reached, "not within 10%% of the hot set after 90 "
		      "intervals: %.1f MiB", (double)kinds_usage(&m) / MiB);
	ck_assert_uint_le(m.stall_ns, (uint64_t)reached * TARGET_STALL_NS);
	m.stall_ns = 0;
	m.refault_bytes = 0;
	for (k = 0; k < 600; k++) {
		kinds_interval(&m, &s, false, &d);
		ck_assert_uint_le(kinds_usage(&m), kinds_hot(&m) * 11 / 10);
	}
	fprintf(stderr, "600 intervals at the hot set: refaults %.1f MiB, "
		"stall %.1f ms\n", (double)m.refault_bytes / MiB,
		(double)m.stall_ns / MS);
	ck_assert_uint_le(m.stall_ns, 600 * TARGET_STALL_NS / 10);
	ck_assert_uint_le(m.refault_bytes, kinds_hot(&m));
}
END_TEST

/* A group whose anonymous memory is all hot (a server's heap: the kernel
 * takes none of it), beside hot and cold page cache: once at its hot
 * set, steps sized from the anonymous room would only take hot file
 * pages, which come back; the anonymous share is then held by those
 * refaults too, so probes stay rare (as converges_to_the_hot_set), not
 * one every interval or two held by the stall alone. */
START_TEST(anon_share_held_when_no_anon_is_taken)
{
	struct kinds m = {
		.hot_file_bytes = 32 * MiB,
		.cold_file_bytes = 200 * MiB,
		.hot_anon_bytes = 9 * MiB,
		.floor_bytes = 4 * MiB,
		.stall_ns_per_mib = 1 * MS,
		.file_only = true,
	};
	struct mri_steplaw s;
	struct mri_steplaw_decision d;
	unsigned k, reached = 0;

	mri_steplaw_init(&s);
	for (k = 1; k <= 40 && !reached; k++) {
		kinds_interval(&m, &s, false, &d);
		if (kinds_usage(&m) <= kinds_hot(&m) * 11 / 10)
			reached = k;
	}
	ck_assert_msg(reached, "not within 10%% of the hot set after 40 "
		      "intervals: %.1f MiB", (double)kinds_usage(&m) / MiB);
	m.refault_bytes = 0;
	m.stall_ns = 0;
	m.probes = 0;
	for (k = 0; k < 600; k++)
		kinds_interval(&m, &s, false, &d);
	fprintf(stderr, "all-hot anon: reached in %u intervals; 600 more: "
		"%llu probes, refaults %.1f MiB, stall %.1f ms\n", reached,
		(unsigned long long)m.probes, (double)m.refault_bytes / MiB,
		(double)m.stall_ns / MS);
	ck_assert_uint_le(m.probes, 60);
	ck_assert_uint_le(m.refault_bytes, kinds_hot(&m));
	ck_assert_uint_le(m.stall_ns, 600 * TARGET_STALL_NS / 20);
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
	tcase_add_test(tc, refaults_of_one_kind_leave_the_other);
	tcase_add_test(tc, anon_share_held_when_no_anon_is_taken);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
