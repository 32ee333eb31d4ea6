/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/core/charge.c, the allocator fast path, on a fake backend whose usage,
 * limit, high, page cache and clock the tests set: the verdicts at each
 * boundary (GO, DELAY, RECLAIM, REFUSE; no delay at or below high; the
 * curves' values), the kept high of a backend without one and the
 * backend's high by default, usage reads bounded per interval, stocks and
 * counters folded exactly over threads that exited, a closed group's stock
 * never touched, -ECHILD after fork(), bad arguments, THP advice per
 * policy, and charges from a thread that never touched liburcu and from a
 * signal handler. No timing is asserted.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "group.h"
#include "memreclaim.h"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define CURVE_SIZE sizeof(struct mr_throttle_curve)
#define B MR_CHARGE_BATCH_BYTES

struct fake {
	uint64_t usage;
	uint64_t limit;
	uint64_t high;           /* MR_UNLIMITED without has_high */
	bool has_high;           /* v2; v1 has none */
	uint64_t file;           /* page cache */
	uint64_t dirty;
	uint64_t anon;           /* anonymous memory */
	/* What the backend says of swap (has_swap): the swap left for the
	 * group and the swappiness. */
	bool has_swap;
	uint64_t swap_free;
	uint32_t swappiness;
	_Atomic uint64_t clock_ns;
	_Atomic unsigned usage_reads;
	int usage_err;
};

static struct fake *fk(void *priv)
{
	return *(struct fake **)priv;
}

static struct fake *opening;

static int fake_open(void *priv, const char *path,
		     const struct mri_open_env *env)
{
	(void)path;
	(void)env;
	*(struct fake **)priv = opening;
	return 0;
}

static int fake_close(void *priv)
{
	(void)priv;
	return 0;
}

static void fake_forget(void *priv)
{
	(void)priv;
}

static int fake_read_usage(void *priv, uint64_t *usage)
{
	struct fake *f = fk(priv);

	atomic_fetch_add(&f->usage_reads, 1);
	if (f->usage_err)
		return f->usage_err;
	*usage = f->usage;
	return 0;
}

static int fake_read_limits(void *priv, struct mr_limits *l)
{
	struct fake *f = fk(priv);

	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->usage_bytes = f->usage;
	l->limit_bytes = l->own_limit_bytes = f->limit;
	l->high_bytes = l->own_high_bytes = MR_UNLIMITED;
	if (f->has_high) {
		l->high_bytes = l->own_high_bytes = f->high;
		l->present |= MR_LIMITS_HAS_HIGH;
	}
	if (f->has_swap) {
		l->swap_free_bytes = f->swap_free;
		l->swappiness = f->swappiness;
		l->present |= MR_LIMITS_HAS_SWAP_FREE;
	}
	return 0;
}

static int fake_read_memstat(void *priv, struct mr_memstat *ms)
{
	struct fake *f = fk(priv);

	memset(ms, 0, sizeof(*ms));
	ms->size = sizeof(*ms);
	ms->present = (1ULL << MR_MEMSTAT_FILE) |
		      (1ULL << MR_MEMSTAT_INACTIVE_FILE) |
		      (1ULL << MR_MEMSTAT_ACTIVE_FILE) |
		      (1ULL << MR_MEMSTAT_FILE_DIRTY) |
		      (1ULL << MR_MEMSTAT_ANON);
	ms->anon_bytes = f->anon;
	ms->file_bytes = f->file;
	ms->inactive_file_bytes = f->file / 2;
	ms->active_file_bytes = f->file - f->file / 2;
	ms->file_dirty_bytes = f->dirty;
	return 0;
}

/* Frees clean page cache, as a kernel's reclaim would. */
static int fake_reclaim(void *priv, uint64_t bytes, uint64_t *asked,
			uint64_t *freed)
{
	struct fake *f = fk(priv);
	uint64_t clean = f->file - f->dirty;

	if (clean == 0)
		return -EAGAIN;
	*asked = bytes;
	*freed = bytes < clean ? bytes : clean;
	f->file -= *freed;
	f->usage -= *freed;
	return 0;
}

static uint64_t fake_now_ns(void *priv)
{
	return atomic_load(&fk(priv)->clock_ns);
}

static const struct mri_backend fake_backend = {
	.name = "fake",
	.caps = MRI_CAP_RECLAIM,
	.priv_size = sizeof(struct fake *),
	.open = fake_open,
	.close = fake_close,
	.forget = fake_forget,
	.read_usage = fake_read_usage,
	.read_limits = fake_read_limits,
	.read_memstat = fake_read_memstat,
	.reclaim = fake_reclaim,
	.now_ns = fake_now_ns,
};

static mr_ctx_t *ctx;

static void setup(void)
{
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	mr_ctx_free(ctx);
}

static mr_group_t *open_fake(struct fake *f)
{
	mr_group_t *g = NULL;

	opening = f;
	ck_assert_int_eq(mri_group_open(ctx, "/fake", &fake_backend, &g), 0);
	return g;
}

static struct mr_charge_stats stats(mr_group_t *g)
{
	struct mr_charge_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(mr_group_read_charge_stats(g, &st), 0);
	return st;
}

/* The stocks held in the group's slots. */
static uint64_t stocks(mr_group_t *g)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i <= MR_CHARGE_THREAD_SLOTS; i++)
		sum += atomic_load(&atomic_load(&g->charge.state)->slots[i].stock_bytes);
	return sum;
}

static int charge(mr_group_t *g, uint64_t bytes,
		  struct mr_charge_answer *a)
{
	memset(a, 0xa5, sizeof(*a));
	return mr_group_charge(g, bytes, a);
}

static const struct mr_throttle_curve linear_1s = {
	.size = CURVE_SIZE,
	.kind = MR_THROTTLE_LINEAR,
	.max_delay_ns = 2000000000ULL,
	.scale_ns = 1000000000ULL,
};

/* Each charge of one batch draws one batch: GO up to high (delay exactly
 * 0 at high), DELAY by the curve up to the limit, then RECLAIM while the
 * clean cache covers the shortfall and REFUSE beyond, nothing charged. */
/* Past the limit, anonymous memory counts as reclaimable where the group
 * may swap (get_scan_count(): swap left for it, swappiness not 0), up to
 * the swap free: RECLAIM, where page cache alone would answer REFUSE. */
