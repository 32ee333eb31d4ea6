/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The figures of a trace's runs, side by side (mrsim --trace): each run's
 * figures come through mr_sim_trace_run()'s callback, one run at a time,
 * and are kept once per (policy, figure) with a value per run, in the
 * order they came. A hash of the keys finds a figure in O(1), and the
 * order is a linked list, so collecting F figures takes O(F) time and
 * memory whatever the number of groups (16383 groups give some 360,000
 * figures per run).
 */
#ifndef MR_TRACEFIGS_H
#define MR_TRACEFIGS_H

#include <stdbool.h>
#include <stddef.h>

/* The runs kept, as columns. */
enum { RUN_WITHOUT, RUN_WITH, NR_RUNS };

/* One figure of a trace in every run. */
struct trace_fig {
	char *key;                   /* "/web/failcnt_count": the policy
				      * ("machine" or a group's path), '/',
				      * the figure's name */
	int policy_len;              /* of the policy, in key */
	const char *name;            /* in key: "failcnt_count" */
	double v[NR_RUNS];
	bool has[NR_RUNS];
	size_t next;                 /* the next figure in order, or
				      * TRACE_FIGS_END */
};

#define TRACE_FIGS_END ((size_t)-1)

/* The figures. Zero-initialized, it is empty; call trace_figs_start()
 * before each run's figures. */
struct trace_figs {
	struct trace_fig *f;         /* in the order they were first seen */
	size_t n, cap;
	size_t *slot;                /* hash of keys: index + 1, 0 empty */
	size_t nslots;               /* 0 or a power of two above 2 n */
	size_t first;                /* the first in order (when n > 0) */
	size_t prev;                 /* the run's previous figure, or
				      * TRACE_FIGS_END at its start */
	int run;                     /* the run being collected */
	int err;                     /* the first error: -ENOMEM */
};

/* Starts collecting run `run` (0 .. NR_RUNS - 1): its figures that the
 * runs before had too are matched by key, and a new one goes after the
 * figure this run reported before it (first, for the run's first). */
void trace_figs_start(struct trace_figs *t, int run);

/* A mr_sim_fig_fn: records value as figure `name` of `policy` in the run
 * being collected (userdata: the struct trace_figs). A failure sets
 * t->err and stops the collection. */
void trace_figs_collect(const char *policy, const char *name, double value,
			void *userdata);

/* The figure after index i in order (TRACE_FIGS_END: the first one), or
 * TRACE_FIGS_END after the last. */
size_t trace_figs_next(const struct trace_figs *t, size_t i);

void trace_figs_free(struct trace_figs *t);

#endif /* MR_TRACEFIGS_H */
