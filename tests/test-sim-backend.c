/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library on the simulator backend: groups opened through a context
 * bound to a simulator, and the library's policies behaving on it as their
 * pure-function tests say (margin, batches, THP advice).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memreclaim.h"
#include "sim.h"
#include "workload.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)
#define PAGES(b) ((b) / 4096)

static mr_sim_t *sim;
static mr_ctx_t *ctx;

static void setup(void)
{
	struct mr_sim_config c = {
		.size = sizeof(c),
		.seed = 7,
		.ram_bytes = 512 * MiB,
		.cpus = 4,
		.costs = "today",
	};

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
}

static void teardown(void)
{
	mr_ctx_free(ctx);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}

/* A task that reads a file through once, `passes` times. */
struct reader {
	sim_obj file;
	uint64_t pages;
	unsigned passes;
	struct sim_libworker *worker; /* stopped at the end, if any */
};

static void read_file(struct sim_task *t, void *arg)
{
	struct reader *r = arg;
	uint64_t off;
	unsigned pass;

	(void)t;
	for (pass = 0; pass < r->passes; pass++) {
		for (off = 0; off < r->pages; off += 32)
			ck_assert_int_eq(sim_file_read(sim->m, r->file, off,
						       32), 0);
	}
	if (r->worker)
		sim_libworker_stop(r->worker);
}

/* Fills group `path` with `bytes` of clean page cache. */
static void fill(const char *path, uint64_t bytes)
{
	static struct reader r;

	r = (struct reader){
		.file = sim_file_new(sim->m, PAGES(bytes)),
		.pages = PAGES(bytes),
		.passes = 1,
	};
	ck_assert(sim_task_spawn(sim->m, "fill", sim_memcg_find(sim->m, path),
				 0, read_file, &r));
	sim_run(sim->m, SIM_UNLIMITED);
}

/* mr_sim_create_group() takes the paths mr_group_open() takes, in their
 * normal form: "." and ".." components are refused by both, and nothing
 * is created. */
START_TEST(create_group_refuses_dot_components)
{
	static const char *const bad[] = {
		"/a/..", "/a/.", "/a/../b", "/./a", "/a/./b", "/..", "/.",
	};
	mr_group_t *g = NULL;
	size_t i;

	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/b"), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(mr_group_open(ctx, bad[i], "sim", &g),
				 -EINVAL);
		ck_assert_int_eq(mr_sim_create_group(sim, bad[i]), -EINVAL);
		ck_assert_int_eq(mr_sim_set_knob(sim, bad[i], MR_SIM_MAX,
						 MiB), -ENOENT);
	}
	ck_assert_ptr_null(g);
	/* Names that only start with a dot are names. */
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/..b"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/.c"), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a/.c", "sim", &g), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

