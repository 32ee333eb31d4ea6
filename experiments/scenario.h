/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference scenarios S1-S5 (the published results quoted in
 * docs/simulator.md): each re-runs a published experiment on the
 * model, for the two (or more) policies it compares, and reports its
 * figures and its table in the reference's form.
 */
#ifndef MR_SIM_SCENARIO_H
#define MR_SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "experiments.h"
#include "sim.h"

/* One figure of one policy: name with its unit ("p99_ms", "elapsed_s",
 * "thp_fault_alloc_count"). */
struct sim_figure {
	char *policy;
	char *name;
	double value;
};

/* What a scenario run produces. */
struct sim_report {
	struct sim_figure *figs;
	size_t nfigs, cap;
	char *table;              /* the table and notes, text */
	size_t table_len, table_cap;
	int verdict;              /* enum mr_sim_verdict */
	char *why;                /* the band check, one line per figure */
	size_t why_len, why_cap;
};

/* Appends a figure (copies the strings). -ENOMEM. */
int sim_report_add(struct sim_report *r, const char *policy,
		   const char *name, double value);
/* The value of a figure, or NaN when absent. */
double sim_report_get(const struct sim_report *r, const char *policy,
		      const char *name);
/* Appends to the table / to the band check text. -ENOMEM. */
int sim_report_printf(struct sim_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sim_report_why(struct sim_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A band check line: records "ok"/"OUT" with the text and returns ok. */
bool sim_report_band(struct sim_report *r, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sim_report_free(struct sim_report *r);

/* What a program that uses the library opens on a simulated group: a
 * context bound to sim (mr_sim_attach()) and its handle on the group at
 * path. Free the context (mr_ctx_free(), which closes the group) before
 * the simulator. On error nothing is left open. */
int sim_scenario_open(mr_sim_t *sim, const char *path, mr_ctx_t **ctx,
		      mr_group_t **grp);

struct sim_scenario {
	const char *name;          /* "S1" */
	const char *title;         /* one line */
	const char *default_costs; /* the set it reproduces: "2011" */
	/* Runs the experiment with the given seed and costs, fills rep
	 * (figures, table) and sets rep->verdict by checking the band of
	 * the reference for these costs (MR_SIM_NO_REFERENCE when the
	 * reference says nothing for them). Returns 0 or a negative errno. */
	int (*run)(uint64_t seed, const struct sim_costs *costs,
		   struct sim_report *rep);
};

/* The scenarios, NULL-terminated, in order. */
extern const struct sim_scenario *const sim_scenarios[];

#endif /* MR_SIM_SCENARIO_H */
