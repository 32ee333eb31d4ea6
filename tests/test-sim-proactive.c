/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller (mr_group_set_proactive()) on the simulator:
 * a task reads 200 MiB of files once (cold page cache), then re-reads a
 * hot 20 MiB file every 100 ms. The group has no limit, so nothing but
 * the controller takes the cold cache. With its defaults (1 s intervals,
 * Senpai's 10 ms of stall per 6 s) it must bring the group within 10% of
 * the hot set within 40 intervals, keep it there, keep the hot file
 * resident, and keep the group's PSI stall under its target; a dry run
 * must report a size near the hot set without reclaiming anything; and a
 * memory.high written by someone else must hold it off.
 *
 * Every figure is a count of the model's, in virtual time.
 */
#include "config.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memreclaim.h"
#include "sim.h"

#define MIB (1ULL << 20)
#define MS 1000000ULL
#define US 1000ULL
#define S 1000000000ULL

#define GROUP "/app"
#define RAM_BYTES (1024 * MIB)
#define COLD_FILES 200u
#define FILE_PAGES 256u            /* 1 MiB each */
#define HOT_PAGES (20u * 256u)     /* 20 MiB */
#define READ_PAGES 32u
#define HOT_PERIOD_NS (100 * MS)
#define END_NS (90 * S)
#define SAMPLES 90u

struct run {
	mr_sim_t *sim;
	struct sim_machine *m;
	struct sim_memcg *g;
	mr_ctx_t *ctx;
	mr_group_t *grp;
	struct sim_libworker *worker;
	sim_obj cold[COLD_FILES], hot;
	bool stop;
	uint64_t cold_done_ns;
	/* per second */
	uint64_t usage[SAMPLES], resident[SAMPLES], stall_ns[SAMPLES];
	struct mr_proactive_stats st[SAMPLES];
	unsigned ns;
	/* a high to write at a time, from the monitor */
	uint64_t high_at_ns, high_bytes;
};

static void reader(struct sim_task *t, void *arg)
{
	struct run *r = arg;
	uint64_t off;
	unsigned i;

	(void)t;
	for (i = 0; i < COLD_FILES; i++)
		for (off = 0; off < FILE_PAGES; off += READ_PAGES)
			ck_assert_int_eq(sim_file_read(r->m, r->cold[i], off,
						       READ_PAGES), 0);
	r->cold_done_ns = sim_now(r->m);
	while (!r->stop) {
		for (off = 0; off < HOT_PAGES; off += READ_PAGES) {
			ck_assert_int_eq(sim_file_read(r->m, r->hot, off,
						       READ_PAGES), 0);
			sim_cpu(r->m, 20 * US);
		}
		sim_sleep(r->m, HOT_PERIOD_NS);
	}
}

static void monitor(struct sim_task *t, void *arg)
{
	struct run *r = arg;
	uint64_t some_ns, full_ns;

	(void)t;
	while (r->ns < SAMPLES) {
		sim_sleep(r->m, S);
		if (r->high_at_ns && sim_now(r->m) >= r->high_at_ns) {
			ck_assert_int_eq(mr_sim_set_knob(r->sim, GROUP,
							 MR_SIM_HIGH,
							 r->high_bytes), 0);
			r->high_at_ns = 0;
		}
		r->usage[r->ns] = sim_bytes(sim_memcg_usage(r->g));
		r->resident[r->ns] = sim_obj_resident(r->m, r->hot);
		sim_memcg_psi(r->g, &some_ns, &full_ns);
		r->stall_ns[r->ns] = some_ns;
		r->st[r->ns].size = sizeof(r->st[r->ns]);
		ck_assert_int_eq(mr_group_read_proactive_stats(r->grp,
				 &r->st[r->ns], sizeof(r->st[r->ns])), 0);
		r->ns++;
	}
	r->stop = true;
	sim_libworker_stop(r->worker);
}

static void run(struct run *r, const struct mr_proactive *pro)
{
	struct mr_sim_config cfg = {
		.size = sizeof(cfg),
		.seed = 1,
		.ram_bytes = RAM_BYTES,
		.cpus = 2,
		.costs = "today",
	};
	char why[256];
	unsigned i;

	ck_assert_int_eq(mr_sim_new(&cfg, &r->sim), 0);
	r->m = r->sim->m;
	ck_assert_int_eq(mr_sim_create_group(r->sim, GROUP), 0);
	r->g = sim_memcg_find(r->m, GROUP);
	ck_assert_int_eq(mr_ctx_new(&r->ctx), 0);
	ck_assert_int_eq(mr_sim_attach(r->sim, r->ctx), 0);
	ck_assert_int_eq(mr_group_open(r->ctx, GROUP, "sim", &r->grp), 0);
	ck_assert_int_eq(mr_group_set_proactive(r->grp, pro, sizeof(*pro)),
			 0);
	r->worker = sim_libworker_start(r->sim, r->ctx);
	ck_assert_ptr_nonnull(r->worker);
	for (i = 0; i < COLD_FILES; i++) {
		r->cold[i] = sim_file_new(r->m, FILE_PAGES);
		ck_assert_uint_ne(r->cold[i], SIM_NOPAGE);
	}
	r->hot = sim_file_new(r->m, HOT_PAGES);
	ck_assert_uint_ne(r->hot, SIM_NOPAGE);
	ck_assert_ptr_nonnull(sim_task_spawn(r->m, "reader", r->g, 0,
					     reader, r));
	ck_assert_ptr_nonnull(sim_task_spawn(r->m, "monitor", sim_root(r->m),
					     0, monitor, r));
	sim_run(r->m, SIM_UNLIMITED);
	ck_assert_int_eq(sim_check_invariants(r->m, why, sizeof(why)), 0);
	ck_assert_uint_eq(r->ns, SAMPLES);
}

static void done(struct run *r)
{
	mr_ctx_free(r->ctx);
	ck_assert_int_eq(mr_sim_free(r->sim), 0);
}

static void dump(const char *what, const struct run *r)
{
	unsigned i;

	fprintf(stderr, "%s, per second:\nt_s usage_MiB hot_resident_MiB "
		"stall_ms target_MiB step_MiB refault_ratio_ppm "
		"dry_run_MiB pauses_p/r/e\n", what);
	for (i = 0; i < r->ns; i++)
		fprintf(stderr, "%u %.2f %.2f %.2f %.2f %.2f %u %.2f "
			"%llu/%llu/%llu\n", i + 1,
			(double)r->usage[i] / MIB,
			(double)r->resident[i] * 4096 / MIB,
			(double)r->stall_ns[i] / MS,
			(double)r->st[i].target_bytes / MIB,
			(double)r->st[i].step_bytes / MIB,
			r->st[i].refault_ratio_ppm,
			(double)r->st[i].dry_run_bytes / MIB,
			(unsigned long long)r->st[i].pauses_pressure,
			(unsigned long long)r->st[i].pauses_refaults,
			(unsigned long long)r->st[i].pauses_external);
}

/* The second by which the cold files were read. */
static unsigned cold_read_s(const struct run *r)
{
	return (unsigned)((r->cold_done_ns + S - 1) / S);
}

START_TEST(converges_to_the_hot_set)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };
	struct run r;
	unsigned i, from, reached = 0;
	uint64_t hot = (uint64_t)HOT_PAGES * 4096, stall;
	bool ok = true;

	memset(&r, 0, sizeof(r));
	run(&r, &pro);
	dump("proactive", &r);
	from = cold_read_s(&r);
	ck_assert_uint_lt(from, 20);
	ck_assert_uint_ge(r.usage[from - 1], 200 * MIB);
	for (i = from; i < SAMPLES && !reached; i++)
		if (r.usage[i] <= hot * 11 / 10)
			reached = i + 1;
	ck_assert_msg(reached && reached - from <= 40,
		      "not within 10%% of the hot set 40 s after the cold "
		      "read (at %u s)", from);
	/* It stays there, and the hot file stays resident. */
	for (i = reached; i < SAMPLES; i++) {
		ok &= r.usage[i] <= hot * 11 / 10;
		ok &= r.resident[i] >= HOT_PAGES * 95 / 100;
	}
	ck_assert_msg(ok, "left the hot set after reaching it");
	/* The stall over the run: under the target, 10 ms per 6 s. */
	stall = r.stall_ns[SAMPLES - 1];
	ck_assert_msg(stall <= SAMPLES * 10 * MS / 6,
		      "stall %.1f ms in %u s", (double)stall / MS, SAMPLES);
	ck_assert_int_eq(mr_group_read_reclaim_stats(r.grp,
			 MR_REASON_PROACTIVE, &rs), 0);
	ck_assert_uint_ge(rs.freed_bytes, 180 * MIB);
	ck_assert_uint_ge(r.st[SAMPLES - 1].reclaimed_bytes, 180 * MIB);
	ck_assert_int_eq(r.st[SAMPLES - 1].enabled, 1);
	ck_assert_uint_ge(r.st[SAMPLES - 1].intervals, SAMPLES - 2);
	done(&r);
}
END_TEST

