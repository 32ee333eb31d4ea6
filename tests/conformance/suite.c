/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance suite: one set of behaviour tests, on the public API
 * only, run against every backend through a target (target.h): the
 * simulator, fake v1 and v2 trees behind the file-access table, cgroup v1
 * on the running kernel and cgroup v2 on a real kernel under qemu. What a
 * backend lacks it must answer with the exact error its target expects
 * (-EOPNOTSUPP), which is checked, never skipped.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memreclaim.h"
#include "../reclaim-bound.h"
#include "target.h"

#define T (&conf_target)
#define E (&conf_target.expect)
#define SEC 1000000000ULL
/* One reclaim cluster: the kernel reclaims in SWAP_CLUSTER_MAX pages. */
#define CLUSTER RECLAIM_CLUSTER_BYTES

static mr_ctx_t *ctx;
static char path[4096];
static bool removed;

static void setup(void)
{
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	T->setup(ctx);
	path[0] = '\0';
	removed = false;
}

static void teardown(void)
{
	mr_ctx_free(ctx);
	if (path[0] && !removed)
		T->remove(path);
	T->teardown();
}

static mr_group_t *new_group(uint64_t limit_bytes)
{
	mr_group_t *g = NULL;

	T->create(limit_bytes, path, sizeof(path));
	ck_assert_int_eq(mr_group_open(ctx, path, T->backend, &g), 0);
	ck_assert_str_eq(mr_group_backend(g), T->backend ? T->backend :
					      mr_group_backend(g));
	return g;
}

static uint64_t usage(mr_group_t *g)
{
	uint64_t u;

	ck_assert_int_eq(mr_group_read_usage(g, &u), 0);
	return u;
}

static void limits(mr_group_t *g, struct mr_limits *l)
{
	*l = (struct mr_limits){ .size = sizeof(*l) };
	ck_assert_int_eq(mr_group_read_limits(g, l), 0);
}

static void events(mr_group_t *g, unsigned flags, struct mr_events *ev)
{
	*ev = (struct mr_events){ .size = sizeof(*ev) };
	ck_assert_int_eq(mr_group_read_events(g, flags, ev), 0);
	ck_assert_msg(ev->present == E->events_present,
		      "events present %#" PRIx64 ", expected %#" PRIx64,
		      ev->present, E->events_present);
}

/* See conf_expect.charge_stock. */
static uint64_t stock_bytes;

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* ---------------------------------------------------------- reclaim */

/* The tolerance of tests/reclaim-bound.h: only the last call overshoots,
 * by at most a batch, a folio, the kernel's per-CPU stock and a cluster;
 * the fall in usage matches the bytes reported within the stock and a
 * cluster. Exact backends (no stock) are held to the batch alone. */
START_TEST(reclaim_bytes)
{
	const uint64_t ask = 32 * MiB, batch = MR_SWAP_CLUSTER_MAX_BYTES;
	uint64_t before, after, freed = 0;
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	mr_group_t *g = new_group(512 * MiB);

	T->charge_cache(path, 96 * MiB);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, batch), 0);
	before = usage(g);
	/* Enough for the ask and a reclaim that never runs dry: not all 96
	 * MiB, since a host's own proactive reclaim may take some of a
	 * fresh cache before it is read here (this kind of machine runs a
	 * DAMON pageout scheme on physical memory: 94.1 MiB was left once,
	 * under ASan). */
	ck_assert_uint_ge(before, 2 * ask);
	ck_assert_int_eq(mr_group_reclaim(g, ask, 10 * SEC, &freed), 0);
	after = usage(g);
	fprintf(stderr, "%s: reclaim 32 MiB: reported %" PRIu64
		", usage fell %" PRIu64 "\n", T->name, freed, before - after);
	ck_assert_uint_ge(before, after);
	ck_assert_uint_ge(freed, ask);
	ck_assert_uint_lt(freed, ask + (E->charge_stock ?
					reclaim_overshoot_bytes(batch) :
					batch + CLUSTER));
	ck_assert_uint_le(absdiff(before - after, freed),
			  stock_bytes + CLUSTER);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.freed_bytes, freed);
	if (E->whole_later_steps) {
		/* The batch, then what is left: a few calls, not 256. */
		ck_assert_uint_le(st.calls, 8);
		ck_assert_uint_le(st.asked_bytes, batch + (st.calls - 1) * ask);
	} else {
		ck_assert_uint_le(st.asked_bytes, st.calls * batch);
	}
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* ---------------------------------------------------------- worker */