START_TEST(anon_reclaimable_with_swap)
{
	struct fake f = { .usage = 100 * MiB, .limit = 100 * MiB,
			  .anon = 100 * MiB, .has_swap = true,
			  .swap_free = 2 * MiB, .swappiness = 60 };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 2 * MiB);
	/* More than the swap free: refused. */
	ck_assert_int_eq(charge(g, 2 * MiB + 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_int_eq(mr_group_close(g), 0);
	/* Swappiness 0, or no swap left: page cache only. */
	f.swappiness = 0;
	g = open_fake(&f);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_int_eq(mr_group_close(g), 0);
	f.swappiness = 60;
	f.swap_free = 0;
	g = open_fake(&f);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_int_eq(mr_group_close(g), 0);
	/* The library's reclaim passes swappiness 0: none either. */
	f.swap_free = 2 * MiB;
	g = open_fake(&f);
	atomic_store(&g->reclaim_swappiness, 0);
	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

START_TEST(verdicts_at_the_boundaries)
{
	struct fake f = { .usage = 100 * MiB, .limit = 100 * MiB + 4 * B,
			  .high = 100 * MiB + 2 * B, .has_high = true,
			  .file = 3 * B };
	struct mr_charge_answer a;
	struct mr_charge_stats st;
	uint64_t d3, d4;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_throttle(g, &linear_1s), 0);
	ck_assert_int_eq(mr_throttle_delay_ns(&linear_1s, 100 * MiB + 3 * B,
					      f.high, B, &d3), 0);
	ck_assert_int_eq(mr_throttle_delay_ns(&linear_1s, 100 * MiB + 4 * B,
					      f.high, B, &d4), 0);
	ck_assert_uint_gt(d3, 0);
	ck_assert_uint_gt(d4, d3);

	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(a.delay_ns, 0);
	ck_assert_uint_eq(a.reclaim_bytes, 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO); /* at high */
	ck_assert_uint_eq(a.delay_ns, 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	ck_assert_uint_eq(a.delay_ns, d3);
	ck_assert_uint_eq(a.reclaim_bytes, 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY); /* at limit */
	ck_assert_uint_eq(a.delay_ns, d4);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, B);
	ck_assert_uint_eq(a.delay_ns, 0);
	ck_assert_int_eq(charge(g, 3 * B, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 3 * B);
	ck_assert_int_eq(charge(g, 3 * B + 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_uint_eq(a.reclaim_bytes, 0);
	ck_assert_uint_eq(a.delay_ns, 0);

	st = stats(g);
	ck_assert_uint_eq(st.charges, 7);
	ck_assert_uint_eq(st.go, 2);
	ck_assert_uint_eq(st.delayed, 2);
	ck_assert_uint_eq(st.reclaim, 2);
	ck_assert_uint_eq(st.refused, 1);
	ck_assert_uint_eq(st.delay_ns, d3 + d4);
	ck_assert_uint_eq(st.batches, 4);
	ck_assert_uint_eq(st.charged_bytes, 4 * B);
	/* RECLAIM and REFUSE charged nothing. */
	ck_assert_uint_eq(st.usage_estimate_bytes, f.limit);
	ck_assert_uint_eq(st.limit_bytes, f.limit);
	ck_assert_uint_eq(st.high_bytes, f.high);
	ck_assert_uint_eq(st.reclaimable_bytes, 3 * B);
	ck_assert_uint_eq(stocks(g), 0);

	/* Freed bytes make room again. */
	ck_assert_int_eq(mr_group_uncharge(g, 2 * B), 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	mr_group_close(g);
}
END_TEST

/* Dirty and writeback page cache is not reclaimable at once. */
START_TEST(dirty_cache_does_not_count)
{
	struct fake f = { .usage = 10 * MiB, .limit = 10 * MiB,
			  .file = 4 * B, .dirty = 2 * B };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 2 * B, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 2 * B);
	ck_assert_int_eq(charge(g, 2 * B + 1, &a), MR_CHARGE_REFUSE);
	mr_group_close(g);
}
END_TEST

/* A batch that would pass the limit is not drawn: the charge takes only
 * what the stock lacks (try_charge_memcg() retrying with nr_pages), and
 * then the stock is spent. */
START_TEST(batch_shrinks_to_the_charge_near_the_limit)
{
	struct fake f = { .usage = 10 * MiB, .limit = 10 * MiB + B + 8192 };
	struct mr_charge_answer a;
	struct mr_charge_stats st;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(stocks(g), B - 4096);
	/* Stock of B - 4096; a charge of B needs 4096 more: the batch would
	 * not fit, the 4096 do. */
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(stocks(g), 0);
	st = stats(g);
	ck_assert_uint_eq(st.usage_estimate_bytes, 10 * MiB + B + 4096);
	ck_assert_uint_eq(st.batches, 2);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_REFUSE);
	ck_assert_uint_eq(stats(g).usage_estimate_bytes, f.limit);
	mr_group_close(g);
}
END_TEST

/* Charges served from the stock are GO without a draw, whatever the
 * estimate: the checks are made at batch boundaries only. */
START_TEST(stock_serves_without_checks)
{
	struct fake f = { .usage = 0, .limit = B, .high = 4096,
			  .has_high = true };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);
	int i;

	ck_assert_int_eq(mr_group_set_throttle(g, &linear_1s), 0);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_DELAY);
	for (i = 1; i < 64; i++) {
		ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
		ck_assert_uint_eq(a.delay_ns, 0);
	}
	ck_assert_uint_eq(stats(g).batches, 1);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_REFUSE);
	mr_group_close(g);
}
END_TEST

