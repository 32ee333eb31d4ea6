/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator's model on small machines, through backends/sim/sim.h:
 * its invariants under random workloads, the kernel mechanisms the
 * scenarios rely on, and determinism.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model.h"
#include "sim.h"
#include "workload.h"

#define MS 1000000ULL

static struct sim_machine *machine(uint64_t seed, uint64_t ram_pages,
				   uint64_t swap_pages, int swap_kind,
				   const char *costs)
{
	struct sim_config cfg = {
		.seed = seed,
		.ram_pages = ram_pages,
		.cpus = 2,
		.swap_pages = swap_pages,
		.swap_kind = swap_kind,
		.costs = sim_costs_find(costs),
	};
	struct sim_machine *m = sim_machine_new(&cfg);

	ck_assert_ptr_nonnull(m);
	return m;
}

static struct sim_memcg *group(struct sim_machine *m, const char *path)
{
	struct sim_memcg *g = NULL;

	ck_assert_int_eq(sim_memcg_create(m, path, &g), 0);
	return g;
}

static void assert_invariants(const struct sim_machine *m)
{
	char why[256] = "";

	ck_assert_msg(sim_check_invariants(m, why, sizeof(why)) == 0,
		      "invariant broken: %s", why);
}

/* ------------------------------------------------------- one operation */

enum { OP_READ, OP_WRITE, OP_TOUCH };

/* One operation run as a task of a group. */
struct op {
	struct sim_machine *m;
	int kind;
	sim_obj o;
	uint64_t off, n;
	int result;
	struct sim_task_stats stats;  /* the task's, when it ended */
};

static void op_task(struct sim_task *t, void *arg)
{
	struct op *op = arg;

	switch (op->kind) {
	case OP_READ:
		op->result = sim_file_read(op->m, op->o, op->off, op->n);
		break;
	case OP_WRITE:
		op->result = sim_file_write(op->m, op->o, op->off, op->n);
		break;
	default:
		op->result = sim_anon_touch(op->m, op->o, op->off, op->n,
					    false);
		break;
	}
	op->stats = *sim_task_stats(t);
}

/* Runs the operation in g until it ends, or until until_ns (which must
 * come after its end: writes leave the flusher waiting). Returns its
 * result; stats may be NULL. */
static int run_op(struct sim_machine *m, struct sim_memcg *g, int kind,
		  sim_obj o, uint64_t off, uint64_t n, uint64_t until_ns,
		  struct sim_task_stats *stats)
{
	struct op op = { .m = m, .kind = kind, .o = o, .off = off, .n = n,
			 .result = 1 };

	ck_assert_ptr_nonnull(sim_task_spawn(m, "op", g, sim_now(m), op_task,
					     &op));
	sim_run(m, until_ns);
	ck_assert_msg(op.result <= 0, "the operation did not end by %llu ns",
		      (unsigned long long)until_ns);
	if (stats)
		*stats = op.stats;
	return op.result;
}

/* Reads a file in blocks of `block` pages. */
static void read_file(struct sim_machine *m, struct sim_memcg *g, sim_obj o,
		      uint64_t block)
{
	uint64_t off, n, pages = sim_obj_pages(m, o);

	for (off = 0; off < pages; off += n) {
		n = pages - off < block ? pages - off : block;
		ck_assert_int_eq(run_op(m, g, OP_READ, o, off, n,
					SIM_UNLIMITED, NULL), 0);
	}
}

/* ------------------------------------------------------- random load */

#define NFILES 4
#define NTASKS 6
#define NOPS 150

/* Tasks reading, writing and touching at random, and a checker task that
 * verifies the invariants every millisecond while they run. */
struct load {
	struct sim_machine *m;
	struct sim_memcg *groups[5];
	sim_obj files[NFILES];
	unsigned running;
	unsigned checks;
	char broken[256];
};

static uint64_t rand_range(struct sim_machine *m, uint64_t size,
			   uint64_t *off)
{
	uint64_t n = 1 + sim_rand_below(m, size < 64 ? size : 64);

	*off = sim_rand_below(m, size - n + 1);
	return n;
}

