/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance target on the simulator: each test gets a new machine
 * (1 GiB, 2 CPUs, 512 MiB of zswap, today's costs, seed 1) bound to its
 * context; the processes are simulated tasks, run to their end (or their
 * wait) by sim_run(), and the margin worker is the simulator's worker task
 * (libworker.c). A PSI trigger's fd polls POLLIN (sim.h).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"
#include "target.h"

static mr_sim_t *sim;
static unsigned seq;

#define PAGES(b) ((b) / SIM_PAGE_SIZE)
/* Pages a simulated process reads or writes per call. */
#define CHUNK 32

static struct sim_memcg *group_at(const char *path)
{
	struct sim_memcg *g = sim_memcg_find(sim->m, path);

	ck_assert_msg(g, "no simulated group %s", path);
	return g;
}

static void spawn(const char *name, const char *path, sim_task_fn fn,
		  void *arg)
{
	ck_assert_ptr_nonnull(sim_task_spawn(sim->m, name, group_at(path),
					     sim_now(sim->m), fn, arg));
}

static void setup(mr_ctx_t *ctx)
{
	struct mr_sim_config c = {
		.size = sizeof(c),
		.seed = 1,
		.ram_bytes = 1024 * MiB,
		.cpus = 2,
		.swap_bytes = 512 * MiB,
		.swap_kind = MR_SIM_SWAP_ZSWAP,
		.costs = "today",
	};

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(mr_sim_free(sim), 0);
	sim = NULL;
}

static void create(uint64_t limit_bytes, char *path, size_t len)
{
	ck_assert_int_lt(snprintf(path, len, "/conf-%u", ++seq), (int)len);
	ck_assert_int_eq(mr_sim_create_group(sim, path), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, path, MR_SIM_MAX, limit_bytes),
			 0);
}

static void remove_group(const char *path)
{
	ck_assert_int_eq(sim_memcg_remove(group_at(path)), 0);
	ck_assert_ptr_null(sim_memcg_find(sim->m, path));
}

/* ------------------------------------------------------------ cache */

struct io {
	sim_obj file;
	uint64_t pages;
	struct sim_libworker *worker; /* stopped at the end, if any */
};

static void write_sync(struct sim_task *t, void *arg)
{
	struct io *io = arg;
	uint64_t off;

	(void)t;
	for (off = 0; off < io->pages; off += CHUNK)
		ck_assert_int_eq(sim_file_write(sim->m, io->file, off, CHUNK), 0);
	sim_file_sync(sim->m, io->file);
}

static void charge_cache(const char *path, uint64_t bytes)
{
	struct io io = {
		.file = sim_file_new(sim->m, PAGES(bytes)),
		.pages = PAGES(bytes),
	};

	spawn("writer", path, write_sync, &io);
	sim_run(sim->m, SIM_UNLIMITED);
	ck_assert_uint_eq(sim_obj_resident(sim->m, io.file), io.pages);
}

static void read_once(struct sim_task *t, void *arg)
{
	struct io *io = arg;
	uint64_t off;

	(void)t;
	for (off = 0; off < io->pages; off += CHUNK)
		ck_assert_int_eq(sim_file_read(sim->m, io->file, off, CHUNK), 0);
	if (io->worker)
		sim_libworker_stop(io->worker);
}

static void stream(mr_ctx_t *ctx, const char *path, uint64_t file_bytes,
		   bool worker)
{
	struct io io = {
		.file = sim_file_new(sim->m, PAGES(file_bytes)),
		.pages = PAGES(file_bytes),
	};

	if (worker) {
		io.worker = sim_libworker_start(sim, ctx);
		ck_assert_ptr_nonnull(io.worker);
	}
	spawn("reader", path, read_once, &io);
	sim_run(sim->m, SIM_UNLIMITED);
}

/* ------------------------------------------------------------- anon */

struct conf_proc {
	sim_obj region;
	uint64_t pages;
	struct sim_waitq wq;
	bool stop, done;
};

/* Touches the region, waits to be stopped, touches it all again (what
 * went to swap comes back) and checks it is all resident. */
static void anon_task(struct sim_task *t, void *arg)
{
	struct conf_proc *p = arg;

	(void)t;
	ck_assert_int_eq(sim_anon_touch(sim->m, p->region, 0, p->pages, false),
			 0);
	while (!p->stop)
		sim_wait(sim->m, &p->wq, SIM_UNLIMITED);
	ck_assert_int_eq(sim_anon_touch(sim->m, p->region, 0, p->pages, false),
			 0);
	ck_assert_uint_eq(sim_obj_resident(sim->m, p->region), p->pages);
	p->done = true;
}

static struct conf_proc *start_anon(const char *path, uint64_t bytes)
{
	struct conf_proc *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->pages = PAGES(bytes);
	p->region = sim_anon_new(sim->m, p->pages);
	spawn("anon", path, anon_task, p);
	sim_run(sim->m, SIM_UNLIMITED);
	ck_assert_uint_eq(sim_obj_resident(sim->m, p->region), p->pages);
	return p;
}

static void stop_anon(struct conf_proc *p)
{
	p->stop = true;
	sim_wake_all(sim->m, &p->wq);
	sim_run(sim->m, SIM_UNLIMITED);
	ck_assert(p->done);
	sim_obj_free(sim->m, p->region);
	free(p);
}

struct conf_target conf_target = {
	.name = "sim",
	.backend = "sim",
	.setup = setup,
	.teardown = teardown,
	.create = create,
	.remove = remove_group,
	.charge_cache = charge_cache,
	.start_anon = start_anon,
	.stop_anon = stop_anon,
	.stream = stream,
	.expect = {
		.set_high = 0,
		.swappiness = 0,
		.pressure = 0,
		.psi_poll = POLLIN,
		.events_present = 1ULL << MR_EVENT_LOW | 1ULL << MR_EVENT_HIGH |
				  1ULL << MR_EVENT_MAX | 1ULL << MR_EVENT_OOM |
				  1ULL << MR_EVENT_OOM_KILL,
		.limits_present = MR_LIMITS_HAS_HIGH | MR_LIMITS_HAS_PROTECTION |
				  MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_SWAP |
				  MR_LIMITS_HAS_BINDING | MR_LIMITS_HAS_SWAP_FREE,
		.anon_reclaim = 0,
		.margin_swaps = true,
	},
};
