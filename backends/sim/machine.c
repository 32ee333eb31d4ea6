/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated machine: the virtual clock, the random generator, tasks as
 * coroutines (ucontext) run one at a time in (wake time, sequence) order,
 * wait queues, CPU sharing and a disk that serves one request at a time.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

#define TASK_STACK_BYTES (256u * 1024u)

/* ---------------------------------------------------------------- PRNG */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna, 2018). */
uint64_t sim_rand(struct sim_machine *m)
{
	uint64_t *s = m->rng;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t sim_rand_below(struct sim_machine *m, uint64_t n)
{
	/* Lemire's multiply-shift; the bias is below 2^-64 * n. */
	return (uint64_t)(((unsigned __int128)sim_rand(m) * n) >> 64);
}

static double rand_unit(struct sim_machine *m)
{
	/* (0, 1]: 53 random bits. */
	return ((double)(sim_rand(m) >> 11) + 1.0) / 9007199254740992.0;
}

double sim_rand_normal(struct sim_machine *m, double mean, double sd)
{
	double u1 = rand_unit(m), u2 = rand_unit(m);

	return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double sim_rand_exp(struct sim_machine *m, double mean)
{
	return -mean * log(rand_unit(m));
}

/* ---------------------------------------------------------------- heap */

static bool before(const struct sim_task *a, const struct sim_task *b)
{
	return a->wake_ns < b->wake_ns ||
	       (a->wake_ns == b->wake_ns && a->seq < b->seq);
}

static void heap_set(struct sim_machine *m, size_t i, struct sim_task *t)
{
	m->heap[i] = t;
	t->heap_pos = i;
}

static void heap_up(struct sim_machine *m, size_t i)
{
	struct sim_task *t = m->heap[i];

	while (i > 0 && before(t, m->heap[(i - 1) / 2])) {
		heap_set(m, i, m->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(m, i, t);
}

static void heap_down(struct sim_machine *m, size_t i)
{
	struct sim_task *t = m->heap[i];
	size_t c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && before(m->heap[c + 1], m->heap[c]))
			c++;
		if (!before(m->heap[c], t))
			break;
		heap_set(m, i, m->heap[c]);
		i = c;
	}
	heap_set(m, i, t);
}

/* Queues t to run at wake_ns. The heap was sized for every task at
 * spawn, so this cannot fail. */
static void heap_push(struct sim_machine *m, struct sim_task *t,
		      uint64_t wake_ns)
{
	t->wake_ns = wake_ns;
	t->seq = m->seq++;
	m->heap[m->nheap] = t;
	t->heap_pos = m->nheap++;
	heap_up(m, t->heap_pos);
}

static void heap_remove(struct sim_machine *m, struct sim_task *t)
{
	size_t i = t->heap_pos;

	t->heap_pos = SIZE_MAX;
	if (--m->nheap == i)
		return;
	heap_set(m, i, m->heap[m->nheap]);
	heap_down(m, i);
	heap_up(m, m->heap[i]->heap_pos);
}

static struct sim_task *heap_pop(struct sim_machine *m)
{
	struct sim_task *t = m->heap[0];

	heap_remove(m, t);
	return t;
}

/* ---------------------------------------------------------------- machine */

struct sim_machine *sim_machine_new(const struct sim_config *cfg)
{
	struct sim_machine *m;
	uint64_t seed = cfg->seed, i;

	if (!cfg->costs || !cfg->ram_pages || cfg->ram_pages >= SIM_NOPAGE ||
	    !cfg->cpus)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	m->costs = *cfg->costs;
	for (i = 0; i < 4; i++)
		m->rng[i] = splitmix64(&seed);
	m->pages = calloc(cfg->ram_pages, sizeof(*m->pages));
	if (!m->pages) {
		free(m);
		return NULL;
	}
	/* Every page free, in order. */
	for (i = 0; i < cfg->ram_pages; i++) {
		m->pages[i].lru = 0xff;
		m->pages[i].next = i + 1 < cfg->ram_pages ? (uint32_t)i + 1 :
							    SIM_NOPAGE;
	}
	m->free_head = 0;
	m->dirty_head = m->dirty_tail = SIM_NOPAGE;
	m->disk_last_obj = SIM_NOPAGE;
	m->nr_free = cfg->ram_pages;
	if (sim_memcg_create(m, "/", NULL) < 0) {
		sim_machine_free(m);
		return NULL;
	}
	return m;
}

static void task_free(struct sim_machine *m, struct sim_task *t)
{
	*t->all_pprev = t->all_next;
	if (t->all_next)
		t->all_next->all_pprev = t->all_pprev;
	m->ntasks--;
	free(t->stack);
	free(t);
}

void sim_machine_free(struct sim_machine *m)
{
	uint32_t i;

	if (!m)
		return;
	while (m->all_tasks)
		task_free(m, m->all_tasks);
	for (i = 0; i < m->nobjs; i++)
		free(m->objs[i].slots);
	free(m->objs);
	sim_memcg_free_all(m);
	free(m->heap);
	free(m->wb_queue);
	free(m->pages);
	free(m);
}

const struct sim_config *sim_machine_config(const struct sim_machine *m)
{
	return &m->cfg;
}

uint64_t sim_machine_swap_free(const struct sim_machine *m)
{
	return m->cfg.swap_kind == SIM_SWAP_NONE ||
	       m->swap_used >= m->cfg.swap_pages ? 0 :
	       m->cfg.swap_pages - m->swap_used;
}

const struct sim_costs *sim_machine_costs(const struct sim_machine *m)
{
	return &m->costs;
}

uint64_t sim_now(const struct sim_machine *m)
{
	return m->now;
}

/* Takes the first task off the heap and sets the clock to its wake-up
 * time, or returns NULL when none is due by the bound of sim_run(). */
static struct sim_task *next_task(struct sim_machine *m)
{
	struct sim_task *t = m->heap[0];

	if (m->run_until != SIM_UNLIMITED && t->wake_ns > m->run_until)
		return NULL;
	if (t->wake_ns > m->now)
		m->now = t->wake_ns;
	/* Before the pop: a completion wakes its waiters, and a waiter
	 * whose timeout is this very moment must still be in the heap then,
	 * not half-way to running. */
	sim_writeback_complete(m);
	return heap_pop(m);
}

void sim_run(struct sim_machine *m, uint64_t until_ns)
{
	struct sim_task *t;

	m->run_until = until_ns;
	while (m->nheap) {
		t = next_task(m);
		if (!t)
			break;
		m->current = t;
		swapcontext(&m->main_uc, &t->uc);
		m->current = NULL;
		if (t->done)
			task_free(m, t);
	}
	if (until_ns != SIM_UNLIMITED && until_ns > m->now)
		m->now = until_ns;
	sim_writeback_complete(m);
}

void sim_advance(struct sim_machine *m, uint64_t ns)
{
	m->now += ns;
	sim_writeback_complete(m);
}

/* ---------------------------------------------------------------- tasks */

/* makecontext() passes ints only: the task's address comes in two
 * halves. */
static void trampoline(unsigned hi, unsigned lo)
{
	struct sim_task *t = (struct sim_task *)(((uintptr_t)hi << 32) |
						 (uintptr_t)lo);

	t->fn(t, t->arg);
	sim_memcg_psi_change(t->memcg, 0, -1);
	t->done = true;
	/* uc_link returns to the scheduler. */
}

/* A zeroed task with its stack and the context getcontext() gives, or
 * NULL. (getcontext() may return twice, as setjmp() does, so t is kept
 * in memory across it; this one never does: makecontext() replaces the
 * context before anything resumes it.) */
static struct sim_task *task_new(void)
{
	struct sim_task *volatile t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->stack = malloc(TASK_STACK_BYTES);
	if (!t->stack || getcontext(&t->uc) < 0) {
		free(t->stack);
		free(t);
		return NULL;
	}
	return t;
}

/* Puts t first in the machine's list of tasks. */
static void task_link(struct sim_machine *m, struct sim_task *t)
{
	t->all_next = m->all_tasks;
	if (t->all_next)
		t->all_next->all_pprev = &t->all_next;
	t->all_pprev = &m->all_tasks;
	m->all_tasks = t;
	m->ntasks++;
}

struct sim_task *sim_task_spawn(struct sim_machine *m, const char *name,
				struct sim_memcg *g, uint64_t start_ns,
				sim_task_fn fn, void *arg)
{
	struct sim_task *t, **heap;
	size_t ntasks = m->ntasks + 1;

	if (ntasks > m->heap_cap) {
		heap = realloc(m->heap, 2 * ntasks * sizeof(*heap));
		if (!heap)
			return NULL;
		m->heap = heap;
		m->heap_cap = 2 * ntasks;
	}
	t = task_new();
	if (!t)
		return NULL;
	t->m = m;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->memcg = g ? g : sim_root(m);
	t->fn = fn;
	t->arg = arg;
	t->heap_pos = SIZE_MAX;
	t->uc.uc_stack.ss_sp = t->stack;
	t->uc.uc_stack.ss_size = TASK_STACK_BYTES;
	t->uc.uc_link = &m->main_uc;
	makecontext(&t->uc, (void (*)(void))trampoline, 2,
		    (unsigned)((uintptr_t)t >> 32), (unsigned)(uintptr_t)t);
	task_link(m, t);
	sim_memcg_psi_change(t->memcg, 0, 1);
	heap_push(m, t, start_ns > m->now ? start_ns : m->now);
	return t;
}

struct sim_task *sim_current(struct sim_machine *m)
{
	return m->current;
}

struct sim_memcg *sim_task_memcg(const struct sim_task *t)
{
	return t->memcg;
}

const char *sim_task_name(const struct sim_task *t)
{
	return t->name;
}

const struct sim_task_stats *sim_task_stats(const struct sim_task *t)
{
	return &t->stats;
}

void sim_task_move(struct sim_task *t, struct sim_memcg *g)
{
	int stalled = t->stall_depth ? 1 : 0;

	sim_memcg_psi_change(t->memcg, -stalled, -1);
	t->memcg = g;
	t->charge_stock = 0; /* the stock is of the old group */
	sim_memcg_psi_change(g, stalled, 1);
}

/* Switches from the running task back to the scheduler. The task runs
 * again when it is popped off the heap. */
static void yield(struct sim_machine *m)
{
	swapcontext(&m->current->uc, &m->main_uc);
}

void sim_sleep(struct sim_machine *m, uint64_t ns)
{
	if (!m->current) {
		sim_advance(m, ns);
		return;
	}
	heap_push(m, m->current, m->now + ns);
	/* A task that would be the next to run anyway goes on without the
	 * two context switches (each a system call in swapcontext()): the
	 * same order of events, much faster for a task faulting page after
	 * page. */
	if (m->heap[0] == m->current && next_task(m))
		return;
	yield(m);
}

/* ns of CPU for the running task (the time it uses, not the time it
 * waits for a CPU, is what the task's stats count). */
static void use_cpu(struct sim_machine *m, uint64_t ns)
{
	unsigned busy = m->cpu_busy + 1;

	/* Processor sharing: with more tasks on the CPUs than there are
	 * CPUs, each gets its share. */
	if (busy > m->cfg.cpus)
		ns = ns * busy / m->cfg.cpus;
	m->cpu_busy++;
	sim_sleep(m, ns);
	m->cpu_busy--;
}

void sim_cpu(struct sim_machine *m, uint64_t ns)
{
	if (m->current)
		m->current->stats.user_ns += ns;
	use_cpu(m, ns);
}

void sim_kernel_cpu(struct sim_machine *m, uint64_t ns)
{
	if (m->current)
		m->current->stats.sys_ns += ns;
	use_cpu(m, ns);
}

uint64_t sim_disk_submit(struct sim_machine *m, sim_obj obj, uint64_t index,
			 uint64_t pages)
{
	uint64_t start = m->disk_free_ns > m->now ? m->disk_free_ns : m->now;

	/* The I/O scheduler merges a request that continues the one queued
	 * last: no new seek. */
	if (obj == SIM_NOPAGE || obj != m->disk_last_obj ||
	    index != m->disk_last_end || m->disk_free_ns <= m->now)
		start += m->costs.disk_latency_ns;
	m->disk_free_ns = start + pages * m->costs.disk_page_ns;
	m->disk_last_obj = obj;
	m->disk_last_end = index + pages;
	return m->disk_free_ns;
}

uint64_t sim_disk_io(struct sim_machine *m, uint64_t pages)
{
	uint64_t done = sim_disk_submit(m, SIM_NOPAGE, 0, pages);
	uint64_t waited = done - m->now;

	sim_sleep(m, waited);
	return waited;
}

bool sim_wait(struct sim_machine *m, struct sim_waitq *q,
	      uint64_t timeout_ns)
{
	struct sim_task *t = m->current, **p;

	if (!t) {
		if (timeout_ns != SIM_UNLIMITED)
			sim_advance(m, timeout_ns);
		return false;
	}
	t->woken = false;
	t->waiting = q;
	t->wait_next = q->head;
	q->head = t;
	if (timeout_ns != SIM_UNLIMITED)
		heap_push(m, t, m->now + timeout_ns);
	yield(m);
	if (!t->woken) {
		for (p = &q->head; *p; p = &(*p)->wait_next) {
			if (*p == t) {
				*p = t->wait_next;
				break;
			}
		}
	}
	t->waiting = NULL;
	return t->woken;
}

void sim_wake_all(struct sim_machine *m, struct sim_waitq *q)
{
	struct sim_task *t, *list = NULL, *next;

	/* Wake in the order they went to sleep. */
	for (t = q->head; t; t = next) {
		next = t->wait_next;
		t->wait_next = list;
		list = t;
	}
	q->head = NULL;
	for (t = list; t; t = next) {
		next = t->wait_next;
		t->wait_next = NULL;
		t->woken = true;
		if (t->heap_pos != SIZE_MAX)
			heap_remove(m, t);
		heap_push(m, t, m->now);
	}
}

/* ---------------------------------------------------------------- stalls */

void sim_stall_begin(struct sim_machine *m)
{
	struct sim_task *t = m->current;

	if (!t || t->stall_depth++)
		return;
	t->stall_start_ns = m->now;
	sim_memcg_psi_change(t->memcg, 1, 0);
}

void sim_stall_end(struct sim_machine *m)
{
	struct sim_task *t = m->current;

	if (!t || --t->stall_depth)
		return;
	t->stats.stall_ns += m->now - t->stall_start_ns;
	sim_memcg_psi_change(t->memcg, -1, 0);
}

struct sim_memcg *sim_charge_target(struct sim_machine *m)
{
	return m->current ? m->current->memcg : sim_root(m);
}

void sim_account_reclaim(struct sim_machine *m, bool direct,
			 uint64_t work_ns, uint64_t wait_ns)
{
	if (!m->current)
		return;
	if (direct)
		m->current->stats.direct_reclaim_ns += work_ns + wait_ns;
	m->current->stats.sys_ns += work_ns;
}