/* Every curve's delay is the pure function's for the batch drawn. */
START_TEST(curve_values)
{
	static const struct mr_throttle_point pts[] = {
		{ 1000, 1000000 }, { 100000, 50000000 },
	};
	const struct mr_throttle_curve curves[] = {
		{ .size = CURVE_SIZE, .kind = MR_THROTTLE_KERNEL,
		  .max_delay_ns = MR_THROTTLE_KERNEL_MAX_DELAY_NS },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = 1000000000,
		  .scale_ns = 1000000, .doubling_ppm = 10000 },
		{ .size = CURVE_SIZE,
		  .kind = MR_THROTTLE_TABLE, .max_delay_ns = 1000000000,
		  .points = pts, .npoints = 2 },
		linear_1s,
	};
	struct fake f = { .usage = 100 * MiB, .limit = 200 * MiB,
			  .high = 100 * MiB, .has_high = true };
	struct mr_charge_answer a;
	uint64_t want, est;
	size_t i;
	int k;
	mr_group_t *g = open_fake(&f);

	for (i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
		ck_assert_int_eq(mr_group_set_throttle(g, &curves[i]), 0);
		for (k = 0; k < 5; k++) {
			est = stats(g).usage_estimate_bytes + 16 * B;
			ck_assert_int_eq(mr_throttle_delay_ns(&curves[i], est,
					 f.high, 16 * B, &want), 0);
			ck_assert_int_eq(charge(g, 16 * B, &a),
					 want ? MR_CHARGE_DELAY :
					 MR_CHARGE_GO);
			ck_assert_uint_eq(a.delay_ns, want);
		}
	}
	/* NULL: never delay again. */
	ck_assert_int_eq(mr_group_set_throttle(g, NULL), 0);
	ck_assert_int_eq(charge(g, 16 * B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(a.delay_ns, 0);
	mr_group_close(g);
}
END_TEST

/* cgroup v1 has no high: by default nothing is delayed; a kept high
 * throttles, and MR_HIGH_FROM_BACKEND goes back to none. */
START_TEST(v1_kept_high)
{
	struct fake f = { .usage = 100 * MiB, .limit = 200 * MiB,
			  .high = MR_UNLIMITED };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_throttle(g, &linear_1s), 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(stats(g).high_bytes, MR_UNLIMITED);
	ck_assert_int_eq(mr_group_set_throttle_high(g, 50 * MiB), 0);
	ck_assert_uint_eq(stats(g).high_bytes, 50 * MiB);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	ck_assert_uint_gt(a.delay_ns, 0);
	/* Raised above the estimate: delay exactly 0 again. */
	ck_assert_int_eq(mr_group_set_throttle_high(g, 101 * MiB), 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(a.delay_ns, 0);
	ck_assert_int_eq(mr_group_set_throttle_high(g, MR_HIGH_FROM_BACKEND),
			 0);
	ck_assert_uint_eq(stats(g).high_bytes, MR_UNLIMITED);
	ck_assert_int_eq(charge(g, 200 * MiB - 100 * MiB - 3 * B, &a),
			 MR_CHARGE_GO);
	mr_group_close(g);
}
END_TEST

/* By default the backend's high (v2 memory.high) binds; a kept one
 * replaces it, and limits read later move the backend's. */
START_TEST(backend_high_by_default)
{
	struct fake f = { .usage = 100 * MiB, .limit = 200 * MiB,
			  .high = 100 * MiB, .has_high = true };
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_throttle(g, &linear_1s), 0);
	ck_assert_uint_eq(stats(g).high_bytes, 100 * MiB);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	ck_assert_int_eq(mr_group_set_throttle_high(g, MR_UNLIMITED), 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_int_eq(mr_group_set_throttle_high(g, MR_HIGH_FROM_BACKEND),
			 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	/* memory.high raised: a read of the limits publishes it. */
	f.high = 150 * MiB;
	ck_assert_int_eq(mr_group_read_limits(g, &l), 0);
	ck_assert_uint_eq(stats(g).high_bytes, 150 * MiB);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(stats(g).limits_refreshes, 2);
	mr_group_close(g);
}
END_TEST

struct loop_arg {
	mr_group_t *g;
	unsigned n;
	uint64_t bytes;
	uint64_t seed;
	pthread_barrier_t *together; /* NULL, or held at start and end */
	uint64_t charged, uncharged;
	unsigned charges, uncharges;
};

static void *charge_loop(void *p)
{
	struct loop_arg *a = p;
	struct mr_charge_answer ans;
	uint64_t x = a->seed, bytes;
	unsigned i;

	if (a->together)
		pthread_barrier_wait(a->together);
	for (i = 0; i < a->n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		bytes = a->bytes ? a->bytes : 1 + (x >> 33) % (3 * B);
		ck_assert_int_eq(mr_group_charge(a->g, bytes, &ans),
				 MR_CHARGE_GO);
		a->charges++;
		a->charged += bytes;
		if (i % 3 != 2) {
			ck_assert_int_eq(mr_group_uncharge(a->g, bytes), 0);
			a->uncharges++;
			a->uncharged += bytes;
		}
	}
	if (a->together)
		pthread_barrier_wait(a->together);
	return NULL;
}

/* Many batches within one interval read usage at most once; after the
 * interval one read, by one thread, whatever the number charging. */
START_TEST(usage_reads_bounded)
{
	struct fake f = { .usage = 1 * MiB, .limit = MR_UNLIMITED,
			  .clock_ns = 1000 };
	struct loop_arg args[2];
	pthread_t t[2];
	struct mr_charge_answer a;
	struct mr_charge_stats st;
	mr_group_t *g = open_fake(&f);
	int i;

	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	ck_assert_uint_eq(atomic_load(&f.usage_reads), 1);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(atomic_load(&f.usage_reads), 1);
	atomic_store(&f.clock_ns, 1000 + MR_CHARGE_USAGE_REFRESH_NS - 1);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	ck_assert_uint_eq(atomic_load(&f.usage_reads), 1);

	/* The interval passed: the kernel's usage now holds the charges. */
	f.usage = 1 * MiB + 1001 * B;
	atomic_store(&f.clock_ns, 1000 + MR_CHARGE_USAGE_REFRESH_NS);
	for (i = 0; i < 2; i++) {
		args[i] = (struct loop_arg){ .g = g, .n = 20000, .bytes = B };
		ck_assert_int_eq(pthread_create(&t[i], NULL, charge_loop,
						&args[i]), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(atomic_load(&f.usage_reads), 2);
	st = stats(g);
	ck_assert_uint_eq(st.usage_refreshes, 2);
	ck_assert_uint_eq(st.refresh_errors, 0);
	ck_assert_uint_eq(st.usage_age_ns, 0);
	/* Usage read, plus what the threads kept (a third of their charges
	 * are not uncharged), within their stocks. */
	ck_assert_uint_le(st.usage_estimate_bytes,
			  f.usage + 2 * (20000 / 3 + 1) * B);
	ck_assert_uint_ge(st.usage_estimate_bytes + 2 * B,
			  f.usage + 2 * (20000 / 3) * B - 1001 * B);
	mr_group_close(g);
}
END_TEST

/* A failed read keeps the old estimate; a removed cgroup answers -ENOENT
 * with nothing charged. */
START_TEST(usage_read_errors)
{
	struct fake f = { .usage = 1 * MiB, .limit = MR_UNLIMITED };
	struct mr_charge_answer a;
	struct mr_charge_stats st;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	f.usage_err = -EIO;
	atomic_store(&f.clock_ns, MR_CHARGE_USAGE_REFRESH_NS);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_GO);
	st = stats(g);
	ck_assert_uint_eq(st.refresh_errors, 1);
	ck_assert_uint_eq(st.usage_estimate_bytes, 1 * MiB + 2 * B);
	f.usage_err = -ENOENT;
	atomic_store(&f.clock_ns, 2 * MR_CHARGE_USAGE_REFRESH_NS);
	ck_assert_int_eq(charge(g, B, &a), -ENOENT);
	st = stats(g);
	ck_assert_uint_eq(st.refresh_errors, 2);
	ck_assert_uint_eq(st.charges, 2);
	ck_assert_uint_eq(st.usage_estimate_bytes, 1 * MiB + 2 * B);
	mr_group_close(g);
}
END_TEST

/* Charges and uncharges from threads that have exited fold to the exact
 * totals, and the estimate is the usage plus what is charged and still
 * in stocks. */
START_TEST(stocks_fold_exactly)
{
	enum { NT = 8, N = 20000 };
	struct fake f = { .usage = 64 * MiB, .limit = MR_UNLIMITED };
	struct loop_arg args[NT];
	pthread_t t[NT];
	struct mr_charge_stats st;
	uint64_t charged = 0, uncharged = 0, charges = 0, uncharges = 0;
	mr_group_t *g = open_fake(&f);
	int i;

	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	for (i = 0; i < NT; i++) {
		args[i] = (struct loop_arg){ .g = g, .n = N,
					     .seed = (uint64_t)i + 1 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, charge_loop,
						&args[i]), 0);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(t[i], NULL);
		charged += args[i].charged;
		uncharged += args[i].uncharged;
		charges += args[i].charges;
		uncharges += args[i].uncharges;
	}
	st = stats(g);
	ck_assert_uint_eq(st.charges, charges);
	ck_assert_uint_eq(st.go, charges);
	ck_assert_uint_eq(st.uncharges, uncharges);
	ck_assert_uint_eq(st.charged_bytes, charged);
	ck_assert_uint_eq(st.uncharged_bytes, uncharged);
	ck_assert_uint_gt(st.stock_returns, 0);
	ck_assert_uint_eq(st.usage_estimate_bytes + 0,
			  f.usage + charged - uncharged + stocks(g));
	mr_group_close(g);
}
END_TEST

/* More threads than slots: the rest share a slot without a stock, and the
 * counts are still exact. */
START_TEST(shared_slot_beyond_the_slots)
{
	enum { NT = MR_CHARGE_THREAD_SLOTS + 6, N = 300 };
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	struct loop_arg *args = calloc(NT, sizeof(*args));
	pthread_barrier_t together;
	pthread_t t[NT];
	struct mr_charge_stats st;
	uint64_t charged = 0, uncharged = 0;
	mr_group_t *g = open_fake(&f);
	int i;

	ck_assert_ptr_nonnull(args);
	/* Threads alive together, so none takes over another's slot. */
	pthread_barrier_init(&together, NULL, NT);
	for (i = 0; i < NT; i++) {
		args[i] = (struct loop_arg){ .g = g, .n = N,
					     .seed = (uint64_t)i + 7,
					     .together = &together };
		ck_assert_int_eq(pthread_create(&t[i], NULL, charge_loop,
						&args[i]), 0);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(t[i], NULL);
		charged += args[i].charged;
		uncharged += args[i].uncharged;
	}
	st = stats(g);
	ck_assert_uint_eq(st.charges, (uint64_t)NT * N);
	ck_assert_uint_eq(st.charged_bytes, charged);
	ck_assert_uint_eq(st.uncharged_bytes, uncharged);
	ck_assert_uint_eq(atomic_load(&atomic_load(&g->charge.state)->slots[MR_CHARGE_THREAD_SLOTS]
				      .stock_bytes), 0);
	ck_assert_uint_eq(atomic_load(&atomic_load(&g->charge.state)->slots[MR_CHARGE_THREAD_SLOTS]
				      .charges), (NT - MR_CHARGE_THREAD_SLOTS) * N);
	pthread_barrier_destroy(&together);
	ck_assert_uint_eq(st.usage_estimate_bytes,
			  charged - uncharged + stocks(g));
	free(args);
	mr_group_close(g);
}
END_TEST

struct closed_arg {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step;          /* the main thread moves it, the helper follows */
	mr_group_t *g;
	int verdict;
};

static void wait_step(struct closed_arg *c, int step)
{
	pthread_mutex_lock(&c->lock);
	while (c->step != step)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static void set_step(struct closed_arg *c, int step)
{
	pthread_mutex_lock(&c->lock);
	c->step = step;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static void *closed_helper(void *p)
{
	struct closed_arg *c = p;
	struct mr_charge_answer a;

	wait_step(c, 1);
	c->verdict = mr_group_charge(c->g, 4096, &a); /* holds a stock */
	set_step(c, 2);
	wait_step(c, 3);
	c->verdict = mr_group_charge(c->g, 4096, &a); /* the new group */
	set_step(c, 4);
	return NULL;
}

/* A thread holding stock of a group that was closed, charging a new group
 * opened in its place, draws afresh from the new group: the old stock (in
 * freed memory) is never used. Run under valgrind or ASan, a read of the
 * freed slots would show. */
START_TEST(closed_group_stock_untouched)
{
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	struct closed_arg c = { .lock = PTHREAD_MUTEX_INITIALIZER,
				.cond = PTHREAD_COND_INITIALIZER };
	struct mr_charge_stats st;
	mr_group_t *first;
	uint64_t first_key;
	pthread_t t;
	int tries;

	ck_assert_int_eq(pthread_create(&t, NULL, closed_helper, &c), 0);
	c.g = first = open_fake(&f);
	first_key = first->charge.key;
	set_step(&c, 1);
	wait_step(&c, 2);
	ck_assert_int_eq(c.verdict, MR_CHARGE_GO);
	ck_assert_uint_eq(stocks(first), B - 4096);
	mr_group_close(first);
	/* The allocator hands the same block back to a group of the same
	 * size, mostly at once. */
	for (tries = 0;; tries++) {
		c.g = open_fake(&f);
		if (c.g == first || tries == 15)
			break;
		mr_group_close(c.g);
	}
	ck_assert_uint_ne(c.g->charge.key, first_key);
	set_step(&c, 3);
	wait_step(&c, 4);
	pthread_join(t, NULL);
	ck_assert_int_eq(c.verdict, MR_CHARGE_GO);
	st = stats(c.g);
	ck_assert_uint_eq(st.batches, 1);
	ck_assert_uint_eq(st.charges, 1);
	ck_assert_uint_eq(stocks(c.g), B - 4096);
	ck_assert_uint_eq(st.usage_estimate_bytes, B);
	mr_group_close(c.g);
}
END_TEST

/* In a child after fork() every call answers -ECHILD; the counters are
 * still readable. */
START_TEST(fork_child_echild)
{
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	struct mr_charge_answer a;
	struct mr_charge_stats st = { .size = sizeof(st) };
	mr_group_t *g = open_fake(&f);
	int status;
	pid_t pid;

	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		bad |= mr_group_charge(g, 4096, &a) != -ECHILD;
		bad |= mr_group_uncharge(g, 4096) != -ECHILD;
		bad |= mr_group_thp_advise(g, 2 * MiB) != -ECHILD;
		bad |= mr_group_charge_refresh(g) != -ECHILD;
		bad |= mr_group_set_throttle(g, NULL) != -ECHILD;
		bad |= mr_group_set_throttle_high(g, MiB) != -ECHILD;
		bad |= mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0) !=
		       -ECHILD;
		bad |= mr_group_read_charge_stats(g, &st) != 0;
		bad |= st.charges != 1;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
	mr_group_close(g);
}
END_TEST

/* Bad arguments: -EINVAL, and nothing changes. */
START_TEST(bad_arguments)
{
	static const struct mr_throttle_point unordered[] = {
		{ 2000, 10 }, { 1000, 20 },
	};
	const struct mr_throttle_curve bad_table = {
		.size = CURVE_SIZE,
		.kind = MR_THROTTLE_TABLE, .max_delay_ns = 1000000000,
		.points = unordered, .npoints = 2,
	};
	const struct mr_throttle_curve bad_kind = { .size = CURVE_SIZE,
		.kind = 99 };
	const struct mr_throttle_curve bad_exp = {
		.size = CURVE_SIZE,
		.kind = MR_THROTTLE_EXPONENTIAL, .max_delay_ns = 1,
		.doubling_ppm = 0,
	};
	struct fake f = { .usage = 100 * MiB, .limit = 200 * MiB,
			  .high = 100 * MiB, .has_high = true, .file = MiB };
	struct mr_charge_answer a;
	struct mr_charge_stats before, after, small = { .size = 4 };
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_throttle(g, &linear_1s), 0);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	before = stats(g);

	ck_assert_int_eq(mr_group_charge(NULL, 4096, &a), -EINVAL);
	ck_assert_int_eq(mr_group_charge(g, 0, &a), -EINVAL);
	ck_assert_int_eq(mr_group_charge(g, MR_CHARGE_MAX_BYTES + 1, &a),
			 -EINVAL);
	ck_assert_int_eq(mr_group_uncharge(NULL, 4096), -EINVAL);
	ck_assert_int_eq(mr_group_uncharge(g, 0), -EINVAL);
	ck_assert_int_eq(mr_group_uncharge(g, MR_CHARGE_MAX_BYTES + 1),
			 -EINVAL);
	ck_assert_int_eq(mr_group_thp_advise(NULL, MiB), -EINVAL);
	ck_assert_int_eq(mr_group_thp_advise(g, 0), -EINVAL);
	ck_assert_int_eq(mr_group_thp_advise(g, MR_CHARGE_MAX_BYTES + 1),
			 -EINVAL);
	ck_assert_int_eq(mr_group_charge_refresh(NULL), -EINVAL);
	ck_assert_int_eq(mr_group_set_throttle(NULL, &linear_1s), -EINVAL);
	ck_assert_int_eq(mr_group_set_throttle(g, &bad_table), -EINVAL);
	ck_assert_int_eq(mr_group_set_throttle(g, &bad_kind), -EINVAL);
	ck_assert_int_eq(mr_group_set_throttle(g, &bad_exp), -EINVAL);
	ck_assert_int_eq(mr_group_set_throttle_high(NULL, MiB), -EINVAL);
	ck_assert_int_eq(mr_group_set_thp_policy(NULL, MR_THP_FALLBACK, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, -1, 0), -EINVAL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_BUDGET + 1, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_BUDGET, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_CLEAN_CACHE, 5),
			 -EINVAL);
	ck_assert_int_eq(mr_group_read_charge_stats(NULL, &before), -EINVAL);
	ck_assert_int_eq(mr_group_read_charge_stats(g, NULL), -EINVAL);
	ck_assert_int_eq(mr_group_read_charge_stats(g, &small), -EINVAL);

	after = stats(g);
	ck_assert_int_eq(memcmp(&before, &after, sizeof(before)), 0);
	/* The curve and THP policy are those set before. */
	ck_assert_int_eq(charge(g, B, &a), MR_CHARGE_DELAY);
	ck_assert_int_eq(mr_group_thp_advise(g, 100 * MiB),
			 MR_THP_ADVICE_SMALL);
	mr_group_close(g);
}
END_TEST

/* A group the fast path never used holds no fast-path state (the scale
 * budget of docs/PERFORMANCE.md); statistics read as zero; the first
 * uncharge arms it like a charge. */
START_TEST(state_made_on_first_use)
{
	struct fake f = { .usage = 10 * MiB, .limit = 100 * MiB };
	struct mr_charge_stats st;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_ptr_null(atomic_load(&g->charge.state));
	st = stats(g);
	ck_assert_uint_eq(st.charges, 0);
	ck_assert_uint_eq(st.usage_age_ns, MR_UNLIMITED);
	ck_assert_ptr_null(atomic_load(&g->charge.state));
	ck_assert_int_eq(mr_group_uncharge(g, 4096), 0);
	ck_assert_ptr_nonnull(atomic_load(&g->charge.state));
	st = stats(g);
	ck_assert_uint_eq(st.uncharges, 1);
	ck_assert_uint_eq(st.usage_estimate_bytes, 10 * MiB);
	mr_group_close(g);
}
END_TEST

/* Regression (a fresh user's trial, stop 10): memory charged and not yet
 * touched is not in the kernel's usage, and a usage refresh used to forget
 * it: two 30 MiB charges 20 ms apart into a 64 MiB group both went, and the
 * program was OOM-killed when it touched them. The floor keeps them. */
START_TEST(untouched_charges_not_forgotten)
{
	struct fake f = { .usage = 10 * MiB, .limit = 64 * MiB };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 30 * MiB, &a), MR_CHARGE_GO);
	atomic_fetch_add(&f.clock_ns, 2 * MR_CHARGE_USAGE_REFRESH_NS);
	/* Usage read again: still 10 MiB, nothing was touched. */
	ck_assert_int_eq(charge(g, 30 * MiB, &a), MR_CHARGE_REFUSE);
	ck_assert_uint_ge(stats(g).usage_estimate_bytes, 40 * MiB);
	/* Once uncharged, the room is back. */
	ck_assert_int_eq(mr_group_uncharge(g, 30 * MiB), 0);
	atomic_fetch_add(&f.clock_ns, 2 * MR_CHARGE_USAGE_REFRESH_NS);
	ck_assert_int_eq(charge(g, 30 * MiB, &a), MR_CHARGE_GO);
	mr_group_close(g);
}
END_TEST

