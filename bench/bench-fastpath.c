/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocator fast path (lib/core/charge.c) on a real cgroup v1 group that
 * this program creates under /sys/fs/cgroup/memory and removes: ns per
 * mr_group_charge()/mr_group_uncharge() call served from the thread's
 * stock and per call that draws a batch, calls per second with one and two
 * threads, against baselines measured in the same run: a pread of
 * memory.usage_in_bytes on a kept fd, libcgroup's reads of one value, and
 * a counter behind a pthread mutex. Then the read side of the policy under
 * each liburcu flavour (bp; memb registered lazily; qsbr) beside the
 * library's latch, per read and on a new thread's first read, for
 * docs/PERFORMANCE.md "Fast path: RCU flavour".
 *
 * Exits 77 without root or a cgroup v1 memory controller at
 * /sys/fs/cgroup/memory. Each figure is the median of BENCH_REPS runs.
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu/urcu-bp.h>
#include <urcu/urcu-memb.h>
#include <urcu/urcu-qsbr.h>

#include "bench.h"
#include "group.h"
#include "memreclaim.h"

#define V1_ROOT "/sys/fs/cgroup/memory"
#define BENCH_REPS 5
#define PAIRS 10000000u           /* charge + uncharge pairs per run */
#define FRESH_THREADS 200u

static char cg_name[64];
static char cg_path[128];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of BENCH_REPS runs of fn, each returning ns per call. */
static double median(double (*fn)(void *), void *arg)
{
	uint64_t v[BENCH_REPS];
	int i;

	for (i = 0; i < BENCH_REPS; i++)
		v[i] = (uint64_t)(fn(arg) * 1000.0);
	qsort(v, BENCH_REPS, sizeof(v[0]), cmp_u64);
	return v[BENCH_REPS / 2] / 1000.0;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-fastpath: %s: %s\n", what, strerror(err));
	rmdir(cg_path);
	exit(1);
}

/* ---------------------------------------------------------- fast path */

struct run {
	mr_group_t *g;
	uint64_t bytes;               /* per charge */
	unsigned pairs;
	pthread_barrier_t *start;
	uint64_t elapsed_ns;
	uint64_t cpu_ns;              /* the thread's own CPU time */
};

/* CPU time of the calling thread, in ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *charge_pairs(void *p)
{
	struct run *r = p;
	struct mr_charge_answer a;
	uint64_t t0, c0;
	unsigned i;

	if (r->start)
		pthread_barrier_wait(r->start);
	t0 = bench_now_ns();
	c0 = thread_cpu_ns();
	for (i = 0; i < r->pairs; i++) {
		if (mr_group_charge(r->g, r->bytes, &a) != MR_CHARGE_GO ||
		    mr_group_uncharge(r->g, r->bytes) != 0)
			die("charge", EIO);
	}
	r->cpu_ns = thread_cpu_ns() - c0;
	r->elapsed_ns = bench_now_ns() - t0;
	return NULL;
}

/* ns per call (a charge or an uncharge) on one thread: of wall time, or
 * of the thread's CPU time (which a loaded machine does not inflate). */
static double one_thread(void *arg)
{
	struct run r = *(struct run *)arg;

	charge_pairs(&r);
	return (double)r.elapsed_ns / (2.0 * r.pairs);
}

static double one_thread_cpu(void *arg)
{
	struct run r = *(struct run *)arg;

	charge_pairs(&r);
	return (double)r.cpu_ns / (2.0 * r.pairs);
}

/* Calls per second of two threads together, in wall time; and in
 * *cpu_calls_per_s, the calls per second of thread CPU time summed over
 * the two: what two CPUs of their own would do. */
static double two_threads_calls_per_s(mr_group_t *g, double *cpu_calls_per_s)
{
	pthread_barrier_t start;
	struct run r[2];
	pthread_t t[2];
	uint64_t v[BENCH_REPS], c[BENCH_REPS], slowest;
	int i, k;

	for (k = 0; k < BENCH_REPS; k++) {
		pthread_barrier_init(&start, NULL, 2);
		for (i = 0; i < 2; i++) {
			r[i] = (struct run){ .g = g, .bytes = 4096,
					     .pairs = PAIRS, .start = &start };
			pthread_create(&t[i], NULL, charge_pairs, &r[i]);
		}
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&start);
		slowest = r[0].elapsed_ns > r[1].elapsed_ns ?
			  r[0].elapsed_ns : r[1].elapsed_ns;
		v[k] = (uint64_t)(4.0 * PAIRS * 1e9 / slowest);
		c[k] = (uint64_t)(2.0 * PAIRS * 1e9 / r[0].cpu_ns +
				  2.0 * PAIRS * 1e9 / r[1].cpu_ns);
	}
	qsort(v, BENCH_REPS, sizeof(v[0]), cmp_u64);
	qsort(c, BENCH_REPS, sizeof(c[0]), cmp_u64);
	*cpu_calls_per_s = (double)c[BENCH_REPS / 2];
	return (double)v[BENCH_REPS / 2];
}

