/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The adaptive margin (mr_group_set_margin_adaptive()) on the simulator,
 * against the same workload without a keeper, from the same seed, with
 * today's costs. Readers serve random 64 KiB reads from a file set twice
 * the group's limit; the library's worker runs as a task of the machine.
 *
 * clean: page cache reclaim costs CPU and never waits, so the margin
 * removes nothing from the readers' path: it must shrink to at most
 * 1 MiB, leave the worker idle but for its probes, and leave the readers'
 * completion time within 1%.
 *
 * dirty: a writer dirties page cache in the group beside the readers, so
 * reclaim meets dirty and writeback pages and waits for them
 * (reclaim_throttle()): the margin must grow to several MiB at full
 * strength, and the reclaim in the workload's tasks (direct reclaim at
 * the limit, as mrsim's limit_reclaim_s counts it) must fall at least
 * tenfold once it has settled.
 *
 * Every figure is a count of the model's, in virtual time; when an
 * assertion fails, the margin's statistics per second go to the log.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memreclaim.h"
#include "sim.h"

#define MIB (1ULL << 20)
#define MS 1000000ULL
#define US 1000ULL
#define S 1000000000ULL

#define GROUP "/srv"
#define LIMIT_BYTES (128 * MIB)
#define RAM_BYTES (1024 * MIB)
#define SEED 1
/* The readers' file set: twice the limit, in files of 1 MiB. */
#define FILES 256u
#define FILE_PAGES 256u
#define READERS 2u
#define READ_PAGES 16u
#define READ_CPU_NS (500 * US)
#define READS 50000u
/* The writer: 128 KiB writes, each after 1 ms of work (about 125 MiB/s
 * at most), through a file larger than the machine, truncated and
 * written again from its start at its end (a log rotated). */
#define WRITE_PAGES 32u
#define WRITE_CPU_NS (1 * MS)
#define WRITER_FILE_PAGES (512u * 1024)
/* The margin has settled by SETTLE_NS (the first probe kept, or its
 * fall to 0 and the first probe after it); the window
 * [SETTLE_NS, END_NS] is compared, and every task still runs at END_NS. */
#define SETTLE_NS (12 * S)
#define END_NS (24 * S)
#define SAMPLES 64u

struct run;

/* A task of the workload, its statistics kept after it ends. */
struct task {
	struct run *run;
	struct sim_task *t;
	struct sim_task_stats final;
	bool ended;
	uint64_t rng;
};

/* What the monitor read at one second. */
struct sample {
	uint64_t t_ns;
	struct mr_margin_stats ms;
	uint64_t margin_calls;
	uint64_t failcnt;
	uint64_t workload_reclaim_ns;
};

struct run {
	mr_sim_t *sim;
	struct sim_machine *m;
	struct sim_memcg *g;
	mr_ctx_t *ctx;
	mr_group_t *grp;
	struct sim_libworker *worker;
	sim_obj files[FILES], wfile;
	struct task readers[READERS], wtask;
	unsigned running;
	uint64_t done_ns;          /* the last reader ended */
	bool stop;
	struct sample s[SAMPLES];
	unsigned ns;
	/* The figures of the window and of the end. */
	struct sample *settled, *end;
};

/* The readers draw from generators of their own (xorshift64*), so both
 * runs of a seed read the same files in the same order whatever the
 * model's generator serves meanwhile. */
static uint64_t next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

static void task_end(struct task *k)
{
	k->final = *sim_task_stats(k->t);
	k->ended = true;
}

static uint64_t task_reclaim_ns(const struct task *k)
{
	if (!k->t)
		return 0;
	return k->ended ? k->final.direct_reclaim_ns :
			  sim_task_stats(k->t)->direct_reclaim_ns;
}

static void finish(struct run *r)
{
	r->done_ns = sim_now(r->m);
	r->stop = true;
	if (r->worker)
		sim_libworker_stop(r->worker);
}