static void load_task(struct sim_task *t, void *arg)
{
	struct load *l = arg;
	struct sim_machine *m = l->m;
	sim_obj anon = sim_anon_new(m, 2 * SIM_HPAGE_NR), f;
	uint64_t off, n;
	unsigned i;

	(void)t;
	for (i = 0; i < NOPS; i++) {
		f = l->files[sim_rand_below(m, NFILES)];
		switch (sim_rand_below(m, 6)) {
		case 0:
		case 1:
			n = rand_range(m, sim_obj_pages(m, f), &off);
			sim_file_read(m, f, off, n);
			break;
		case 2:
			n = rand_range(m, sim_obj_pages(m, f), &off);
			sim_file_write(m, f, off, n);
			break;
		case 3:
		case 4:
			n = rand_range(m, sim_obj_pages(m, anon), &off);
			sim_anon_touch(m, anon, off, n, sim_rand_below(m, 2));
			break;
		default:
			sim_sleep(m, sim_rand_below(m, 5 * MS));
			break;
		}
	}
	sim_obj_free(m, anon);
	l->running--;
}

static void check_task(struct sim_task *t, void *arg)
{
	struct load *l = arg;

	(void)t;
	while (l->running) {
		sim_sleep(l->m, 1 * MS);
		if (!l->broken[0])
			sim_check_invariants(l->m, l->broken,
					     sizeof(l->broken));
		l->checks++;
	}
}

/* Builds the machine of a seed and runs the random load to its end. */
static struct sim_machine *random_load(uint64_t seed, struct load *l)
{
	static const char *const paths[] = { "/a", "/a/x", "/a/y", "/b",
					     "/c" };
	struct sim_machine *m;
	unsigned i;

	/* Odd seeds swap to disk, even ones to zswap; the cost sets
	 * alternate by pairs. */
	m = machine(seed, 8192, 4096,
		    seed % 2 ? SIM_SWAP_DISK : SIM_SWAP_ZSWAP,
		    seed / 2 % 2 ? "today" : "2011");
	memset(l, 0, sizeof(*l));
	l->m = m;
	for (i = 0; i < 5; i++)
		l->groups[i] = group(m, paths[i]);
	ck_assert_int_eq(sim_memcg_set(l->groups[0], SIM_KNOB_MAX, 3000), 0);
	ck_assert_int_eq(sim_memcg_set(l->groups[0], SIM_KNOB_HIGH, 2600), 0);
	ck_assert_int_eq(sim_memcg_set(l->groups[2], SIM_KNOB_MAX, 1200), 0);
	ck_assert_int_eq(sim_memcg_set(l->groups[3], SIM_KNOB_SOFT, 800), 0);
	ck_assert_int_eq(sim_memcg_set(l->groups[3], SIM_KNOB_LOW, 400), 0);
	sim_memcg_set_soft_mode(m, (int)(seed % 3));
	for (i = 0; i < NFILES; i++)
		l->files[i] = sim_file_new(m, 64 + sim_rand_below(m, 3000));
	for (i = 0; i < NTASKS; i++) {
		ck_assert_ptr_nonnull(sim_task_spawn(m, "load",
			l->groups[1 + sim_rand_below(m, 4)],
			sim_rand_below(m, 10 * MS), load_task, l));
		l->running++;
	}
	ck_assert_ptr_nonnull(sim_task_spawn(m, "check", NULL, 0, check_task,
					     l));
	sim_run(m, SIM_UNLIMITED);
	ck_assert_uint_eq(l->running, 0);
	return m;
}

START_TEST(invariants_under_random_load)
{
	uint64_t seed = (uint64_t)_i + 1;
	struct sim_memcg *root;
	struct sim_machine *m;
	struct load l;

	m = random_load(seed, &l);
	ck_assert_msg(!l.broken[0], "seed %llu, mid-run: %s",
		      (unsigned long long)seed, l.broken);
	ck_assert_uint_gt(l.checks, 10);
	assert_invariants(m);
	root = sim_root(m);
	/* The load did make the machine reclaim. */
	ck_assert_uint_gt(sim_memcg_counter(root, SIM_PGSCAN), 0);
	ck_assert_uint_le(sim_memcg_counter(root, SIM_PGSTEAL),
			  sim_memcg_counter(root, SIM_PGSCAN));
	ck_assert_uint_le(sim_memcg_usage(l.groups[0]), 3000);
	ck_assert_uint_le(sim_memcg_usage(l.groups[2]), 1200);
	sim_machine_free(m);
}
END_TEST

