/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The adaptive margin's rule (lib/core/sizing.c) as the pure function it
 * is: sizing from rate and reaction, the cost/benefit gate, limit hits,
 * bounds, probes, and the absence of oscillation at steady state. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "memreclaim.h"
#include "sizing.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define MS 1000000ULL
#define S 1000000000ULL

static const struct mri_sizing_params params = {
	.min_bytes = 0,
	.max_bytes = 64 * MiB,
	.safety_ppm = 2000000,
	.hysteresis_ppm = 500000,
};

/* Refaults per interval with the margin at its floor. */
#define FLOOR_REFAULTS (1 * MiB)

/* One second of a group charging rate_mib MiB/s at a 1 GiB limit, with
 * the margin of the state in force; the worker freed what was charged
 * (it kept the margin), blocked wait_ns and ran cpu_ns for it, and the
 * group refaulted refault_bytes (FLOOR_REFAULTS without a margin). */
static struct mri_sizing_sample second(const struct mri_sizing *s,
				       uint64_t rate_mib, uint64_t cpu_ns,
				       uint64_t wait_ns, uint64_t refault_bytes)
{
	struct mri_sizing_sample x = {
		.interval_ns = S,
		.charged_bytes = rate_mib * MiB,
		.charges_seen = true,
		.has_refaults = true,
		.refault_bytes = s->margin_bytes ? refault_bytes :
				 FLOOR_REFAULTS,
		.freed_bytes = s->margin_bytes ? rate_mib * MiB : 0,
		.cpu_ns = s->margin_bytes ? cpu_ns : 0,
		.wall_ns = s->margin_bytes ? cpu_ns + wait_ns : 0,
		.has_hits = true,
		.margin_bytes = s->margin_bytes,
		.limit_bytes = 1024 * MiB,
	};

	return x;
}

/* One second of a margin that pays (its worker blocked 50 ms for 1 ms
 * of CPU) at rate_mib MiB/s, folded into s. */
static void paying_second(struct mri_sizing *s, uint64_t rate_mib)
{
	struct mri_sizing_sample x = second(s, rate_mib, 1 * MS, 50 * MS, 0);

	mri_sizing_update(s, &params, &x);
}

/* A new state whose first interval has met reactions of reaction_ns:
 * the window has it from that interval's end on. */
static void start(struct mri_sizing *s, uint64_t reaction_ns)
{
	mri_sizing_init(s);
	mri_sizing_note_reaction(s, reaction_ns);
}

/* One second with nothing measured but the interval. */
static void quiet_second(struct mri_sizing *s)
{
	const struct mri_sizing_sample x = { .interval_ns = S,
					     .limit_bytes = 1024 * MiB };

	mri_sizing_update(s, &params, &x);
}

START_TEST(reaction_percentile)
{
	struct mri_sizing s;
	unsigned i;

	mri_sizing_init(&s);
	ck_assert_uint_eq(s.reaction_ns, MRI_SIZING_PRIOR_REACTION_NS);
	/* An interval's reactions: its longest enters the window at its
	 * end. */
	for (i = 1; i <= 5; i++)
		mri_sizing_note_reaction(&s, i * MS);
	ck_assert_uint_eq(s.reaction_ns, MRI_SIZING_PRIOR_REACTION_NS);
	quiet_second(&s);
	ck_assert_uint_eq(s.reactions.n, 1);
	ck_assert_uint_eq(s.reaction_ns, 5 * MS);
	/* An interval without one adds nothing. */
	quiet_second(&s);
	ck_assert_uint_eq(s.reactions.n, 1);
	ck_assert_uint_eq(s.reaction_ns, 5 * MS);
	/* Intervals of 1..40 ms: the window keeps the last 32 (9..40), whose
	 * nearest-rank 95th percentile is the 31st, 39 ms. */
	for (i = 1; i <= 40; i++) {
		mri_sizing_note_reaction(&s, i * MS);
		quiet_second(&s);
	}
	ck_assert_uint_eq(s.reactions.n, MRI_SIZING_WINDOW);
	ck_assert_uint_eq(s.reaction_ns, 39 * MS);
	/* One outlier in 32 intervals stays above the percentile. */
	for (i = 0; i < 31; i++) {
		mri_sizing_note_reaction(&s, 2 * MS);
		quiet_second(&s);
	}
	mri_sizing_note_reaction(&s, 500 * MS);
	quiet_second(&s);
	ck_assert_uint_eq(s.reaction_ns, 2 * MS);
	/* Two slow reactions in 32 intervals are kept, however many fast
	 * ones each interval has (320 here, ten windows of the last 32
	 * reactions): a burst that stalls on writeback every 16 seconds
	 * sizes the margin. */
	for (i = 0; i < 32; i++) {
		unsigned j;

		for (j = 0; j < 10; j++)
			mri_sizing_note_reaction(&s, 1 * MS);
		if (i % 16 == 0)
			mri_sizing_note_reaction(&s, 30 * MS);
		quiet_second(&s);
	}
	ck_assert_uint_eq(s.reaction_ns, 30 * MS);
}
END_TEST

/* A paying margin (waits far above CPU) is sized rate x reaction x
 * safety, and a faster charger gets a larger one. */
