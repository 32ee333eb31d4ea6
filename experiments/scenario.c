/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of reference scenarios, their reports, and the public
 * mr_sim_*_scenario functions. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

extern const struct sim_scenario sim_scenario_s1;
extern const struct sim_scenario sim_scenario_s2;
extern const struct sim_scenario sim_scenario_s3;
extern const struct sim_scenario sim_scenario_s4;
extern const struct sim_scenario sim_scenario_s5;

const struct sim_scenario *const sim_scenarios[] = {
	&sim_scenario_s1,
	&sim_scenario_s2,
	&sim_scenario_s3,
	&sim_scenario_s4,
	&sim_scenario_s5,
	NULL,
};

int sim_scenario_open(mr_sim_t *sim, const char *path, mr_ctx_t **ctx,
		      mr_group_t **grp)
{
	int r = mr_ctx_new(ctx);

	if (r < 0)
		return r;
	r = mr_sim_attach(sim, *ctx);
	if (r == 0)
		r = mr_group_open(*ctx, path, "sim", grp);
	if (r < 0) {
		mr_ctx_free(*ctx);
		*ctx = NULL;
	}
	return r;
}

int sim_report_add(struct sim_report *r, const char *policy,
		   const char *name, double value)
{
	struct sim_figure *f;
	size_t cap;

	if (r->nfigs == r->cap) {
		cap = r->cap ? 2 * r->cap : 32;
		f = realloc(r->figs, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		r->figs = f;
		r->cap = cap;
	}
	f = &r->figs[r->nfigs];
	f->policy = strdup(policy);
	f->name = strdup(name);
	f->value = value;
	if (!f->policy || !f->name) {
		free(f->policy);
		free(f->name);
		return -ENOMEM;
	}
	r->nfigs++;
	return 0;
}

double sim_report_get(const struct sim_report *r, const char *policy,
		      const char *name)
{
	size_t i;

	for (i = 0; i < r->nfigs; i++) {
		if (strcmp(r->figs[i].policy, policy) == 0 &&
		    strcmp(r->figs[i].name, name) == 0)
			return r->figs[i].value;
	}
	return NAN;
}

static int vappend(char **buf, size_t *len, size_t *cap, const char *fmt,
		   va_list ap)
{
	va_list aq;
	size_t need;
	char *p;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	need = *len + (size_t)n + 1;
	if (need > *cap) {
		p = realloc(*buf, need * 2);
		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = need * 2;
	}
	vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	*len += (size_t)n;
	return 0;
}

int sim_report_printf(struct sim_report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vappend(&r->table, &r->table_len, &r->table_cap, fmt, ap);
	va_end(ap);
	return ret;
}

int sim_report_why(struct sim_report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vappend(&r->why, &r->why_len, &r->why_cap, fmt, ap);
	va_end(ap);
	return ret;
}

bool sim_report_band(struct sim_report *r, bool ok, const char *fmt, ...)
{
	va_list ap;

	sim_report_why(r, "  %s  ", ok ? "ok " : "OUT");
	va_start(ap, fmt);
	vappend(&r->why, &r->why_len, &r->why_cap, fmt, ap);
	va_end(ap);
	sim_report_why(r, "\n");
	return ok;
}

void sim_report_free(struct sim_report *r)
{
	size_t i;

	for (i = 0; i < r->nfigs; i++) {
		free(r->figs[i].policy);
		free(r->figs[i].name);
	}
	free(r->figs);
	free(r->table);
	free(r->why);
	memset(r, 0, sizeof(*r));
}

static const struct sim_scenario *find(const char *name)
{
	size_t i;

	for (i = 0; name && sim_scenarios[i]; i++) {
		if (strcmp(sim_scenarios[i]->name, name) == 0)
			return sim_scenarios[i];
	}
	return NULL;
}

const char *mr_sim_scenario_name(unsigned index)
{
	size_t i;

	for (i = 0; sim_scenarios[i]; i++) {
		if (i == index)
			return sim_scenarios[i]->name;
	}
	return NULL;
}

const char *mr_sim_scenario_title(const char *name)
{
	const struct sim_scenario *s = find(name);

	return s ? s->title : NULL;
}

const char *mr_sim_scenario_costs(const char *name)
{
	const struct sim_scenario *s = find(name);

	return s ? s->default_costs : NULL;
}

int mr_sim_run_scenario(const char *name, uint64_t seed, const char *costs,
			mr_sim_figure_fn fn, void *userdata, char **table,
			int *verdict)
{
	const struct sim_scenario *s = find(name);
	struct sim_report rep = { .verdict = MR_SIM_NO_REFERENCE };
	const struct sim_costs *c;
	size_t i;
	int r;

	if (!s)
		return -EINVAL;
	c = sim_costs_find(costs ? costs : s->default_costs);
	if (!c)
		return -EINVAL;
	r = s->run(seed, c, &rep);
	if (r == 0 && table) {
		/* The table, then the band check under it. */
		if (rep.why)
			r = sim_report_printf(&rep, "%s", rep.why);
		if (r == 0 && !rep.table)
			r = sim_report_printf(&rep, "%s", "");
		if (r == 0) {
			*table = rep.table;
			rep.table = NULL;
		}
	}
	if (r == 0 && fn) {
		for (i = 0; i < rep.nfigs; i++)
			fn(rep.figs[i].policy, rep.figs[i].name,
			   rep.figs[i].value, userdata);
	}
	if (r == 0 && verdict)
		*verdict = rep.verdict;
	sim_report_free(&rep);
	return r;
}