/* Everything the load left behind that a report could print. */
static void digest(struct sim_machine *m, struct load *l, uint64_t *out,
		   size_t *len)
{
	size_t n = 0;
	unsigned i;
	int k;

	out[n++] = sim_now(m);
	out[n++] = sim_free_pages(m);
	for (i = 0; i < 5; i++) {
		struct sim_memcg *g = i ? l->groups[i - 1] : sim_root(m);

		out[n++] = sim_memcg_usage(g);
		for (k = 0; k < SIM_NR_COUNTERS; k++)
			out[n++] = sim_memcg_counter(g, k);
		for (k = 0; k < SIM_NR_LRU; k++)
			out[n++] = sim_memcg_lru(g, k);
	}
	*len = n;
}

#define DIGEST_MAX (2 + 5 * (1 + SIM_NR_COUNTERS + SIM_NR_LRU))

START_TEST(same_seed_same_run)
{
	uint64_t a[DIGEST_MAX], b[DIGEST_MAX], c[DIGEST_MAX];
	size_t na, nb, nc;
	struct sim_machine *m;
	struct load l;

	m = random_load(7, &l);
	digest(m, &l, a, &na);
	sim_machine_free(m);
	m = random_load(7, &l);
	digest(m, &l, b, &nb);
	sim_machine_free(m);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(a, b, na * sizeof(a[0]));
	/* and the seed does change the run (same machine kind: 7 + 4) */
	m = random_load(11, &l);
	digest(m, &l, c, &nc);
	sim_machine_free(m);
	ck_assert_uint_eq(na, nc);
	ck_assert(memcmp(a, c, na * sizeof(a[0])) != 0);
}
END_TEST

/* ------------------------------------------------------- mechanisms */

/* A page evicted and read again: active when its refault distance (the
 * evictions and activations since) fits in the working set (the active
 * lists), as mm/workingset.c decides; inactive otherwise. */
static void refault_case(bool workingset)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *g = group(m, "/g");
	sim_obj a = sim_file_new(m, 1000), b = sim_file_new(m, 2000);
	struct sim_reclaim_result res;
	uint64_t activate, refault, active;

	if (workingset) {
		/* A second read of a page activates it. */
		read_file(m, g, a, 100);
		read_file(m, g, a, 100);
		ck_assert_uint_eq(sim_memcg_lru(g, SIM_LRU_ACTIVE_FILE), 1000);
	}
	read_file(m, g, b, 100);
	ck_assert_uint_eq(sim_memcg_lru(g, SIM_LRU_INACTIVE_FILE), 2000);
	/* Evicts about 100 pages of b, the oldest first; the inactive list
	 * stays the longer, so nothing is deactivated. */
	sim_reclaim(m, g, 100, SIM_RECLAIM_PROACTIVE, false, false, &res);
	ck_assert_uint_ge(res.reclaimed, 100);
	ck_assert_uint_lt(res.reclaimed, 200);
	ck_assert_uint_eq(sim_obj_resident(m, b), 2000 - res.reclaimed);
	activate = sim_memcg_counter(g, SIM_ACTIVATE_FILE);
	refault = sim_memcg_counter(g, SIM_REFAULT_FILE);
	active = sim_memcg_lru(g, SIM_LRU_ACTIVE_FILE);

	ck_assert_int_eq(run_op(m, g, OP_READ, b, 0, 10, SIM_UNLIMITED, NULL),
			 0);
	ck_assert_uint_eq(sim_memcg_counter(g, SIM_REFAULT_FILE), refault + 10);
	if (workingset) {
		ck_assert_uint_eq(sim_memcg_counter(g, SIM_ACTIVATE_FILE),
				  activate + 10);
		ck_assert_uint_eq(sim_memcg_lru(g, SIM_LRU_ACTIVE_FILE),
				  active + 10);
	} else {
		ck_assert_uint_eq(sim_memcg_counter(g, SIM_ACTIVATE_FILE),
				  activate);
		ck_assert_uint_eq(sim_memcg_lru(g, SIM_LRU_ACTIVE_FILE), 0);
	}
	assert_invariants(m);
	sim_machine_free(m);
}

START_TEST(refault_within_distance_activates)
{
	refault_case(true);
}
END_TEST

START_TEST(refault_beyond_distance_stays_inactive)
{
	refault_case(false);
}
END_TEST