/* Regression (the same trial): RECLAIM, then mr_group_reclaim() of the
 * shortfall, then the same charge again goes, with no explicit refresh:
 * the reclaim publishes the new usage and cache to the fast path. */
START_TEST(reclaim_then_charge_again)
{
	struct fake f = { .usage = 60 * MiB, .limit = 64 * MiB,
			  .file = 40 * MiB };
	struct mr_charge_answer a;
	uint64_t freed = 0;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 8 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_ge(a.reclaim_bytes, 4 * MiB);
	ck_assert_int_eq(mr_group_reclaim(g, a.reclaim_bytes, 0, &freed), 0);
	ck_assert_uint_ge(freed, a.reclaim_bytes);
	ck_assert_int_eq(charge(g, 8 * MiB, &a), MR_CHARGE_GO);
	mr_group_close(g);
}
END_TEST

/* A RECLAIM verdict adds its reclaim_bytes to the group's shrink
 * request when the program opened one (mr_group_shrink_fd()), without
 * waiting for an answer; GO and REFUSE ask nothing. */
START_TEST(reclaim_verdict_asks_the_program)
{
	struct fake f = { .usage = 60 * MiB, .limit = 64 * MiB,
			  .file = 40 * MiB };
	struct mr_shrink_stats st = { .size = sizeof(st) };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);
	uint64_t asked;
	int fd;

	fd = mr_group_shrink_fd(g, MR_SHRINK_GRACE_MAX_NS);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(charge(g, 1 * MiB, &a), MR_CHARGE_GO);
	ck_assert_int_eq(read(fd, &asked, sizeof(asked)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(charge(g, 8 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_gt(a.reclaim_bytes, 0);
	ck_assert_int_eq(read(fd, &asked, sizeof(asked)), sizeof(asked));
	ck_assert_uint_eq(asked, a.reclaim_bytes);
	ck_assert_int_eq(mr_group_read_shrink_stats(g, &st), 0);
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.requested_bytes, a.reclaim_bytes);
	ck_assert_uint_eq(st.answered + st.timeouts + st.avoided, 0);
	/* The program did not read its requests, and the counter is full:
	 * the write fails (EAGAIN), the request is pending all the same,
	 * and the charge, as from a malloc, leaves errno as it was. */
	asked = UINT64_MAX - 1;
	ck_assert_int_eq(write(fd, &asked, sizeof(asked)), sizeof(asked));
	errno = EXDEV;
	ck_assert_int_eq(charge(g, 8 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_int_eq(mr_group_read_shrink_stats(g, &st), 0);
	ck_assert_uint_eq(st.requests, 2);
	mr_group_close(g);
}
END_TEST

/* A RECLAIM verdict asks what mr_group_thp_advise() takes as its
 * shortfall: enough for the charge to fit with usage at limit - margin.
 * 2 MiB at 63 of 64 MiB with a 4 MiB margin: 65 - 60 = 5 MiB (not the
 * 1 MiB over the limit); the advice's CLEAN_CACHE policy reclaims for a
 * 2 MiB page exactly when 5 MiB of clean cache are there. */
START_TEST(reclaim_sized_with_the_margin_as_thp_advice)
{
	struct fake f = { .usage = 63 * MiB, .limit = 64 * MiB,
			  .file = 5 * MiB };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 1 * MiB); /* no margin */
	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 5 * MiB);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_CLEAN_CACHE, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 2 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	mr_group_close(g);

	/* One byte less of clean cache: the advice falls back, the charge
	 * (1 MiB over the limit) is still RECLAIM, of what is there. */
	f.file = 5 * MiB - 1;
	g = open_fake(&f);
	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_CLEAN_CACHE, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 2 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 5 * MiB - 1);
	mr_group_close(g);

	/* A margin in ppm of the limit (1/16: 4 MiB) counts the same. */
	f.file = 64 * MiB;
	g = open_fake(&f);
	ck_assert_int_eq(mr_group_set_margin(g, 0, 62500, 0), 0);
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 5 * MiB);
	ck_assert_int_eq(charge(g, 4 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 7 * MiB);
	mr_group_close(g);
}
END_TEST

/* The margin's part of a RECLAIM request is bounded by what the snapshot
 * counts reclaimable (a request past it would make memory.reclaim retry
 * and fail with -EAGAIN); the part over the limit is always asked. 2 MiB
 * at 63 of 64 MiB with a 4 MiB margin: 1 MiB reclaimable asks 1 MiB, not
 * 5 MiB; 3 MiB (cache and swappable anon together) asks 3 MiB. */
START_TEST(reclaim_bounded_by_reclaimable)
{
	struct fake f = { .usage = 63 * MiB, .limit = 64 * MiB,
			  .file = 1 * MiB };
	struct mr_charge_answer a;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 1 * MiB);
	mr_group_close(g);

	f.anon = 10 * MiB;
	f.has_swap = true;
	f.swap_free = 2 * MiB;
	f.swappiness = 60;
	g = open_fake(&f);
	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_RECLAIM);
	ck_assert_uint_eq(a.reclaim_bytes, 3 * MiB);
	mr_group_close(g);
}
END_TEST

