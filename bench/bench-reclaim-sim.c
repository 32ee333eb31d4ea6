/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-reclaim-sim: the reclaim efficiency benchmark of bench-reclaim
 * (bench/reclaim.h) on the library's simulator, in virtual time.
 *
 * For each mode a fresh simulated machine (4 GiB of RAM, 2 CPUs, no swap,
 * the "today" cost set, seed 1: docs/simulator.md) holds one group with a
 * 2 GiB max, filled with 1.25 GiB of clean page cache by a task that reads
 * a file through once in 1 MiB reads. Then 1 GiB is freed through
 * mr_group_reclaim() on the "sim" backend: in 128 KiB batches, with the
 * two proportional batches, or with a fixed batch of 1 GiB, which makes one
 * backend reclaim call of 1 GiB (the model's memory.reclaim: one
 * try_to_free_mem_cgroup_pages() for the whole request). Time is the
 * simulator's clock across the call; calls are the library's count; the
 * over-reclaim is the fall in usage less 1 GiB. The model's page cache
 * is in 4 KiB pages. The simulation is deterministic, so each mode runs
 * once.
 *
 * It reaches the model's tasks through backends/sim/sim.h (the public API
 * has no way to charge page cache outside a trace) and links the
 * library's convenience archive, as the simulator's tests do.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <memreclaim.h>

#include "bench.h"
#include "reclaim.h"
#include "sim.h"

#define BENCH "reclaim-sim"
#define GROUP "/bench"
#define READ_PAGES 256 /* 1 MiB reads */

struct filler {
	mr_sim_t *sim;
	sim_obj file;
	int err;
};

/* The filling task: the file read through once. */
static void read_through(struct sim_task *t, void *arg)
{
	struct filler *f = arg;
	uint64_t pages = sim_pages(RECLAIM_CACHE_BYTES), off;

	(void)t;
	for (off = 0; off < pages && !f->err; off += READ_PAGES)
		f->err = sim_file_read(f->sim->m, f->file, off, READ_PAGES);
}

static int run(enum reclaim_mode mode, struct reclaim_sample *out)
{
	struct mr_sim_config c = {
		.size = sizeof(c),
		.seed = 1,
		.ram_bytes = 4ULL << 30,
		.cpus = 2,
		.costs = "today",
	};
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct filler f = { 0 };
	uint64_t usage0 = 0, usage1 = 0, freed, t0 = 0, t1 = 0;
	mr_ctx_t *ctx = NULL;
	mr_group_t *g = NULL;
	int r;

	r = mr_sim_new(&c, &f.sim);
	if (r == 0)
		r = mr_sim_create_group(f.sim, GROUP);
	if (r == 0)
		r = mr_sim_set_knob(f.sim, GROUP, MR_SIM_MAX,
				    RECLAIM_LIMIT_BYTES);
	if (r == 0) {
		f.file = sim_file_new(f.sim->m,
				      sim_pages(RECLAIM_CACHE_BYTES));
		if (!sim_task_spawn(f.sim->m, "fill",
				    sim_memcg_find(f.sim->m, GROUP), 0,
				    read_through, &f))
			r = -ENOMEM;
	}
	if (r == 0) {
		sim_run(f.sim->m, SIM_UNLIMITED);
		r = f.err;
	}
	if (r == 0)
		r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_sim_attach(f.sim, ctx);
	if (r == 0)
		r = mr_group_open(ctx, GROUP, "sim", &g);
	if (r == 0)
		r = mode == MODE_ONE_CALL ?
		    mr_group_set_batch_fixed(g, RECLAIM_ASK_BYTES) :
		    reclaim_set_batch(g, mode);
	if (r == 0)
		r = mr_group_read_usage(g, &usage0);
	if (r == 0) {
		t0 = mr_sim_now_ns(f.sim);
		r = mr_group_reclaim(g, RECLAIM_ASK_BYTES, 0, &freed);
		t1 = mr_sim_now_ns(f.sim);
	}
	if (r == 0)
		r = mr_group_read_usage(g, &usage1);
	if (r == 0)
		r = mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED, &st);
	if (r == 0) {
		out->time_ms = (double)(t1 - t0) / 1e6;
		out->cpu_ms = -1;
		out->calls = (double)st.calls;
		out->over_reclaim_kib = ((double)usage0 - (double)usage1 -
					 (double)RECLAIM_ASK_BYTES) / 1024;
		fprintf(stderr, "bench-reclaim-sim: %-20s %9.3f ms (virtual) "
			"%6.0f calls, usage %llu -> %llu MiB, over-reclaim "
			"%.1f KiB\n", reclaim_mode_name[mode], out->time_ms,
			out->calls, (unsigned long long)(usage0 >> 20),
			(unsigned long long)(usage1 >> 20),
			out->over_reclaim_kib);
	} else {
		fprintf(stderr, "bench-reclaim-sim: %s: %s\n",
			reclaim_mode_name[mode], mr_strerror(r));
	}
	mr_group_close(g);
	mr_ctx_free(ctx);
	mr_sim_free(f.sim);
	return r;
}

int main(void)
{
	struct reclaim_sample s[MODE_COUNT];
	int m;

	for (m = 0; m < MODE_COUNT; m++)
		if (run(m, &s[m]) < 0)
			return 1;
	reclaim_emit(BENCH, s, "_virtual");
	return 0;
}
