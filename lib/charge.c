/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocator fast path: charges served from per-thread stocks drawn in
 * batches from the group's estimate, as mm/memcontrol.c serves charges from
 * its per-CPU stock (consume_stock(), refill_stock(), try_charge_memcg()),
 * with the limit and high checks made only when a batch is drawn.
 *
 * Nothing here allocates, maps memory, or takes a lock once the group is
 * armed: a thread finds its slot through an initial-exec TLS cache keyed by
 * the group's never-reused key, counts in it with plain stores, and reads
 * the policy from a latch. A call made while the same thread is inside
 * another (a signal handler) uses the shared slot, which has no stock.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "charge.h"
#include "group.h"
#include "policy.h"
#include "swap.h"

#define MRI_HUGE_PAGE_BYTES (2ULL << 20)
#define MRI_TLS_ENTRIES 4
#define MRI_TLS __thread __attribute__((tls_model("initial-exec")))

/* Keys of groups, process-wide; 0 marks an empty TLS entry. */
static _Atomic uint64_t next_key = 1;

struct tls_entry {
	uint64_t key;
	struct mri_charge_slot *slot;
};

/* The thread's cache of (group key, slot); entries of closed groups are
 * never matched again, so their slot pointers are never followed. */
static MRI_TLS struct tls_entry tls_cache[MRI_TLS_ENTRIES];
static MRI_TLS unsigned tls_victim;
/* Set while the thread is inside a call: a signal handler's call then
 * keeps off the thread's slot and cache. */
static MRI_TLS volatile sig_atomic_t tls_busy;
/* Its address is the thread's token in slot owners: unique among live
 * threads, and a thread that reuses a dead one's TLS takes over its slots
 * (the counts stay; the stock is the new owner's). */
static MRI_TLS char tls_token;

static const struct mri_charge_policy default_policy = {
	.kind = MR_THROTTLE_NONE,
	.high_bytes = MR_HIGH_FROM_BACKEND,
	.thp_policy = MR_THP_RECLAIM_FULL,
};

/* ---------------------------------------------------------------- latch */