/* Between limit - margin and the limit a charge is GO with nothing
 * reclaimed, so the advice carries its shortfall for the caller to
 * reclaim first: 2 MiB at 61 of 64 MiB with a 4 MiB margin is 3 MiB
 * short (63 - 60) though the charge would be GO. */
START_TEST(thp_advice_reclaim_sized_below_the_limit)
{
	struct fake f = { .usage = 61 * MiB, .limit = 64 * MiB,
			  .file = 8 * MiB };
	struct mr_charge_answer a;
	uint64_t shortfall = 1;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise_reclaim(g, 2 * MiB, &shortfall),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_uint_eq(shortfall, 3 * MiB);
	ck_assert_int_eq(mr_group_thp_advise_reclaim(g, 2 * MiB, NULL),
			 -EINVAL);
	/* Room for it: HUGE, nothing to reclaim. */
	f.usage = 50 * MiB;
	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	ck_assert_int_eq(mr_group_thp_advise_reclaim(g, 2 * MiB, &shortfall),
			 MR_THP_ADVICE_HUGE);
	ck_assert_uint_eq(shortfall, 0);
	/* Small pages advised: nothing either. */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	f.usage = 61 * MiB;
	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	shortfall = 1;
	ck_assert_int_eq(mr_group_thp_advise_reclaim(g, 2 * MiB, &shortfall),
			 MR_THP_ADVICE_SMALL);
	ck_assert_uint_eq(shortfall, 0);
	/* The charge itself is GO there: the advice is what reclaims. */
	ck_assert_int_eq(charge(g, 2 * MiB, &a), MR_CHARGE_GO);
	mr_group_close(g);
}
END_TEST

