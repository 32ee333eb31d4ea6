/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults proactive reclaim meets in the field, on the simulator's model
 * of the kernel (docs/design.md, "Faults met in the field"):
 * - stuck at memory.high: a task keeps 64 MiB of anonymous memory hot in
 *   a group whose memory.high is 48 MiB, with no swap. The model
 *   throttles it over high (mem_cgroup_handle_over_high()) and never
 *   OOM-kills it; the worker's safety round must report
 *   MR_CONDITION_STUCK_HIGH through the conditions fd. With zswap the
 *   anon can go, reclaim helps, and nothing is reported.
 * - freed and offloaded apart: reclaim of anonymous memory with swap
 *   moves it to swap; mr_group_read_reclaim_stats() says how much.
 *
 * Every figure is the model's, in virtual time.
 */
#include "config.h"

#include <check.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memreclaim.h"
#include "sim.h"

#define MIB (1ULL << 20)
#define MS 1000000ULL
#define S 1000000000ULL

#define GROUP "/app"
#define ANON_PAGES (64u * 256u)   /* 64 MiB */
#define SAMPLES 20u

struct run {
	mr_sim_t *sim;
	struct sim_machine *m;
	struct sim_memcg *g;
	mr_ctx_t *ctx;
	mr_group_t *grp;
	struct sim_libworker *worker;
	sim_obj anon;
	bool stop;
	int fd;
	/* per second */
	struct mr_conditions c[SAMPLES];
	bool readable[SAMPLES];
	struct mr_events ev;
	unsigned ns;
};

/* Touches the whole anonymous region over and over: all of it hot. */
static void toucher(struct sim_task *t, void *arg)
{
	struct run *r = arg;
	uint64_t off;

	(void)t;
	while (!r->stop) {
		for (off = 0; off < ANON_PAGES && !r->stop; off += 64) {
			ck_assert_int_eq(sim_anon_touch(r->m, r->anon, off, 64,
							false), 0);
			sim_cpu(r->m, 10000);
		}
	}
}

static void monitor(struct sim_task *t, void *arg)
{
	struct run *r = arg;
	struct pollfd pfd;

	(void)t;
	while (r->ns < SAMPLES) {
		sim_sleep(r->m, S);
		pfd = (struct pollfd){ .fd = r->fd, .events = POLLIN };
		r->readable[r->ns] = poll(&pfd, 1, 0) == 1;
		r->c[r->ns].size = sizeof(r->c[r->ns]);
		ck_assert_int_eq(mr_group_read_conditions(r->grp,
							  &r->c[r->ns]), 0);
		r->ns++;
	}
	r->ev.size = sizeof(r->ev);
	ck_assert_int_eq(mr_group_read_events(r->grp, 0, &r->ev), 0);
	r->stop = true;
	sim_libworker_stop(r->worker);
}