START_TEST(open_and_read)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat st = { .size = sizeof(st) };
	mr_group_t *g = NULL, *child = NULL;
	uint64_t usage;

	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/b"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/a", MR_SIM_MAX, 64 * MiB), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/a/b", MR_SIM_MAX, 128 * MiB),
			 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a/c", "sim", &g), -ENOENT);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), 0);
	ck_assert_str_eq(mr_group_backend(g), "sim");
	ck_assert_int_eq(mr_group_open(ctx, "/a/b", "sim", &child), 0);
	fill("/a/b", 16 * MiB);

	ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
	ck_assert_uint_eq(usage, 16 * MiB);
	ck_assert_int_eq(mr_group_read_limits(child, &l), 0);
	ck_assert_uint_eq(l.usage_bytes, 16 * MiB);
	ck_assert_uint_eq(l.limit_bytes, 64 * MiB);
	ck_assert_uint_eq(l.own_limit_bytes, 128 * MiB);
	ck_assert(l.flags & MR_LIMITS_ANCESTOR_BINDS);
	/* /a binds, one level up, with the child's 16 MiB. */
	ck_assert(l.present & MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.binding_level, 1);
	ck_assert_uint_eq(l.binding_usage_bytes, 16 * MiB);
	ck_assert_uint_eq(l.headroom_bytes, 48 * MiB);
	ck_assert(l.present & MR_LIMITS_HAS_PEAK);
	ck_assert_uint_eq(l.peak_bytes, 16 * MiB);
	ck_assert(l.present & MR_LIMITS_HAS_HIGH);
	ck_assert_uint_eq(l.high_bytes, MR_UNLIMITED);
	ck_assert_int_eq(mr_group_read_memstat(g, &st), 0);
	ck_assert(st.present & (1ULL << MR_MEMSTAT_INACTIVE_FILE));
	ck_assert_uint_eq(st.file_bytes, 16 * MiB);
	ck_assert_uint_eq(st.anon_bytes, 0);
	ck_assert(st.present & (1ULL << MR_MEMSTAT_PGSCAN));

	/* A simulator with groups open is not freed, nor swapped. */
	ck_assert_int_eq(mr_sim_free(sim), -EBUSY);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), -EBUSY);
	ck_assert_int_eq(mr_group_close(child), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), -ENODEV);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
}
END_TEST

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static struct mr_protection protection(const char *path, uint32_t level)
{
	struct mr_protection p = { .size = sizeof(p) };
	mr_group_t *g = NULL;

	ck_assert_int_eq(mr_group_open(ctx, path, "sim", &g), 0);
	ck_assert_int_eq(mr_group_read_protection(g, level, &p), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	return p;
}

/* Effective protection relative to the reclaim root, as the kernel's
 * mem_cgroup_calculate_protection(root, memcg): /A max 200 MiB, low 0;
 * /A/B low 50 MiB; its children C low 75, D low 25, E low 0 with 50 MiB
 * of page cache each, F low 500 MiB with none. Rooted at A (its limit's
 * reclaim), B keeps its own 50 MiB and its children share it by
 * min(usage, low): C 50 * 50/75 = 33.3 MiB, D 50 * 25/75 = 16.7 MiB, E and
 * F nothing. Against global reclaim A's low of 0 leaves nobody any. */
START_TEST(protection_from_reclaim_root)
{
	static const char *const kids[] = { "/A/B/C", "/A/B/D", "/A/B/E",
					    "/A/B/F" };
	static const uint64_t low[] = { 75 * MiB, 25 * MiB, 0, 500 * MiB };
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_protection p;
	mr_group_t *g = NULL;
	unsigned i;

	ck_assert_int_eq(mr_sim_create_group(sim, "/A"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/A/B"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/A", MR_SIM_MAX, 200 * MiB), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/A/B", MR_SIM_LOW, 50 * MiB),
			 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(mr_sim_create_group(sim, kids[i]), 0);
		ck_assert_int_eq(mr_sim_set_knob(sim, kids[i], MR_SIM_LOW,
						 low[i]), 0);
		if (i < 3)
			fill(kids[i], 50 * MiB);
	}
	p = protection("/A/B/C", 2);
	ck_assert_uint_eq(p.root_level, 2);
	ck_assert_uint_eq(p.low_bytes, 75 * MiB);
	ck_assert_uint_le(absdiff(p.effective_low_bytes, 100 * MiB / 3), 4096);
	p = protection("/A/B/D", MR_RECLAIM_ROOT_BINDING);
	ck_assert_uint_eq(p.root_level, 2);
	ck_assert_uint_le(absdiff(p.effective_low_bytes, 50 * MiB / 3), 4096);
	ck_assert_uint_eq(protection("/A/B/E", 2).effective_low_bytes, 0);
	p = protection("/A/B/F", 2);
	ck_assert_uint_eq(p.low_bytes, 500 * MiB);
	ck_assert_uint_eq(p.effective_low_bytes, 0);
	ck_assert_uint_eq(protection("/A/B", 1).effective_low_bytes, 50 * MiB);
	ck_assert_uint_eq(protection("/A/B", 0).effective_low_bytes, 0);
	/* Global reclaim, and the snapshot: nothing below A. */
	p = protection("/A/B/C", MR_RECLAIM_ROOT_TOP);
	ck_assert_uint_eq(p.root_level, 3);
	ck_assert_uint_eq(p.effective_low_bytes, 0);
	ck_assert_int_eq(mr_group_open(ctx, "/A/B/F", "sim", &g), 0);
	ck_assert_int_eq(mr_group_read_limits(g, &l), 0);
	ck_assert_uint_eq(l.low_bytes, 500 * MiB);
	ck_assert_uint_eq(l.effective_low_bytes, 0);
	p = (struct mr_protection){ .size = sizeof(p) };
	ck_assert_int_eq(mr_group_read_protection(g, 4, &p), -EINVAL);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* The model's reclaim protects by the same numbers: a reclaim rooted at
 * a group ignores the group's own low (the root gets none), so asking
 * /B, low 100 MiB over its 32 MiB, for 8 MiB reclaims at once, without
 * the memory.events low of a reclaim that had to break protection. */
START_TEST(reclaim_root_own_low_ignored)
{
	struct mr_events ev = { .size = sizeof(ev) };
	mr_group_t *g = NULL;
	uint64_t freed = 0;

	ck_assert_int_eq(mr_sim_create_group(sim, "/B"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/B", MR_SIM_LOW, 100 * MiB), 0);
	fill("/B", 32 * MiB);
	ck_assert_int_eq(mr_group_open(ctx, "/B", "sim", &g), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 8 * MiB, 0, &freed), 0);
	ck_assert_uint_ge(freed, 8 * MiB);
	ck_assert_int_eq(mr_group_read_events(g, 0, &ev), 0);
	ck_assert_uint_eq(ev.low, 0);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

START_TEST(reclaim_in_virtual_time)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	uint64_t freed, t0, usage;
	mr_group_t *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &g), 0);
	/* Nothing to reclaim yet. */
	ck_assert_int_eq(mr_group_reclaim(g, MiB, 0, &freed), -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	fill("/g", 32 * MiB);

	/* The fixed batch: one call per 32 pages, exactly. */
	t0 = mr_sim_now_ns(sim);
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), 0);
	/* The kernel's reclaim frees whole SWAP_CLUSTER_MAX chunks: at most
	 * one batch more than asked. */
	ck_assert_uint_ge(freed, 4 * MiB);
	ck_assert_uint_lt(freed, 4 * MiB + MR_SWAP_CLUSTER_MAX_BYTES);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_le(st.calls, 4 * MiB / MR_SWAP_CLUSTER_MAX_BYTES);
	ck_assert_uint_eq(st.freed_bytes, freed);
	/* The time is the simulator's, and the calls cost some. */
	ck_assert_uint_gt(mr_sim_now_ns(sim), t0);
	ck_assert_uint_eq(st.elapsed_ns, mr_sim_now_ns(sim) - t0);
	ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
	ck_assert_uint_eq(usage, 32 * MiB - freed);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* The proportional batch asks, call after call, what
 * mr_batch_proportional_bytes() says for the remaining excess. */
START_TEST(proportional_batch_as_the_pure_function)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	uint64_t freed, excess, calls = 0, b;
	mr_group_t *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 256 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_proportional(g,
				MR_BATCH_DEFAULT_SHARE_PPM,
				MR_BATCH_DEFAULT_MAX_BYTES,
				MR_BATCH_DEFAULT_MAX_PPM), 0);
	fill("/g", 200 * MiB);
	for (excess = 150 * MiB; excess; excess -= b, calls++)
		b = mr_batch_proportional_bytes(excess, 256 * MiB,
						MR_BATCH_DEFAULT_SHARE_PPM,
						MR_BATCH_DEFAULT_MAX_BYTES,
						MR_BATCH_DEFAULT_MAX_PPM);
	ck_assert_int_eq(mr_group_reclaim(g, 150 * MiB, 0, &freed), 0);
	ck_assert_uint_ge(freed, 150 * MiB);
	ck_assert_uint_lt(freed, 150 * MiB + MR_SWAP_CLUSTER_MAX_BYTES);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	/* Each call frees what it asks and up to a chunk more, so the calls
	 * follow the pure function's sequence, and the chunks freed beyond
	 * it shorten its tail of small calls (here by three of 25). */
	ck_assert_uint_le(st.calls, calls);
	ck_assert_uint_ge(st.calls + 4, calls);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* The margin worker, as a simulated task, keeps charges off the limit:
 * a reader streaming twice its limit never meets it. */