/* Every small-page answer of mr_group_thp_advise() is a THP fallback,
 * whatever the policy; HUGE and RECLAIM_THEN_HUGE are not. */
START_TEST(thp_fallbacks_counted)
{
	struct fake f = { .usage = 90 * MiB, .limit = 100 * MiB,
			  .file = 3 * MiB };
	mr_group_t *g = open_fake(&f);

	ck_assert_uint_eq(stats(g).thp_fallbacks, 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 10 * MiB),
			 MR_THP_ADVICE_HUGE);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_uint_eq(stats(g).thp_fallbacks, 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 102 * MiB),
			 MR_THP_ADVICE_SMALL); /* larger than the limit */
	ck_assert_uint_eq(stats(g).thp_fallbacks, 1);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_CLEAN_CACHE, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 14 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_uint_eq(stats(g).thp_fallbacks, 3);
	/* Errors count nothing. */
	ck_assert_int_eq(mr_group_thp_advise(g, 0), -EINVAL);
	ck_assert_uint_eq(stats(g).thp_fallbacks, 3);
	mr_group_close(g);
}
END_TEST

/* A short struct gets its fields only. */
START_TEST(stats_sized_by_caller)
{
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	struct mr_charge_answer a;
	struct mr_charge_stats st;
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(charge(g, 4096, &a), MR_CHARGE_GO);
	memset(&st, 0xff, sizeof(st));
	st.size = offsetof(struct mr_charge_stats, go);
	ck_assert_int_eq(mr_group_read_charge_stats(g, &st), 0);
	ck_assert_uint_eq(st.charges, 1);
	ck_assert_uint_eq(st.uncharges, 0);
	ck_assert_uint_eq(st.go, UINT64_MAX);
	/* A caller built before thp_fallbacks was appended. */
	ck_assert_int_eq(mr_group_thp_advise(g, 2 * MiB), MR_THP_ADVICE_HUGE);
	memset(&st, 0xff, sizeof(st));
	st.size = offsetof(struct mr_charge_stats, thp_fallbacks);
	ck_assert_int_eq(mr_group_read_charge_stats(g, &st), 0);
	ck_assert_uint_eq(st.charges, 1);
	ck_assert_uint_eq(st.reclaimable_bytes, 0);
	ck_assert_uint_eq(st.thp_fallbacks, UINT64_MAX);
	/* A caller built before swappable_bytes was appended. */
	memset(&st, 0xff, sizeof(st));
	st.size = offsetof(struct mr_charge_stats, swappable_bytes);
	ck_assert_int_eq(mr_group_read_charge_stats(g, &st), 0);
	ck_assert_uint_eq(st.thp_fallbacks, 0);
	ck_assert_uint_eq(st.swappable_bytes, UINT64_MAX);
	mr_group_close(g);
}
END_TEST

