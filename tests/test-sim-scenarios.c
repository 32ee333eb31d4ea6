/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every registered reference scenario, through the public API: inside its
 * band with its default costs and seed 1, the same output twice for one
 * seed, and S1 inside its band with today's costs too.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments.h"
#include "memreclaim.h"

/* The figures of one run, in the order they came. */
struct figures {
	size_t n, cap;
	struct figure {
		char *policy, *name;
		double value;
	} *f;
};

static void add_figure(const char *policy, const char *figure, double value,
		       void *userdata)
{
	struct figures *fs = userdata;

	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 16;
		fs->f = realloc(fs->f, fs->cap * sizeof(*fs->f));
		ck_assert_ptr_nonnull(fs->f);
	}
	fs->f[fs->n].policy = strdup(policy);
	fs->f[fs->n].name = strdup(figure);
	fs->f[fs->n].value = value;
	ck_assert(fs->f[fs->n].policy && fs->f[fs->n].name);
	fs->n++;
}

static void free_figures(struct figures *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++) {
		free(fs->f[i].policy);
		free(fs->f[i].name);
	}
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

/* Runs name with costs and seed 1, and asserts it lands inside its band;
 * the table goes to the test log when it does not. */
static char *run_inside(const char *name, const char *costs,
			struct figures *fs)
{
	const char *c = costs ? costs : mr_sim_scenario_costs(name);
	char *table = NULL;
	int verdict = -1;

	ck_assert_int_eq(mr_sim_run_scenario(name, 1, costs, add_figure, fs,
					     &table, &verdict), 0);
	ck_assert_ptr_nonnull(table);
	if (verdict != MR_SIM_INSIDE)
		fprintf(stderr, "%s with costs %s, seed 1:\n%s\n", name, c,
			table);
	ck_assert_msg(verdict == MR_SIM_INSIDE,
		      "%s (costs %s) outside its band, verdict %d", name, c,
		      verdict);
	ck_assert_uint_gt(fs->n, 0);
	return table;
}

START_TEST(scenario_inside_and_deterministic)
{
	const char *name = mr_sim_scenario_name((unsigned)_i);
	struct figures a = { 0 }, b = { 0 };
	char *ta, *tb;
	size_t i;

	ck_assert_ptr_nonnull(name);
	ck_assert_ptr_nonnull(mr_sim_scenario_title(name));
	ck_assert_ptr_nonnull(mr_sim_scenario_costs(name));
	ta = run_inside(name, NULL, &a);
	tb = run_inside(name, NULL, &b);
	ck_assert_str_eq(ta, tb);
	ck_assert_uint_eq(a.n, b.n);
	for (i = 0; i < a.n; i++) {
		ck_assert_str_eq(a.f[i].policy, b.f[i].policy);
		ck_assert_str_eq(a.f[i].name, b.f[i].name);
		ck_assert_msg(memcmp(&a.f[i].value, &b.f[i].value,
				     sizeof(double)) == 0,
			      "%s: %s %s: %.17g then %.17g", name,
			      a.f[i].policy, a.f[i].name, a.f[i].value,
			      b.f[i].value);
	}
	free(ta);
	free(tb);
	free_figures(&a);
	free_figures(&b);
}
END_TEST

/* S1's reference has a measurement on today's kernel too. */
START_TEST(s1_today_inside)
{
	struct figures fs = { 0 };

	if (!mr_sim_scenario_title("S1"))
		return; /* not registered in this build */
	free(run_inside("S1", "today", &fs));
	free_figures(&fs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim-scenarios");
	TCase *tc = tcase_create("scenarios");
	SRunner *sr;
	unsigned n;
	int failed;

	for (n = 0; mr_sim_scenario_name(n); n++)
		;
	/* A scenario takes seconds, and each runs twice. */
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, scenario_inside_and_deterministic, 0, (int)n);
	tcase_add_test(tc, s1_today_inside);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