/* ---------------------------------------------------------- baselines */

static double pread_usage(void *arg)
{
	int fd = *(int *)arg;
	char buf[32];
	uint64_t t0 = bench_now_ns();
	unsigned i, n = 200000;

	for (i = 0; i < n; i++) {
		if (pread(fd, buf, sizeof(buf), 0) <= 0)
			die("pread", errno);
	}
	return (double)(bench_now_ns() - t0) / n;
}

/* libcgroup's cheapest read of one value: cgroup_read_value_begin() opens
 * the file, reads a line, cgroup_read_value_end() closes it. */
static double libcgroup_read_value(void *arg)
{
	char buf[64], name[] = "memory.usage_in_bytes";
	void *h;
	uint64_t t0 = bench_now_ns();
	unsigned i, n = 20000;
	int r;

	(void)arg;
	for (i = 0; i < n; i++) {
		r = cgroup_read_value_begin("memory", cg_name, name, &h, buf,
					    sizeof(buf));
		if (r != 0)
			die("cgroup_read_value_begin", EIO);
		cgroup_read_value_end(&h);
	}
	return (double)(bench_now_ns() - t0) / n;
}

/* The documented path to one value: load the group (every file of its
 * controllers), find the controller, take the value. */
static double libcgroup_get_value_uint64(void *arg)
{
	struct cgroup_controller *ctrl;
	struct cgroup *cg;
	uint64_t t0 = bench_now_ns(), v;
	unsigned i, n = 500;

	(void)arg;
	for (i = 0; i < n; i++) {
		cg = cgroup_new_cgroup(cg_name);
		if (!cg || cgroup_get_cgroup(cg) != 0)
			die("cgroup_get_cgroup", EIO);
		ctrl = cgroup_get_controller(cg, "memory");
		if (!ctrl || cgroup_get_value_uint64(ctrl,
				"memory.usage_in_bytes", &v) != 0)
			die("cgroup_get_value_uint64", EIO);
		cgroup_free(&cg);
	}
	return (double)(bench_now_ns() - t0) / n;
}

struct mutex_run {
	pthread_mutex_t *lock;
	uint64_t *counter;
	unsigned pairs;
	pthread_barrier_t *start;
	uint64_t elapsed_ns;
};

static void *mutex_pairs(void *p)
{
	struct mutex_run *m = p;
	uint64_t t0;
	unsigned i;

	if (m->start)
		pthread_barrier_wait(m->start);
	t0 = bench_now_ns();
	for (i = 0; i < m->pairs; i++) {
		pthread_mutex_lock(m->lock);
		*m->counter += 4096;
		pthread_mutex_unlock(m->lock);
		pthread_mutex_lock(m->lock);
		*m->counter -= 4096;
		pthread_mutex_unlock(m->lock);
	}
	m->elapsed_ns = bench_now_ns() - t0;
	return NULL;
}

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t counter;

static double mutex_one(void *arg)
{
	struct mutex_run m = { &counter_lock, &counter, PAIRS, NULL, 0 };

	(void)arg;
	mutex_pairs(&m);
	return (double)m.elapsed_ns / (2.0 * PAIRS);
}

static double mutex_two_calls_per_s(void)
{
	pthread_barrier_t start;
	struct mutex_run m[2];
	pthread_t t[2];
	uint64_t v[BENCH_REPS], slowest;
	int i, k;

	for (k = 0; k < BENCH_REPS; k++) {
		pthread_barrier_init(&start, NULL, 2);
		for (i = 0; i < 2; i++) {
			m[i] = (struct mutex_run){ &counter_lock, &counter,
						   PAIRS / 4, &start, 0 };
			pthread_create(&t[i], NULL, mutex_pairs, &m[i]);
		}
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&start);
		slowest = m[0].elapsed_ns > m[1].elapsed_ns ?
			  m[0].elapsed_ns : m[1].elapsed_ns;
		v[k] = (uint64_t)(4.0 * (PAIRS / 4) * 1e9 / slowest);
	}
	qsort(v, BENCH_REPS, sizeof(v[0]), cmp_u64);
	return (double)v[BENCH_REPS / 2];
}