START_TEST(fast_charger_grows_the_margin)
{
	struct mri_sizing slow, fast;
	unsigned i;

	start(&slow, 10 * MS);
	start(&fast, 10 * MS);
	for (i = 0; i < 20; i++) {
		paying_second(&slow, 20);
		paying_second(&fast, 400);
	}
	ck_assert_uint_eq(slow.strength_ppm, MRI_SIZING_FULL);
	ck_assert_uint_eq(fast.strength_ppm, MRI_SIZING_FULL);
	/* 2 x 20 MiB/s x 10 ms = 0.4 MiB; 2 x 400 MiB/s x 10 ms = 8 MiB. */
	ck_assert_uint_ge(slow.margin_bytes, 400 * KiB - 4 * KiB);
	ck_assert_uint_le(slow.margin_bytes, 420 * KiB);
	ck_assert_uint_ge(fast.margin_bytes, 8 * MiB - 64 * KiB);
	ck_assert_uint_le(fast.margin_bytes, 8 * MiB + 64 * KiB);
	ck_assert_uint_eq(fast.hysteresis_bytes, fast.margin_bytes / 2);
	/* A slower reaction needs more. */
	for (i = 0; i < 32; i++)
		mri_sizing_note_reaction(&fast, 20 * MS);
	paying_second(&fast, 400);
	ck_assert_uint_ge(fast.margin_bytes, 15 * MiB);
}
END_TEST

/* What usage had above the mark when the worker woke is added to the
 * size in bytes, not scaled by the safety factor: it is measured, not
 * the rate's estimate. Its percentile is taken as the reaction's: one
 * interval's largest each, an outlier in 32 left out. */
START_TEST(overshoot_adds_to_the_size)
{
	struct mri_sizing plain, over;
	unsigned i;

	start(&plain, 10 * MS);
	start(&over, 10 * MS);
	for (i = 0; i < 20; i++) {
		paying_second(&plain, 400);
		mri_sizing_note_overshoot(&over, 1 * MiB);
		mri_sizing_note_overshoot(&over, 3 * MiB);
		paying_second(&over, 400);
	}
	ck_assert_uint_eq(plain.overshoot_bytes, 0);
	ck_assert_uint_eq(over.overshoot_bytes, 3 * MiB);
	ck_assert_uint_eq(over.strength_ppm, MRI_SIZING_FULL);
	/* 2 x 400 MiB/s x 10 ms = 8 MiB, and 3 MiB more. */
	ck_assert_uint_ge(over.margin_bytes, 11 * MiB - 64 * KiB);
	ck_assert_uint_le(over.margin_bytes, 11 * MiB + 64 * KiB);
	ck_assert_uint_ge(over.margin_bytes,
			  plain.margin_bytes + 3 * MiB - 64 * KiB);
	/* An outlier in 32 intervals stays above the percentile. */
	for (i = 0; i < 31; i++) {
		mri_sizing_note_overshoot(&over, 1 * MiB);
		paying_second(&over, 400);
	}
	mri_sizing_note_overshoot(&over, 30 * MiB);
	paying_second(&over, 400);
	ck_assert_uint_eq(over.overshoot_bytes, 1 * MiB);
}
END_TEST

/* Clean cache on a busy machine: the worker's reclaim never blocks, so
 * it removes no stall, costs CPU and brings refaults: the margin shrinks
 * to nothing within a few intervals. */
START_TEST(margin_that_does_not_pay_shrinks)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i, shrinks = 0;
	uint32_t last;

	start(&s, 1 * MS);
	s.strength_ppm = MRI_SIZING_FULL;
	s.probing = false;  /* kept, not on trial: it halves */
	last = s.strength_ppm;
	for (i = 0; i < 8; i++) {
		x = second(&s, 300, 20 * MS, 0, 50 * MiB);
		mri_sizing_update(&s, &params, &x);
		if (s.strength_ppm < last)
			shrinks++;
		ck_assert_uint_le(s.strength_ppm, last);
		last = s.strength_ppm;
	}
	ck_assert_uint_eq(s.strength_ppm, 0);
	ck_assert_uint_eq(s.margin_bytes, 0);
	ck_assert_uint_eq(s.hysteresis_bytes, 0);
	ck_assert_uint_ge(shrinks, 4);
	/* Refaults alone, with waits equal to the CPU, tip it the same way. */
	start(&s, 1 * MS);
	s.strength_ppm = MRI_SIZING_FULL;
	for (i = 0; i < 8; i++) {
		x = second(&s, 300, 10 * MS, 10 * MS, 100 * MiB);
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert_uint_eq(s.strength_ppm, 0);
}
END_TEST

/* The caller's least strength holds against a margin that does not
 * pay: at a half, the gate halves no further; at full, the sized margin
 * is kept whole from the first interval on, and never probes. */
START_TEST(least_strength_holds)
{
	struct mri_sizing_params p = params;
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i;

	p.min_strength_ppm = 500000;
	start(&s, 1 * MS);
	s.strength_ppm = MRI_SIZING_FULL;
	for (i = 0; i < 16; i++) {
		x = second(&s, 300, 20 * MS, 0, 50 * MiB);
		mri_sizing_update(&s, &p, &x);
		ck_assert_uint_ge(s.strength_ppm, 500000);
	}
	ck_assert_uint_eq(s.strength_ppm, 500000);
	ck_assert_uint_eq(s.margin_bytes, s.sized_bytes / 2);
	p.min_strength_ppm = MRI_SIZING_FULL;
	start(&s, 10 * MS);
	for (i = 0; i < 16; i++) {
		x = second(&s, 300, 20 * MS, 0, 50 * MiB);
		mri_sizing_update(&s, &p, &x);
		ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
		ck_assert_uint_eq(s.margin_bytes, s.sized_bytes);
		ck_assert_uint_gt(s.margin_bytes, 0);
	}
}
END_TEST