static void reader(struct sim_task *t, void *arg)
{
	struct task *k = arg;
	struct run *r = k->run;
	uint64_t x, i;

	(void)t;
	for (i = 0; i < READS; i++) {
		x = next(&k->rng);
		ck_assert_int_eq(sim_file_read(r->m, r->files[x % FILES],
					       (x >> 32) %
					       (FILE_PAGES - READ_PAGES + 1),
					       READ_PAGES), 0);
		sim_cpu(r->m, READ_CPU_NS);
	}
	task_end(k);
	if (!--r->running)
		finish(r);
}

static void writer(struct sim_task *t, void *arg)
{
	struct task *k = arg;
	struct run *r = k->run;
	uint64_t off = 0;

	(void)t;
	while (!r->stop) {
		ck_assert_int_eq(sim_file_write(r->m, r->wfile, off,
						WRITE_PAGES), 0);
		off += WRITE_PAGES;
		/* A new file at the end: the model counts a page written
		 * over its shadow entry as a refault, where the kernel
		 * does not (filemap_add_folio() skips __GFP_WRITE). */
		if (off == WRITER_FILE_PAGES) {
			sim_obj_truncate(r->m, r->wfile);
			off = 0;
		}
		sim_cpu(r->m, WRITE_CPU_NS);
	}
	task_end(k);
}

static void monitor(struct sim_task *t, void *arg)
{
	struct run *r = arg;
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct sample *s;
	unsigned i;

	(void)t;
	while (!r->stop && r->ns < SAMPLES) {
		sim_sleep(r->m, S);
		if (r->stop)
			break;
		s = &r->s[r->ns++];
		s->t_ns = sim_now(r->m);
		s->ms.size = sizeof(s->ms);
		ck_assert_int_eq(mr_group_read_margin_stats(r->grp, &s->ms),
				 0);
		ck_assert_int_eq(mr_group_read_reclaim_stats(r->grp,
				 MR_REASON_MARGIN, &st), 0);
		s->margin_calls = st.calls;
		s->failcnt = sim_memcg_counter(r->g, SIM_FAILCNT);
		for (i = 0; i < READERS; i++)
			s->workload_reclaim_ns +=
				task_reclaim_ns(&r->readers[i]);
		s->workload_reclaim_ns += task_reclaim_ns(&r->wtask);
	}
}

static struct sample *at(struct run *r, uint64_t t_ns)
{
	unsigned i;

	for (i = 0; i < r->ns; i++) {
		if (r->s[i].t_ns == t_ns)
			return &r->s[i];
	}
	ck_abort_msg("no sample at %llu s", (unsigned long long)(t_ns / S));
	return NULL;
}