/* swappable_bytes is the anonymous memory counted reclaimable by swap,
 * at most the swap left; reclaimable_bytes stays the clean cache. */
START_TEST(stats_swappable)
{
	struct fake f = { .usage = 100 * MiB, .limit = 100 * MiB,
			  .file = 1 * MiB, .anon = 50 * MiB,
			  .has_swap = true, .swap_free = 2 * MiB,
			  .swappiness = 60 };
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	ck_assert_uint_eq(stats(g).reclaimable_bytes, 1 * MiB);
	ck_assert_uint_eq(stats(g).swappable_bytes, 2 * MiB);
	mr_group_close(g);
	f.swappiness = 0;
	g = open_fake(&f);
	ck_assert_int_eq(mr_group_charge_refresh(g), 0);
	ck_assert_uint_eq(stats(g).swappable_bytes, 0);
	mr_group_close(g);
}
END_TEST

/* THP advice per policy, with the shortfall below and above the clean
 * cache and the reclaim budget. */
START_TEST(thp_advice_per_policy)
{
	struct fake f = { .usage = 90 * MiB, .limit = 100 * MiB,
			  .file = 3 * MiB };
	mr_group_t *g = open_fake(&f);
	int p;

	/* Room for 10 MiB: huge whatever the policy (a 1-byte region is
	 * one 2 MiB page). */
	for (p = MR_THP_RECLAIM_FULL; p <= MR_THP_BUDGET; p++) {
		ck_assert_int_eq(mr_group_set_thp_policy(g, p,
				 p == MR_THP_BUDGET ? 1000000 : 0), 0);
		ck_assert_int_eq(mr_group_thp_advise(g, 1),
				 MR_THP_ADVICE_HUGE);
		ck_assert_int_eq(mr_group_thp_advise(g, 10 * MiB),
				 MR_THP_ADVICE_HUGE);
	}
	/* 12 MiB: a shortfall of 2 MiB, 10 MiB - 1 rounds up to 10 MiB. */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_RECLAIM_FULL, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(mr_group_thp_advise(g, 10 * MiB - 1),
			 MR_THP_ADVICE_HUGE);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_CLEAN_CACHE, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(mr_group_thp_advise(g, 14 * MiB),
			 MR_THP_ADVICE_SMALL); /* 4 MiB > 3 MiB clean */
	/* A region larger than the limit: small pages. */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_RECLAIM_FULL, 0),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 102 * MiB),
			 MR_THP_ADVICE_SMALL);

	/* BUDGET: nothing measured yet, no budget in bytes. */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_BUDGET, 1000000),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_SMALL);
	/* 1 GiB freed in 1 s of reclaim: 1 ms buys 1 MiB; 3 ms 3 MiB. */
	atomic_store(&g->stats[MR_REASON_REQUESTED].freed_bytes, 1024 * MiB);
	atomic_store(&g->stats[MR_REASON_REQUESTED].elapsed_ns, 1000000000);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_SMALL); /* 2 MiB > 1 MiB */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_BUDGET, 3000000),
			 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 12 * MiB),
			 MR_THP_ADVICE_RECLAIM_THEN_HUGE);
	ck_assert_int_eq(mr_group_thp_advise(g, 14 * MiB),
			 MR_THP_ADVICE_SMALL);
	/* Charges move the estimate the advice judges. */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 10 * MiB),
			 MR_THP_ADVICE_HUGE);
	ck_assert_int_eq(mr_group_charge(g, 2 * MiB, NULL), MR_CHARGE_GO);
	ck_assert_int_eq(mr_group_thp_advise(g, 10 * MiB),
			 MR_THP_ADVICE_SMALL);
	mr_group_close(g);
}
END_TEST

/* The margin set on the group counts: the advice keeps below
 * limit - margin. */