/* A reader streams 8x the limit through the group, without and then with
 * the margin worker: the limit hits (v1 memory.failcnt, v2 the max counter
 * of memory.events.local) fall at least tenfold (tests/test-real-cgroup1.c's
 * setting: on v1 the worker's own steps lower the limit and count in
 * failcnt, which a small limit makes a large share). */
START_TEST(margin_worker_cuts_limit_hits)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_limits l0, l1, l2;
	struct mr_events e0, e1;
	uint64_t without, with;
	mr_group_t *g = new_group(64 * MiB);

	ck_assert_int_eq(mr_group_set_margin(g, 16 * MiB, 0, 16 * MiB), 0);
	ck_assert_int_eq(mr_group_set_batch_proportional(g,
			 MR_BATCH_DEFAULT_SHARE_PPM, MR_BATCH_DEFAULT_MAX_BYTES,
			 MR_BATCH_DEFAULT_MAX_PPM), 0);
	limits(g, &l0);
	events(g, MR_EVENTS_LOCAL, &e0);
	T->stream(ctx, path, 512 * MiB, false);
	limits(g, &l1);
	events(g, MR_EVENTS_LOCAL, &e1);
	T->stream(ctx, path, 512 * MiB, true);
	limits(g, &l2);
	without = l1.limit_hits - l0.limit_hits;
	with = l2.limit_hits - l1.limit_hits;
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st),
			 0);
	fprintf(stderr, "%s: limit hits without the worker %" PRIu64
		", with %" PRIu64 "; worker: %" PRIu64 " calls (%" PRIu64
		" empty), %" PRIu64 " MiB freed, %" PRIu64 " us per call\n",
		T->name, without, with, st.calls, st.empty_calls,
		st.freed_bytes >> 20,
		st.calls ? st.elapsed_ns / st.calls / 1000 : 0);
	ck_assert_uint_gt(without, 0);
	ck_assert_msg(with * 10 <= without, "limit hits: %" PRIu64
		      " with the worker, %" PRIu64 " without", with, without);
	/* limit_hits is the max counter of the group's own events. */
	ck_assert_uint_eq(e1.max - e0.max, without);
	ck_assert_uint_gt(st.calls, 0);
	ck_assert_uint_gt(st.freed_bytes, 64 * MiB);
	ck_assert_uint_eq(l2.own_limit_bytes, 64 * MiB);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* ---------------------------------------------------------- limits */

