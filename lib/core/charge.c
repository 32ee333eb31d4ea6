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

#include "chargestate.h"
#include "context.h"
#include "group.h"
#include "policy.h"

#define MRI_HUGE_PAGE_BYTES (2ULL << 20)
#define MRI_TLS_ENTRIES 4
#define MRI_TLS __thread __attribute__((tls_model("initial-exec")))

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


static void policy_curve(const struct mri_charge_policy *p,
			 struct mr_throttle_curve *curve)
{
	curve->size = sizeof(*curve);
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
static uint64_t policy_margin_bytes(struct mri_charge *c,
				    const struct mri_charge_policy *p,
				    uint64_t limit_bytes)
{
	const struct mri_policy margin = {
		.margin_bytes = p->margin_bytes,
		.margin_ppm = (uint32_t)p->margin_ppm,
	};
	uint64_t m;

	if (p->margin_adaptive) {
		/* Within the bounds the worker keeps it in
		 * (mri_adaptive_margin()), for a limit lowered since. */
		m = atomic_load_explicit(&c->adaptive_margin_bytes,
					 memory_order_relaxed);
		return m > limit_bytes / 2 ? limit_bytes / 2 : m;
	}
	return mri_margin_bytes(&margin, limit_bytes);
}

/* ---------------------------------------------------------------- slots */

static struct mri_charge_slot *shared_slot(struct mri_charge *c)
{
	return &mri_charge_state(c)->slots[MR_CHARGE_THREAD_SLOTS];
}

/* The calling thread's slot when the TLS cache misses: found among the
 * group's slots by token, else claimed; the shared one when all are taken.
 * Not called from a nested call (tls_busy), so the cache is only ever
 * written by one call at a time. */
static struct mri_charge_slot *find_slot(struct mri_charge *c)
{
	uintptr_t token = (uintptr_t)&tls_token, free_owner;
	struct mri_charge_slot *slots = mri_charge_state(c)->slots, *s = NULL;
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

/* Checks shared by every fast-path entry: fork, then arming. */
static int enter(struct mr_group *g)
{
	int r = mri_ctx_check_fork(g->ctx);

	if (r < 0)
		return r;
	/* An armed group answers with one acquire load here, no call into
	 * chargestate.c (whose mri_charge_arm() looks again). */
	if (__builtin_expect(atomic_load_explicit(&g->charge.armed,
						  memory_order_acquire), 1))
		return 0;
	return mri_charge_arm(g);
}

/* -------------------------------------------------------------- charges */

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
	est = mri_charge_estimate(c, drawn, live);
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

	r = mri_charge_refresh_usage(g);
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
					policy_margin_bytes(c, &p, limit));
			if (want > can)
				want = can; /* at least est - limit */
			answer->reclaim_bytes = want;
			slot_add(&s->reclaim, 1, shared);
			/* The program may give memory back before it
			 * reclaims (mr_group_shrink_fd()). */
			mri_shrink_notify(&g->shrink, want);
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

/* ------------------------------------------------------------------ THP */

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
	usage = mri_charge_estimate_now(c);
	if (p.thp_policy == MR_THP_BUDGET)
		budget = budget_bytes(g, p.budget_ns);
	margin = limit == MR_UNLIMITED ? 0 : policy_margin_bytes(c, &p, limit);
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
