/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reclaim loop: batches sized by the group's policy, a goal in bytes
 * freed or in usage reached, a deadline, bounded retries, statistics per
 * reason. Backends make one kernel call per batch; the loop decides how
 * many and how large, and, for a backend whose step can OOM-kill, how
 * much at most (MRI_CAP_STEP_CAN_OOM). A group whose reclaim the kernel
 * refused is reclaimed through its children the caller owns
 * (childreclaim.c).
 *
 * The steps of a MRI_CAP_STEP_CAN_OOM backend (cgroup v1) each cost a
 * fixed price (a memory.stat read once per run, two limit writes that
 * drain every CPU's charge stock, reads of the limit and usage), and the
 * kernel frees more than a small step asks (a whole reclaim cluster, a
 * whole large folio). So only the first step of a call asks the group's
 * batch; each later one asks what the call still lacks, less what the
 * step before freed beyond its ask (later_step_bytes()), still at most
 * half of what reclaim can take (cap_step_batch()). The steps of a
 * call on one handle are one run of the backend (struct mri_backend.plan:
 * one lock and one journal record on v1).
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "clock.h"
#include "context.h"
#include "control.h"
#include "floor.h"
#include "group.h"
#include "knobs.h"
#include "reclaim.h"
#include "policy.h"

/* The batch of a step the proactive controller sized itself, on a
 * backend whose step cannot OOM-kill (memory.reclaim, the simulator): the
 * whole
 * of what the call still lacks, at most MRI_RECLAIM_STEP_BATCH_BYTES, at
 * least the group's batch. The group's batch is the margin keeper's unit,
 * small so that a pass near a limit does not overshoot; a proactive step
 * has its size already, and cut into the default 128 KiB batches a step
 * of 199 MiB was 1111 memory.reclaim writes, each with its two reads of
 * memory.current (the benchmark's run under qemu). */
static uint64_t step_batch_bytes(uint64_t excess, uint64_t batch)
{
	uint64_t whole = excess < MRI_RECLAIM_STEP_BATCH_BYTES ? excess :
			 MRI_RECLAIM_STEP_BATCH_BYTES;

	return whole > batch ? whole : batch;
}

static uint64_t batch_bytes(const struct mri_policy *p, uint64_t excess,
			    uint64_t limit)
{
	if (p->batch_proportional)
		return mr_batch_proportional_bytes(excess, limit, p->share_ppm,
						   p->max_bytes, p->max_ppm);
	return excess < p->batch_bytes ? excess : p->batch_bytes;
}

/*
 * The batch of a later step of a call on a MRI_CAP_STEP_CAN_OOM backend:
 * excess (what the call still lacks) less what the step before freed
 * beyond its ask, so that the kernel's over-reclaim is carried into the
 * next step rather than added on top of the call's goal. The overshoot
 * is taken as a constant, not a ratio: a lowering write reclaims until
 * usage fits the new limit, one SWAP_CLUSTER_MAX round and one folio at
 * a time (mm/memcontrol.c mem_cgroup_resize_max(), mm/vmscan.c
 * try_to_free_mem_cgroup_pages()), so it frees its ask plus at most a
 * round and a folio whatever the ask (measured here: 128 KiB asked, 1 MiB
 * freed; 28 MiB asked, 28.4 MiB freed). Scaling the excess by the ratio
 * of the small first step would shrink the second to an eighth of what is
 * missing and make a worker pass four steps instead of two. An overshoot
 * that covers the excess asks one page, the least a step can ask.
 * Freeing less than asked (a charge meanwhile, a partial step) asks the
 * whole excess.
 */
static uint64_t later_step_bytes(uint64_t excess, uint64_t asked,
				 uint64_t freed)
{
	uint64_t over;

	if (freed <= asked)
		return excess;
	over = freed - asked;
	return excess > over + MRI_PAGE_BYTES ? excess - over : MRI_PAGE_BYTES;
}

/* The clean, unmapped page cache of one target as a run of steps knows
 * it (cap_step_batch()). */
struct step_cache {
	void *target;         /* whose estimate; NULL: none yet */
	uint64_t clean_bytes;
};

/*
 * The batch of a backend whose step can OOM-kill (MRI_CAP_STEP_CAN_OOM,
 * lib/core/backend.h): at most half of what reclaim can take from `target`
 * (the group's handle, or a child's), so that the group's own charges
 * find the other half while the step has the limit lowered. What
 * reclaim can take: the clean, unmapped page cache of `target` as the run
 * knows it (*sc: read from memory.stat at the run's first step on the
 * target, then lowered by what each step freed and never raised, so that
 * a run of steps reads memory.stat once), and, where half of it is short
 * of the call (at least a page, as the backend asks), also the anonymous
 * memory the target may swap out (lib/core/policy.h), from a memory.stat
 * read now and the limits snapshot l when it is the target's and was
 * read just before (fresh), else a snapshot read now (none counted if
 * that fails). The cap is in whole pages: with less than one, -EAGAIN,
 * and the backend is not called. A snapshot read now ends the backend's
 * run on target first (rest: its fds, and its lock, which the snapshot's
 * reader would wait for), and *run is then NULL. Returns 0 with *batch
 * capped, -EAGAIN, or read_memstat()'s error.
 */
static int cap_step_batch(struct mr_group *g, void *target,
			  const struct mr_limits *l, bool fresh,
			  struct step_cache *sc, void **run, uint64_t *batch)
{
	struct mr_memstat ms = { .size = sizeof(ms) };
	struct mr_limits now = { .size = sizeof(now) };
	struct mri_reclaimable rc;
	long ps = sysconf(_SC_PAGESIZE);
	const uint64_t page = ps > 0 ? (uint64_t)ps : 4096;
	uint64_t want = *batch < page ? page : *batch, can, cap, anon;
	bool read = false;
	int r;

	if (sc->target != target) {
		r = g->be->read_memstat(target, &ms);
		if (r < 0)
			return r;
		mri_reclaimable(&ms, NULL, -1, &rc);
		sc->target = target;
		sc->clean_bytes = rc.clean_unmapped_bytes;
		read = true;
	}
	can = sc->clean_bytes;
	if (can / 2 < want) {
		if (!read) {
			r = g->be->read_memstat(target, &ms);
			if (r < 0)
				return r;
			/* Never raised: the run's steps freed that much. */
			mri_reclaimable(&ms, NULL, -1, &rc);
			if (rc.clean_unmapped_bytes < sc->clean_bytes)
				sc->clean_bytes = rc.clean_unmapped_bytes;
			can = sc->clean_bytes;
		}
		if (!fresh) {
			/* The fds the run keeps go first: a reader's come on
			 * top of none (MRI_FD_RESERVE). */
			if (g->be->rest)
				g->be->rest(target);
			if (*run == target)
				*run = NULL;
			l = g->be->read_limits(target, &now) == 0 ? &now : NULL;
		}
		if (l) {
			anon = mri_swap_anon_reclaimable(l, &ms,
				atomic_load(&g->reclaim_swappiness));
			can = can > UINT64_MAX - anon ? UINT64_MAX :
			      can + anon;
		}
	}
	cap = can / 2 / page * page;
	if (cap == 0)
		return -EAGAIN;
	if (*batch > cap)
		*batch = cap;
	return 0;
}

int mri_unreclaimable(struct mr_group *g, const struct mr_limits *l,
		      struct mr_memstat *ms, uint64_t *bytes, bool *swap_usable)
{
	struct mri_floor_input fi;
	int r;

	ms->size = sizeof(*ms);
	r = g->be->read_memstat(g->priv, ms);
	if (r < 0)
		return r;
	mri_floor_input_of(ms, l, NULL, atomic_load(&g->reclaim_swappiness),
			   0, &fi);
	*bytes = mri_floor_bytes(&fi);
	if (swap_usable)
		*swap_usable = fi.swap_usable;
	return 0;
}

/* The floor of a run of the library's own (mri_unreclaimable()): 0 when
 * memory.stat cannot be read (the run is then as before). */
static uint64_t unreclaimable_floor(struct mr_group *g,
				    const struct mr_limits *l)
{
	struct mr_memstat ms;
	uint64_t bytes;

	return mri_unreclaimable(g, l, &ms, &bytes, NULL) < 0 ? 0 : bytes;
}

static void count(struct mr_group *g, int reason, uint64_t asked,
		  uint64_t freed, uint64_t ns)
{
	struct mri_reason_stats *s = &g->stats[reason];

	atomic_fetch_add(&s->calls, 1);
	if (!freed)
		atomic_fetch_add(&s->empty_calls, 1);
	atomic_fetch_add(&s->asked_bytes, asked);
	atomic_fetch_add(&s->freed_bytes, freed);
	atomic_fetch_add(&s->elapsed_ns, ns);
}

/* The end of a run of batches: the group's handle and its children's
 * close what they kept open between batches (struct mri_backend.rest). */
static void rest(struct mr_group *g)
{
	size_t i;

	if (!g->be->rest)
		return;
	g->be->rest(g->priv);
	for (i = 0; i < g->children.n; i++)
		g->be->rest(g->children.v[i].priv);
}

/* A read of usage in a run that watches a mark (struct mri_reclaim_mark):
 * at or below it, the mark is reached, at the crossing the step before
 * estimated if it did, else now; above it, that estimate was wrong. */
static void watch_read(struct mri_reclaim_mark *mark, uint64_t usage_bytes,
		       uint64_t now_ns)
{
	if (mark->reached)
		return;
	if (usage_bytes <= mark->mark_bytes) {
		mark->reached = true;
		mark->reached_ns = mark->crossed ? mark->crossed_ns : now_ns;
	}
	mark->crossed = false;
}

/* A step from usage_bytes (read before it) that freed freed_bytes
 * between t0_ns and t1_ns: where usage less what it freed is at or below
 * the mark, the crossing is estimated at the share of the step that
 * brought usage to the mark, for the next read to confirm. */
static void watch_step(struct mri_reclaim_mark *mark, uint64_t usage_bytes,
		       uint64_t freed_bytes, uint64_t t0_ns, uint64_t t1_ns)
{
	uint64_t above;

	if (!mark || mark->reached || freed_bytes == 0 ||
	    usage_bytes <= mark->mark_bytes || freed_bytes > usage_bytes ||
	    usage_bytes - freed_bytes > mark->mark_bytes)
		return;
	above = usage_bytes - mark->mark_bytes; /* <= freed_bytes */
	mark->crossed = true;
	mark->crossed_ns = t0_ns + (uint64_t)((unsigned __int128)
					      (t1_ns - t0_ns) * above /
					      freed_bytes);
}

int mri_reclaim(struct mr_group *g, int reason, uint64_t bytes,
		uint64_t floor_bytes, uint64_t deadline_ns,
		const atomic_bool *stop, struct mri_reclaim_mark *mark,
		uint64_t *freed_bytes)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_policy p;
	struct step_cache sc = { .target = NULL };
	uint64_t total = 0, excess, batch, asked, freed, t0, t1;
	uint64_t swap0 = 0, swap1, caller_floor, own_floor;
	bool have_swap;
	/* The previous step of the call (MRI_CAP_STEP_CAN_OOM), 0: none. */
	uint64_t last_asked = 0, last_freed = 0;
	void *run = NULL; /* the handle whose run the backend holds */
	unsigned empty = 0, calls;
	size_t child_empty = 0;
	bool reached = false;
	int r = 0, refusal;
	void *target;

	*freed_bytes = 0;
	if (mark)
		mark->reached = mark->crossed = false;
	/* Usage is read before each step only with a floor. */
	if (!floor_bytes)
		mark = NULL;
	if (bytes == 0)
		return 0;
	if (!(g->be->caps & MRI_CAP_RECLAIM))
		return -EOPNOTSUPP;
	refusal = mri_control_check(g, MR_CONTROL_RECLAIM);
	if (refusal < 0 && !mri_children_next(g))
		return refusal;
	mri_group_policy(g, &p);
	r = g->be->read_limits(g->priv, &l);
	if (r < 0)
		return r;
	/* A floor the caller did not ask for ends the run with -EAGAIN,
	 * not as a goal reached. */
	caller_floor = floor_bytes;
	/* A MRI_CAP_STEP_CAN_OOM backend's steps are capped at half of
	 * what reclaim can take (cap_step_batch()), below the floor's
	 * bound already. */
	own_floor = g->be->caps & MRI_CAP_STEP_CAN_OOM ? 0 :
		    unreclaimable_floor(g, &l);
	if (own_floor > floor_bytes)
		floor_bytes = own_floor;
	/* What the run moves to swap (zram and zswap included): the rise
	 * of the swap charged to the group (its children's included) across
	 * it, where the backend reads one. */
	have_swap = g->be->read_swap_usage &&
		    g->be->read_swap_usage(g->priv, &swap0) == 0;

	for (calls = 0; total < bytes; calls++) {
		/* The first batch always runs; later ones only in time. */
		if (calls && ((stop && atomic_load(stop)) ||
			      (deadline_ns &&
			       mri_group_now_ns(g) >= deadline_ns)))
			break;
		excess = bytes - total;
		if (floor_bytes) {
			r = g->be->read_usage(g->priv, &l.usage_bytes);
			if (r < 0)
				break;
			if (mark)
				watch_read(mark, l.usage_bytes,
					   mri_group_now_ns(g));
			if (l.usage_bytes <= floor_bytes) {
				if (l.usage_bytes <= caller_floor)
					reached = true;
				else
					r = -EAGAIN;
				break;
			}
			if (l.usage_bytes - floor_bytes < excess)
				excess = l.usage_bytes - floor_bytes;
		}
		batch = last_asked ?
			later_step_bytes(excess, last_asked, last_freed) :
			batch_bytes(&p, excess, l.limit_bytes);
		/* A MRI_CAP_STEP_CAN_OOM backend's later steps ask the
		 * whole excess already (later_step_bytes()). */
		if (reason == MR_REASON_PROACTIVE &&
		    !(g->be->caps & MRI_CAP_STEP_CAN_OOM))
			batch = step_batch_bytes(excess, batch);
		asked = freed = 0;
		/* The group's own reclaim control, or, once the kernel
		 * refused it, its children the caller owns, in turn. */
		target = refusal < 0 ? mri_children_next(g) : g->priv;
		if (!target) {
			r = refusal;
			break;
		}
		/* No handle's run is held while another is stepped on (its
		 * lock would wait on the other's). */
		if (run && run != target && g->be->rest) {
			g->be->rest(run);
			run = NULL;
		}
		t0 = mri_group_now_ns(g);
		r = 0;
		if (g->be->caps & MRI_CAP_STEP_CAN_OOM)
			r = cap_step_batch(g, target, &l,
					   calls == 0 && target == g->priv,
					   &sc, &run, &batch);
		if (r == 0) {
			if (g->be->plan && run != target) {
				g->be->plan(target, excess);
				run = target;
			}
			r = g->be->reclaim(target, batch, &asked, &freed);
			if (target == sc.target)
				sc.clean_bytes -= freed < sc.clean_bytes ?
						  freed : sc.clean_bytes;
		} else if (g->be->settle) {
			/* No step: what an earlier one left lowered (a
			 * failed restore) is retried all the same, as every
			 * step does before it lowers anything. */
			int s = g->be->settle(target);

			if (s < 0)
				r = s;
		}
		if (target == g->priv) {
			r = mri_control_learn(g, MR_CONTROL_RECLAIM, r);
			if (mri_control_refusal(r)) {
				refusal = r;
				continue;
			}
		} else {
			mri_children_learn(g, target, r);
			/* Nothing in this child: the next may have some. */
			if (r == -EAGAIN && ++child_empty < g->children.n)
				continue;
			if (r == 0)
				child_empty = 0;
			if (mri_control_refusal(r))
				continue;
		}
		/* -EAGAIN: nothing reclaimable, no call made; -EBUSY: another
		 * manager holds the group; else the group is gone or broken. */
		if (r < 0)
			break;
		t1 = mri_group_now_ns(g);
		count(g, reason, asked, freed, t1 - t0);
		if (target == g->priv)
			watch_step(mark, l.usage_bytes, freed, t0, t1);
		total += freed;
		if (g->be->caps & MRI_CAP_STEP_CAN_OOM) {
			last_asked = asked;
			last_freed = freed;
		}
		if (freed) {
			empty = 0;
		} else if (++empty >= MR_RECLAIM_MAX_EMPTY_BATCHES) {
			r = -EAGAIN;
			break;
		}
	}
	*freed_bytes = total;
	rest(g);
	if (total && have_swap &&
	    g->be->read_swap_usage(g->priv, &swap1) == 0 && swap1 > swap0)
		atomic_fetch_add(&g->stats[reason].offloaded_bytes,
				 swap1 - swap0);
	if (total || (reached && r == 0))
		return 0;
	return r < 0 ? r : -EAGAIN;
}