START_TEST(clean_only_reclaim_leaves_dirty_pages)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *g = group(m, "/g");
	sim_obj clean = sim_file_new(m, 100), dirty = sim_file_new(m, 100);
	struct sim_reclaim_result res;

	read_file(m, g, clean, 100);
	/* The flusher writes back pages dirty for 30 s: stop long before. */
	ck_assert_int_eq(run_op(m, g, OP_WRITE, dirty, 0, 100, 100 * MS,
				NULL), 0);
	ck_assert_uint_eq(sim_memcg_dirty(g), 100);
	ck_assert_uint_eq(sim_memcg_clean_cache(g), 100);
	sim_reclaim(m, g, 200, SIM_RECLAIM_PROACTIVE, true, true, &res);
	ck_assert_uint_eq(res.reclaimed, 100);
	ck_assert_uint_eq(sim_obj_resident(m, clean), 0);
	ck_assert_uint_eq(sim_obj_resident(m, dirty), 100);
	ck_assert_uint_eq(sim_memcg_dirty(g), 100);
	ck_assert_uint_eq(sim_memcg_writeback(g), 0);
	/* Not clean_only: reclaim starts their writeback (pageout()),
	 * waits on the passes that free nothing (reclaim_throttle()), and
	 * frees what was written back meanwhile. */
	sim_reclaim(m, g, 100, SIM_RECLAIM_PROACTIVE, true, false, &res);
	ck_assert_uint_eq(sim_memcg_dirty(g) + sim_memcg_writeback(g) +
			  sim_memcg_clean_cache(g) + res.reclaimed, 100);
	ck_assert_uint_gt(res.reclaimed + sim_memcg_writeback(g), 0);
	ck_assert_uint_lt(sim_memcg_dirty(g), 100);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

/* A reclaim the task asks for itself (memory.reclaim, the library's
 * worker). */
struct proactive {
	struct sim_machine *m;
	struct sim_memcg *g;
	uint64_t nr, elapsed_ns;
	struct sim_reclaim_result res;
	struct sim_task_stats stats;
};

static void proactive_task(struct sim_task *t, void *arg)
{
	struct proactive *p = arg;
	uint64_t t0 = sim_now(p->m);

	sim_reclaim(p->m, p->g, p->nr, SIM_RECLAIM_PROACTIVE, true, false,
		    &p->res);
	p->elapsed_ns = sim_now(p->m) - t0;
	p->stats = *sim_task_stats(t);
}

/* The work of a proactive reclaim is its task's system time, its waits
 * on dirty pages are not, and neither is direct reclaim: the split the
 * sim backend's thread_cpu_ns gives the adaptive margin. Before, the
 * work counted nowhere (the worker's reclaim looked like all waiting)
 * and a proactive pass never waited on dirty pages, though the kernel's
 * shrink_node() throttles memory.reclaim as any cgroup reclaim. */
START_TEST(proactive_reclaim_work_is_cpu_dirty_waits_are_not)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "today");
	struct sim_memcg *g = group(m, "/g");
	sim_obj clean = sim_file_new(m, 100), dirty = sim_file_new(m, 100);
	struct proactive p = { .m = m, .g = g, .nr = 100 };

	read_file(m, g, clean, 100);
	ck_assert_ptr_nonnull(sim_task_spawn(m, "reclaim", sim_root(m),
					     sim_now(m), proactive_task, &p));
	sim_run(m, SIM_UNLIMITED);
	ck_assert_uint_eq(p.res.reclaimed, 100);
	ck_assert_uint_gt(p.stats.sys_ns, 0);
	ck_assert_uint_eq(p.stats.sys_ns, p.elapsed_ns);
	ck_assert_uint_eq(p.stats.direct_reclaim_ns, 0);

	/* Only dirty pages left: the passes that free nothing wait. */
	ck_assert_int_eq(run_op(m, g, OP_WRITE, dirty, 0, 100, 100 * MS,
				NULL), 0);
	ck_assert_uint_eq(sim_memcg_dirty(g), 100);
	memset(&p.stats, 0, sizeof(p.stats));
	ck_assert_ptr_nonnull(sim_task_spawn(m, "reclaim", sim_root(m),
					     sim_now(m), proactive_task, &p));
	sim_run(m, sim_now(m) + 100 * MS);
	ck_assert_uint_gt(p.stats.sys_ns, 0);
	ck_assert_uint_ge(p.elapsed_ns, p.stats.sys_ns +
			  sim_machine_costs(m)->dirty_stall_ns);
	ck_assert_uint_eq(p.stats.direct_reclaim_ns, 0);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