static void run(struct run *r, bool writer_too,
		const struct mr_margin_adaptive *adaptive, bool keeper)
{
	struct mr_sim_config cfg = {
		.size = sizeof(cfg),
		.seed = SEED,
		.ram_bytes = RAM_BYTES,
		.cpus = 2,
		.costs = "today",
	};
	char why[256];
	unsigned i;

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(mr_sim_new(&cfg, &r->sim), 0);
	r->m = r->sim->m;
	ck_assert_int_eq(mr_sim_create_group(r->sim, GROUP), 0);
	ck_assert_int_eq(mr_sim_set_knob(r->sim, GROUP, MR_SIM_MAX,
					 LIMIT_BYTES), 0);
	r->g = sim_memcg_find(r->m, GROUP);
	ck_assert_int_eq(mr_ctx_new(&r->ctx), 0);
	ck_assert_int_eq(mr_sim_attach(r->sim, r->ctx), 0);
	ck_assert_int_eq(mr_group_open(r->ctx, GROUP, "sim", &r->grp), 0);
	if (keeper) {
		ck_assert_int_eq(mr_group_set_margin_adaptive(r->grp,
							      adaptive), 0);
		r->worker = sim_libworker_start(r->sim, r->ctx);
		ck_assert_ptr_nonnull(r->worker);
	}
	for (i = 0; i < FILES; i++) {
		r->files[i] = sim_file_new(r->m, FILE_PAGES);
		ck_assert_uint_ne(r->files[i], SIM_NOPAGE);
	}
	for (i = 0; i < READERS; i++) {
		r->readers[i].run = r;
		r->readers[i].rng = 0x9e3779b97f4a7c15ULL * (SEED + i + 1);
		r->readers[i].t = sim_task_spawn(r->m, "reader", r->g, 0,
						 reader, &r->readers[i]);
		ck_assert_ptr_nonnull(r->readers[i].t);
		r->running++;
	}
	if (writer_too) {
		r->wfile = sim_file_new(r->m, WRITER_FILE_PAGES);
		ck_assert_uint_ne(r->wfile, SIM_NOPAGE);
		r->wtask.run = r;
		r->wtask.t = sim_task_spawn(r->m, "writer", r->g, 0, writer,
					    &r->wtask);
		ck_assert_ptr_nonnull(r->wtask.t);
	}
	ck_assert_ptr_nonnull(sim_task_spawn(r->m, "monitor", sim_root(r->m),
					     0, monitor, r));
	sim_run(r->m, SIM_UNLIMITED);
	ck_assert_int_eq(sim_check_invariants(r->m, why, sizeof(why)), 0);
	ck_assert_msg(r->done_ns > END_NS, "the readers ended at %.1f s",
		      (double)r->done_ns / S);
	r->settled = at(r, SETTLE_NS);
	r->end = at(r, END_NS);
}

static void done(struct run *r)
{
	mr_ctx_free(r->ctx);
	ck_assert_int_eq(mr_sim_free(r->sim), 0);
}

/* The margin's statistics per second, to the log. */
static void dump(const char *what, const struct run *r)
{
	const struct sample *s;
	unsigned i;

	fprintf(stderr, "%s, adaptive margin, per second:\n"
		"t_s margin_MiB sized_MiB strength_ppm rate_MiB_s "
		"reaction_ms benefit_ms cost_ms refault_MiB limit_hits "
		"worker_cpu_ms margin_calls failcnt workload_reclaim_ms\n",
		what);
	for (i = 0; i < r->ns; i++) {
		s = &r->s[i];
		fprintf(stderr, "%.0f %.3f %.3f %u %.1f %.3f %.3f %.3f %.2f "
			"%llu %.1f %llu %llu %.1f\n", (double)s->t_ns / S,
			(double)s->ms.margin_bytes / MIB,
			(double)s->ms.sized_bytes / MIB, s->ms.strength_ppm,
			(double)s->ms.charge_bytes_per_s / MIB,
			(double)s->ms.reaction_ns / MS,
			(double)s->ms.benefit_ns / MS,
			(double)s->ms.cost_ns / MS,
			(double)s->ms.refault_bytes / MIB,
			(unsigned long long)s->ms.limit_hits,
			(double)s->ms.worker_cpu_ns / MS,
			(unsigned long long)s->margin_calls,
			(unsigned long long)s->failcnt,
			(double)s->workload_reclaim_ns / MS);
	}
}

static uint64_t window(const struct run *r, size_t field)
{
	const char *a = (const char *)r->settled + field;
	const char *b = (const char *)r->end + field;

	return *(const uint64_t *)b - *(const uint64_t *)a;
}

#define WINDOW(r, f) window((r), offsetof(struct sample, f))

/* Clean page cache: the margin shrinks away and costs the readers
 * nothing. */