START_TEST(margin_keeps_charges_off_the_limit)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_limits l = { .size = sizeof(l) };
	static struct reader r;
	mr_group_t *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 64 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &g), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 8 * MiB, 0, 4 * MiB), 0);
	r = (struct reader){
		.file = sim_file_new(sim->m, PAGES(128 * MiB)),
		.pages = PAGES(128 * MiB),
		.passes = 2,
		.worker = sim_libworker_start(sim, ctx),
	};
	ck_assert_ptr_nonnull(r.worker);
	ck_assert(sim_task_spawn(sim->m, "reader",
				 sim_memcg_find(sim->m, "/g"), 0, read_file,
				 &r));
	sim_run(sim->m, SIM_UNLIMITED);

	ck_assert_int_eq(mr_group_read_limits(g, &l), 0);
	ck_assert_uint_eq(l.limit_hits, 0);
	ck_assert_uint_le(l.usage_bytes, 64 * MiB - 8 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st),
			 0);
	ck_assert_uint_gt(st.calls, 0);
	/* It freed about everything read beyond the limit. */
	ck_assert_uint_ge(st.freed_bytes, 256 * MiB - 64 * MiB);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* Reclaim across a context's groups takes first from the group above its
 * soft limit, then from all in proportion (mr_soft_limit_plan()). */