static void run(struct run *r, int swap_kind)
{
	struct mr_sim_config cfg = {
		.size = sizeof(cfg),
		.seed = 1,
		.ram_bytes = 512 * MIB,
		.cpus = 2,
		.swap_bytes = swap_kind == MR_SIM_SWAP_NONE ? 0 : 256 * MIB,
		.swap_kind = swap_kind,
		.costs = "today",
	};
	char why[256];

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(mr_sim_new(&cfg, &r->sim), 0);
	r->m = r->sim->m;
	ck_assert_int_eq(mr_sim_create_group(r->sim, GROUP), 0);
	r->g = sim_memcg_find(r->m, GROUP);
	ck_assert_int_eq(mr_ctx_new(&r->ctx), 0);
	ck_assert_int_eq(mr_sim_attach(r->sim, r->ctx), 0);
	ck_assert_int_eq(mr_group_open(r->ctx, GROUP, "sim", &r->grp), 0);
	/* The caller's high, below what the task keeps hot. */
	ck_assert_int_eq(mr_group_set_high(r->grp, 48 * MIB, 0), 0);
	r->fd = mr_group_conditions_fd(r->grp);
	ck_assert_int_ge(r->fd, 0);
	r->worker = sim_libworker_start(r->sim, r->ctx);
	ck_assert_ptr_nonnull(r->worker);
	r->anon = sim_anon_new(r->m, ANON_PAGES);
	ck_assert_uint_ne(r->anon, SIM_NOPAGE);
	ck_assert_ptr_nonnull(sim_task_spawn(r->m, "toucher", r->g, 0,
					     toucher, r));
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

	fprintf(stderr, "%s, per second:\nt_s active readable "
		"high_events_per_s full_ppm unreclaimable_MiB high_MiB\n",
		what);
	for (i = 0; i < r->ns; i++)
		fprintf(stderr, "%u %u %d %llu %u %.2f %.2f\n", i + 1,
			r->c[i].active, r->readable[i],
			(unsigned long long)r->c[i].high_events_per_s,
			r->c[i].full_ppm,
			(double)r->c[i].unreclaimable_bytes / MIB,
			(double)r->c[i].high_bytes / MIB);
	fprintf(stderr, "events: high %llu max %llu oom %llu oom_kill %llu\n",
		(unsigned long long)r->ev.high, (unsigned long long)r->ev.max,
		(unsigned long long)r->ev.oom,
		(unsigned long long)r->ev.oom_kill);
}

START_TEST(stuck_at_high_without_swap)
{
	struct run r;
	unsigned i, first = 0;

	run(&r, MR_SIM_SWAP_NONE);
	dump("no swap", &r);
	for (i = 0; i < r.ns && !first; i++)
		if (r.c[i].active & MR_CONDITION_STUCK_HIGH)
			first = i + 1;
	ck_assert_msg(first && first <= 5, "not reported within 5 s");
	/* The fd said so at the sample that saw it begin. */
	ck_assert(r.readable[first - 1]);
	/* It stays: reclaim cannot help, and the library leaves the
	 * caller's high where it is. */
	for (i = first; i < r.ns; i++)
		ck_assert_msg(r.c[i].active & MR_CONDITION_STUCK_HIGH,
			      "ended at %u s", i + 1);
	ck_assert_uint_eq(r.c[r.ns - 1].stuck_high_entered, 1);
	ck_assert_uint_eq(r.c[r.ns - 1].high_bytes, 48 * MIB);
	ck_assert_uint_ge(r.c[r.ns - 1].unreclaimable_bytes, 48 * MIB);
	ck_assert_uint_eq(r.ev.max + r.ev.oom + r.ev.oom_kill, 0);
	done(&r);
}
END_TEST

START_TEST(not_stuck_with_swap)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct run r;
	unsigned i;

	run(&r, MR_SIM_SWAP_ZSWAP);
	dump("zswap", &r);
	for (i = 0; i < r.ns; i++)
		ck_assert_msg(!(r.c[i].active & MR_CONDITION_STUCK_HIGH),
			      "reported at %u s", i + 1);
	ck_assert_uint_eq(r.c[r.ns - 1].stuck_high_entered, 0);
	/* The anon above high went to swap; what the library's own reclaim
	 * takes from it now is offloaded, not dropped. */
	ck_assert_int_eq(mr_group_reclaim(r.grp, 8 * MIB, 0, NULL), 0);
	ck_assert_int_eq(mr_group_read_reclaim_stats(r.grp,
						     MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_gt(st.freed_bytes, 0);
	ck_assert_uint_gt(st.offloaded_bytes, 0);
	fprintf(stderr, "zswap: reclaim of 8 MiB: freed %.2f MiB, offloaded "
		"%.2f MiB\n", (double)st.freed_bytes / MIB,
		(double)st.offloaded_bytes / MIB);
	done(&r);
}
END_TEST

static Suite *sim_faults_suite(void)
{
	Suite *s = suite_create("sim-faults");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, stuck_at_high_without_swap);
	tcase_add_test(tc, not_stuck_with_swap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_faults_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