START_TEST(clean_cache_margin_shrinks)
{
	struct run base, ad;
	const struct sample *s;
	unsigned i, busy = 0, seconds = 0;
	uint64_t worker_cpu_ns;
	double ratio;
	bool ok;

	run(&base, false, NULL, false);
	run(&ad, false, NULL, true);
	for (i = 0; i < ad.ns; i++) {
		s = &ad.s[i];
		if (s->t_ns <= SETTLE_NS || s->t_ns > END_NS)
			continue;
		seconds++;
		/* A second in which the worker reclaimed at all. */
		if (s->margin_calls != s[-1].margin_calls)
			busy++;
	}
	worker_cpu_ns = ad.end->ms.worker_cpu_ns -
			ad.settled->ms.worker_cpu_ns;
	ratio = (double)(ad.done_ns) / (double)(base.done_ns);
	ok = ad.settled->ms.margin_bytes <= MIB &&
	     ad.end->ms.margin_bytes <= MIB && busy * 4 <= seconds &&
	     worker_cpu_ns * 100 <= END_NS - SETTLE_NS &&
	     ratio <= 1.01 && ratio >= 0.99;
	if (!ok)
		dump("clean", &ad);
	fprintf(stderr, "clean: readers done at %.3f s without, %.3f s "
		"adaptive (%.4fx); margin %.3f MiB at %llu s, %.3f MiB at "
		"%llu s; worker reclaimed in %u of %u s, %.1f ms of CPU; "
		"workload reclaim %.1f ms without, %.1f ms adaptive\n",
		(double)base.done_ns / S, (double)ad.done_ns / S, ratio,
		(double)ad.settled->ms.margin_bytes / MIB,
		(unsigned long long)(SETTLE_NS / S),
		(double)ad.end->ms.margin_bytes / MIB,
		(unsigned long long)(END_NS / S), busy, seconds,
		(double)worker_cpu_ns / MS,
		(double)WINDOW(&base, workload_reclaim_ns) / MS,
		(double)WINDOW(&ad, workload_reclaim_ns) / MS);
	ck_assert(ad.end->ms.adaptive);
	ck_assert_uint_ge(ad.end->ms.intervals, END_NS / S - 2);
	ck_assert_uint_le(ad.settled->ms.margin_bytes, MIB);
	ck_assert_uint_le(ad.end->ms.margin_bytes, MIB);
	/* The worker leaves the group alone but for its probes. */
	ck_assert_uint_le(busy * 4, seconds);
	ck_assert_uint_le(worker_cpu_ns * 100, END_NS - SETTLE_NS);
	ck_assert_msg(ratio <= 1.01 && ratio >= 0.99,
		      "completion %.4fx of the run without a keeper", ratio);
	done(&base);
	done(&ad);
}
END_TEST

/* Dirty page cache: the margin grows and takes the reclaim out of the
 * workload's tasks. */
START_TEST(dirty_cache_margin_grows)
{
	struct mr_margin_adaptive bounds = {
		.size = sizeof(bounds),
		.max_bytes = 16 * MIB,
	};
	struct run base, ad;
	uint64_t before, after;
	bool ok;

	run(&base, true, NULL, false);
	run(&ad, true, &bounds, true);
	before = WINDOW(&base, workload_reclaim_ns);
	after = WINDOW(&ad, workload_reclaim_ns);
	ok = ad.settled->ms.margin_bytes >= 4 * MIB &&
	     ad.end->ms.margin_bytes >= 4 * MIB &&
	     ad.end->ms.strength_ppm == 1000000 && after * 10 <= before;
	if (!ok)
		dump("dirty", &ad);
	fprintf(stderr, "dirty: margin %.3f MiB at %llu s, %.3f MiB at %llu "
		"s, strength %u ppm; workload reclaim in [%llu, %llu] s: "
		"%.1f ms without, %.1f ms adaptive; failcnt %llu without, "
		"%llu adaptive; readers done at %.3f s without, %.3f s "
		"adaptive\n", (double)ad.settled->ms.margin_bytes / MIB,
		(unsigned long long)(SETTLE_NS / S),
		(double)ad.end->ms.margin_bytes / MIB,
		(unsigned long long)(END_NS / S), ad.end->ms.strength_ppm,
		(unsigned long long)(SETTLE_NS / S),
		(unsigned long long)(END_NS / S), (double)before / MS,
		(double)after / MS,
		(unsigned long long)WINDOW(&base, failcnt),
		(unsigned long long)WINDOW(&ad, failcnt),
		(double)base.done_ns / S, (double)ad.done_ns / S);
	ck_assert(ad.end->ms.adaptive);
	ck_assert_uint_ge(ad.settled->ms.margin_bytes, 4 * MIB);
	ck_assert_uint_ge(ad.end->ms.margin_bytes, 4 * MIB);
	ck_assert_uint_le(ad.end->ms.margin_bytes, bounds.max_bytes);
	ck_assert_uint_eq(ad.end->ms.strength_ppm, 1000000);
	/* A kept margin's passes are priced, and its hysteresis is at
	 * least the margin (hysteresis_ppm's default). */
	ck_assert_uint_gt(ad.end->ms.pass_cpu_ns, 0);
	ck_assert_uint_ge(ad.end->ms.hysteresis_bytes,
			  ad.end->ms.margin_bytes);
	ck_assert_uint_gt(before, 0);
	ck_assert_uint_le(after * 10, before);
	ck_assert_uint_le(WINDOW(&ad, failcnt) * 10, WINDOW(&base, failcnt));
	done(&base);
	done(&ad);
}
END_TEST