START_TEST(soft_limit_order)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	uint64_t freed, ua, ub;
	mr_group_t *a, *b;

	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/b"), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &a), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/b", "sim", &b), 0);
	fill("/a", 40 * MiB);
	fill("/b", 40 * MiB);
	ck_assert_int_eq(mr_group_set_soft_limit(a, 8 * MiB), 0);

	/* Within /a's excess: /b is not touched. */
	ck_assert_int_eq(mr_ctx_reclaim(ctx, 16 * MiB, 0, &freed), 0);
	ck_assert_int_eq(mr_group_read_usage(a, &ua), 0);
	ck_assert_int_eq(mr_group_read_usage(b, &ub), 0);
	ck_assert_uint_eq(ub, 40 * MiB);
	ck_assert_uint_le(ua, 24 * MiB);
	ck_assert_uint_gt(ua, 24 * MiB - MR_SWAP_CLUSTER_MAX_BYTES);
	ck_assert_int_eq(mr_group_read_reclaim_stats(a, MR_REASON_SOFT, &st),
			 0);
	ck_assert_uint_eq(st.freed_bytes, 40 * MiB - ua);

	/* Beyond it: the rest of /a's excess, then both in proportion. */
	ck_assert_int_eq(mr_ctx_reclaim(ctx, 32 * MiB, 0, &freed), 0);
	ck_assert_int_eq(mr_group_read_usage(a, &ua), 0);
	ck_assert_int_eq(mr_group_read_usage(b, &ub), 0);
	ck_assert_uint_lt(ua, 8 * MiB);
	ck_assert_uint_lt(ub, 40 * MiB);
	ck_assert_uint_ge(freed, 32 * MiB);
	ck_assert_int_eq(mr_group_close(a), 0);
	ck_assert_int_eq(mr_group_close(b), 0);
}
END_TEST

/* Regression: a worker thread on a simulator raced the simulation (a
 * trace's setup callback that started one crashed in the model). A bound
 * context refuses the thread; a context whose thread runs refuses the
 * simulator. */
START_TEST(no_worker_thread_on_a_simulator)
{
	mr_ctx_t *other;

	ck_assert_int_eq(mr_ctx_worker_start(ctx), -EOPNOTSUPP);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), -ESRCH);
	ck_assert_int_eq(mr_ctx_new(&other), 0);
	ck_assert_int_eq(mr_ctx_worker_start(other), 0);
	ck_assert_int_eq(mr_sim_attach(sim, other), -EBUSY);
	ck_assert_int_eq(mr_ctx_worker_stop(other), 0);
	ck_assert_int_eq(mr_sim_attach(sim, other), 0);
	ck_assert_int_eq(mr_ctx_worker_start(other), -EOPNOTSUPP);
	ck_assert_int_eq(mr_sim_attach(NULL, other), 0);
	ck_assert_int_eq(mr_ctx_worker_start(other), 0);
	mr_ctx_free(other);
}
END_TEST