START_TEST(ancestor_max_binds_child)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *p = group(m, "/p"), *c = group(m, "/p/c");
	sim_obj f = sim_file_new(m, 1024);

	ck_assert_int_eq(sim_memcg_set(p, SIM_KNOB_MAX, 256), 0);
	ck_assert_uint_eq(sim_memcg_binding_max(c), 256);
	ck_assert_uint_eq(sim_memcg_get(c, SIM_KNOB_MAX), SIM_UNLIMITED);
	read_file(m, c, f, 64);
	ck_assert_uint_le(sim_memcg_usage(p), 256);
	ck_assert_uint_le(sim_memcg_usage(c), 256);
	ck_assert_uint_gt(sim_memcg_usage(c), 0);
	/* The limit hits are the parent's, the reclaim the child's pages. */
	ck_assert_uint_gt(sim_memcg_counter(p, SIM_FAILCNT), 0);
	ck_assert_uint_eq(sim_memcg_counter(c, SIM_FAILCNT), 0);
	ck_assert_uint_ge(sim_memcg_counter(c, SIM_PGSTEAL), 1024 - 256);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

/* Effective low follows the siblings' protected usage as it changes: a
 * charge, a sibling's low set and reset, a sibling removed. /p low 192
 * pages; /p/a low 256, /p/b low 128, 128 pages each: they claim 256 of
 * 192, so each gets 128 * 192 / 256 = 96 (mem_cgroup_calculate_protection,
 * children_low_usage kept by propagate_protected_usage()). */
START_TEST(protection_follows_siblings)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "today");
	struct sim_memcg *p = group(m, "/p"), *a = group(m, "/p/a"),
			 *b = group(m, "/p/b");
	sim_obj fa = sim_file_new(m, 128), fb = sim_file_new(m, 128),
		more = sim_file_new(m, 64);
	uint64_t elow, emin;

	ck_assert_int_eq(sim_memcg_set(p, SIM_KNOB_LOW, 192), 0);
	ck_assert_int_eq(sim_memcg_set(a, SIM_KNOB_LOW, 256), 0);
	ck_assert_int_eq(sim_memcg_set(b, SIM_KNOB_LOW, 128), 0);
	read_file(m, a, fa, 32);
	read_file(m, b, fb, 32);
	sim_memcg_protection(sim_root(m), a, &elow, &emin);
	ck_assert_uint_eq(elow, 96);
	ck_assert_uint_eq(emin, 0);
	/* a charges 64 more: 192 * 192 / 320 and 128 * 192 / 320. */
	read_file(m, a, more, 32);
	sim_memcg_protection(sim_root(m), a, &elow, &emin);
	ck_assert_uint_eq(elow, 115);
	sim_memcg_protection(sim_root(m), b, &elow, &emin);
	ck_assert_uint_eq(elow, 76);
	/* b claims nothing: a keeps what it uses. */
	ck_assert_int_eq(sim_memcg_set(b, SIM_KNOB_LOW, 0), 0);
	sim_memcg_protection(sim_root(m), a, &elow, &emin);
	ck_assert_uint_eq(elow, 192);
	ck_assert_int_eq(sim_memcg_set(b, SIM_KNOB_LOW, 128), 0);
	sim_memcg_protection(sim_root(m), a, &elow, &emin);
	ck_assert_uint_eq(elow, 115);
	assert_invariants(m);
	/* A removed group claims nothing (its low is reset offline), though
	 * its pages stay charged. */
	ck_assert_int_eq(sim_memcg_remove(b), 0);
	sim_memcg_protection(sim_root(m), a, &elow, &emin);
	ck_assert_uint_eq(elow, 192);
	ck_assert_uint_eq(sim_memcg_usage(p), 320);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

START_TEST(max_below_unreclaimable_is_busy)
{
	struct mr_sim_config cfg = { .size = sizeof(cfg), .seed = 1,
				     .ram_bytes = 64ULL << 20 };
	struct sim_memcg *g;
	mr_sim_t *sim;
	sim_obj anon, f;

	ck_assert_int_eq(mr_sim_new(&cfg, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/g"), 0);
	g = sim_memcg_find(sim->m, "/g");
	anon = sim_anon_new(sim->m, 512);
	/* No swap: anonymous memory cannot be reclaimed. */
	ck_assert_int_eq(run_op(sim->m, g, OP_TOUCH, anon, 0, 512,
				SIM_UNLIMITED, NULL), 0);
	ck_assert_uint_eq(sim_memcg_usage(g), 512);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX,
					 256 * SIM_PAGE_SIZE), -EBUSY);
	ck_assert_uint_eq(sim_memcg_get(g, SIM_KNOB_MAX), SIM_UNLIMITED);
	ck_assert_int_eq(sim_memcg_set(g, SIM_KNOB_MAX, 1024), 0);
	ck_assert_int_eq(sim_memcg_set(g, SIM_KNOB_MAX, 256), -EBUSY);
	ck_assert_uint_eq(sim_memcg_get(g, SIM_KNOB_MAX), 1024);
	/* Cache above the new max is reclaimed, and then it holds. */
	f = sim_file_new(sim->m, 400);
	read_file(sim->m, g, f, 100);
	ck_assert_uint_eq(sim_memcg_usage(g), 912);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/g", MR_SIM_MAX,
					 600 * SIM_PAGE_SIZE), 0);
	ck_assert_uint_eq(sim_memcg_get(g, SIM_KNOB_MAX), 600);
	ck_assert_uint_le(sim_memcg_usage(g), 600);
	ck_assert_uint_eq(sim_obj_resident(sim->m, anon), 512);
	assert_invariants(sim->m);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

