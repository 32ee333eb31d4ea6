/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A parallel build (make -jN) as a workload: see workload.h. Each unit
 * has a source file and writes an object file of its own; the headers
 * are one file per build.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "workload.h"

struct sim_build {
	struct sim_machine *m;
	struct sim_build_params p;
	sim_obj *sources;          /* one file per unit */
	sim_obj headers;
	unsigned next_unit;        /* the next unit a job takes */
	unsigned running;          /* jobs not ended */
	uint64_t start_ns;
	bool orphan;               /* not handed out: the last job frees it */
	void (*done)(void *arg);
	void *done_arg;
	struct sim_build_stats stats;
};

static void build_free(struct sim_build *b)
{
	free(b->sources);
	free(b);
}

/* A compiler's memory, as a job keeps it for compiler_reuse units. */
struct compiler {
	sim_obj mem;
	uint64_t pages;
	unsigned served;
};

/* x times a factor uniform in [1/2, 3/2): units differ in size, and the
 * jobs do not run in step. */
static uint64_t vary(struct sim_machine *m, uint64_t x)
{
	return x / 2 + sim_rand_below(m, x ? x : 1);
}

/* One unit: the reads, the compiler, the object file. */
static int compile(struct sim_build *b, unsigned unit, struct compiler *cc)
{
	const struct sim_build_params *p = &b->p;
	struct sim_machine *m = b->m;
	unsigned pass;
	sim_obj obj;
	int r;

	sim_kernel_cpu(m, p->kernel_ns);
	r = sim_file_read(m, b->sources[unit], 0, p->source_pages);
	if (r == 0)
		r = sim_file_read(m, b->headers, 0, p->header_pages);
	if (r < 0)
		return r;
	if (!cc->served) {
		cc->pages = vary(m, p->compiler_pages);
		cc->mem = sim_anon_new(m, cc->pages);
		if (cc->mem == SIM_NOPAGE)
			return -ENOMEM;
	}
	for (pass = 0; pass < p->compiler_passes; pass++) {
		r = sim_anon_touch(m, cc->mem, 0, cc->pages, false);
		if (r < 0)
			break;
		sim_cpu(m, vary(m, p->user_ns / p->compiler_passes));
	}
	if (r < 0 || ++cc->served == p->compiler_reuse) {
		sim_obj_free(m, cc->mem);
		cc->served = 0;
	}
	if (r < 0)
		return r;
	obj = sim_file_new(m, p->object_pages);
	if (obj == SIM_NOPAGE)
		return -ENOMEM;
	return sim_file_write(m, obj, 0, p->object_pages);
}

static void job(struct sim_task *t, void *arg)
{
	struct sim_build *b = arg;
	const struct sim_task_stats *st = sim_task_stats(t);
	struct compiler cc = { .served = 0 };
	int r;

	while (b->next_unit < b->p.units && !b->stats.error) {
		r = compile(b, b->next_unit++, &cc);
		if (r < 0)
			b->stats.error = r;
		else
			b->stats.units_done++;
	}
	if (cc.served)
		sim_obj_free(b->m, cc.mem);
	b->stats.user_ns += st->user_ns;
	b->stats.sys_ns += st->sys_ns;
	if (--b->running)
		return;
	b->stats.elapsed_ns = sim_now(b->m) - b->start_ns;
	if (b->orphan)
		build_free(b);
	else if (b->done)
		b->done(b->done_arg);
}

int sim_build_start(struct sim_machine *m, struct sim_memcg *g,
		    const struct sim_build_params *p, uint64_t start_ns,
		    void (*done)(void *arg), void *arg,
		    struct sim_build **ret)
{
	struct sim_build *b;
	unsigned i;

	if (!p->jobs || !p->units || !p->compiler_passes ||
	    !p->compiler_reuse)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->m = m;
	b->p = *p;
	b->start_ns = start_ns;
	b->done = done;
	b->done_arg = arg;
	b->sources = calloc(p->units, sizeof(*b->sources));
	b->headers = sim_file_new(m, p->header_pages);
	for (i = 0; b->sources && i < p->units; i++) {
		b->sources[i] = sim_file_new(m, p->source_pages);
		if (b->sources[i] == SIM_NOPAGE)
			break;
	}
	if (!b->sources || i < p->units || b->headers == SIM_NOPAGE) {
		build_free(b);
		return -ENOMEM;
	}
	for (i = 0; i < p->jobs; i++) {
		if (!sim_task_spawn(m, "make-job", g, start_ns, job, b)) {
			/* The jobs already spawned end at once, the last
			 * one freeing the build. */
			b->stats.error = -ENOMEM;
			b->orphan = true;
			if (!b->running)
				build_free(b);
			return -ENOMEM;
		}
		b->running++;
	}
	*ret = b;
	return 0;
}

const struct sim_build_stats *sim_build_stats(const struct sim_build *b)
{
	return &b->stats;
}

void sim_build_free(struct sim_build *b)
{
	if (b)
		build_free(b);
}