static void latch_copy_in(struct mri_charge_policy *dst,
			  const struct mri_charge_policy *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	size_t i;

	for (i = 0; i < sizeof(*src) / sizeof(uint64_t); i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

/* raw_write_seqcount_latch(), twice. Caller holds the group's
 * mri_charge.lock. */
static void latch_write(struct mri_charge_state *st)
{
	atomic_fetch_add_explicit(&st->latch_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	latch_copy_in(&st->latch[0], &st->policy);
	atomic_fetch_add_explicit(&st->latch_seq, 1, memory_order_release);
	atomic_thread_fence(memory_order_release);
	latch_copy_in(&st->latch[1], &st->policy);
}

/* The group's state, or NULL before the first arming or setter. */
static inline struct mri_charge_state *state_of(struct mri_charge *c)
{
	return atomic_load_explicit(&c->state, memory_order_acquire);
}

/* Copies the words of the policy up to the used points; retries while the
 * copy it read was being rewritten (never in a handler that interrupted
 * the writer: the other copy is whole then). */
void mri_charge_policy_read(struct mri_charge *c,
			    struct mri_charge_policy *out)
{
	const size_t head = offsetof(struct mri_charge_policy, points) /
			    sizeof(uint64_t);
	struct mri_charge_state *st = state_of(c);
	uint64_t seq, *d = (uint64_t *)out;
	const uint64_t *s;
	size_t i, n;

	if (!st) {
		*out = default_policy;
		return;
	}
	do {
		seq = atomic_load_explicit(&st->latch_seq,
					   memory_order_acquire);
		s = (const uint64_t *)&st->latch[seq & 1];
		for (i = 0; i < head; i++)
			d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
		if (out->npoints > MR_THROTTLE_MAX_POINTS)
			out->npoints = MR_THROTTLE_MAX_POINTS; /* torn */
		n = head + 2 * out->npoints;
		for (; i < n; i++)
			d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_acquire);
	} while (atomic_load_explicit(&st->latch_seq,
				      memory_order_relaxed) != seq);
}

static void policy_curve(const struct mri_charge_policy *p,
			 struct mr_throttle_curve *curve)
{
	curve->kind = (int)p->kind;
	curve->max_delay_ns = p->max_delay_ns;
	curve->scale_ns = p->scale_ns;
	curve->doubling_ppm = p->doubling_ppm;
	curve->points = p->points;
	curve->npoints = (size_t)p->npoints;
}

/* The margin the policy keeps below a binding limit (not MR_UNLIMITED):
 * what mr_group_thp_advise() keeps free and a RECLAIM verdict reclaims
 * down to. */
static uint64_t policy_margin_bytes(const struct mri_charge_policy *p,
				    uint64_t limit_bytes)
{
	const struct mri_policy margin = {
		.margin_bytes = p->margin_bytes,
		.margin_ppm = (uint32_t)p->margin_ppm,
	};

	return mri_margin_bytes(&margin, limit_bytes);
}

/* ---------------------------------------------------------------- state */

int mri_charge_init(struct mri_charge *c)
{
	pthread_mutex_init(&c->lock, NULL);
	atomic_flag_clear(&c->usage_claim);
	c->key = atomic_fetch_add(&next_key, 1);
	atomic_init(&c->limit_bytes, MR_UNLIMITED);
	atomic_init(&c->backend_high_bytes, MR_UNLIMITED);
	atomic_init(&c->state, NULL);
	return 0;
}

void mri_charge_fini(struct mri_charge *c)
{
	free(atomic_load(&c->state));
	atomic_store(&c->state, NULL);
	pthread_mutex_destroy(&c->lock);
}

/* Makes the group's state if it has none: the default policy with the
 * group's margin, free slots. Caller holds c->lock. Returns it, or NULL
 * (-ENOMEM). */
static struct mri_charge_state *state_make(struct mr_group *g)
{
	struct mri_charge *c = &g->charge;
	struct mri_charge_state *st = state_of(c);
	struct mri_policy gp;
	size_t size, i;

	if (st)
		return st;
	/* aligned_alloc() wants a size that is a multiple of the alignment. */
	size = (sizeof(*st) + _Alignof(struct mri_charge_slot) - 1) &
	       ~(_Alignof(struct mri_charge_slot) - 1);
	st = aligned_alloc(_Alignof(struct mri_charge_slot), size);
	if (!st)
		return NULL;
	memset(st, 0, size);
	for (i = 0; i <= MR_CHARGE_THREAD_SLOTS; i++)
		atomic_init(&st->slots[i].owner, 0);
	st->policy = default_policy;
	/* Margin changes from now on reach the latch through
	 * mri_charge_note_margin(), which takes c->lock too. */
	mri_group_policy(g, &gp);
	st->policy.margin_bytes = gp.margin_bytes;
	st->policy.margin_ppm = gp.margin_ppm;
	latch_write(st);
	atomic_store_explicit(&c->state, st, memory_order_release);
	return st;
}

static struct mri_charge_slot *shared_slot(struct mri_charge *c)
{
	return &state_of(c)->slots[MR_CHARGE_THREAD_SLOTS];
}

/* The calling thread's slot when the TLS cache misses: found among the
 * group's slots by token, else claimed; the shared one when all are taken.
 * Not called from a nested call (tls_busy), so the cache is only ever
 * written by one call at a time. */
static struct mri_charge_slot *find_slot(struct mri_charge *c)
{
	uintptr_t token = (uintptr_t)&tls_token, free_owner;
	struct mri_charge_slot *slots = state_of(c)->slots, *s = NULL;
	unsigned i;

	for (i = 0; i < MR_CHARGE_THREAD_SLOTS && !s; i++) {
		if (atomic_load_explicit(&slots[i].owner,
					 memory_order_relaxed) == token)
			s = &slots[i];
	}
	for (i = 0; i < MR_CHARGE_THREAD_SLOTS && !s; i++) {
		free_owner = 0;
		if (atomic_compare_exchange_strong(&slots[i].owner,
						   &free_owner, token))
			s = &slots[i];
	}
	if (!s)
		return shared_slot(c);
	i = tls_victim++ % MRI_TLS_ENTRIES;
	tls_cache[i].key = c->key;
	tls_cache[i].slot = s;
	return s;
}

/* The calling thread's slot: from the TLS cache, inline (a thread charging
 * one group hits its first entry), else find_slot(). */
static inline struct mri_charge_slot *thread_slot(struct mri_charge *c)
{
	unsigned i;

	for (i = 0; i < MRI_TLS_ENTRIES; i++) {
		if (__builtin_expect(tls_cache[i].key == c->key, 1))
			return tls_cache[i].slot;
	}
	return find_slot(c);
}

/* Adds to a counter of a slot: the owner's with a load and a store, the
 * shared one with a read-modify-write. */
static inline void slot_add(_Atomic uint64_t *ctr, uint64_t v, bool shared)
{
	if (shared)
		atomic_fetch_add_explicit(ctr, v, memory_order_relaxed);
	else
		atomic_store_explicit(ctr, atomic_load_explicit(
				      ctr, memory_order_relaxed) + v,
				      memory_order_relaxed);
}

/* value + delta, clamped at 0 and at UINT64_MAX. */
static uint64_t add_signed(uint64_t value, int64_t delta)
{
	if (delta < 0)
		return (uint64_t)-delta > value ? 0 : value - (uint64_t)-delta;
	return value > UINT64_MAX - (uint64_t)delta ? UINT64_MAX :
	       value + (uint64_t)delta;
}

/* The estimate: the usage read plus what was drawn since, and never less
 * than the floor (struct mri_charge: base_bytes + live_bytes). */
static uint64_t estimate(struct mri_charge *c, int64_t drawn, int64_t live)
{
	uint64_t est = add_signed(atomic_load_explicit(&c->usage_bytes,
						       memory_order_relaxed),
				  drawn);
	uint64_t floor = add_signed(atomic_load_explicit(&c->base_bytes,
							 memory_order_relaxed),
				    live);

	return est > floor ? est : floor;
}

static uint64_t estimate_now(struct mri_charge *c)
{
	return estimate(c, atomic_load_explicit(&c->drawn_bytes,
						memory_order_relaxed),
			atomic_load_explicit(&c->live_bytes,
					     memory_order_relaxed));
}

/* The clean page cache of a memory.stat: what reclaim frees without swap
 * or writeback. */
static uint64_t clean_cache_bytes(const struct mr_memstat *ms)
{
	const uint64_t lru = (1ULL << MR_MEMSTAT_INACTIVE_FILE) |
			     (1ULL << MR_MEMSTAT_ACTIVE_FILE);
	uint64_t file, busy;

	file = (ms->present & lru) == lru ?
	       ms->inactive_file_bytes + ms->active_file_bytes :
	       ms->file_bytes;
	busy = ms->file_dirty_bytes + ms->file_writeback_bytes;
	return file > busy ? file - busy : 0;
}

void mri_charge_note_limits(struct mr_group *g, const struct mr_limits *l)
{
	struct mri_charge *c = &g->charge;

	atomic_store(&c->limit_bytes, l->limit_bytes);
	atomic_store(&c->backend_high_bytes,
		     (l->present & MR_LIMITS_HAS_HIGH) ? l->high_bytes :
		     MR_UNLIMITED);
	atomic_store(&c->limits_ns, mri_group_now_ns(g));
	atomic_fetch_add(&c->limits_refreshes, 1);
}

void mri_charge_note_margin(struct mr_group *g, const struct mri_policy *p)
{
	struct mri_charge *c = &g->charge;
	struct mri_charge_state *st;

	pthread_mutex_lock(&c->lock);
	st = state_of(c);
	if (st) { /* else state_make() copies the margin when it runs */
		st->policy.margin_bytes = p->margin_bytes;
		st->policy.margin_ppm = p->margin_ppm;
		latch_write(st);
	}
	pthread_mutex_unlock(&c->lock);
}

/* Reads usage into the estimate, keeping what was drawn during the read.
 * Caller holds c->usage_claim. Returns the backend's answer. */
static int read_usage_claimed(struct mr_group *g)
{
	struct mri_charge *c = &g->charge;
	int64_t drawn = atomic_load(&c->drawn_bytes);
	uint64_t usage;
	int r;

	r = g->be->read_usage(g->priv, &usage);
	atomic_fetch_add_explicit(&c->usage_refreshes, 1,
				  memory_order_relaxed);
	/* A failed read waits for the next interval too. */
	atomic_store(&c->usage_ns, mri_group_now_ns(g));
	if (r < 0) {
		atomic_fetch_add_explicit(&c->refresh_errors, 1,
					  memory_order_relaxed);
		return r;
	}
	atomic_store(&c->usage_bytes, usage);
	atomic_fetch_sub(&c->drawn_bytes, drawn);
	return 0;
}

/* Reads limits, memory.stat and usage and publishes them; arms. May wait:
 * for a v1 reclaim step (read_limits) and for a charge reading usage.
 * With arming, returns at once if another thread armed the group first
 * (a refresh resets the estimate to the usage read). */
static int refresh(struct mr_group *g, bool arming)
{
	struct mri_charge *c = &g->charge;
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat ms = { .size = sizeof(ms) };
	int r;

	r = g->be->read_limits(g->priv, &l);
	if (r == 0)
		r = g->be->read_memstat(g->priv, &ms);
	if (r < 0)
		return r;
	pthread_mutex_lock(&c->lock);
	if (arming && atomic_load(&c->armed)) {
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	if (!state_make(g)) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	while (atomic_flag_test_and_set(&c->usage_claim))
		sched_yield();
	r = read_usage_claimed(g);
	atomic_flag_clear(&c->usage_claim);
	if (r == 0) {
		uint64_t usage = atomic_load(&c->usage_bytes);
		/* What reclaim can free: the clean page cache, and the
		 * anonymous memory the group may swap out (lib/swap.h). */
		uint64_t clean = clean_cache_bytes(&ms);
		uint64_t swappable = mri_swap_anon_reclaimable(&l, &ms,
			atomic_load(&g->reclaim_swappiness));
		uint64_t keep = clean + swappable;
		int64_t live = atomic_load(&c->live_bytes);

		/* What reclaim cannot free and the fast path did not charge
		 * (taking every live charge as already in usage, so the
		 * floor never counts one twice). The margin needs no copy:
		 * every change of it reaches the latch through
		 * mri_charge_note_margin(). */
		keep = usage > keep ? usage - keep : 0;
		atomic_store(&c->base_bytes, add_signed(keep, -live));
		atomic_store(&c->reclaimable_bytes, clean);
		atomic_store(&c->swappable_bytes, swappable);
		mri_charge_note_limits(g, &l);
		atomic_store_explicit(&c->armed, true, memory_order_release);
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

/* Checks shared by every fast-path entry: fork, then arming. */
static int enter(struct mr_group *g)
{
	int r = mri_ctx_check_fork(g->ctx);

	if (r < 0)
		return r;
	if (__builtin_expect(!atomic_load_explicit(&g->charge.armed,
						   memory_order_acquire), 0))
		return refresh(g, true);
	return 0;
}

void mri_charge_after_reclaim(struct mr_group *g)
{
	if (atomic_load_explicit(&g->charge.armed, memory_order_acquire))
		(void)refresh(g, false);
}

MR_EXPORT int mr_group_charge_refresh(mr_group_t *g)
{
	int r;

	if (!g)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	return r < 0 ? r : refresh(g, false);
}

/* Reads usage again if MR_CHARGE_USAGE_REFRESH_NS has passed since the last
 * read; one thread at a time (the one that takes the claim), the others go
 * on with the old value. Returns -ENOENT when the cgroup is gone, else 0
 * (another failure keeps the old usage, and the next batch retries). */
static int refresh_usage(struct mr_group *g)
{
	struct mri_charge *c = &g->charge;
	int r;

	if (mri_group_now_ns(g) - atomic_load_explicit(&c->usage_ns,
			memory_order_relaxed) < MR_CHARGE_USAGE_REFRESH_NS ||
	    atomic_flag_test_and_set(&c->usage_claim))
		return 0;
	/* Another thread may have read it between the check and the claim. */
	r = 0;
	if (mri_group_now_ns(g) - atomic_load(&c->usage_ns) >=
	    MR_CHARGE_USAGE_REFRESH_NS)
		r = read_usage_claimed(g);
	atomic_flag_clear(&c->usage_claim);
	return r == -ENOENT ? r : 0;
}

/* Adds `draw` to the estimate if it stays at or below the limit
 * (page_counter_try_charge(): add, check, take back). Returns the estimate
 * with the draw, and whether it fits in *fits. */
static uint64_t try_draw(struct mri_charge *c, uint64_t draw, uint64_t limit,
			 bool *fits)
{
	int64_t drawn;
	uint64_t est;

	int64_t live;

	drawn = atomic_fetch_add(&c->drawn_bytes, (int64_t)draw) +
		(int64_t)draw;
	live = atomic_fetch_add(&c->live_bytes, (int64_t)draw) +
	       (int64_t)draw;
	est = estimate(c, drawn, live);
	*fits = limit == MR_UNLIMITED || est <= limit;
	if (!*fits) {
		atomic_fetch_sub(&c->drawn_bytes, (int64_t)draw);
		atomic_fetch_sub(&c->live_bytes, (int64_t)draw);
	}
	return est;
}

/* A charge the stock cannot serve: draw a batch (or, on the shared slot,
 * the bytes alone) and judge it. stock is the slot's stock before the
 * call (0 for the shared slot). */
static int charge_draw(struct mr_group *g, struct mri_charge_slot *s,
		       bool shared, uint64_t stock, uint64_t bytes,
		       struct mr_charge_answer *answer)
{
	struct mri_charge *c = &g->charge;
	struct mri_charge_policy p;
	struct mr_throttle_curve curve;
	uint64_t limit, high, draw, est, delay = 0;
	bool fits;
	int r, verdict;

	r = refresh_usage(g);
	if (r < 0)
		return r;
	mri_charge_policy_read(c, &p);
	limit = atomic_load_explicit(&c->limit_bytes, memory_order_relaxed);
	high = p.high_bytes != MR_HIGH_FROM_BACKEND ? p.high_bytes :
	       atomic_load_explicit(&c->backend_high_bytes,
				    memory_order_relaxed);

	draw = shared || bytes > MR_CHARGE_BATCH_BYTES ? bytes :
	       MR_CHARGE_BATCH_BYTES;
	est = try_draw(c, draw, limit, &fits);
	if (!fits && draw > bytes - stock) {
		/* The batch does not fit: draw only what the stock lacks
		 * (try_charge_memcg() retries with nr_pages). */
		draw = bytes - stock;
		est = try_draw(c, draw, limit, &fits);
	}
	slot_add(&s->charges, 1, shared);
	if (!fits) {
		/* Sized as mr_group_thp_advise() sizes its shortfall (the
		 * charge fits and usage ends at limit - margin), but never
		 * past what the snapshot counts reclaimable beyond the bare
		 * overrun: a larger request would have memory.reclaim retry
		 * MAX_RECLAIM_RETRIES times and fail (mm/memcontrol.c,
		 * memory_reclaim()). */
		uint64_t can = atomic_load_explicit(&c->reclaimable_bytes,
						    memory_order_relaxed) +
			       atomic_load_explicit(&c->swappable_bytes,
						    memory_order_relaxed);
		uint64_t want;

		answer->delay_ns = 0;
		if (can >= est - limit) {
			want = mri_shortfall_bytes(est, 0, limit,
					policy_margin_bytes(&p, limit));
			if (want > can)
				want = can; /* at least est - limit */
			answer->reclaim_bytes = want;
			slot_add(&s->reclaim, 1, shared);
			return MR_CHARGE_RECLAIM;
		}
		answer->reclaim_bytes = 0;
		slot_add(&s->refused, 1, shared);
		return MR_CHARGE_REFUSE;
	}
	if (!shared)
		atomic_store_explicit(&s->stock_bytes, stock + draw - bytes,
				      memory_order_relaxed);
	slot_add(&s->batches, 1, shared);
	slot_add(&s->charged_bytes, bytes, shared);
	if (est > high && p.kind != MR_THROTTLE_NONE) {
		policy_curve(&p, &curve);
		if (mr_throttle_delay_ns(&curve, est, high, draw, &delay) < 0)
			delay = 0; /* the setter checked the curve */
	}
	answer->delay_ns = delay;
	answer->reclaim_bytes = 0;
	if (delay) {
		slot_add(&s->delayed, 1, shared);
		slot_add(&s->delay_ns, delay, shared);
		verdict = MR_CHARGE_DELAY;
	} else {
		verdict = MR_CHARGE_GO;
	}
	return verdict;
}

MR_EXPORT int mr_group_charge(mr_group_t *g, uint64_t bytes,
			      struct mr_charge_answer *answer)
{
	struct mr_charge_answer ignored;
	struct mri_charge_slot *s;
	uint64_t stock;
	int r;

	if (!g || bytes == 0 || bytes > MR_CHARGE_MAX_BYTES)
		return -EINVAL;
	r = enter(g);
	if (r < 0)
		return r;
	if (!answer)
		answer = &ignored;
	if (tls_busy)
		return charge_draw(g, shared_slot(&g->charge), true, 0, bytes,
				   answer);
	tls_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	s = thread_slot(&g->charge);
	if (s == shared_slot(&g->charge)) {
		r = charge_draw(g, s, true, 0, bytes, answer);
		goto out;
	}
	stock = atomic_load_explicit(&s->stock_bytes, memory_order_relaxed);
	if (stock >= bytes) {
		/* consume_stock() */
		atomic_store_explicit(&s->stock_bytes, stock - bytes,
				      memory_order_relaxed);
		slot_add(&s->charges, 1, false);
		slot_add(&s->charged_bytes, bytes, false);
		answer->delay_ns = 0;
		answer->reclaim_bytes = 0;
		r = MR_CHARGE_GO;
	} else {
		r = charge_draw(g, s, false, stock, bytes, answer);
	}
out:
	atomic_signal_fence(memory_order_seq_cst);
	tls_busy = 0;
	return r;
}

/* Gives the bytes back to the group's estimate. */
static void give_back(struct mri_charge *c, struct mri_charge_slot *s,
		      bool shared, uint64_t bytes)
{
	atomic_fetch_sub(&c->drawn_bytes, (int64_t)bytes);
	atomic_fetch_sub(&c->live_bytes, (int64_t)bytes);
	slot_add(&s->stock_returns, 1, shared);
}

MR_EXPORT int mr_group_uncharge(mr_group_t *g, uint64_t bytes)
{
	struct mri_charge *c;
	struct mri_charge_slot *s;
	uint64_t stock;
	int r;

	if (!g || bytes == 0 || bytes > MR_CHARGE_MAX_BYTES)
		return -EINVAL;
	r = enter(g);
	if (r < 0)
		return r;
	c = &g->charge;
	if (tls_busy) {
		s = shared_slot(c);
		give_back(c, s, true, bytes);
		slot_add(&s->uncharges, 1, true);
		slot_add(&s->uncharged_bytes, bytes, true);
		return 0;
	}
	tls_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	s = thread_slot(c);
	if (s == shared_slot(c)) {
		give_back(c, s, true, bytes);
	} else {
		/* refill_stock(): a stock above the batch is drained whole. */
		stock = atomic_load_explicit(&s->stock_bytes,
					     memory_order_relaxed) + bytes;
		if (stock > MR_CHARGE_BATCH_BYTES) {
			give_back(c, s, false, stock);
			stock = 0;
		}
		atomic_store_explicit(&s->stock_bytes, stock,
				      memory_order_relaxed);
	}
	slot_add(&s->uncharges, 1, s == shared_slot(c));
	slot_add(&s->uncharged_bytes, bytes, s == shared_slot(c));
	atomic_signal_fence(memory_order_seq_cst);
	tls_busy = 0;
	return 0;
}

/* What budget_ns can free at the reclaim rate measured on the group (the
 * margin worker's and mr_group_reclaim()'s calls); 0 before any. */
static uint64_t budget_bytes(struct mr_group *g, uint64_t budget_ns)
{
	uint64_t freed = 0, elapsed = 0;
	unsigned __int128 b;
	int i;

	for (i = MR_REASON_MARGIN; i <= MR_REASON_REQUESTED; i++) {
		freed += atomic_load_explicit(&g->stats[i].freed_bytes,
					      memory_order_relaxed);
		elapsed += atomic_load_explicit(&g->stats[i].elapsed_ns,
						memory_order_relaxed);
	}
	if (!elapsed)
		return 0;
	b = (unsigned __int128)budget_ns * freed / elapsed;
	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

MR_EXPORT int mr_group_thp_advise(mr_group_t *g, uint64_t length_bytes)
{
	uint64_t shortfall;

	return mr_group_thp_advise_reclaim(g, length_bytes, &shortfall);
}

MR_EXPORT int mr_group_thp_advise_reclaim(mr_group_t *g,
					  uint64_t length_bytes,
					  uint64_t *reclaim_bytes)
{
	struct mri_charge *c;
	struct mri_charge_policy p;
	uint64_t huge, limit, usage, margin, budget = 0;
	int r, advice;

	if (!g || length_bytes == 0 || length_bytes > MR_CHARGE_MAX_BYTES ||
	    !reclaim_bytes)
		return -EINVAL;
	r = enter(g);
	if (r < 0)
		return r;
	c = &g->charge;
	mri_charge_policy_read(c, &p);
	huge = (length_bytes + MRI_HUGE_PAGE_BYTES - 1) &
	       ~(MRI_HUGE_PAGE_BYTES - 1);
	limit = atomic_load_explicit(&c->limit_bytes, memory_order_relaxed);
	usage = estimate_now(c);
	if (p.thp_policy == MR_THP_BUDGET)
		budget = budget_bytes(g, p.budget_ns);
	margin = limit == MR_UNLIMITED ? 0 : policy_margin_bytes(&p, limit);
	r = mr_thp_decide((int)p.thp_policy, huge, usage, limit, margin,
			  atomic_load_explicit(&c->reclaimable_bytes,
					       memory_order_relaxed),
			  budget, &advice);
	if (r < 0)
		return r;
	if (advice == MR_THP_ADVICE_SMALL)
		atomic_fetch_add_explicit(&c->thp_fallbacks, 1,
					  memory_order_relaxed);
	*reclaim_bytes = advice == MR_THP_ADVICE_RECLAIM_THEN_HUGE ?
			 mri_shortfall_bytes(usage, huge, limit, margin) : 0;
	return advice;
}

/* Applies `edit` to the master policy and publishes it, after arming (so a
 * setter reports what arming would). */
static int update(struct mr_group *g,
		  void (*edit)(struct mri_charge_policy *p, const void *arg),
		  const void *arg)
{
	struct mri_charge *c = &g->charge;
	int r = enter(g);

	if (r < 0)
		return r;
	pthread_mutex_lock(&c->lock);
	edit(&state_of(c)->policy, arg);
	latch_write(state_of(c));
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void edit_curve(struct mri_charge_policy *p, const void *arg)
{
	const struct mr_throttle_curve *curve = arg;

	p->kind = (uint64_t)curve->kind;
	p->max_delay_ns = curve->max_delay_ns;
	p->scale_ns = curve->scale_ns;
	p->doubling_ppm = curve->doubling_ppm;
	p->npoints = curve->kind == MR_THROTTLE_TABLE ? curve->npoints : 0;
	memset(p->points, 0, sizeof(p->points));
	if (p->npoints)
		memcpy(p->points, curve->points,
		       curve->npoints * sizeof(*curve->points));
}

MR_EXPORT int mr_group_set_throttle(mr_group_t *g,
				    const struct mr_throttle_curve *curve)
{
	static const struct mr_throttle_curve none = {
		.kind = MR_THROTTLE_NONE,
	};
	uint64_t delay;

	if (!g)
		return -EINVAL;
	if (!curve)
		curve = &none;
	/* The pure function checks the curve whole (kind, points, order). */
	if (mr_throttle_delay_ns(curve, 2, 1, 1, &delay) < 0)
		return -EINVAL;
	return update(g, edit_curve, curve);
}

static void edit_high(struct mri_charge_policy *p, const void *arg)
{
	p->high_bytes = *(const uint64_t *)arg;
}

MR_EXPORT int mr_group_set_throttle_high(mr_group_t *g, uint64_t high_bytes)
{
	if (!g)
		return -EINVAL;
	return update(g, edit_high, &high_bytes);
}

struct thp_arg {
	int policy;
	uint64_t budget_ns;
};

static void edit_thp(struct mri_charge_policy *p, const void *arg)
{
	const struct thp_arg *a = arg;

	p->thp_policy = (uint64_t)a->policy;
	p->budget_ns = a->budget_ns;
}

MR_EXPORT int mr_group_set_thp_policy(mr_group_t *g, int policy,
				      uint64_t budget_ns)
{
	struct thp_arg a = { .policy = policy, .budget_ns = budget_ns };

	if (!g || policy < MR_THP_RECLAIM_FULL || policy > MR_THP_BUDGET ||
	    (policy == MR_THP_BUDGET) != (budget_ns != 0))
		return -EINVAL;
	return update(g, edit_thp, &a);
}

static uint64_t age_ns(struct mr_group *g, _Atomic uint64_t *when)
{
	uint64_t now = mri_group_now_ns(g), t = atomic_load(when);

	return now > t ? now - t : 0;
}

MR_EXPORT int mr_group_read_charge_stats(mr_group_t *g,
					 struct mr_charge_stats *stats)
{
	struct mr_charge_stats st = { .size = sizeof(st) };
	struct mri_charge *c;
	struct mri_charge_policy p;
	struct mri_charge_state *state;
	const struct mri_charge_slot *s;
	size_t i;

	if (!g || !stats ||
	    stats->size < offsetof(struct mr_charge_stats, uncharges))
		return -EINVAL;
	c = &g->charge;
	state = state_of(c);
	for (i = 0; state && i <= MR_CHARGE_THREAD_SLOTS; i++) {
		s = &state->slots[i];
#define FOLD(f) st.f += atomic_load_explicit(&s->f, memory_order_relaxed)
		FOLD(charges);
		FOLD(uncharges);
		FOLD(delayed);
		FOLD(reclaim);
		FOLD(refused);
		FOLD(delay_ns);
		FOLD(charged_bytes);
		FOLD(uncharged_bytes);
		FOLD(batches);
		FOLD(stock_returns);
#undef FOLD
	}
	/* Read apart, a GO is the charge none of the others counted; a
	 * verdict in flight may be in one sum and not yet in the other. */
	st.go = st.charges - st.delayed - st.reclaim - st.refused;
	if (st.go > st.charges)
		st.go = 0;
	st.usage_refreshes = atomic_load(&c->usage_refreshes);
	st.refresh_errors = atomic_load(&c->refresh_errors);
	st.limits_refreshes = atomic_load(&c->limits_refreshes);
	st.thp_fallbacks = atomic_load(&c->thp_fallbacks);
	st.usage_estimate_bytes = estimate_now(c);
	st.limit_bytes = atomic_load(&c->limit_bytes);
	st.reclaimable_bytes = atomic_load(&c->reclaimable_bytes);
	st.swappable_bytes = atomic_load(&c->swappable_bytes);
	mri_charge_policy_read(c, &p);
	st.high_bytes = p.high_bytes != MR_HIGH_FROM_BACKEND ? p.high_bytes :
			atomic_load(&c->backend_high_bytes);
	if (atomic_load(&c->armed)) {
		st.usage_age_ns = age_ns(g, &c->usage_ns);
		st.limits_age_ns = age_ns(g, &c->limits_ns);
	} else {
		st.usage_age_ns = st.limits_age_ns = MR_UNLIMITED;
	}
	memcpy((char *)stats + sizeof(size_t), (char *)&st + sizeof(size_t),
	       (stats->size < sizeof(st) ? stats->size : sizeof(st)) -
	       sizeof(size_t));
	return 0;
}