int mri_reclaim_carried(struct mr_group *g, int reason, uint64_t bytes,
			uint64_t floor_bytes, uint64_t deadline_ns,
			const atomic_bool *stop, uint64_t *carry_bytes,
			uint64_t *freed_bytes)
{
	uint64_t carry = *carry_bytes, ask, freed = 0;
	int r;

	*freed_bytes = 0;
	if (bytes == 0)
		return 0;
	if (carry >= bytes) {
		*carry_bytes = carry - bytes;
		return 0;
	}
	ask = bytes - carry;
	r = mri_reclaim(g, reason, ask, floor_bytes, deadline_ns, stop, NULL,
			&freed);
	*carry_bytes = freed > ask ? freed - ask : 0;
	*freed_bytes = freed;
	return r;
}

MR_EXPORT int mr_group_reclaim(mr_group_t *g, uint64_t bytes,
			       uint64_t timeout_ns, uint64_t *freed_bytes)
{
	uint64_t freed = 0, deadline;
	int r;

	if (!g)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	deadline = mri_deadline_ns(mri_group_now_ns(g), timeout_ns);
	pthread_mutex_lock(&g->reclaim_lock);
	r = mri_reclaim(g, MR_REASON_REQUESTED, bytes, 0, deadline, NULL,
			NULL, &freed);
	pthread_mutex_unlock(&g->reclaim_lock);
	if (freed)
		mri_charge_after_reclaim(g);
	if (freed_bytes)
		*freed_bytes = freed;
	return r;
}