/* ---------------------------------------------------------- RCU read side */

/* What a batch boundary reads: the policy's head (no table points). */
static struct mri_charge_policy rcu_policy = { .high_bytes = 1 };
static struct mri_charge_policy *rcu_ptr = &rcu_policy;
static struct mri_charge *latch;
static volatile uint64_t sink;

#define READ_HEAD(p) ((p)->kind + (p)->max_delay_ns + (p)->high_bytes + \
		      (p)->thp_policy + (p)->margin_bytes)

static void read_bp(void)
{
	struct mri_charge_policy *p;

	urcu_bp_read_lock();
	p = rcu_dereference(rcu_ptr);
	sink = READ_HEAD(p);
	urcu_bp_read_unlock();
}

/* memb needs each reader registered, and unregistered before it exits:
 * lazily, on the first read, with a pthread key to unregister. */
static pthread_key_t memb_key;
static __thread int memb_registered
	__attribute__((tls_model("initial-exec")));

static void memb_exit(void *unused)
{
	(void)unused;
	urcu_memb_unregister_thread();
}

static void read_memb(void)
{
	struct mri_charge_policy *p;

	if (!memb_registered) {
		urcu_memb_register_thread();
		pthread_setspecific(memb_key, &memb_registered);
		memb_registered = 1;
	}
	urcu_memb_read_lock();
	p = rcu_dereference(rcu_ptr);
	sink = READ_HEAD(p);
	urcu_memb_read_unlock();
}

/* qsbr: the read lock is free, but every reader must be registered and
 * announce quiescent states; the fast path has no other point to do it
 * than the end of its call. */
static void read_qsbr(void)
{
	struct mri_charge_policy *p;

	urcu_qsbr_read_lock();
	p = rcu_dereference(rcu_ptr);
	sink = READ_HEAD(p);
	urcu_qsbr_read_unlock();
	urcu_qsbr_quiescent_state();
}

static void read_latch(void)
{
	struct mri_charge_policy p;

	mri_charge_policy_read(latch, &p);
	sink = READ_HEAD(&p);
}

static double per_read(void *arg)
{
	void (*read)(void) = (void (*)(void))arg;
	uint64_t t0 = bench_now_ns();
	unsigned i, n = 10000000;

	for (i = 0; i < n; i++)
		read();
	return (double)(bench_now_ns() - t0) / n;
}

struct first {
	void (*read)(void);
	uint64_t ns;
};

static void *first_read(void *arg)
{
	struct first *f = arg;
	uint64_t t0 = bench_now_ns();

	f->read();
	f->ns = bench_now_ns() - t0;
	return NULL;
}

/* A thread's first read, timed inside the thread: the median over
 * FRESH_THREADS new threads. */
static double first_read_cost(void *arg)
{
	struct first f = { .read = (void (*)(void))arg };
	uint64_t v[FRESH_THREADS];
	pthread_t t;
	unsigned i;

	for (i = 0; i < FRESH_THREADS; i++) {
		pthread_create(&t, NULL, first_read, &f);
		pthread_join(t, NULL);
		v[i] = f.ns;
	}
	qsort(v, FRESH_THREADS, sizeof(v[0]), cmp_u64);
	return (double)v[FRESH_THREADS / 2];
}

static void log_nothing(void *userdata, int level, const char *fmt,
			va_list ap)
{
	(void)userdata;
	(void)level;
	(void)fmt;
	(void)ap;
}

static void emit(const char *figure, double v, const char *unit,
		 const char *base, double bv, const char *bunit)
{
	bench_emit("fastpath", figure, v, unit, base, bv, bunit);
}