START_TEST(limit_and_high_read_back)
{
	struct mr_limits l;
	mr_group_t *g = new_group(256 * MiB);
	int r;

	T->charge_cache(path, 64 * MiB);
	limits(g, &l);
	ck_assert_uint_eq(l.present, E->limits_present);
	ck_assert_uint_eq(l.own_limit_bytes, 256 * MiB);
	if (l.present & MR_LIMITS_HAS_PEAK)
		ck_assert_uint_ge(l.peak_bytes, l.usage_bytes);
	/* Its own limit binds (the parents the targets use have none). */
	if (l.present & MR_LIMITS_HAS_BINDING) {
		ck_assert_uint_eq(l.binding_level, 0);
		ck_assert_uint_eq(l.binding_usage_bytes, l.usage_bytes);
		ck_assert_uint_eq(l.headroom_bytes,
				  256 * MiB - l.binding_usage_bytes);
	}

	ck_assert_int_eq(mr_group_set_limit(g, 128 * MiB, 0), 0);
	limits(g, &l);
	ck_assert_uint_eq(l.own_limit_bytes, 128 * MiB);
	/* Below usage: reclaimed first, then written. */
	ck_assert_int_eq(mr_group_set_limit(g, 48 * MiB, 10 * SEC), 0);
	limits(g, &l);
	ck_assert_uint_eq(l.own_limit_bytes, 48 * MiB);
	ck_assert_uint_le(l.usage_bytes, 48 * MiB);
	/* Bad input changes nothing. */
	ck_assert_int_eq(mr_group_set_limit(g, 4095, 0), -EINVAL);
	limits(g, &l);
	ck_assert_uint_eq(l.own_limit_bytes, 48 * MiB);
	ck_assert_int_eq(mr_group_set_limit(g, MR_UNLIMITED, 0), 0);
	limits(g, &l);
	ck_assert_uint_eq(l.own_limit_bytes, MR_UNLIMITED);

	r = mr_group_set_high(g, 16 * MiB, 10 * SEC);
	ck_assert_int_eq(r, E->set_high);
	limits(g, &l);
	if (r == 0) {
		ck_assert(l.present & MR_LIMITS_HAS_HIGH);
		ck_assert_uint_eq(l.own_high_bytes, 16 * MiB);
		ck_assert_uint_eq(l.high_bytes, 16 * MiB);
		/* The cache was reclaimed towards it. */
		ck_assert_uint_le(l.usage_bytes, 16 * MiB + stock_bytes);
		ck_assert_int_eq(mr_group_set_high(g, MR_UNLIMITED, 0), 0);
		limits(g, &l);
		ck_assert_uint_eq(l.own_high_bytes, MR_UNLIMITED);
	} else {
		ck_assert(!(l.present & MR_LIMITS_HAS_HIGH));
	}
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* ---------------------------------------------------------- events */

/* A reader at a tight limit: the max events grow, in memory.events and
 * memory.events.local alike (a leaf group); with a high (where the
 * backend has one) below the limit, the high events too. */
START_TEST(events_grow_under_pressure)
{
	struct mr_events h0, h1, l1;
	mr_group_t *g = new_group(32 * MiB);
	int r;

	events(g, 0, &h0);
	T->stream(ctx, path, 128 * MiB, false);
	events(g, 0, &h1);
	events(g, MR_EVENTS_LOCAL, &l1);
	fprintf(stderr, "%s: max events %" PRIu64 " -> %" PRIu64 "\n",
		T->name, h0.max, h1.max);
	ck_assert_uint_gt(h1.max, h0.max);
	ck_assert_uint_eq(l1.max, h1.max);
	ck_assert_uint_eq(h1.oom_kill, h0.oom_kill);

	r = mr_group_set_high(g, 16 * MiB, 10 * SEC);
	ck_assert_int_eq(r, E->set_high);
	if (r == 0) {
		T->stream(ctx, path, 128 * MiB, false);
		events(g, 0, &h0);
		ck_assert_uint_gt(h0.high, h1.high);
	}
	ck_assert_int_eq(mr_group_read_events(g, 4, &h0), -EINVAL);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* A PSI trigger of 200 us in 2 s fires while a reader streams 16x the
 * limit, stalling in direct reclaim at it (clean page cache: from 1 to 50
 * ms of stall over the whole stream on the development machines' v1, less
 * when other tests load them), and the stall totals grow. */
START_TEST(psi_trigger_fires_under_pressure)
{
	struct mr_pressure p0 = { .size = sizeof(p0) };
	struct mr_pressure p1 = { .size = sizeof(p1) };
	mr_group_t *g = new_group(32 * MiB);
	struct pollfd pfd;
	int fd, r;

	r = mr_group_read_pressure(g, &p0);
	ck_assert_int_eq(r, E->pressure);
	fd = mr_group_psi_trigger_open(g, MR_PSI_SOME, 200000, 2 * SEC);
	if (E->pressure) {
		ck_assert_int_eq(fd, E->pressure);
		ck_assert_int_eq(mr_group_close(g), 0);
		return;
	}
	ck_assert_int_ge(fd, 0);
	ck_assert(p0.present & MR_PRESSURE_SOME);
	/* Bad triggers are refused before anything is written. */
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_SOME, 0, SEC),
			 -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_FULL, 2 * SEC,
						   SEC), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, 2, SEC, 2 * SEC),
			 -EINVAL);
	T->stream(ctx, path, 512 * MiB, false);
	ck_assert_int_eq(mr_group_read_pressure(g, &p1), 0);
	fprintf(stderr, "%s: some stall %" PRIu64 " -> %" PRIu64
		" us, avg10 %u ppm\n", T->name, p0.some.total_us,
		p1.some.total_us, p1.some.avg10_ppm);
	ck_assert_uint_gt(p1.some.total_us, p0.some.total_us + 200);
	if (p1.present & MR_PRESSURE_FULL)
		ck_assert_uint_le(p1.full.total_us, p1.some.total_us);
	pfd = (struct pollfd){ .fd = fd, .events = E->psi_poll };
	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
	ck_assert(pfd.revents & E->psi_poll);
	close(fd);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* ---------------------------------------------------------- swap */

