/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * examples/tracefigs.c, mrsim's table of a trace's figures in two runs:
 * every figure kept once with its value per run, in the order they came,
 * one run's figures the other lacks placed after the figure before them,
 * for as many groups as a trace may have (16383, so the hash grows many
 * times). No timing is asserted (bench/bench-mrsim measures it).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefigs.h"

#define GROUPS 16383
#define PER_GROUP 21

static const char *const names[PER_GROUP] = {
	"elapsed_s", "failcnt_count", "limit_reclaim_s", "margin_calls_count",
	"margin_freed_bytes", "margin_reclaim_s", "pgscan_pages",
	"pgsteal_pages", "pgmajfault_count", "refault_file_pages",
	"psi_some_s", "psi_full_s", "oom_count", "req_r_count",
	"req_r_mean_ms", "req_r_p50_ms", "req_r_p90_ms", "req_r_p95_ms",
	"req_r_p98_ms", "req_r_p99_ms", "req_r_max_ms",
};

static void policy_of(int g, char *buf, size_t len)
{
	if (g < 0)
		snprintf(buf, len, "machine");
	else
		snprintf(buf, len, "/g%d", g);
}

/* Run RUN_WITH reports every figure of every group but the request
 * figures of each group divisible by 7; RUN_WITHOUT reports those too,
 * lacks elapsed_s of each group divisible by 5, and adds "extra" after
 * each group divisible by 11's oom_count. */
static bool reported(int run, int g, int k)
{
	if (run == RUN_WITH)
		return !(g >= 0 && g % 7 == 0 && k >= 13);
	return !(g >= 0 && g % 5 == 0 && k == 0);
}

static double value(int run, int g, int k)
{
	return run * 1e9 + (g + 1) * 100.0 + k;
}

static void report_run(struct trace_figs *t, int run)
{
	char policy[32];
	int g, k;

	trace_figs_start(t, run);
	for (g = -1; g < GROUPS; g++) {
		policy_of(g, policy, sizeof(policy));
		for (k = 0; k < PER_GROUP; k++) {
			if (reported(run, g, k))
				trace_figs_collect(policy, names[k],
						   value(run, g, k), t);
			if (run == RUN_WITHOUT && g >= 0 && g % 11 == 0 &&
			    k == 12)
				trace_figs_collect(policy, "extra", -g, t);
		}
	}
}

START_TEST(two_runs_of_many_groups)
{
	struct trace_figs t = { .n = 0 };
	const struct trace_fig *f;
	char policy[32], key[64];
	size_t i, n = 0;
	int g, k, run;

	report_run(&t, RUN_WITH);
	report_run(&t, RUN_WITHOUT);
	ck_assert_int_eq(t.err, 0);
	/* In order: each group's figures as both runs had them, "extra"
	 * right after oom_count where the second run had it. */
	i = trace_figs_next(&t, TRACE_FIGS_END);
	for (g = -1; g < GROUPS; g++) {
		policy_of(g, policy, sizeof(policy));
		for (k = 0; k < PER_GROUP; k++) {
			ck_assert(i != TRACE_FIGS_END);
			f = &t.f[i];
			snprintf(key, sizeof(key), "%s/%s", policy, names[k]);
			ck_assert_str_eq(f->key, key);
			ck_assert_str_eq(f->name, names[k]);
			ck_assert_int_eq(f->policy_len, (int)strlen(policy));
			for (run = 0; run < NR_RUNS; run++) {
				ck_assert(f->has[run] == reported(run, g, k));
				if (f->has[run])
					ck_assert_double_eq(f->v[run],
							    value(run, g, k));
			}
			i = trace_figs_next(&t, i);
			n++;
			if (g >= 0 && g % 11 == 0 && k == 12) {
				ck_assert(i != TRACE_FIGS_END);
				f = &t.f[i];
				snprintf(key, sizeof(key), "%s/extra", policy);
				ck_assert_str_eq(f->key, key);
				ck_assert(!f->has[RUN_WITH]);
				ck_assert(f->has[RUN_WITHOUT]);
				ck_assert_double_eq(f->v[RUN_WITHOUT], -g);
				i = trace_figs_next(&t, i);
				n++;
			}
		}
	}
	ck_assert(i == TRACE_FIGS_END);
	ck_assert_uint_eq(n, t.n);
	trace_figs_free(&t);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

/* A figure reported twice in a run keeps its last value and its place;
 * a run's first figure, new, goes first. */
START_TEST(repeats_and_a_new_first)
{
	struct trace_figs t = { .n = 0 };
	size_t i;

	trace_figs_start(&t, RUN_WITH);
	trace_figs_collect("machine", "a", 1, &t);
	trace_figs_collect("/x", "b", 2, &t);
	trace_figs_collect("machine", "a", 3, &t);
	trace_figs_start(&t, RUN_WITHOUT);
	trace_figs_collect("/x", "first", 4, &t);
	trace_figs_collect("machine", "a", 5, &t);
	ck_assert_uint_eq(t.n, 3);
	i = trace_figs_next(&t, TRACE_FIGS_END);
	ck_assert_str_eq(t.f[i].key, "/x/first");
	i = trace_figs_next(&t, i);
	ck_assert_str_eq(t.f[i].key, "machine/a");
	ck_assert_double_eq(t.f[i].v[RUN_WITH], 3);
	ck_assert_double_eq(t.f[i].v[RUN_WITHOUT], 5);
	i = trace_figs_next(&t, i);
	ck_assert_str_eq(t.f[i].key, "/x/b");
	ck_assert(!t.f[i].has[RUN_WITHOUT]);
	ck_assert(trace_figs_next(&t, i) == TRACE_FIGS_END);
	trace_figs_free(&t);
	ck_assert(trace_figs_next(&t, TRACE_FIGS_END) == TRACE_FIGS_END);
}
END_TEST

static Suite *tracefigs_suite(void)
{
	Suite *s = suite_create("tracefigs");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, two_runs_of_many_groups);
	tcase_add_test(tc, repeats_and_a_new_first);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tracefigs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