START_TEST(thp_advice_keeps_the_margin)
{
	struct fake f = { .usage = 90 * MiB, .limit = 100 * MiB };
	mr_group_t *g = open_fake(&f);

	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 8 * MiB), MR_THP_ADVICE_HUGE);
	ck_assert_int_eq(mr_group_set_margin(g, 4 * MiB, 0, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 8 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(mr_group_thp_advise(g, 6 * MiB), MR_THP_ADVICE_HUGE);
	mr_group_close(g);

	/* Set before the group is armed: arming keeps it. */
	g = open_fake(&f);
	ck_assert_int_eq(mr_group_set_margin(g, 0, 40000, 0), 0); /* 4 % */
	ck_assert_int_eq(mr_group_set_thp_policy(g, MR_THP_FALLBACK, 0), 0);
	ck_assert_int_eq(mr_group_thp_advise(g, 8 * MiB),
			 MR_THP_ADVICE_SMALL);
	ck_assert_int_eq(mr_group_thp_advise(g, 6 * MiB), MR_THP_ADVICE_HUGE);
	mr_group_close(g);
}
END_TEST

/* The first call of a thread that never called liburcu (nor anything
 * else of the library) arms the group and charges. */
static void *fresh_thread(void *p)
{
	struct mr_charge_answer a;
	intptr_t r;

	r = mr_group_charge(p, 4096, &a);
	if (r == MR_CHARGE_GO)
		r = mr_group_thp_advise(p, 2 * MiB);
	if (r == MR_THP_ADVICE_HUGE)
		r = mr_group_uncharge(p, 4096);
	return (void *)r;
}

START_TEST(unregistered_thread)
{
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	mr_group_t *g = open_fake(&f);
	pthread_t t;
	void *ret;
	int i;

	/* The first arms the group, the next find it armed. */
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_create(&t, NULL, fresh_thread, g), 0);
		ck_assert_int_eq(pthread_join(t, &ret), 0);
		ck_assert_int_eq((intptr_t)ret, 0);
	}
	ck_assert_uint_eq(stats(g).charges, 3);
	ck_assert_uint_eq(stats(g).uncharges, 3);
	mr_group_close(g);
}
END_TEST

static mr_group_t *sig_group;
static volatile sig_atomic_t sig_bad, sig_calls;

static void on_signal(int sig)
{
	struct mr_charge_answer a;

	(void)sig;
	if (mr_group_charge(sig_group, 3 * 4096, &a) != MR_CHARGE_GO)
		sig_bad = 1;
	if (mr_group_uncharge(sig_group, 4096) != 0)
		sig_bad = 1;
	sig_calls++;
}

struct kill_arg {
	pthread_t target;
	atomic_bool stop;
	unsigned sent;
};

static void *signaller(void *p)
{
	struct kill_arg *k = p;

	/* Paced: back to back, each signal would be delivered on the return
	 * from the previous handler, at the same point of the loop. */
	const struct timespec pace = { .tv_nsec = 20000 };

	while (!atomic_load(&k->stop)) {
		if (pthread_kill(k->target, SIGUSR1) == 0)
			k->sent++;
		nanosleep(&pace, NULL);
	}
	return NULL;
}

/* Charges from a signal handler that interrupts charges of the same
 * thread: every one counted, and the estimate still the usage plus what
 * is charged plus the stocks. */
START_TEST(charges_from_a_signal_handler)
{
	struct fake f = { .usage = 0, .limit = MR_UNLIMITED };
	struct sigaction sa = { .sa_handler = on_signal };
	struct kill_arg k = { .target = pthread_self() };
	struct mr_charge_stats st;
	pthread_t t;
	uint64_t mine = 0, i, bytes;
	struct mr_charge_answer a;

	sig_group = open_fake(&f);
	ck_assert_int_eq(mr_group_charge_refresh(sig_group), 0);
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, signaller, &k), 0);
	/* Until handlers have run, some inside a call (on the shared slot),
	 * or long enough. */
	for (i = 0; i < 3000000 &&
	     (i < 200000 || sig_calls < 500 ||
	      !atomic_load(&atomic_load(&sig_group->charge.state)->slots[MR_CHARGE_THREAD_SLOTS]
			   .charges)); i++) {
		bytes = 4096 * (1 + i % 80);
		ck_assert_int_eq(mr_group_charge(sig_group, bytes, &a),
				 MR_CHARGE_GO);
		mine += bytes;
		if (i % 2) {
			ck_assert_int_eq(mr_group_uncharge(sig_group, bytes),
					 0);
			mine -= bytes;
		}
	}
	atomic_store(&k.stop, true);
	pthread_join(t, NULL);
	signal(SIGUSR1, SIG_IGN);
	ck_assert_int_eq(sig_bad, 0);
	ck_assert_uint_gt(sig_calls, 0);
	st = stats(sig_group);
	ck_assert_uint_eq(st.charges, i + (uint64_t)sig_calls);
	ck_assert_uint_eq(st.usage_estimate_bytes,
			  mine + 2 * 4096 * (uint64_t)sig_calls +
			  stocks(sig_group));
	mr_group_close(sig_group);
}
END_TEST

static Suite *charge_suite(void)
{
	Suite *s = suite_create("charge");
	TCase *tc;

	tc = tcase_create("verdicts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, verdicts_at_the_boundaries);
	tcase_add_test(tc, anon_reclaimable_with_swap);
	tcase_add_test(tc, dirty_cache_does_not_count);
	tcase_add_test(tc, batch_shrinks_to_the_charge_near_the_limit);
	tcase_add_test(tc, stock_serves_without_checks);
	tcase_add_test(tc, curve_values);
	tcase_add_test(tc, v1_kept_high);
	tcase_add_test(tc, backend_high_by_default);
	suite_add_tcase(s, tc);

	tc = tcase_create("refresh");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, usage_reads_bounded);
	tcase_add_test(tc, usage_read_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stocks_fold_exactly);
	tcase_add_test(tc, shared_slot_beyond_the_slots);
	tcase_add_test(tc, closed_group_stock_untouched);
	tcase_add_test(tc, fork_child_echild);
	tcase_add_test(tc, unregistered_thread);
	tcase_add_test(tc, charges_from_a_signal_handler);
	suite_add_tcase(s, tc);

	tc = tcase_create("arguments");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, stats_sized_by_caller);
	tcase_add_test(tc, stats_swappable);
	tcase_add_test(tc, state_made_on_first_use);
	tcase_add_test(tc, untouched_charges_not_forgotten);
	tcase_add_test(tc, reclaim_then_charge_again);
	tcase_add_test(tc, reclaim_verdict_asks_the_program);
	tcase_add_test(tc, reclaim_sized_with_the_margin_as_thp_advice);
	tcase_add_test(tc, reclaim_bounded_by_reclaimable);
	tcase_add_test(tc, thp_advice_reclaim_sized_below_the_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("thp");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, thp_advice_per_policy);
	tcase_add_test(tc, thp_advice_keeps_the_margin);
	tcase_add_test(tc, thp_fallbacks_counted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(charge_suite());
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
