/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A web server serving a working set of files to concurrent clients, each
 * request's latency recorded (S1's workload, after the 2011 memcg async
 * reclaim RFC's test: Apache serving files chosen with normally
 * distributed access to ab).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

struct sim_web {
	struct sim_machine *m;
	struct sim_web_params p;
	sim_obj *files;
	uint64_t *latency_ns;      /* per request, in the order answered */
	uint64_t issued;           /* requests handed to a client */
	unsigned running;          /* clients not yet ended */
	bool sorted;
	void (*done)(void *arg);
	void *arg;
	struct sim_web_result res;
};

/* What one request does, all drawn when it starts. */
struct request {
	sim_obj file;
	uint64_t off, pages;
	uint64_t cpu_ns;
};

static void draw(struct sim_web *w, struct request *rq)
{
	struct sim_machine *m = w->m;
	const struct sim_web_params *p = &w->p;
	double x, cpu;

	/* The normal distribution cut to the files: draw again outside. */
	do {
		x = sim_rand_normal(m, p->files / 2.0, p->sd_files);
	} while (x < 0.0 || x >= (double)p->files);
	rq->file = w->files[(unsigned)x];
	rq->pages = p->read_pages && p->read_pages < p->file_pages ?
		    p->read_pages : p->file_pages;
	rq->off = rq->pages < p->file_pages ?
		  sim_rand_below(m, p->file_pages - rq->pages + 1) : 0;
	cpu = sim_rand_normal(m, (double)p->cpu_request_ns,
			      (double)p->cpu_request_sd_ns);
	rq->cpu_ns = (cpu > 0.0 ? (uint64_t)cpu : 0) +
		     rq->pages * p->cpu_page_ns;
}

static void add_stats(struct sim_task_stats *sum,
		      const struct sim_task_stats *s)
{
	sum->direct_reclaim_ns += s->direct_reclaim_ns;
	sum->throttle_ns += s->throttle_ns;
	sum->throttle_count += s->throttle_count;
	sum->stall_ns += s->stall_ns;
}

static void client(struct sim_task *t, void *arg)
{
	struct sim_web *w = arg;
	struct sim_machine *m = w->m;
	struct request rq;
	uint64_t t0;
	int r;

	while (w->issued < w->p.requests && !w->res.error) {
		w->issued++;
		draw(w, &rq);
		t0 = sim_now(m);
		if (w->issued == 1)
			w->res.start_ns = t0;
		/* The server reads the file, then works on it and sends
		 * it. */
		r = sim_file_read(m, rq.file, rq.off, rq.pages);
		if (r < 0) {
			w->res.error = r;
			break;
		}
		sim_cpu(m, rq.cpu_ns);
		w->latency_ns[w->res.done++] = sim_now(m) - t0;
	}
	add_stats(&w->res.clients, sim_task_stats(t));
	if (--w->running)
		return;
	w->res.end_ns = sim_now(m);
	if (w->done)
		w->done(w->arg);
}

struct sim_web *sim_web_start(struct sim_machine *m, struct sim_memcg *g,
			      const struct sim_web_params *p,
			      uint64_t start_ns, void (*done)(void *arg),
			      void *arg)
{
	struct sim_web *w;
	unsigned i;

	if (!p->files || !p->file_pages || !(p->sd_files > 0.0) ||
	    !p->clients || !p->requests)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = m;
	w->p = *p;
	w->done = done;
	w->arg = arg;
	w->files = calloc(p->files, sizeof(*w->files));
	w->latency_ns = calloc(p->requests, sizeof(*w->latency_ns));
	if (!w->files || !w->latency_ns)
		goto fail;
	for (i = 0; i < p->files; i++) {
		w->files[i] = sim_file_new(m, p->file_pages);
		if (w->files[i] == SIM_NOPAGE)
			goto fail;
	}
	for (i = 0; i < p->clients; i++) {
		if (!sim_task_spawn(m, "web", g, start_ns, client, w))
			break;
		w->running++;
	}
	if (w->running)
		return w;
fail:
	sim_web_free(w);
	return NULL;
}

const struct sim_web_result *sim_web_result(const struct sim_web *w)
{
	return &w->res;
}

double sim_web_mean_ns(const struct sim_web *w)
{
	double sum = 0.0;
	uint64_t i;

	for (i = 0; i < w->res.done; i++)
		sum += (double)w->latency_ns[i];
	return w->res.done ? sum / (double)w->res.done : 0.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t sim_web_percentile_ns(struct sim_web *w, unsigned pct)
{
	uint64_t n = w->res.done;

	if (!n)
		return 0;
	if (!w->sorted) {
		qsort(w->latency_ns, n, sizeof(*w->latency_ns), cmp_u64);
		w->sorted = true;
	}
	/* ab.c: stats[(int)(done * percs[i] / 100)], the longest at 100. */
	return pct >= 100 ? w->latency_ns[n - 1] :
			    w->latency_ns[n * pct / 100];
}

void sim_web_free(struct sim_web *w)
{
	if (!w)
		return;
	free(w->files);
	free(w->latency_ns);
	free(w);
}