/* One margin keeper per group, across handles. */
START_TEST(one_keeper)
{
	mr_group_t *a, *b;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 64 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &a), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &b), 0);
	ck_assert_int_eq(mr_group_set_margin(a, 8 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_group_set_margin(b, 8 * MiB, 0, 0), -EBUSY);
	ck_assert_int_eq(mr_group_close(a), 0);
	ck_assert_int_eq(mr_group_set_margin(b, 8 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_group_close(b), 0);
}
END_TEST

/* A usage threshold makes the group's event fd readable, as on v1. */
START_TEST(threshold_event)
{
	struct pollfd p = { .events = POLLIN };
	mr_group_t *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 64 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/g", "sim", &g), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 16 * MiB, 0, 0), 0);
	p.fd = mr_ctx_worker_fd(ctx);
	ck_assert_int_ge(p.fd, 0);
	/* The first round arms the threshold at limit - margin. */
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	fill("/g", 56 * MiB);
	ck_assert_int_eq(poll(&p, 1, 0), 1);
	/* The round reclaims to the margin. */
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert_uint_le(sim_memcg_usage(sim_memcg_find(sim->m, "/g")),
			  PAGES(48 * MiB));
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* The THP advice on the simulator is mr_thp_decide()'s, and acts as on a
 * real kernel: the faulting task asks the library before each huge-page
 * fault (sim_thp_advise()), reclaims what it is advised to through the
 * backend and faults small pages where it is advised small, which the
 * kernel then counts as no huge-page fault at all (a fallback is the
 * kernel's or the library's advice, mr_charge_stats.thp_fallbacks). In
 * a group full of clean cache at its limit, FALLBACK never faults a huge
 * page, RECLAIM_FULL and CLEAN_CACHE reclaim for every one. */
static sim_obj thp_anon;
static uint64_t thp_pages;
static mr_group_t *thp_lib;     /* the task's handle, or NULL: it asks
				   the library nothing */

static void fault_anon(struct sim_task *t, void *arg)
{
	uint64_t off, swapped = 0;
	bool huge = true;
	int r;

	(void)t;
	(void)arg;
	for (off = 0; off < thp_pages; off++) {
		if (thp_lib && off % SIM_HPAGE_NR == 0) {
			r = sim_thp_advise(sim->m, thp_lib, &swapped);
			ck_assert_int_ge(r, 0);
			huge = r == 1;
		}
		ck_assert_int_eq(sim_anon_touch(sim->m, thp_anon, off, 1,
						huge), 0);
	}
}

/* Faults `pages` of a new anonymous region in from a task of group g,
 * asking the library with `policy` first (-1: not at all), with the
 * kernel's charge since the 2014 fix. */
static void fault_in(struct sim_memcg *g, uint64_t pages, int policy)
{
	thp_lib = NULL;
	if (policy >= 0) {
		ck_assert_int_eq(mr_group_open(ctx, sim_memcg_path(g), "sim",
					       &thp_lib), 0);
		ck_assert_int_eq(mr_group_set_thp_policy(thp_lib, policy, 0),
				 0);
	}
	sim_memcg_set_thp_mode(sim->m, SIM_THP_FULL);
	thp_pages = pages;
	thp_anon = sim_anon_new(sim->m, pages);
	ck_assert(sim_task_spawn(sim->m, "fault", g, 0, fault_anon, NULL));
	sim_run(sim->m, SIM_UNLIMITED);
}

static void thp_run(int policy, uint64_t *alloc, uint64_t *fallback)
{
	struct mr_charge_stats st = { .size = sizeof(st) };
	struct sim_memcg *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 32 * MiB), 0);
	fill("/g", 32 * MiB);
	g = sim_memcg_find(sim->m, "/g");
	fault_in(g, PAGES(8 * MiB), policy);
	ck_assert_int_eq(mr_group_read_charge_stats(thp_lib, &st), 0);
	*alloc = sim_memcg_counter(g, SIM_THP_FAULT_ALLOC);
	*fallback = sim_memcg_counter(g, SIM_THP_FAULT_FALLBACK) +
		    st.thp_fallbacks;
	ck_assert_int_eq(mr_group_close(thp_lib), 0);
}