START_TEST(anon_reclaimed_through_swap)
{
	struct mr_memstat m0 = { .size = sizeof(m0) };
	struct mr_memstat m1 = { .size = sizeof(m1) };
	const uint64_t ask = 16 * MiB;
	struct mr_limits l0, l1;
	struct conf_proc *p;
	uint64_t freed = 0;
	mr_group_t *g = new_group(256 * MiB);
	int r;

	p = T->start_anon(path, 48 * MiB);
	ck_assert_int_eq(mr_group_read_memstat(g, &m0), 0);
	ck_assert_uint_ge(m0.anon_bytes, 47 * MiB);
	limits(g, &l0);
	r = mr_group_reclaim(g, ask, 30 * SEC, &freed);
	if (E->anon_reclaim) {
		fprintf(stderr, "%s: anonymous memory is not reclaimed: %s\n",
			T->name, E->anon_reason);
		ck_assert_int_eq(r, E->anon_reclaim);
		ck_assert_uint_eq(freed, 0);
		T->stop_anon(p);
		ck_assert_int_eq(mr_group_close(g), 0);
		return;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(mr_group_read_memstat(g, &m1), 0);
	limits(g, &l1);
	fprintf(stderr, "%s: anon %" PRIu64 " -> %" PRIu64 " KiB, swap %"
		PRIu64 " -> %" PRIu64 " KiB, reported %" PRIu64 " KiB\n",
		T->name, m0.anon_bytes >> 10, m1.anon_bytes >> 10,
		l0.swap_usage_bytes >> 10, l1.swap_usage_bytes >> 10,
		freed >> 10);
	ck_assert_uint_ge(freed, ask);
	ck_assert_uint_ge(m0.anon_bytes - m1.anon_bytes + stock_bytes +
			  CLUSTER, ask);
	if (E->limits_present & MR_LIMITS_HAS_SWAP)
		ck_assert_uint_ge(l1.swap_usage_bytes, l0.swap_usage_bytes +
				  ask - stock_bytes - CLUSTER);
	/* Read back intact. */
	T->stop_anon(p);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

static char warned[1024];

static void keep_warning(int level, const char *msg, void *userdata)
{
	(void)userdata;
	if (level <= MR_LOG_WARNING)
		snprintf(warned, sizeof(warned), "%s", msg);
}

/* 95 MiB of anonymous memory under a 100 MiB limit with a 10 MiB margin:
 * only swap can bring it below the mark. Where the group may swap
 * (mem_cgroup_get_nr_swap_pages(), get_scan_count()) the margin worker
 * reclaims it; where not, it leaves the group alone and says what it
 * counted as reclaimable. */
START_TEST(margin_worker_swaps_anon)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_limits l;
	struct conf_proc *p;
	mr_group_t *g = new_group(100 * MiB);
	int i, r;

	warned[0] = '\0';
	ck_assert_int_eq(mr_ctx_set_log(ctx, keep_warning, NULL,
					MR_LOG_WARNING), 0);
	p = T->start_anon(path, 95 * MiB);
	limits(g, &l);
	ck_assert(l.present & MR_LIMITS_HAS_SWAP_FREE);
	ck_assert_int_eq(mr_group_set_margin(g, 10 * MiB, 0, 0), 0);
	/* Until the worker wants no more rounds (a pass yields after
	 * 100 ms of the group's clock; the bound ends a runaway). */
	for (i = 0; i < 1000; i++) {
		r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
	}
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st),
			 0);
	fprintf(stderr, "%s: 95 MiB anon, swap %" PRIu64 " MiB free, "
		"swappiness %u: %" PRIu64 " margin calls, %" PRIu64
		" KiB freed, usage %" PRIu64 " KiB%s%s\n", T->name,
		l.swap_free_bytes >> 20, l.swappiness, st.calls,
		st.freed_bytes >> 10, usage(g) >> 10, warned[0] ? "; " : "",
		warned);
	if (E->margin_swaps) {
		ck_assert_uint_gt(l.swap_free_bytes, 0);
		ck_assert_uint_gt(st.calls, 0);
		ck_assert_uint_le(usage(g), 90 * MiB + stock_bytes + CLUSTER);
		ck_assert_ptr_null(strstr(warned, "unreachable"));
	} else {
		fprintf(stderr, "%s: the group may not swap: %s\n", T->name,
			E->swap_reason);
		ck_assert_uint_eq(st.calls, 0);
		ck_assert_msg(strstr(warned, "margin unreachable") &&
			      strstr(warned, "MiB anon (swap "), "%s", warned);
	}
	T->stop_anon(p);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* The swappiness argument of reclaim: accepted where the backend has it
 * (then swappiness 0 reclaims page cache only), -EOPNOTSUPP where not. */