/* A dry run reclaims nothing and reports a size at most 10% above the hot
 * set: nothing pushes back on its virtual steps, so it may go below
 * (a lower bound of where a real run settles). */
START_TEST(dry_run_reports_without_reclaiming)
{
	struct mr_proactive pro = {
		.size = sizeof(pro),
		.flags = MR_PROACTIVE_DRY_RUN,
	};
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };
	struct run r;
	const struct mr_proactive_stats *last;

	memset(&r, 0, sizeof(r));
	run(&r, &pro);
	last = &r.st[SAMPLES - 1];
	ck_assert_int_eq(mr_group_read_reclaim_stats(r.grp,
			 MR_REASON_PROACTIVE, &rs), 0);
	ck_assert_uint_eq(rs.calls, 0);
	ck_assert_uint_eq(last->reclaimed_bytes, 0);
	ck_assert_int_eq(last->dry_run, 1);
	ck_assert_uint_ge(r.usage[SAMPLES - 1], 220 * MIB * 95 / 100);
	ck_assert_uint_gt(last->dry_run_bytes, 0);
	ck_assert_uint_le(last->dry_run_bytes, 22 * MIB);
	done(&r);
}
END_TEST

/* memory.high written by someone else at 30 s: counted, and no step for
 * MRI_PROACTIVE_EXTERNAL_HOLD (8) intervals. */
START_TEST(external_high_holds_off)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	struct run r;
	const struct mr_proactive_stats *last;

	memset(&r, 0, sizeof(r));
	r.high_at_ns = 30 * S;
	r.high_bytes = 512 * MIB;
	run(&r, &pro);
	last = &r.st[SAMPLES - 1];
	ck_assert_uint_eq(last->external_high_changes, 1);
	ck_assert_uint_eq(last->last_external_high_bytes, 512 * MIB);
	ck_assert_uint_eq(last->pauses_external, 8);
	done(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim-proactive");
	TCase *tc = tcase_create("proactive");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, converges_to_the_hot_set);
	tcase_add_test(tc, dry_run_reports_without_reclaiming);
	tcase_add_test(tc, external_high_holds_off);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