START_TEST(thp_fallback)
{
	uint64_t alloc, fallback;

	thp_run(MR_THP_FALLBACK, &alloc, &fallback);
	ck_assert_uint_eq(alloc, 0);
	ck_assert_uint_eq(fallback, 4);
}
END_TEST

START_TEST(thp_reclaim_full)
{
	uint64_t alloc, fallback;

	thp_run(MR_THP_RECLAIM_FULL, &alloc, &fallback);
	ck_assert_uint_eq(alloc, 4);
	ck_assert_uint_eq(fallback, 0);
}
END_TEST

START_TEST(thp_clean_cache)
{
	uint64_t alloc, fallback;

	thp_run(MR_THP_CLEAN_CACHE, &alloc, &fallback);
	ck_assert_uint_eq(alloc, 4);
	ck_assert_uint_eq(fallback, 0);
}
END_TEST

/* One huge-page fault in a group 64 pages short of room for it: the
 * kernel's charge (the model's, trace runs included) asks reclaim for the
 * whole charge, 512 pages (try_charge_memcg() passes nr_pages to
 * try_to_free_mem_cgroup_pages()), not the shortfall; a task that asks
 * the library first (MR_THP_RECLAIM_FULL) reclaims the advice's
 * shortfall only, and the kernel's charge then fits. Returns the pages
 * reclaimed from the group. */
static uint64_t huge_fault_reclaimed(bool library)
{
	struct sim_memcg *g;

	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 32 * MiB), 0);
	fill("/g", 30 * MiB + 64 * 4096);
	g = sim_memcg_find(sim->m, "/g");
	ck_assert_uint_eq(sim_memcg_counter(g, SIM_PGSTEAL), 0);
	fault_in(g, SIM_HPAGE_NR, library ? MR_THP_RECLAIM_FULL : -1);
	ck_assert_uint_eq(sim_memcg_counter(g, SIM_THP_FAULT_ALLOC), 1);
	ck_assert_int_eq(mr_group_close(thp_lib), 0);
	return sim_memcg_counter(g, SIM_PGSTEAL);
}

START_TEST(thp_charge_reclaims_the_whole_charge)
{
	ck_assert_uint_ge(huge_fault_reclaimed(false), SIM_HPAGE_NR);
}
END_TEST

START_TEST(thp_library_reclaims_the_shortfall)
{
	uint64_t n = huge_fault_reclaimed(true);

	ck_assert_uint_ge(n, 64);
	ck_assert_uint_lt(n, SIM_HPAGE_NR);
}
END_TEST

static Suite *sim_backend_suite(void)
{
	Suite *s = suite_create("sim-backend");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_and_read);
	tcase_add_test(tc, protection_from_reclaim_root);
	tcase_add_test(tc, reclaim_root_own_low_ignored);
	tcase_add_test(tc, create_group_refuses_dot_components);
	tcase_add_test(tc, reclaim_in_virtual_time);
	tcase_add_test(tc, proportional_batch_as_the_pure_function);
	tcase_add_test(tc, margin_keeps_charges_off_the_limit);
	tcase_add_test(tc, soft_limit_order);
	tcase_add_test(tc, one_keeper);
	tcase_add_test(tc, no_worker_thread_on_a_simulator);
	tcase_add_test(tc, threshold_event);
	tcase_add_test(tc, thp_fallback);
	tcase_add_test(tc, thp_charge_reclaims_the_whole_charge);
	tcase_add_test(tc, thp_library_reclaims_the_shortfall);
	tcase_add_test(tc, thp_reclaim_full);
	tcase_add_test(tc, thp_clean_cache);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_backend_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