START_TEST(swappiness_probe)
{
	struct mr_memstat m0 = { .size = sizeof(m0) };
	struct mr_memstat m1 = { .size = sizeof(m1) };
	struct conf_proc *p;
	uint64_t freed = 0;
	mr_group_t *g = new_group(256 * MiB);
	int r;

	ck_assert_int_eq(mr_group_set_reclaim_swappiness(g, 201), -EINVAL);
	ck_assert_int_eq(mr_group_set_reclaim_swappiness(g, -2), -EINVAL);
	r = mr_group_set_reclaim_swappiness(g, 0);
	ck_assert_int_eq(r, E->swappiness);
	if (r) {
		ck_assert_int_eq(mr_group_close(g), 0);
		return;
	}
	p = T->start_anon(path, 32 * MiB);
	T->charge_cache(path, 32 * MiB);
	ck_assert_int_eq(mr_group_read_memstat(g, &m0), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 30 * SEC, &freed), 0);
	ck_assert_int_eq(mr_group_read_memstat(g, &m1), 0);
	ck_assert_uint_ge(freed, 16 * MiB);
	ck_assert_uint_eq(m1.anon_bytes, m0.anon_bytes);
	ck_assert_uint_ge(m0.file_bytes - m1.file_bytes, 16 * MiB);
	/* More than the cache left: the cache goes, the anon stays; then
	 * nothing is reclaimable at swappiness 0. */
	ck_assert_int_eq(mr_group_reclaim(g, m1.file_bytes + 16 * MiB,
					  30 * SEC, &freed), 0);
	ck_assert_int_eq(mr_group_read_memstat(g, &m1), 0);
	ck_assert_uint_eq(m1.anon_bytes, m0.anon_bytes);
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 30 * SEC, &freed),
			 -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(mr_group_set_reclaim_swappiness(g, -1), 0);
	T->stop_anon(p);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* ---------------------------------------------------------- removal */

START_TEST(removed_group_is_gone)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat m = { .size = sizeof(m) };
	struct mr_events ev = { .size = sizeof(ev) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	uint64_t u, freed;
	mr_group_t *g = new_group(64 * MiB);

	T->charge_cache(path, 8 * MiB);
	ck_assert_int_eq(mr_group_set_margin(g, 8 * MiB, 0, 0), 0);
	T->remove(path);
	removed = true;
	ck_assert_int_eq(mr_group_read_usage(g, &u), -ENOENT);
	ck_assert_int_eq(mr_group_read_limits(g, &l), -ENOENT);
	ck_assert_int_eq(mr_group_read_memstat(g, &m), -ENOENT);
	ck_assert_int_eq(mr_group_read_events(g, 0, &ev), -ENOENT);
	ck_assert_int_eq(mr_group_read_pressure(g, &pr),
			 E->pressure ? E->pressure : -ENOENT);
	ck_assert_int_eq(mr_group_reclaim(g, MiB, SEC, &freed), -ENOENT);
	ck_assert_int_eq(mr_group_set_limit(g, 32 * MiB, SEC), -ENOENT);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_SOME, 5000000,
						   2 * SEC),
			 E->pressure ? E->pressure : -ENOENT);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create(conf_target.name);
	SRunner *sr;
	int failed, r;

	if (E->charge_stock)
		stock_bytes = reclaim_stock_bytes();
	if (T->init) {
		r = T->init();
		if (r)
			return r;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, reclaim_bytes);
	tcase_add_test(tc, margin_worker_cuts_limit_hits);
	tcase_add_test(tc, limit_and_high_read_back);
	tcase_add_test(tc, events_grow_under_pressure);
	tcase_add_test(tc, psi_trigger_fires_under_pressure);
	tcase_add_test(tc, anon_reclaimed_through_swap);
	tcase_add_test(tc, margin_worker_swaps_anon);
	tcase_add_test(tc, swappiness_probe);
	tcase_add_test(tc, removed_group_is_gone);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (T->fini)
		T->fini();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
