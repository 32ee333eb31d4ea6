/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocator fast path's slow side (lib/core/chargestate.h): the state made
 * when a group is first armed, the latch the knobs are published to, the
 * refreshes of usage, limits and memory.stat the estimate is built on, and
 * the statistics. The hot side, which serves charges from it without a
 * lock, is lib/core/charge.c.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "chargestate.h"
#include "clock.h"
#include "context.h"
#include "group.h"
#include "knobs.h"
#include "policy.h"

/* Keys of groups, process-wide; 0 marks an empty TLS entry. */
static _Atomic uint64_t next_key = 1;

/* The latch's content before the group has a state. */
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
static void latch_write(struct mri_charge_state *st,
			const struct mri_charge_policy *p)
{
	atomic_fetch_add_explicit(&st->latch_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	latch_copy_in(&st->latch[0], p);
	atomic_fetch_add_explicit(&st->latch_seq, 1, memory_order_release);
	atomic_thread_fence(memory_order_release);
	latch_copy_in(&st->latch[1], p);
}

/* The fast path's form of a policy. */
static void charge_image(const struct mri_policy *p,
			 struct mri_charge_policy *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = (uint64_t)p->throttle_kind;
	out->max_delay_ns = p->throttle_max_delay_ns;
	out->scale_ns = p->throttle_scale_ns;
	out->doubling_ppm = p->throttle_doubling_ppm;
	out->npoints = p->throttle_npoints;
	memcpy(out->points, p->throttle_points,
	       p->throttle_npoints * sizeof(*p->throttle_points));
	out->high_bytes = p->throttle_high_bytes;
	out->thp_policy = (uint64_t)p->thp_policy;
	out->budget_ns = p->thp_budget_ns;
	out->margin_bytes = p->margin_bytes;
	out->margin_ppm = p->margin_ppm;
	out->margin_adaptive = p->margin_adaptive;
}

/* Copies the words of the policy up to the used points; retries while the
 * copy it read was being rewritten (never in a handler that interrupted
 * the writer: the other copy is whole then). */
void mri_charge_policy_read(struct mri_charge *c,
			    struct mri_charge_policy *out)
{
	const size_t head = offsetof(struct mri_charge_policy, points) /
			    sizeof(uint64_t);
	struct mri_charge_state *st = mri_charge_state(c);
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

void mri_charge_publish(struct mr_group *g, const struct mri_policy *p)
{
	struct mri_charge *c = &g->charge;
	struct mri_charge_policy image;
	struct mri_charge_state *st;

	pthread_mutex_lock(&c->lock);
	st = mri_charge_state(c);
	if (st) { /* else state_make() reads the policy when it runs */
		charge_image(p, &image);
		latch_write(st, &image);
	}
	pthread_mutex_unlock(&c->lock);
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

/* Makes the group's state if it has none: the latch holding the group's
 * current policy, free slots. Caller holds c->lock. Returns it, or NULL
 * (-ENOMEM). */
static struct mri_charge_state *state_make(struct mr_group *g)
{
	struct mri_charge *c = &g->charge;
	struct mri_charge_state *st = mri_charge_state(c);
	struct mri_charge_policy image;
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
	/* A setter publishing meanwhile has exchanged its policy before it
	 * takes c->lock (lib/core/knobs.c): it finds this state and writes the
	 * latch again, or it had already and this reads its policy. */
	mri_group_policy(g, &gp);
	charge_image(&gp, &image);
	latch_write(st, &image);
	atomic_store_explicit(&c->state, st, memory_order_release);
	return st;
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
		 * anonymous memory the group may swap out (lib/core/policy.h). */
		struct mri_reclaimable rc;
		uint64_t clean, swappable, keep;
		int64_t live = atomic_load(&c->live_bytes);

		mri_reclaimable(&ms, &l, atomic_load(&g->reclaim_swappiness),
				&rc);
		clean = rc.clean_bytes;
		swappable = rc.swappable_bytes;
		keep = clean + swappable;

		/* What reclaim cannot free and the fast path did not charge
		 * (taking every live charge as already in usage, so the
		 * floor never counts one twice). */
		keep = usage > keep ? usage - keep : 0;
		atomic_store(&c->base_bytes, mri_add_signed(keep, -live));
		atomic_store(&c->reclaimable_bytes, clean);
		atomic_store(&c->swappable_bytes, swappable);
		mri_charge_note_limits(g, &l);
		atomic_store_explicit(&c->armed, true, memory_order_release);
	}
	pthread_mutex_unlock(&c->lock);
	return r;
}

int mri_charge_arm(struct mr_group *g)
{
	if (__builtin_expect(atomic_load_explicit(&g->charge.armed,
						  memory_order_acquire), 1))
		return 0;
	return refresh(g, true);
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

int mri_charge_refresh_usage(struct mr_group *g)
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

/* ----------------------------------------------------------- statistics */

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
	state = mri_charge_state(c);
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
	st.usage_estimate_bytes = mri_charge_estimate_now(c);
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