/* A probe keeps the sized margin whole; it is judged by an interval of
 * its own (not one held at min_bytes, nor on the costs of the probe
 * before it), and a workload that changed since the last probe is seen
 * by the next one. */
START_TEST(probes_are_whole_and_judged_alone)
{
	struct mri_sizing_params p = params;
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i;

	/* The first interval, at the floor, then the probe: whole. */
	start(&s, 10 * MS);
	x = second(&s, 300, 20 * MS, 0, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert(s.probing);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	ck_assert_uint_gt(s.margin_bytes, 0);
	ck_assert_uint_eq(s.margin_bytes, s.sized_bytes);
	/* It does not pay (waits half the CPU): 0 at once. */
	x = second(&s, 300, 20 * MS, 10 * MS, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.strength_ppm, 0);
	ck_assert(!s.probing);
	/* The workload changes (waits 5/3 of the CPU): the next probe,
	 * whole again, pays on its own interval and stays. */
	for (i = 0; i < 4 * MRI_SIZING_PROBE_AFTER && !s.probing; i++) {
		x = second(&s, 300, 12 * MS, 20 * MS, 0);
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert(s.probing);
	ck_assert_uint_eq(s.margin_bytes, s.sized_bytes);
	x = second(&s, 300, 12 * MS, 20 * MS, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	ck_assert(!s.probing);
	ck_assert_uint_eq(s.probe_after, MRI_SIZING_PROBE_AFTER);
	/* With a floor above 0, what the floor's interval freed is not the
	 * probe's: a probe still waits for an interval at its size. */
	p.min_bytes = 1 * MiB;
	start(&s, 10 * MS);
	x = second(&s, 300, 20 * MS, 0, 0);
	x.margin_bytes = p.min_bytes;
	x.freed_bytes = 300 * MiB;
	x.cpu_ns = 20 * MS;
	x.wall_ns = 20 * MS;
	mri_sizing_update(&s, &p, &x);
	ck_assert(s.probing);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
}
END_TEST

/* Refaults priced: the same waits pay against few refaults and not
 * against many. */
START_TEST(refaults_weigh_against_the_waits)
{
	struct mri_sizing few, many;
	struct mri_sizing_sample x;
	unsigned i;

	start(&few, 1 * MS);
	start(&many, 1 * MS);
	/* The floor, then three doublings from the probe, or two halvings
	 * to 0. */
	for (i = 0; i < 6; i++) {
		x = second(&few, 100, 5 * MS, 20 * MS, 1 * MiB);
		mri_sizing_update(&few, &params, &x);
		x = second(&many, 100, 5 * MS, 20 * MS, 400 * MiB);
		mri_sizing_update(&many, &params, &x);
	}
	ck_assert_uint_eq(few.strength_ppm, MRI_SIZING_FULL);
	ck_assert_uint_eq(many.strength_ppm, 0);
}
END_TEST

/* Where charges that met the limit are not seen (cgroup v1), refaults
 * are measured per second: a floor interval that saw almost no charges
 * does not make the margin's ordinary refaults look like its own. */
START_TEST(refaults_per_second_where_charges_are_unseen)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i;

	start(&s, 5 * MS);
	for (i = 0; i < 6; i++) {
		x = second(&s, 100, 2 * MS, 30 * MS, FLOOR_REFAULTS);
		x.charges_seen = false;
		if (!s.margin_bytes) { /* the floor: charges unseen, hits */
			x.charged_bytes = 64 * 1024;
			x.limit_hits = 1000;
		}
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert(s.has_floor_refaults);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	/* Many more refaults a second with the margin than at the floor
	 * weigh against it. */
	for (i = 0; i < 6; i++) {
		x = second(&s, 100, 2 * MS, 30 * MS, 300 * MiB);
		x.charges_seen = false;
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert_uint_lt(s.strength_ppm, MRI_SIZING_FULL);
}
END_TEST

START_TEST(bounds_hold)
{
	struct mri_sizing_params p = params;
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i, rate;

	for (rate = 1; rate <= 4096; rate *= 4) {
		p.min_bytes = 2 * MiB;
		p.max_bytes = 16 * MiB;
		start(&s, 30 * MS);
		for (i = 0; i < 12; i++) {
			x = second(&s, rate, 1 * MS, 100 * MS, 0);
			x.limit_hits = i % 3 ? 0 : 1000;
			mri_sizing_update(&s, &p, &x);
			ck_assert_uint_ge(s.margin_bytes, p.min_bytes);
			ck_assert_uint_le(s.margin_bytes, p.max_bytes);
			ck_assert_uint_le(s.sized_bytes, p.max_bytes);
			ck_assert_uint_le(s.hysteresis_bytes,
					  (x.limit_bytes - s.margin_bytes) / 2);
		}
	}
	/* A small limit: the margin never reaches half of it, and the
	 * hysteresis leaves half of what is below. */
	p.min_bytes = 0;
	p.max_bytes = 64 * MiB;
	start(&s, 100 * MS);
	for (i = 0; i < 12; i++) {
		x = second(&s, 4096, 1 * MS, 100 * MS, 0);
		x.limit_bytes = 8 * MiB;
		mri_sizing_update(&s, &p, &x);
		ck_assert_uint_le(s.margin_bytes, 4 * MiB);
		ck_assert_uint_le(s.hysteresis_bytes, 2 * MiB);
	}
	/* Below a page it is none. */
	start(&s, 1000);
	x = second(&s, 1, 0, 0, 0);
	x.freed_bytes = 0;
	mri_sizing_update(&s, &params, &x);
	ck_assert(s.margin_bytes == 0 || s.margin_bytes >= MR_MARGIN_MIN_BYTES);
}
END_TEST

/* Limit hits the rate does not see (cgroup v1) double the size, from one
 * SWAP_CLUSTER_MAX batch; without them it is held for 32 intervals, then
 * falls back by a tenth an interval at most. */
START_TEST(limit_hits_double_the_size)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	uint64_t before;
	unsigned i;

	start(&s, 1 * MS);
	s.strength_ppm = MRI_SIZING_FULL;
	x = second(&s, 0, 0, 0, 0);
	x.limit_hits = 500;
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.sized_bytes, MR_SWAP_CLUSTER_MAX_BYTES);
	for (i = 0; i < 5; i++) {
		before = s.sized_bytes;
		x = second(&s, 0, 0, 0, 0);
		x.limit_hits = 500;
		mri_sizing_update(&s, &params, &x);
		ck_assert_uint_eq(s.sized_bytes, 2 * before);
	}
	/* Two hits are those of one direct reclaim: no growth, and the
	 * size that stopped the hits is held for the reactions' window,
	 * the interval of the last hits included. */
	before = s.sized_bytes;
	for (i = 1; i < MRI_SIZING_WINDOW; i++) {
		x = second(&s, 0, 0, 0, 0);
		x.limit_hits = MRI_SIZING_HITS;
		mri_sizing_update(&s, &params, &x);
		ck_assert_uint_eq(s.sized_bytes, before);
	}
	/* Then it falls back by a tenth an interval at most. */
	x = second(&s, 0, 0, 0, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_lt(s.sized_bytes, before);
	ck_assert_uint_ge(s.sized_bytes, before * 9 / 10);
	/* At strength 0 hits are expected: no growth. */
	s.strength_ppm = 0;
	before = s.sized_bytes;
	x = second(&s, 0, 0, 0, 0);
	x.limit_hits = 500;
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_le(s.sized_bytes, before);
}
END_TEST

/* The held size is the one the hits doubled to, not the largest
 * measured since (no ratchet); the gate turning the margin off ends the
 * hold; a max_bytes lowered meanwhile bounds it. */
START_TEST(held_size_is_the_hits)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	struct mri_sizing_params low = params;
	uint64_t held;

	start(&s, 1 * MS);
	s.strength_ppm = MRI_SIZING_FULL;
	x = second(&s, 0, 0, 0, 0);
	x.limit_hits = 500;
	mri_sizing_update(&s, &params, &x);
	x = second(&s, 0, 0, 0, 0);
	x.limit_hits = 500;
	mri_sizing_update(&s, &params, &x);
	held = s.sized_bytes;
	ck_assert_uint_eq(held, 2 * MR_SWAP_CLUSTER_MAX_BYTES);
	/* A measured size above it wins while it lasts, and is not held
	 * after: 2 x 400 MiB/s x 10 ms = 8 MiB, then back to the hits'. */
	mri_sizing_note_reaction(&s, 10 * MS);
	x = second(&s, 400, 0, 0, 0);
	x.has_hits = false;
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_gt(s.sized_bytes, held);
	s.reactions = (struct mri_sizing_window){ 0 };
	s.reaction_ns = 0;
	x = second(&s, 0, 0, 0, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.sized_bytes, held);
	/* A lowered max_bytes bounds the held size at once. */
	low.max_bytes = MR_SWAP_CLUSTER_MAX_BYTES;
	x = second(&s, 0, 0, 0, 0);
	mri_sizing_update(&s, &low, &x);
	ck_assert_uint_eq(s.sized_bytes, low.max_bytes);
	/* Turned off, the hold ends: the size falls by a tenth. */
	s.strength_ppm = 0;
	x = second(&s, 0, 0, 0, 0);
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.hold_intervals, 0);
	ck_assert_uint_lt(s.sized_bytes, low.max_bytes);
}
END_TEST

/* From 0 the rule probes at full strength after 8 intervals, for one
 * interval that frees, then after twice as many each time the probe
 * does not pay, and at the first period again once one pays. */
START_TEST(probes_back_off)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i, off, probes = 0, gaps[4];

	start(&s, 1 * MS);
	s.strength_ppm = 0;
	s.probing = false;
	for (i = 0, off = 0; i < 8 + 16 + 32 + 64 + 8 && probes < 4; i++) {
		x = second(&s, 100, 20 * MS, 0, 0);
		mri_sizing_update(&s, &params, &x);
		if (s.probing) {
			gaps[probes++] = off;
			off = 0;
		} else if (!s.strength_ppm) {
			off++;
		}
	}
	ck_assert_uint_eq(probes, 4);
	/* Each probe lasts while it does not pay: off counts from the
	 * interval that ended it. */
	ck_assert_uint_eq(gaps[0], MRI_SIZING_PROBE_AFTER - 1);
	ck_assert_uint_gt(gaps[1], gaps[0]);
	ck_assert_uint_gt(gaps[2], gaps[1]);
	ck_assert_uint_gt(gaps[3], gaps[2]);
	/* A probe that pays goes to full strength. */
	while (!s.probing) {
		x = second(&s, 100, 20 * MS, 0, 0);
		mri_sizing_update(&s, &params, &x);
	}
	for (i = 0; i < 4; i++) {
		x = second(&s, 100, 1 * MS, 80 * MS, 0);
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	ck_assert_uint_eq(s.probe_after, MRI_SIZING_PROBE_AFTER);
}
END_TEST

/* At steady state the margin moves less than 10% per interval, whether
 * it pays (full) or not (0, with its probes excepted), and with inputs
 * that jitter by 20% around the same mean. */
START_TEST(no_oscillation_at_steady_state)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	uint64_t last = 0, rate, wait;
	unsigned i;

	start(&s, 5 * MS);
	for (i = 0; i < 200; i++) {
		rate = 200 + (i % 5) * 20 - 40;  /* 160 .. 240 MiB/s */
		wait = (40 + (i % 3) * 10) * MS;
		x = second(&s, rate, 2 * MS, wait, 1 * MiB);
		if (i % 7 == 0)
			mri_sizing_note_reaction(&s, 5 * MS + (i % 4) * MS);
		mri_sizing_update(&s, &params, &x);
		if (i >= 30) {
			ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
			ck_assert_uint_le(s.margin_bytes, last + last / 10);
			ck_assert_uint_ge(s.margin_bytes, last - last / 10);
		}
		last = s.margin_bytes;
	}
	ck_assert_uint_gt(last, 1 * MiB);
}
END_TEST