/* A reader above memory.high, one 32-page read a task so that each
 * excursion is a charge of its own: reclaim brings each back to high or
 * below, then the throttle. Returns the readers' throttle totals and the
 * high events. */
static struct sim_task_stats high_reader(int mode, uint64_t *events)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *g = group(m, "/h");
	sim_obj f = sim_file_new(m, 4096);
	struct sim_task_stats st = { 0 }, s;
	uint64_t off;

	sim_memcg_set_high_mode(m, mode);
	ck_assert_int_eq(sim_memcg_set(g, SIM_KNOB_HIGH, 1000), 0);
	for (off = 0; off < 4096; off += 32) {
		ck_assert_int_eq(run_op(m, g, OP_READ, f, off, 32,
					SIM_UNLIMITED, &s), 0);
		ck_assert_uint_le(sim_memcg_usage(g), 1000);
		st.throttle_count += s.throttle_count;
		st.throttle_ns += s.throttle_ns;
	}
	*events = sim_memcg_counter(g, SIM_EV_HIGH);
	assert_invariants(m);
	sim_machine_free(m);
	return st;
}

START_TEST(high_throttle_kernel_sleeps_zero_below_high)
{
	uint64_t events;
	struct sim_task_stats st = high_reader(SIM_HIGH_KERNEL, &events);

	/* 31 reads fit below high; after that, each excursion's reclaim
	 * takes the 32-page batch and overshoots by up to a chunk (as the
	 * kernel's does), so the next read may fit: 54 excursions. */
	ck_assert_uint_eq(events, 54);
	ck_assert_uint_eq(st.throttle_count, 0);
	ck_assert_uint_eq(st.throttle_ns, 0);
}
END_TEST

START_TEST(high_throttle_56_defect_sleeps_the_maximum)
{
	uint64_t events;
	struct sim_task_stats st = high_reader(SIM_HIGH_BUGGY_56, &events);

	ck_assert_uint_eq(events, 54);
	/* Reclaim overshoots high by a few pages: then the defect sleeps. */
	ck_assert_uint_ge(st.throttle_count, events / 2);
	ck_assert_uint_eq(st.throttle_ns,
			  st.throttle_count * MR_THROTTLE_KERNEL_MAX_DELAY_NS);
}
END_TEST

START_TEST(oom_when_nothing_reclaimable)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *g = group(m, "/o");
	sim_obj anon = sim_anon_new(m, 256);

	ck_assert_int_eq(sim_memcg_set(g, SIM_KNOB_MAX, 128), 0);
	ck_assert_int_eq(run_op(m, g, OP_TOUCH, anon, 0, 256, SIM_UNLIMITED,
				NULL), -ENOMEM);
	ck_assert_uint_eq(sim_memcg_usage(g), 128);
	ck_assert_uint_ge(sim_memcg_counter(g, SIM_EV_OOM), 1);
	ck_assert_uint_ge(sim_memcg_counter(g, SIM_EV_MAX), 1);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

/* ------------------------------------------------------- PSI, swap */

/* A task that stalls the first half of every second, for `seconds`. */
static void half_stall(struct sim_task *t, void *arg)
{
	struct sim_machine *m = arg;
	unsigned i;

	(void)t;
	for (i = 0; i < 10; i++) {
		sim_stall_begin(m);
		sim_sleep(m, 500 * MS);
		sim_stall_end(m);
		sim_sleep(m, 500 * MS);
	}
}

/* After n 2 s periods at a constant share, kernel/sched/psi.c's averages
 * are share * (1 - (exp / 2048)^n) (calc_load() decays by exp / FIXED_1
 * per period), within the rounding of FIXED_1 fixed point and of the
 * two decimals the kernel prints. */