int main(void)
{
	struct run stock = { .bytes = 4096, .pairs = PAIRS };
	struct run draw = { .bytes = MR_CHARGE_BATCH_BYTES + 4096,
			    .pairs = PAIRS / 10 };
	double stock_ns, draw_ns, pread_ns, rv_ns, gv_ns, mutex_ns;
	double two, two_cpu, stock_cpu_ns, mutex2;
	char file[192];
	mr_ctx_t *ctx;
	mr_group_t *g;
	int fd, r;

	if (geteuid() != 0 || access(V1_ROOT "/memory.usage_in_bytes", R_OK)) {
		fprintf(stderr, "bench-fastpath: needs root and cgroup v1 "
			"memory at " V1_ROOT "\n");
		return 77;
	}
	snprintf(cg_name, sizeof(cg_name), "mr-bench-fastpath-%d",
		 (int)getpid());
	snprintf(cg_path, sizeof(cg_path), V1_ROOT "/%s", cg_name);
	if (mkdir(cg_path, 0755) < 0)
		die(cg_path, errno);
	snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", cg_path);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1073741824", 10) != 10)
		die(file, errno);
	close(fd);

	if ((r = mr_ctx_new(&ctx)) < 0)
		die("mr_ctx_new", -r);
	if ((r = mr_group_open(ctx, cg_path, "cgroup1", &g)) < 0)
		die("mr_group_open", -r);
	if ((r = mr_group_charge_refresh(g)) < 0)
		die("mr_group_charge_refresh", -r);
	stock.g = draw.g = g;
	latch = &g->charge;

	snprintf(file, sizeof(file), "%s/memory.usage_in_bytes", cg_path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(file, errno);
	cgroup_set_logger(log_nothing, CGROUP_LOG_ERROR, NULL);
	if (cgroup_init() != 0)
		die("cgroup_init", EIO);

	stock_ns = median(one_thread, &stock);
	draw_ns = median(one_thread, &draw);
	pread_ns = median(pread_usage, &fd);
	rv_ns = median(libcgroup_read_value, NULL);
	gv_ns = median(libcgroup_get_value_uint64, NULL);
	mutex_ns = median(mutex_one, NULL);
	stock_cpu_ns = median(one_thread_cpu, &stock);
	two = two_threads_calls_per_s(g, &two_cpu);
	mutex2 = mutex_two_calls_per_s();

	emit("charge_from_stock_1thread", stock_ns, "ns/call",
	     "pread memory.usage_in_bytes (kept fd)", pread_ns, "ns/call");
	emit("charge_from_stock_1thread", stock_ns, "ns/call",
	     "libcgroup cgroup_read_value_begin+end", rv_ns, "ns/call");
	emit("charge_from_stock_1thread", stock_ns, "ns/call",
	     "libcgroup cgroup_get_cgroup+get_value_uint64", gv_ns,
	     "ns/call");
	emit("charge_from_stock_1thread", stock_ns, "ns/call",
	     "pthread mutex counter, 1 thread", mutex_ns, "ns/call");
	emit("charge_drawing_a_batch_1thread", draw_ns, "ns/call",
	     "pread memory.usage_in_bytes (kept fd)", pread_ns, "ns/call");
	emit("calls_per_s_2threads", two, "calls/s",
	     "the fast path, 1 thread", 1e9 / stock_ns, "calls/s");
	emit("scaling_2threads", two * stock_ns / 1e9, "x",
	     "pthread mutex counter, 2 threads / 1", mutex2 * mutex_ns / 1e9,
	     "x");
	emit("calls_per_cpu_s_2threads", two_cpu, "calls/s",
	     "the fast path, 1 thread, per CPU s", 1e9 / stock_cpu_ns,
	     "calls/s");
	emit("scaling_2threads_cpu_time", two_cpu * stock_cpu_ns / 1e9, "x",
	     "ideal: two CPUs", 2.0, "x");

	emit("policy_read_latch", median(per_read, (void *)read_latch),
	     "ns/read", "urcu-bp read side", median(per_read,
						    (void *)read_bp),
	     "ns/read");
	pthread_key_create(&memb_key, memb_exit);
	emit("policy_read_latch", median(per_read, (void *)read_latch),
	     "ns/read", "urcu-memb read side, lazy registration",
	     median(per_read, (void *)read_memb), "ns/read");
	urcu_qsbr_register_thread();
	emit("policy_read_latch", median(per_read, (void *)read_latch),
	     "ns/read", "urcu-qsbr read side + quiescent state",
	     median(per_read, (void *)read_qsbr), "ns/read");
	urcu_qsbr_unregister_thread();
	emit("first_policy_read_in_a_thread_latch",
	     median(first_read_cost, (void *)read_latch), "ns",
	     "urcu-bp (registers)", median(first_read_cost, (void *)read_bp),
	     "ns");
	emit("first_policy_read_in_a_thread_latch",
	     median(first_read_cost, (void *)read_latch), "ns",
	     "urcu-memb (registers, key to unregister)",
	     median(first_read_cost, (void *)read_memb), "ns");

	close(fd);
	mr_group_close(g);
	mr_ctx_free(ctx);
	if (rmdir(cg_path) < 0)
		die("rmdir", errno);
	return 0;
}