/* A margin that would move by less than a sixteenth stays (each new v1
 * mark is a threshold registration); a larger move is taken whole. */
START_TEST(small_moves_keep_the_margin)
{
	struct mri_sizing s;
	uint64_t kept;
	unsigned i;

	start(&s, 10 * MS);
	for (i = 0; i < 30; i++) {
		paying_second(&s, 200);
	}
	kept = s.margin_bytes;
	ck_assert_uint_gt(kept, 1 * MiB);
	/* 3% more charges: the size moves by less than a sixteenth. */
	for (i = 0; i < 10; i++) {
		paying_second(&s, 206);
		ck_assert_uint_eq(s.margin_bytes, kept);
	}
	/* Twice the charges: it follows. */
	for (i = 0; i < 10; i++) {
		paying_second(&s, 400);
	}
	ck_assert_uint_gt(s.margin_bytes, kept + kept / 2);
}
END_TEST

/* The margin's dead band keeps no margin out of the bounds a later limit
 * gives: at or above half a limit that fell, or above a max_bytes that
 * fell with it (max_ppm), by less than a sixteenth. */
START_TEST(small_moves_keep_the_bounds)
{
	struct mri_sizing s;
	struct mri_sizing_params p = params;
	struct mri_sizing_sample x;
	uint64_t kept;
	unsigned i;

	/* 2 x 400 MiB/s x 10 ms: half of a 16 MiB limit. */
	start(&s, 10 * MS);
	for (i = 0; i < 20; i++) {
		x = second(&s, 400, 1 * MS, 50 * MS, 0);
		x.limit_bytes = 16 * MiB;
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert_uint_eq(s.margin_bytes, 8 * MiB);
	/* The limit falls by 3%. */
	x = second(&s, 400, 1 * MS, 50 * MS, 0);
	x.limit_bytes = 15 * MiB + MiB / 2;
	mri_sizing_update(&s, &params, &x);
	ck_assert_uint_eq(s.margin_bytes, x.limit_bytes / 2);

	/* The same margin in 1 GiB; the charges fall by 7%, and max_bytes
	 * to between the margin they size and the one in force. */
	start(&s, 10 * MS);
	for (i = 0; i < 20; i++) {
		paying_second(&s, 400);
	}
	kept = s.margin_bytes;
	ck_assert_uint_eq(kept, 8 * MiB);
	p.max_bytes = kept - kept / 64;
	x = second(&s, 370, 1 * MS, 50 * MS, 0);
	mri_sizing_update(&s, &p, &x);
	ck_assert_uint_lt(s.sized_bytes, p.max_bytes);
	ck_assert_uint_le(s.margin_bytes, p.max_bytes);
	ck_assert_uint_le(s.hysteresis_bytes, p.max_bytes);
}
END_TEST

/* Where the group's PSI is read, the benefit is the stall the margin
 * takes out of the workload, against the floor's: a margin that removes
 * 18 ms of a 20 ms/s stall for 5 ms of CPU is kept whole, even when the
 * worker's own reclaim never blocks; one that removes 2 ms of a 3 ms/s
 * stall for 10 ms of CPU is turned off, even when the worker blocks for
 * 50 ms (waits a direct reclaim of SWAP_CLUSTER_MAX pieces would not
 * have met). */
static struct mri_sizing_sample with_stall(const struct mri_sizing *s,
					   uint64_t cpu_ns, uint64_t wait_ns,
					   uint64_t floor_stall_ns,
					   uint64_t stall_ns)
{
	struct mri_sizing_sample x = second(s, 100, cpu_ns, wait_ns,
					    FLOOR_REFAULTS);

	x.has_stall = true;
	x.stall_ns = s->margin_bytes ? stall_ns : floor_stall_ns;
	/* The floor meets the limit; the margin keeps charges off it. */
	x.limit_hits = s->margin_bytes ? 0 : 100;
	return x;
}

/* A new state's floor interval, then its probe's. */
static void floor_then_probe(struct mri_sizing *s, uint64_t cpu_ns,
			     uint64_t wait_ns, uint64_t floor_stall_ns,
			     uint64_t stall_ns)
{
	struct mri_sizing_sample x;
	unsigned i;

	start(s, 10 * MS);
	s->margin_bytes = 0;
	for (i = 0; i < 2; i++) {
		x = with_stall(s, cpu_ns, wait_ns, floor_stall_ns, stall_ns);
		mri_sizing_update(s, &params, &x);
	}
}

START_TEST(stall_removed_is_the_benefit)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	unsigned i;

	/* A floor interval that did not meet the limit (usage climbing
	 * back after a margin) measures nothing. */
	start(&s, 10 * MS);
	s.margin_bytes = 0;
	x = with_stall(&s, 5 * MS, 0, 0, 0);
	x.limit_hits = MRI_SIZING_HITS;
	mri_sizing_update(&s, &params, &x);
	ck_assert(!s.has_floor_stall);
	/* The first interval runs at the floor and measures its stall. */
	start(&s, 10 * MS);
	s.margin_bytes = 0;
	x = with_stall(&s, 5 * MS, 0, 20 * MS, 2 * MS);
	mri_sizing_update(&s, &params, &x);
	ck_assert(s.has_floor_stall);
	ck_assert_uint_gt(s.margin_bytes, 0);
	for (i = 0; i < 8; i++) {
		x = with_stall(&s, 5 * MS, 0, 20 * MS, 2 * MS);
		mri_sizing_update(&s, &params, &x);
		ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
		ck_assert(s.benefit_ns > 17.9 * MS && s.benefit_ns < 18.1 * MS);
	}
	ck_assert_uint_gt(s.margin_bytes, 0);

	floor_then_probe(&s, 10 * MS, 50 * MS, 3 * MS, 1 * MS);
	ck_assert_uint_eq(s.strength_ppm, 0);
	ck_assert_uint_eq(s.margin_bytes, 0);
	/* A margin under which the stall grows (its emptied cache thrashes)
	 * earns nothing. */
	floor_then_probe(&s, 1 * MS, 50 * MS, 3 * MS, 9 * MS);
	ck_assert(s.benefit_ns == 0);
	ck_assert_uint_eq(s.strength_ppm, 0);
}
END_TEST