/* The reaction ends where usage is back at the mark, not where the pass
 * ends. The clean workload, its margin pinned at 4 MiB and kept whole,
 * with a hysteresis of a sixteenth of it and of all of it (the least,
 * hysteresis_ppm, which it keeps on this workload): passes that free
 * sixteen times as much below the mark must not make the reaction
 * longer. Timed to the pass's end, the reaction grew with the
 * hysteresis, and the margin with it (on a slow disk, passes of 32 MiB
 * through dirty cache took 471 ms, and the margin went to its bound). */
START_TEST(hysteresis_not_in_reaction)
{
	struct mr_margin_adaptive bounds = {
		.size = sizeof(bounds),
		.min_bytes = 4 * MIB,
		.max_bytes = 4 * MIB,
		.hysteresis_ppm = 62500,
		.min_strength_ppm = 1000000,
	};
	struct run small, large;
	uint64_t rs, rl;

	run(&small, false, &bounds, true);
	bounds.hysteresis_ppm = 1000000;
	run(&large, false, &bounds, true);
	rs = small.end->ms.reaction_ns;
	rl = large.end->ms.reaction_ns;
	fprintf(stderr, "hysteresis %.2f MiB: reaction %.3f ms, %llu calls; "
		"hysteresis %.2f MiB: reaction %.3f ms, %llu calls\n",
		(double)small.end->ms.hysteresis_bytes / MIB, (double)rs / MS,
		(unsigned long long)small.end->margin_calls,
		(double)large.end->ms.hysteresis_bytes / MIB, (double)rl / MS,
		(unsigned long long)large.end->margin_calls);
	ck_assert_uint_eq(small.end->ms.margin_bytes, 4 * MIB);
	ck_assert_uint_eq(large.end->ms.margin_bytes, 4 * MIB);
	ck_assert_uint_eq(small.end->ms.hysteresis_bytes, MIB / 4);
	ck_assert_uint_eq(large.end->ms.hysteresis_bytes, 4 * MIB);
	/* Both measured: below the 1 ms assumed until one is. */
	ck_assert_uint_gt(rs, 0);
	ck_assert_uint_lt(rs, 1 * MS);
	ck_assert_uint_gt(rl, 0);
	ck_assert_uint_lt(rl, 1 * MS);
	ck_assert_uint_le(rl, rs + rs / 2);
	done(&small);
	done(&large);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim-adaptive");
	TCase *tc = tcase_create("adaptive");
	SRunner *sr;
	int failed;

	/* Two runs of tens of virtual seconds each: about a second of CPU
	 * a test, more on a loaded machine. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, clean_cache_margin_shrinks);
	tcase_add_test(tc, dirty_cache_margin_grows);
	tcase_add_test(tc, hysteresis_not_in_reaction);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