START_TEST(psi_averages_decay_as_the_kernel)
{
	static const double exp_w[3] = { 1677, 1981, 2034 };
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "today");
	struct sim_memcg *g = group(m, "/p");
	uint64_t some, full;
	uint32_t avg[3];
	double want;
	int w;

	ck_assert_ptr_nonnull(sim_task_spawn(m, "stall", g, 0, half_stall, m));
	sim_run(m, 10000 * MS);
	sim_memcg_psi(g, &some, &full);
	ck_assert_uint_eq(some, 5000 * MS);
	ck_assert_uint_eq(full, 5000 * MS);
	sim_memcg_psi_avg(g, false, avg);
	for (w = 0; w < 3; w++) {
		want = 500000.0 * (1 - pow(exp_w[w] / 2048, 5));
		ck_assert_msg(fabs(avg[w] - want) <= 1000, "avg[%d] %u ppm, "
			      "want %.0f", w, avg[w], want);
	}
	/* Ten idle periods decay them by (exp / 2048)^10; the totals
	 * stay. */
	sim_run(m, 30000 * MS);
	sim_memcg_psi_avg(g, true, avg);
	for (w = 0; w < 3; w++) {
		want = 500000.0 * (1 - pow(exp_w[w] / 2048, 5)) *
		       pow(exp_w[w] / 2048, 10);
		ck_assert_msg(fabs(avg[w] - want) <= 1000, "avg[%d] %u ppm, "
			      "want %.0f", w, avg[w], want);
	}
	sim_memcg_psi(g, &some, &full);
	ck_assert_uint_eq(some, 5000 * MS);
	sim_machine_free(m);
}
END_TEST

/* Whether the trigger fd has a message; reads it. */
static bool fired(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) == 1;
}

/* A trigger of 100 ms in 1 s fires at most once per window, and only
 * while stall grows; removal hangs its fd up. */
START_TEST(psi_trigger_once_per_window)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "today");
	struct sim_memcg *g = group(m, "/p");
	struct pollfd pfd;
	unsigned s, n = 0;
	int fd;

	fd = sim_memcg_psi_trigger_open(g, false, 100 * MS, 1000 * MS);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sim_memcg_psi_trigger_open(g, false, 0, 1000 * MS),
			 -EINVAL);
	ck_assert_ptr_nonnull(sim_task_spawn(m, "stall", g, 0, half_stall, m));
	for (s = 0; s < 10; s++) {
		sim_run(m, s * 1000 * MS + 750 * MS);
		n += fired(fd);
		ck_assert(!fired(fd));
	}
	/* One per second: each stall of 500 ms breaches 100 ms, and the
	 * window of 1 s lets one through each time. */
	ck_assert_uint_eq(n, 10);
	sim_run(m, 20000 * MS);
	ck_assert(!fired(fd));
	ck_assert_int_eq(sim_memcg_remove(g), 0);
	ck_assert_int_eq(sim_memcg_remove(g), -ENOENT);
	ck_assert_ptr_null(sim_memcg_find(m, "/p"));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert(pfd.revents & POLLHUP);
	close(fd);
	ck_assert_int_eq(sim_memcg_psi_trigger_open(g, false, MS, 1000 * MS),
			 -ENOENT);
	sim_machine_free(m);
}
END_TEST

/* get_scan_count(): a group's reclaim at swappiness 0 scans page cache
 * only; at 60 anon goes to swap once the cache is gone. Removal
 * is refused while a task or a child lives there. */