/* One second of test-sizing's fast charger (400 MiB/s, 10 passes of the
 * worker that ran cpu_ns and blocked wait_ns in all) whose cache
 * refaults refault_per_s times a second each byte the margin and half
 * the hysteresis keep empty, beyond the floor's. */
static struct mri_sizing_sample eoq_sample(const struct mri_sizing *s,
					   uint64_t cpu_ns, uint64_t wait_ns,
					   double refault_per_s)
{
	struct mri_sizing_sample x = second(s, 400, cpu_ns, wait_ns, 0);

	if (s->margin_bytes) {
		x.passes = 10;
		x.hysteresis_bytes = s->hysteresis_bytes;
		x.refault_bytes = FLOOR_REFAULTS +
			(uint64_t)(refault_per_s *
				   ((double)s->margin_bytes +
				    (double)s->hysteresis_bytes / 2));
	}
	return x;
}

/* Such a second whose margin pays: 1 ms of CPU, 50 ms of waits. */
static void eoq_second(struct mri_sizing *s, double refault_per_s)
{
	const struct mri_sizing_sample x = eoq_sample(s, 1 * MS, 50 * MS,
						      refault_per_s);

	mri_sizing_update(s, &params, &x);
}

/* The hysteresis is the economic order quantity of the worker's passes:
 * a streamed cache (no refaults beyond the floor's) takes the bound, a
 * reused one sqrt(2 x rate x CPU per pass / cost of a byte kept empty a
 * second), which falls as the refaults grow; never below the margin x
 * hysteresis_ppm, never above half of what lies below the margin. */
