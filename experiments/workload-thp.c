/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transparent huge pages under cache pressure (S5): a writer streams a
 * file through the page cache of a group while a faulter maps anonymous
 * ranges there and touches them in 4 KiB steps, so that each of its
 * huge-page faults meets a group full of cache. A faulter given the
 * group's library handle asks the library before each huge-page fault.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "workload.h"

/* Pages the faulter touches between two slices of its own work. */
#define TOUCH_BATCH 16

struct sim_thp {
	struct sim_machine *m;
	struct sim_thp_params p;
	struct sim_thp_result res;
	bool faulting, done;
	struct sim_waitq start;    /* the faulter waits for the prefill */
};

static void fail(struct sim_thp *w, int err)
{
	if (!w->res.error)
		w->res.error = err;
}

static void writer(struct sim_task *t, void *arg)
{
	struct sim_thp *w = arg;
	struct sim_machine *m = w->m;
	sim_obj file = sim_file_new(m, w->p.file_pages);
	uint64_t off = 0, n;
	int r;

	if (file == SIM_NOPAGE)
		fail(w, -ENOMEM);
	while (!w->done && !w->res.error) {
		if (off == w->p.file_pages) {
			/* Rewritten from the start, as a log that rotates:
			 * the old file is deleted. */
			sim_obj_free(m, file);
			file = sim_file_new(m, w->p.file_pages);
			off = 0;
			if (file == SIM_NOPAGE) {
				fail(w, -ENOMEM);
				break;
			}
		}
		n = w->p.write_pages < w->p.file_pages - off ?
		    w->p.write_pages : w->p.file_pages - off;
		/* The data comes in bursts: exponential work per write. */
		sim_cpu(m, (uint64_t)sim_rand_exp(m, (double)(n *
							  w->p.write_ns)));
		r = sim_file_write(m, file, off, n);
		if (r < 0) {
			fail(w, r);
			break;
		}
		off += n;
		w->res.written_pages += n;
		if (!w->faulting && w->res.written_pages >= w->p.prefill_pages) {
			w->faulting = true;
			sim_wake_all(m, &w->start);
		}
	}
	/* Let a faulter still waiting for the prefill see the error. */
	w->faulting = true;
	sim_wake_all(m, &w->start);
	w->res.writer = *sim_task_stats(t);
}

int sim_thp_advise(struct sim_machine *m, mr_group_t *lib,
		   uint64_t *swapped_pages)
{
	const struct sim_task_stats *ts = sim_task_stats(sim_current(m));
	uint64_t shortfall, freed, before;
	int advice, r;

	r = mr_group_charge_refresh(lib);
	if (r < 0)
		return r;
	advice = mr_group_thp_advise_reclaim(lib, SIM_HPAGE_NR * SIM_PAGE_SIZE,
					     &shortfall);
	if (advice < 0)
		return advice;
	if (advice == MR_THP_ADVICE_RECLAIM_THEN_HUGE && shortfall) {
		/* A reclaim that frees memory refreshes the fast path. */
		before = ts->swapout_pages;
		r = mr_group_reclaim(lib, shortfall, 0, &freed);
		*swapped_pages += ts->swapout_pages - before;
		if (r < 0 && r != -EAGAIN)
			return r;
	}
	return advice != MR_THP_ADVICE_SMALL;
}

static void faulter(struct sim_task *t, void *arg)
{
	struct sim_thp *w = arg;
	struct sim_machine *m = w->m;
	uint64_t k, pgalloc;
	sim_obj range;
	bool huge = w->p.thp;
	int r = 0;

	while (!w->faulting)
		sim_wait(m, &w->start, SIM_UNLIMITED);
	w->res.start_ns = sim_now(m);
	pgalloc = sim_memcg_counter(sim_task_memcg(t), SIM_PGALLOC);
	range = w->res.error ? SIM_NOPAGE : sim_anon_new(m, w->p.range_pages);
	if (range == SIM_NOPAGE)
		fail(w, -ENOMEM);
	for (k = 0; range != SIM_NOPAGE && k < w->p.range_pages && r == 0;
	     k++) {
		if (w->p.thp && w->p.lib && k % SIM_HPAGE_NR == 0) {
			r = sim_thp_advise(m, w->p.lib,
					   &w->res.advice_swapout_pages);
			if (r < 0)
				break;
			huge = r == 1;
		}
		r = sim_anon_touch(m, range, k, 1, huge);
		/* The work on the pages, 64 KiB at a time. */
		if (k % TOUCH_BATCH == TOUCH_BATCH - 1)
			sim_cpu(m, TOUCH_BATCH * w->p.touch_ns);
	}
	if (r < 0)
		fail(w, r);
	w->res.end_ns = sim_now(m);
	w->res.pgalloc_pages = sim_memcg_counter(sim_task_memcg(t),
						 SIM_PGALLOC) - pgalloc;
	/* munmap() */
	if (range != SIM_NOPAGE)
		sim_obj_free(m, range);
	w->done = true;
	w->res.faulter = *sim_task_stats(t);
}

struct sim_thp *sim_thp_start(struct sim_machine *m, struct sim_memcg *g,
			      const struct sim_thp_params *p)
{
	struct sim_thp *w;

	if (!p->range_pages || p->range_pages % SIM_HPAGE_NR ||
	    !p->file_pages || !p->write_pages)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = m;
	w->p = *p;
	if (!sim_task_spawn(m, "faulter", g, sim_now(m), faulter, w)) {
		free(w);
		return NULL;
	}
	if (!sim_task_spawn(m, "writer", g, sim_now(m), writer, w)) {
		/* The faulter meets the error and ends. */
		fail(w, -ENOMEM);
		w->faulting = true;
	}
	return w;
}

const struct sim_thp_result *sim_thp_result(const struct sim_thp *w)
{
	return &w->res;
}

void sim_thp_free(struct sim_thp *w)
{
	free(w);
}