START_TEST(swappiness_zero_spares_anon)
{
	struct sim_machine *m = machine(1, 16384, 4096, SIM_SWAP_ZSWAP,
					"today");
	struct sim_memcg *g = group(m, "/s");
	sim_obj anon = sim_anon_new(m, 512), file = sim_file_new(m, 512);
	struct sim_reclaim_result res;

	ck_assert_int_eq(run_op(m, g, OP_TOUCH, anon, 0, 512, SIM_UNLIMITED,
				NULL), 0);
	read_file(m, g, file, 32);
	sim_reclaim_swappiness(m, g, 768, SIM_RECLAIM_PROACTIVE, true, false,
			       0, &res);
	ck_assert_uint_eq(res.swapped, 0);
	ck_assert_uint_eq(sim_obj_resident(m, anon), 512);
	ck_assert_uint_eq(sim_obj_resident(m, file), 0);
	ck_assert_uint_eq(sim_memcg_swap(g), 0);
	sim_reclaim_swappiness(m, g, 256, SIM_RECLAIM_PROACTIVE, true, false,
			       60, &res);
	ck_assert_uint_gt(res.swapped, 0);
	ck_assert_uint_eq(sim_memcg_swap(g), 512 - sim_obj_resident(m, anon));
	ck_assert_uint_eq(sim_memcg_peak(g), 1024);
	group(m, "/s/child");
	ck_assert_int_eq(sim_memcg_remove(g), -EBUSY);
	ck_assert_int_eq(sim_memcg_remove(sim_memcg_find(m, "/s/child")), 0);
	ck_assert_int_eq(sim_memcg_remove(g), 0);
	/* Its charges stay until an ancestor's reclaim takes them. */
	ck_assert_uint_eq(sim_memcg_usage(sim_root(m)), sim_memcg_usage(g));
	assert_invariants(m);
	sim_obj_free(m, anon);
	ck_assert_uint_eq(sim_memcg_swap(g), 0);
	sim_machine_free(m);
}
END_TEST

/* ------------------------------------------------------- workloads */

START_TEST(dd_leaves_clean_cache)
{
	struct sim_machine *m = machine(1, 16384, 0, SIM_SWAP_NONE, "2011");
	struct sim_memcg *r = group(m, "/r"), *w = group(m, "/w");
	struct sim_dd rd = { .file_pages = 3000, .block_pages = 256 };
	struct sim_dd wr = { .file_pages = 3000, .block_pages = 256,
			     .write = true, .fsync = true };
	struct sim_dd bad = { .file_pages = 0, .block_pages = 256 };

	ck_assert_int_eq(sim_dd_spawn(m, r, 0, &bad), -EINVAL);
	ck_assert_int_eq(sim_dd_spawn(m, r, 0, &rd), 0);
	ck_assert_int_eq(sim_dd_spawn(m, w, 0, &wr), 0);
	sim_run(m, SIM_UNLIMITED);
	ck_assert_int_eq(rd.result, 0);
	ck_assert_int_eq(wr.result, 0);
	ck_assert_uint_gt(rd.done_ns, 0);
	/* conv=fsync returns once the last page is written back. */
	ck_assert_uint_ge(wr.done_ns, rd.done_ns / 4);
	ck_assert_uint_eq(sim_memcg_usage(r), 3000);
	ck_assert_uint_eq(sim_memcg_clean_cache(r), 3000);
	ck_assert_uint_eq(sim_memcg_usage(w), 3000);
	ck_assert_uint_eq(sim_memcg_clean_cache(w), 3000);
	ck_assert_uint_eq(sim_memcg_dirty(w) + sim_memcg_writeback(w), 0);
	/* A read is one major fault per block. */
	ck_assert_uint_eq(sim_memcg_counter(r, SIM_PGMAJFAULT), 12);
	ck_assert_uint_eq(sim_memcg_counter(w, SIM_PGMAJFAULT), 0);
	assert_invariants(m);
	sim_machine_free(m);
}
END_TEST

static Suite *model_suite(void)
{
	Suite *s = suite_create("sim-model");
	TCase *tc = tcase_create("invariants");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, invariants_under_random_load, 0, 6);
	tcase_add_test(tc, same_seed_same_run);
	suite_add_tcase(s, tc);
	tc = tcase_create("mechanisms");
	tcase_add_test(tc, refault_within_distance_activates);
	tcase_add_test(tc, refault_beyond_distance_stays_inactive);
	tcase_add_test(tc, clean_only_reclaim_leaves_dirty_pages);
	tcase_add_test(tc, proactive_reclaim_work_is_cpu_dirty_waits_are_not);
	tcase_add_test(tc, ancestor_max_binds_child);
	tcase_add_test(tc, protection_follows_siblings);
	tcase_add_test(tc, max_below_unreclaimable_is_busy);
	tcase_add_test(tc, high_throttle_kernel_sleeps_zero_below_high);
	tcase_add_test(tc, high_throttle_56_defect_sleeps_the_maximum);
	tcase_add_test(tc, oom_when_nothing_reclaimable);
	tcase_add_test(tc, dd_leaves_clean_cache);
	tcase_add_test(tc, psi_averages_decay_as_the_kernel);
	tcase_add_test(tc, psi_trigger_once_per_window);
	tcase_add_test(tc, swappiness_zero_spares_anon);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(model_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