START_TEST(hysteresis_is_the_economic_order)
{
	struct mri_sizing streamed, reused, thrashing;
	double price, h;
	unsigned i;

	start(&streamed, 10 * MS);
	start(&reused, 10 * MS);
	start(&thrashing, 10 * MS);
	/* Before the prices are measured (the floor's second): the margin
	 * x hysteresis_ppm. */
	eoq_second(&streamed, 0);
	ck_assert_uint_gt(streamed.margin_bytes, 0);
	ck_assert_uint_eq(streamed.hysteresis_bytes,
			  streamed.margin_bytes / 2);
	for (i = 0; i < 40; i++) {
		eoq_second(&streamed, 0);
		eoq_second(&reused, 4);
		eoq_second(&thrashing, 400);
	}
	ck_assert_uint_eq(streamed.strength_ppm, MRI_SIZING_FULL);
	ck_assert_uint_eq(reused.strength_ppm, MRI_SIZING_FULL);
	/* 2 x 400 MiB/s x 10 ms. */
	ck_assert_uint_ge(reused.margin_bytes, 8 * MiB - 64 * KiB);
	ck_assert_uint_le(reused.margin_bytes, 8 * MiB + 64 * KiB);
	ck_assert_uint_eq(streamed.hysteresis_bytes, params.max_bytes);
	ck_assert(streamed.pass_cpu_ns > 0.099 * MS &&
		  streamed.pass_cpu_ns < 0.101 * MS);
	ck_assert(streamed.empty_ns_per_byte_s == 0);
	/* Each refaulted byte is priced at the worker's CPU and waits per
	 * byte freed: 51 ms / 400 MiB. */
	price = 51.0 * MS / (400.0 * MiB);
	ck_assert(reused.empty_ns_per_byte_s > 0.97 * 4 * price &&
		  reused.empty_ns_per_byte_s < 1.03 * 4 * price);
	h = sqrt(2 * 400.0 * MiB * 0.1 * MS / (4 * price));
	/* Within the sixteenth a hysteresis must move by to move. */
	ck_assert_uint_ge(reused.hysteresis_bytes, (uint64_t)(h * 0.93));
	ck_assert_uint_le(reused.hysteresis_bytes, (uint64_t)(h * 1.07));
	ck_assert_uint_gt(reused.hysteresis_bytes, reused.margin_bytes / 2);
	ck_assert_uint_lt(reused.hysteresis_bytes, params.max_bytes);
	/* A hundred times the refaults: the least, the margin x 500000
	 * ppm, at whatever strength the gate left. */
	ck_assert_uint_eq(thrashing.hysteresis_bytes,
			  thrashing.margin_bytes / 2);
	ck_assert(thrashing.empty_ns_per_byte_s >
		  10 * reused.empty_ns_per_byte_s);
	/* Half of what lies below the margin, at most. */
	{
		struct mri_sizing small;
		struct mri_sizing_sample x;

		start(&small, 10 * MS);
		for (i = 0; i < 20; i++) {
			x = eoq_sample(&small, 1 * MS, 50 * MS, 0);
			x.limit_bytes = 48 * MiB;
			mri_sizing_update(&small, &params, &x);
		}
		ck_assert_uint_gt(small.margin_bytes, 0);
		ck_assert_uint_eq(small.hysteresis_bytes,
				  (48 * MiB - small.margin_bytes) / 2);
	}
	/* Which wins over the least: an 8 MiB margin in 20 MiB, at least
	 * the margin itself, has 6 MiB. */
	{
		struct mri_sizing_params whole = params;
		struct mri_sizing small;
		struct mri_sizing_sample x;

		whole.hysteresis_ppm = 1000000;
		start(&small, 10 * MS);
		for (i = 0; i < 20; i++) {
			x = eoq_sample(&small, 1 * MS, 50 * MS, 0);
			x.limit_bytes = 20 * MiB;
			mri_sizing_update(&small, &whole, &x);
		}
		ck_assert_uint_gt(small.margin_bytes, 20 * MiB / 3);
		ck_assert_uint_eq(small.hysteresis_bytes,
				  (20 * MiB - small.margin_bytes) / 2);
	}
}
END_TEST

/* A probe prices its hysteresis afresh: until it has measured the
 * worker's CPU per pass and the refaults of what it keeps empty, it is
 * the least, not the order of the workload the last probe saw, up to 256
 * intervals ago. */
START_TEST(probe_prices_the_hysteresis_afresh)
{
	struct mri_sizing s;
	struct mri_sizing_sample x;
	double price, h;
	unsigned i;

	/* A streamed cache: the hysteresis at its bound. */
	start(&s, 10 * MS);
	for (i = 0; i < 40; i++)
		eoq_second(&s, 0);
	ck_assert_uint_eq(s.hysteresis_bytes, params.max_bytes);
	/* The margin stops paying (50 ms of CPU, no waits): off. */
	for (i = 0; i < 10 && s.strength_ppm; i++) {
		x = eoq_sample(&s, 50 * MS, 0, 0);
		mri_sizing_update(&s, &params, &x);
	}
	ck_assert_uint_eq(s.strength_ppm, 0);
	/* The probe, 8 intervals on, keeps the least hysteresis, and its
	 * prices read 0, as before the first measurement. */
	for (i = 0; i < MRI_SIZING_PROBE_AFTER && !s.probing; i++)
		eoq_second(&s, 0);
	ck_assert(s.probing);
	ck_assert_uint_gt(s.margin_bytes, 0);
	ck_assert_uint_eq(s.hysteresis_bytes, s.margin_bytes / 2);
	ck_assert(s.pass_cpu_ns == 0 && s.empty_ns_per_byte_s == 0);
	/* The cache is now reused: the probe's interval prices it alone
	 * (0.1 ms a pass; 4 refaults a second of each byte kept empty at
	 * 51 ms / 400 MiB each), and the hysteresis is their order. */
	eoq_second(&s, 4);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	price = 51.0 * MS / (400.0 * MiB);
	ck_assert(s.pass_cpu_ns > 0.099 * MS && s.pass_cpu_ns < 0.101 * MS);
	ck_assert(s.empty_ns_per_byte_s > 0.99 * 4 * price &&
		  s.empty_ns_per_byte_s < 1.01 * 4 * price);
	h = sqrt(2 * 400.0 * MiB * 0.1 * MS / (4 * price));
	ck_assert_uint_ge(s.hysteresis_bytes, (uint64_t)(h * 0.98));
	ck_assert_uint_le(s.hysteresis_bytes, (uint64_t)(h * 1.02));
}
END_TEST

/* The hysteresis goes to its bounds whatever the sixteenth it moves by,
 * as the margin does: one whose order falls below the least is the
 * least, and one whose max_bytes fell below it is not kept above. */
START_TEST(hysteresis_dead_band_keeps_the_bounds)
{
	struct mri_sizing s;
	struct mri_sizing_params p = params;
	struct mri_sizing_sample x;
	uint64_t h;
	unsigned i;

	/* 31 refaults a second: an order a seventh above the least. */
	start(&s, 10 * MS);
	for (i = 0; i < 40; i++)
		eoq_second(&s, 31);
	ck_assert_uint_gt(s.hysteresis_bytes, s.margin_bytes / 2);
	/* 40: the order is below it, by less than a sixteenth of what the
	 * hysteresis was. */
	for (i = 0; i < 40; i++)
		eoq_second(&s, 40);
	ck_assert_uint_eq(s.strength_ppm, MRI_SIZING_FULL);
	ck_assert(sqrt(2 * s.rate_bytes_per_s * s.pass_cpu_ns /
		       s.empty_ns_per_byte_s) < (double)s.margin_bytes / 2);
	ck_assert_uint_eq(s.hysteresis_bytes, s.margin_bytes / 2);

	/* A reused cache's order, well inside the bounds. */
	start(&s, 10 * MS);
	for (i = 0; i < 40; i++)
		eoq_second(&s, 4);
	h = s.hysteresis_bytes;
	ck_assert_uint_gt(h, s.margin_bytes / 2);
	ck_assert_uint_lt(h, params.max_bytes);
	/* max_bytes falls to a thirty-second below it (a lower limit, with
	 * max_ppm) and the refaults rise a little: the order is inside the
	 * new bound and the dead band, the old hysteresis above the bound. */
	p.max_bytes = h - h / 32;
	x = eoq_sample(&s, 1 * MS, 50 * MS, 5.6);
	mri_sizing_update(&s, &p, &x);
	ck_assert(sqrt(2 * s.rate_bytes_per_s * s.pass_cpu_ns /
		       s.empty_ns_per_byte_s) < (double)p.max_bytes);
	ck_assert_uint_le(s.hysteresis_bytes, p.max_bytes);
	ck_assert_uint_gt(s.hysteresis_bytes, s.margin_bytes / 2);
}
END_TEST

/* The rule's figures as statistics: a price of 18 s a second for each
 * byte kept empty is beyond uint64_t in ns per GiB-second, and saturates
 * instead of converting to an undefined value; NaN and negatives are 0. */
START_TEST(figures_saturate)
{
	ck_assert_uint_eq(mri_sizing_u64(18e9 * 1073741824.0), UINT64_MAX);
	ck_assert_uint_lt(mri_sizing_u64(17e9 * 1073741824.0), UINT64_MAX);
	ck_assert_uint_eq(mri_sizing_u64(18446744073709551616.0), UINT64_MAX);
	ck_assert_uint_eq(mri_sizing_u64(1e300), UINT64_MAX);
	ck_assert_uint_eq(mri_sizing_u64(INFINITY), UINT64_MAX);
	ck_assert_uint_eq(mri_sizing_u64(NAN), 0);
	ck_assert_uint_eq(mri_sizing_u64(-1.5), 0);
	ck_assert_uint_eq(mri_sizing_u64(0), 0);
	ck_assert_uint_eq(mri_sizing_u64(123456.9), 123456);
}
END_TEST

static Suite *sizing_suite(void)
{
	Suite *s = suite_create("sizing");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, reaction_percentile);
	tcase_add_test(tc, fast_charger_grows_the_margin);
	tcase_add_test(tc, overshoot_adds_to_the_size);
	tcase_add_test(tc, held_size_is_the_hits);
	tcase_add_test(tc, margin_that_does_not_pay_shrinks);
	tcase_add_test(tc, least_strength_holds);
	tcase_add_test(tc, probes_are_whole_and_judged_alone);
	tcase_add_test(tc, refaults_weigh_against_the_waits);
	tcase_add_test(tc, refaults_per_second_where_charges_are_unseen);
	tcase_add_test(tc, bounds_hold);
	tcase_add_test(tc, limit_hits_double_the_size);
	tcase_add_test(tc, probes_back_off);
	tcase_add_test(tc, no_oscillation_at_steady_state);
	tcase_add_test(tc, small_moves_keep_the_margin);
	tcase_add_test(tc, small_moves_keep_the_bounds);
	tcase_add_test(tc, stall_removed_is_the_benefit);
	tcase_add_test(tc, hysteresis_is_the_economic_order);
	tcase_add_test(tc, figures_saturate);
	tcase_add_test(tc, probe_prices_the_hysteresis_afresh);
	tcase_add_test(tc, hysteresis_dead_band_keeps_the_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sizing_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
