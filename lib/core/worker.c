/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The margin worker: keeps each group's usage a margin below its limit
 * (memcg async reclaim, 2011). Its work comes in rounds: take the pending
 * events off the context's epoll set (the groups' usage-threshold events
 * and a wake-up eventfd) and serve the groups they name. A round runs
 * either on the context's own thread, which sleeps in epoll_wait between
 * rounds with a timeout that is only a safety net, never a poll loop, or
 * in a caller's event loop through mr_ctx_worker_dispatch(). Usage
 * thresholds whose registration blocks (cgroup v1: a kernel grace period
 * each) are registered at the end of a round, one a round, after the
 * groups with work are served; the groups waiting for theirs are looked
 * at every round by one usage read.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "adaptive.h"
#include "clock.h"
#include "context.h"
#include "control.h"
#include "events.h"
#include "group.h"
#include "knobs.h"
#include "reclaim.h"
#include "shrink.h"
#include "registry.h"
#include "policy.h"
#include "proactive.h"
#include "worker.h"

/* One margin pass gives the other groups of the context a turn after this
 * long, and comes back at once if its group is still above the margin. */
#define PASS_NS 100000000ULL

MR_EXPORT int mr_ctx_set_worker_sched(mr_ctx_t *ctx, int sched, int nice)
{
	int r = 0;

	if (!ctx || (sched != MR_SCHED_NICE && sched != MR_SCHED_IDLE) ||
	    nice < -20 || nice > 19 || (sched == MR_SCHED_IDLE && nice))
		return -EINVAL;
	pthread_mutex_lock(&ctx->worker_lock);
	if (ctx->worker_running) {
		r = -EBUSY;
	} else {
		ctx->sched = sched;
		ctx->nice = nice;
	}
	pthread_mutex_unlock(&ctx->worker_lock);
	return r;
}

static void apply_sched(mr_ctx_t *ctx)
{
	struct sched_param sp = { .sched_priority = 0 };
	int r;

	if (ctx->sched == MR_SCHED_IDLE) {
		r = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
		if (r)
			mri_log(&ctx->log, MR_LOG_WARNING,
				"worker: SCHED_IDLE refused: %s", mr_strerror(r));
	} else if (ctx->nice) {
		/* On Linux the nice value is per thread. */
		if (setpriority(PRIO_PROCESS, (id_t)gettid(), ctx->nice) < 0)
			mri_log(&ctx->log, MR_LOG_WARNING,
				"worker: nice %d refused: %s", ctx->nice,
				mr_strerror(errno));
	}
}

/* Set once the kernel refused to lift this worker out of SCHED_IDLE for a
 * reclaim pass: one warning per worker thread. */
static __thread bool boost_warned;

/* A SCHED_IDLE worker runs each reclaim pass as SCHED_OTHER at nice 0: a
 * cgroup v1 step lowers the limit and restores it at once, and an idle
 * thread preempted in between would leave the group's own charges meeting
 * the lowered limit for as long as the CPUs stay busy (priority
 * inversion). Returns true when the thread was switched and must go back
 * with unboost(). */
static bool boost(mr_ctx_t *ctx)
{
	struct sched_param sp = { .sched_priority = 0 };
	int policy, r, nice;

	if (ctx->sched != MR_SCHED_IDLE ||
	    pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
	    policy != SCHED_IDLE)
		return false;
	sp.sched_priority = 0;
	r = pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	if (r) {
		if (!boost_warned)
			mri_log(&ctx->log, MR_LOG_WARNING,
				"worker: leaving SCHED_IDLE for a reclaim pass "
				"refused: %s; a step may stay preempted with "
				"the limit lowered", mr_strerror(r));
		boost_warned = true;
		return false;
	}
	/* The nice level was ignored while idle; a pass runs at 0. */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (errno == 0 && nice != 0 &&
	    setpriority(PRIO_PROCESS, (id_t)gettid(), 0) < 0 &&
	    !boost_warned) {
		mri_log(&ctx->log, MR_LOG_WARNING,
			"worker: nice 0 for a reclaim pass refused: %s; "
			"the pass runs at nice %d", mr_strerror(errno), nice);
		boost_warned = true;
	}
	return true;
}

static void unboost(mr_ctx_t *ctx, bool boosted)
{
	struct sched_param sp = { .sched_priority = 0 };
	int r;

	if (!boosted)
		return;
	r = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	if (r)
		mri_log(&ctx->log, MR_LOG_WARNING,
			"worker: back to SCHED_IDLE refused: %s",
			mr_strerror(r));
}

static void disarm(struct mr_group *g)
{
	/* A registration still waiting has nothing to arm. */
	atomic_store(&g->mark_bytes, MR_UNLIMITED);
	if (g->armed_threshold_bytes == MR_UNLIMITED)
		return;
	if (g->be->set_usage_threshold(g->priv, MR_UNLIMITED) == 0)
		g->armed_threshold_bytes = MR_UNLIMITED;
}

static void leave_alone(struct mr_group *g, const char *why)
{
	disarm(g);
	if (!g->margin_warned)
		mri_log(&g->ctx->log, MR_LOG_WARNING,
			"%s: margin not kept: %s", g->path, why);
	g->margin_warned = true;
}

/* True (and the group is given up, with one warning) when a backend call
 * answered -ENOENT: the cgroup was removed. The handle stays open until
 * its owner closes it, but there is nothing left to serve: an error every
 * safety tick would only fill the log. */
static bool is_gone(struct mr_group *g, int r)
{
	if (r != -ENOENT)
		return false;
	if (!g->gone) {
		mri_log(&g->ctx->log, MR_LOG_WARNING,
			"%s: cgroup is gone; no longer served", g->path);
		g->gone = true;
		/* Its event fd would wake the worker for nothing. */
		mri_group_unpoll(g);
	}
	return true;
}

/* Arms g's usage threshold at `mark` (a refusal is logged and leaves the
 * old one), then reads usage into *usage: the kernel does not signal a
 * threshold that usage passed before it was registered. 0, or the usage
 * read's negative errno (-ENOENT: the group is given up). Caller holds
 * g->reclaim_lock. */
static int arm(struct mr_group *g, uint64_t mark, uint64_t *usage)
{
	int r;

	r = g->be->set_usage_threshold(g->priv, mark);
	if (is_gone(g, r))
		return r;
	if (r < 0)
		mri_log(&g->ctx->log, MR_LOG_ERR,
			"%s: arming threshold at %llu: %s", g->path,
			(unsigned long long)mark, mr_strerror(r));
	else
		g->armed_threshold_bytes = mark;
	r = g->be->read_usage(g->priv, usage);
	if (r < 0)
		is_gone(g, r);
	return r;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* Whether reclaim can bring usage down to high_mark: what is neither page
 * cache nor anonymous memory the group may swap out (lib/core/policy.h: swap
 * left for it, swappiness not 0) stays (kernel memory, anonymous memory
 * without swap). When it cannot, reclaim would strip the cache at every
 * tick and never reach the mark: warn once (until it becomes reachable
 * again) and leave the group alone. l: the pass's snapshot. -ENOENT when
 * the group is gone; other read errors count as reachable (reclaim is
 * then tried as before). */
static int margin_reachable(struct mr_group *g, const struct mr_limits *l,
			    uint64_t high_mark)
{
	struct mr_memstat m = { .size = sizeof(m) };
	struct mri_reclaimable rc;
	uint64_t file, anon, rest, usage = l->usage_bytes;
	int r, swappiness = atomic_load(&g->reclaim_swappiness);
	char swap[64];

	r = g->be->read_memstat(g->priv, &m);
	if (r == -ENOENT)
		return r;
	if (r < 0 || !(m.present & ((1ULL << MR_MEMSTAT_INACTIVE_FILE) |
				    (1ULL << MR_MEMSTAT_ACTIVE_FILE))))
		return 1;
	mri_reclaimable(&m, l, swappiness, &rc);
	file = rc.file_bytes;
	anon = rc.swappable_bytes;
	rest = usage > file ? usage - file : 0;
	rest = rest > anon ? rest - anon : 0;
	if (rest <= high_mark) {
		g->unreachable_warned = false;
		return 1;
	}
	if (g->unreachable_warned)
		return 0;
	if (!(l->present & MR_LIMITS_HAS_SWAP_FREE))
		snprintf(swap, sizeof(swap), "swap unknown");
	else if (mri_swap_swappiness_zero(l, swappiness))
		snprintf(swap, sizeof(swap), "swap %.1f MiB free, swappiness 0",
			 mib(l->swap_free_bytes));
	else
		snprintf(swap, sizeof(swap), "swap %.1f MiB free",
			 mib(l->swap_free_bytes));
	mri_log(&g->ctx->log, MR_LOG_WARNING,
		"%s: margin unreachable: usage %.1f MiB, reclaimable: %.1f MiB "
		"page cache + %.1f MiB anon (%s), leaves %.1f MiB above "
		"limit - margin (%.1f MiB); not reclaiming until that changes",
		g->path, mib(usage), mib(file), mib(anon), swap, mib(rest),
		mib(high_mark));
	g->unreachable_warned = true;
	return 0;
}

bool mri_keep_margin(struct mr_group *g, const atomic_bool *stop,
		     bool boost_idle, uint64_t woke_ns, bool signalled)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_policy p;
	uint64_t high_mark, low_mark, freed, usage, limit, start_ns;
	uint64_t cpu_ns = 0, runq_ns = 0, cpu_end_ns, runq_end_ns, hits = 0;
	uint64_t read_ns, over = 0;
	struct mri_reclaim_mark mark = { .reached = false };
	bool watched;
	bool boosted;
	int r;

	if (g->gone || !(g->be->caps & MRI_CAP_THRESHOLD) ||
	    !(g->be->caps & MRI_CAP_RECLAIM))
		return false;
	mri_group_policy(g, &p);
	if (!mri_margin_on(&p)) {
		disarm(g);
		return false;
	}
	r = g->be->read_limits(g->priv, &l);
	read_ns = mri_group_now_ns(g);
	if (r < 0) {
		/* -EBUSY: a step held the group for the whole wait (the
		 * journal logged its holder); the next tick retries. */
		if (!is_gone(g, r))
			mri_log(&g->ctx->log,
				r == -EBUSY ? MR_LOG_DEBUG : MR_LOG_ERR,
				"%s: reading limits: %s", g->path,
				mr_strerror(r));
		return false;
	}
	mri_charge_note_limits(g, &l);
	/* The margin is kept below the lower of the limit and high (v2):
	 * above high the kernel throttles the group's charging tasks. */
	limit = mri_margin_limit(&l);
	if (limit == MR_UNLIMITED) {
		leave_alone(g, "the group has no limit");
		return false;
	}
	if (p.margin_adaptive) {
		/* The margin in force, as a fixed one of that size; the
		 * sizing keeps the hysteresis within half of what is below
		 * it. At 0 the group is left alone until it grows back. */
		mri_adaptive_margin(g, &p, &l, limit, &p.margin_bytes,
				    &p.hysteresis_bytes);
		p.margin_ppm = 0;
		p.margin_limit_bytes = MR_UNLIMITED;
		if (!p.margin_bytes) {
			mri_adaptive_forget_reaction(g);
			disarm(g);
			return false;
		}
	}
	if (mri_margin_marks(&p, limit, &high_mark, &low_mark) < 0) {
		leave_alone(g, "the limit fell to the margin or below");
		return false;
	}
	g->margin_warned = false;
	atomic_store(&g->mark_bytes, high_mark);
	/* The event that woke the pass was the kernel's for this mark. */
	watched = signalled && g->armed_threshold_bytes == high_mark;
	if (g->armed_threshold_bytes != high_mark) {
		/* A slow registration waits until the groups with work are
		 * served (register_one()); the group is looked at every
		 * round until then (poll_waiting()), and its registration
		 * comes next when it has work. */
		if (g->be->caps & MRI_CAP_SLOW_THRESHOLD) {
			mri_ctx_register_later(g->ctx, g,
					       l.usage_bytes > high_mark);
		} else {
			if (arm(g, high_mark, &l.usage_bytes) < 0)
				return false;
			read_ns = mri_group_now_ns(g);
		}
	}
	if (l.usage_bytes <= high_mark) {
		g->unreachable_warned = false;
		if (p.margin_adaptive)
			mri_adaptive_forget_reaction(g);
		return false;
	}
	/* The program first, if it takes requests (lib/core/shrink.c):
	 * what it gives back is not taken from the page cache, and may be
	 * the anonymous memory that makes the margin unreachable. */
	r = mri_shrink_before_reclaim(g, l.usage_bytes - low_mark, high_mark,
				      stop != NULL);
	if (r != 0) {
		is_gone(g, r);
		return false;
	}
	r = margin_reachable(g, &l, high_mark);
	if (r <= 0) {
		is_gone(g, r);
		return false;
	}

	boosted = boost_idle && boost(g->ctx);
	mark.mark_bytes = high_mark;
	if (p.margin_adaptive) {
		mri_adaptive_thread_times(g, &cpu_ns, &runq_ns);
		hits = mri_adaptive_own_hits(g);
		/* What the group charged past the mark before the worker
		 * could see it, where the kernel's event for this mark woke
		 * the pass; not from a group at its limit (within a batch of
		 * it), which shows the margin spent, not what was missed:
		 * the limit hits answer that. The reaction is then timed
		 * from the read that measured it. */
		if (watched &&
		    l.usage_bytes + MR_SWAP_CLUSTER_MAX_BYTES < limit)
			over = l.usage_bytes - high_mark;
	}
	start_ns = mri_group_now_ns(g);
	r = mri_reclaim(g, MR_REASON_MARGIN, MR_UNLIMITED, low_mark,
			mri_deadline_ns(start_ns, PASS_NS), stop,
			p.margin_adaptive ? &mark : NULL, &freed);
	unboost(g->ctx, boosted);
	if (p.margin_adaptive) {
		mri_adaptive_thread_times(g, &cpu_end_ns, &runq_end_ns);
		hits = mri_adaptive_own_hits(g) - hits;
		mri_adaptive_note_reclaim(g, over ? read_ns : woke_ns, over,
					  cpu_end_ns - cpu_ns,
					  runq_end_ns - runq_ns,
					  mri_group_now_ns(g) - start_ns,
					  r < 0 ? 0 : freed, hits);
	}
	/* Advisory mode: the kernel refused the group's reclaim control
	 * and no child the caller owns took it instead; the group is left
	 * to statistics and events, and nothing is written again. */
	if (mri_control_refusal(r)) {
		leave_alone(g, "its reclaim was refused (advisory mode)");
		return false;
	}
	if (r < 0) {
		/* -EBUSY: the journal logged who held the lock. */
		if (!is_gone(g, r))
			mri_log(&g->ctx->log,
				r == -EAGAIN || r == -EBUSY ? MR_LOG_DEBUG :
				MR_LOG_ERR, "%s: margin reclaim: %s", g->path,
				mr_strerror(r));
		return false;
	}
	r = g->be->read_usage(g->priv, &usage);
	if (r < 0) {
		is_gone(g, r);
		return false;
	}
	/* The reaction ends where usage came back to the mark, not at the
	 * end of the hysteresis below it: at the run's read that saw it,
	 * or within its last step, which this read confirms. */
	if (p.margin_adaptive && (mark.reached || usage <= high_mark))
		mri_adaptive_note_below(g, mark.reached ? mark.reached_ns :
					mark.crossed ? mark.crossed_ns :
					mri_group_now_ns(g),
					p.adaptive.interval_ns);
	return usage > high_mark;
}

/* When the round that serves g woke (round_ns, CLOCK_MONOTONIC), in g's
 * clock: a virtual clock stands still across a round but for the
 * reclaim it pays for, so its groups' time at the serving is the
 * wake-up's. */
static uint64_t woke(struct mr_group *g, uint64_t round_ns)
{
	return g->be->now_ns ? mri_group_now_ns(g) : round_ns;
}

/* One margin pass over the group `id`, if it is still open. thread: the
 * pass runs on the worker thread (its stop flag ends a reclaim early, and
 * a SCHED_IDLE worker is boosted), not in a caller's dispatch. event: the
 * group is served for its own event, not queued nor in a round over every
 * group: a wake-up the backend says had nothing to do (event_ack() 0, a
 * cgroup2 timer tick below the threshold) is then not worth a pass. A
 * group still above its mark after the pass is queued for the next round
 * (mri_ctx_queue_group()). */
static bool serve(mr_ctx_t *ctx, uint64_t id, bool thread, bool event,
		  uint64_t round_ns)
{
	struct mr_group *g = mri_ctx_get_group(ctx, id);
	bool again = false;
	int acked = 1;
	uint64_t woke_ns;

	if (!g)
		return false;
	woke_ns = woke(g, round_ns);
	/* Waits for a synchronous reclaim on the group, holding only a
	 * reference: opens, closes and fork() go on meanwhile. */
	pthread_mutex_lock(&g->reclaim_lock);
	/* Acked even when gone: the kernel signals the removal once. An
	 * error (the group removed) leaves the pass to find out. */
	if (g->be->caps & MRI_CAP_THRESHOLD)
		acked = g->be->event_ack(g->priv);
	if (!event || acked != 0)
		again = mri_keep_margin(g, thread ? &ctx->worker_stop : NULL,
					thread, woke_ns, event && acked > 0);
	/* The proactive controller, when its interval is over. */
	is_gone(g, mri_proactive_pass(g, thread ? &ctx->worker_stop : NULL));
	pthread_mutex_unlock(&g->reclaim_lock);
	/* Still above its mark: the next round serves it again. */
	if (again)
		mri_ctx_queue_group(ctx, g);
	mri_ctx_put_group(ctx, g);
	return again;
}

/* The registration of the group `id`'s usage threshold at the mark its
 * last pass found (MRI_CAP_SLOW_THRESHOLD: it may wait for a grace period
 * in the kernel), if it still wants one; then a pass if usage is already
 * above the mark. As serve() for the rest. */
static bool register_one(mr_ctx_t *ctx, uint64_t id, bool thread,
			 uint64_t round_ns)
{
	struct mr_group *g = mri_ctx_get_group(ctx, id);
	bool again = false;
	uint64_t mark, usage, woke_ns;

	if (!g)
		return false;
	woke_ns = woke(g, round_ns);
	pthread_mutex_lock(&g->reclaim_lock);
	mark = atomic_load(&g->mark_bytes);
	/* Gone, its margin off or left alone (disarm()), or armed by now:
	 * nothing to register. */
	if (!g->gone && mark != MR_UNLIMITED &&
	    g->armed_threshold_bytes != mark &&
	    arm(g, mark, &usage) == 0 && usage > mark)
		again = mri_keep_margin(g, thread ? &ctx->worker_stop : NULL,
					thread, woke_ns, false);
	pthread_mutex_unlock(&g->reclaim_lock);
	if (again)
		mri_ctx_queue_group(ctx, g);
	mri_ctx_put_group(ctx, g);
	return again;
}

/* The groups waiting for their registration, looked at without a
 * threshold to tell: one read of usage each (the kept fd), and a pass
 * for those above their mark. No memory for the list: the next round
 * tries again. */
static bool poll_waiting(mr_ctx_t *ctx, bool thread, uint64_t round_ns)
{
	struct mr_group *g;
	uint64_t *ids, usage;
	bool again = false, above;
	size_t n, i;

	if (mri_ctx_registering_ids(ctx, &ids, &n) < 0)
		return false;
	for (i = 0; i < n; i++) {
		g = mri_ctx_get_group(ctx, ids[i]);
		if (!g)
			continue;
		/* Read ops run without reclaim_lock. */
		above = g->be->read_usage(g->priv, &usage) == 0 &&
			usage > atomic_load(&g->mark_bytes);
		mri_ctx_put_group(ctx, g);
		if (above)
			again |= serve(ctx, ids[i], thread, false, round_ns);
	}
	free(ids);
	return again;
}

/* The safety round's sample of the group `id`'s conditions (stuck at
 * memory.high, lib/core/stuckhigh.c), if it is still open and there. */
static void sample_conditions(mr_ctx_t *ctx, uint64_t id)
{
	struct mr_group *g = mri_ctx_get_group(ctx, id);

	if (!g)
		return;
	mri_stuck_sample(g);
	mri_ctx_put_group(ctx, g);
}

#define ROUND_EVENTS 32

/* One round of the worker, the thread's and mr_ctx_worker_dispatch()'s
 * alike: takes the pending events off the epoll set without waiting and
 * serves the groups they name, then the groups queued by
 * mri_ctx_wake_group() (opened, their policy or limit changed, or still
 * above their mark after the last pass), and on the context's tick the
 * groups that asked for it (mri_event_sink_tick()); every group instead
 * when `all` (the safety tick, MR_DISPATCH_ALL). Then the groups waiting
 * for a slow threshold registration (MRI_CAP_SLOW_THRESHOLD) are looked
 * at (poll_waiting()), and one of them is registered: the round's last
 * work, so that a registration, which waits for an RCU grace period in
 * the kernel, never comes before a group with work, and delays the next
 * round's by one registration at most. The cost of a round is that of
 * the groups it serves and waits, not of the context's size, but for
 * `all`. Events beyond ROUND_EVENTS stay pending (the epoll set is
 * level-triggered) for the next round. Returns 1 if a group is still
 * above its margin after its pass or registrations are left, 0 if not,
 * or the negative errno of epoll_wait(). */
static int worker_round(mr_ctx_t *ctx, bool all, bool thread)
{
	struct epoll_event evs[ROUND_EVENTS];
	struct cds_list_head batch;
	bool again = false, tick = false;
	uint64_t drain, id, *ids, round_ns = mri_now_ns();
	size_t n, i;
	int nev, k;

	nev = epoll_wait(ctx->epfd, evs, ROUND_EVENTS, 0);
	if (nev < 0) {
		if (errno != EINTR)
			return -errno;
		nev = 0;
	}
	all |= ctx->serve_all;
	CDS_INIT_LIST_HEAD(&batch);
	mri_ctx_take_pending(ctx, &batch);
	for (k = 0; k < nev; k++) {
		if (evs[k].data.u64 == MRI_WAKE_ID &&
		    read(ctx->wakefd, &drain, sizeof(drain)) < 0)
			drain = 0;
		if (evs[k].data.u64 == MRI_TICK_ID) {
			if (read(ctx->tickfd, &drain, sizeof(drain)) < 0)
				drain = 0;
			tick = true;
		}
	}
	if (all && mri_ctx_group_ids(ctx, &ids, &n) == 0) {
		ctx->serve_all = false;
		/* Every group is served: the batch is taken with them. */
		while (mri_ctx_next_pending(ctx, &batch, &id))
			;
		for (i = 0; i < n; i++) {
			again |= serve(ctx, ids[i], thread, false, round_ns);
			sample_conditions(ctx, ids[i]);
		}
		free(ids);
	} else if (all) {
		/* No memory for the list now: the next round tries again. */
		ctx->serve_all = true;
	} else {
		for (k = 0; k < nev; k++) {
			if (evs[k].data.u64 != MRI_WAKE_ID &&
			    evs[k].data.u64 != MRI_TICK_ID)
				again |= serve(ctx, evs[k].data.u64, thread,
					       true, round_ns);
		}
		/* The tick: each group that asked for it, as for its own
		 * event. No memory for the list: the next tick comes in
		 * MRI_TICK_NS. */
		if (tick && mri_ctx_ticking_ids(ctx, &ids, &n) == 0) {
			for (i = 0; i < n; i++)
				again |= serve(ctx, ids[i], thread, true, round_ns);
			free(ids);
		}
	}
	while (mri_ctx_next_pending(ctx, &batch, &id))
		again |= serve(ctx, id, thread, false, round_ns);
	again |= poll_waiting(ctx, thread, round_ns);
	if (!(thread && atomic_load(&ctx->worker_stop)) &&
	    mri_ctx_next_register(ctx, &id))
		again |= register_one(ctx, id, thread, round_ns);
	pthread_mutex_lock(&ctx->lock);
	again |= ctx->nregistering > 0;
	pthread_mutex_unlock(&ctx->lock);
	return again;
}

static void *worker_main(void *arg)
{
	mr_ctx_t *ctx = arg;
	struct epoll_event ev;
	uint64_t last_all_ns = 0;
	bool all = true;
	int r, err = 0;

	apply_sched(ctx);
	while (!atomic_load(&ctx->worker_stop)) {
		if (all)
			last_all_ns = mri_now_ns();
		r = worker_round(ctx, all, true);
		if (r < 0) {
			err = r;
			break;
		}
		/* The safety net (a limit changed by someone else, a group
		 * that stayed above its mark because nothing was
		 * reclaimable, a threshold that did not fire) every
		 * MR_WORKER_SAFETY_NS, busy or not: rounds that follow one
		 * another (registrations, a group above its mark, steady
		 * events) never sleep into the timeout below. */
		all = mri_now_ns() - last_all_ns >= MR_WORKER_SAFETY_NS;
		/* A group still above its margin (queued again by its pass)
		 * or a registration left: the next round at once. And no
		 * sleep when the worker is to stop: the round may have taken
		 * the wake-up. */
		if (r > 0 || atomic_load(&ctx->worker_stop))
			continue;
		/* Sleeps until an event or a wake-up is pending (the round
		 * takes it: the set is level-triggered) or the safety net. */
		r = epoll_wait(ctx->epfd, &ev, 1,
			       (int)(MR_WORKER_SAFETY_NS / 1000000));
		if (r < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		all |= r == 0 ||
		       mri_now_ns() - last_all_ns >= MR_WORKER_SAFETY_NS;
	}
	if (err)
		mri_log(&ctx->log, MR_LOG_ERR, "worker: epoll_wait: %s",
			mr_strerror(err));
	return NULL;
}

MR_EXPORT int mr_ctx_worker_fd(mr_ctx_t *ctx)
{
	int r;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	return r < 0 ? r : ctx->epfd;
}

MR_EXPORT int mr_ctx_worker_dispatch(mr_ctx_t *ctx, unsigned flags)
{
	int r;

	if (!ctx || (flags & ~MR_DISPATCH_ALL))
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	/* One worker per context: two would race for the events and the
	 * wake-up, and each take the other's reclaim for its own. */
	pthread_mutex_lock(&ctx->worker_lock);
	if (ctx->worker_running || ctx->dispatching)
		r = -EBUSY;
	else
		ctx->dispatching = true;
	pthread_mutex_unlock(&ctx->worker_lock);
	if (r < 0)
		return r;
	r = worker_round(ctx, flags & MR_DISPATCH_ALL, false);
	pthread_mutex_lock(&ctx->worker_lock);
	ctx->dispatching = false;
	pthread_mutex_unlock(&ctx->worker_lock);
	return r;
}

/* Under ctx->lock: whether ctx is bound to a backend whose groups live in
 * a virtual clock (MRI_CAP_VIRTUAL_CLOCK, mri_ctx_set_backend_arg()). */
static bool virtual_clock_locked(const mr_ctx_t *ctx)
{
	const struct mri_backend *be;
	unsigned i;

	for (i = 0; i < MRI_MAX_REGISTERED; i++) {
		be = mri_backend_at(i);
		if (be && (be->caps & MRI_CAP_VIRTUAL_CLOCK) &&
		    ctx->backend_arg[i])
			return true;
	}
	return false;
}

MR_EXPORT int mr_ctx_worker_start(mr_ctx_t *ctx)
{
	struct sched_param sp = { .sched_priority = 0 };
	pthread_attr_t attr;
	sigset_t all, old;
	int r;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ctx->worker_lock);
	if (ctx->worker_running || ctx->dispatching) {
		r = ctx->worker_running ? -EALREADY : -EBUSY;
		pthread_mutex_unlock(&ctx->worker_lock);
		return r;
	}
	/* A virtual clock moves only on the thread that drives it: the
	 * worker there is a task of that clock that dispatches, never a
	 * thread racing it (mri_ctx_set_backend_arg() takes worker_lock
	 * too). */
	pthread_mutex_lock(&ctx->lock);
	r = virtual_clock_locked(ctx) ? -EOPNOTSUPP : 0;
	pthread_mutex_unlock(&ctx->lock);
	if (r < 0) {
		pthread_mutex_unlock(&ctx->worker_lock);
		return r;
	}
	atomic_store(&ctx->worker_stop, false);
	/* The worker takes no signal: the program's handling is its own. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* The worker's scheduling is its own, not the caller's (which may be
	 * SCHED_FIFO): SCHED_OTHER at priority 0, then the class of
	 * mr_ctx_set_worker_sched(), applied by the worker. */
	r = pthread_attr_init(&attr);
	if (r == 0) {
		if (pthread_attr_setinheritsched(&attr,
						 PTHREAD_EXPLICIT_SCHED) ||
		    pthread_attr_setschedpolicy(&attr, SCHED_OTHER) ||
		    pthread_attr_setschedparam(&attr, &sp))
			r = EINVAL;
		if (r == 0)
			r = pthread_create(&ctx->worker, &attr, worker_main,
					   ctx);
		pthread_attr_destroy(&attr);
		if (r == EPERM) {
			/* An unprivileged SCHED_IDLE caller may not give a
			 * thread SCHED_OTHER: the worker inherits. */
			mri_log(&ctx->log, MR_LOG_WARNING,
				"worker: SCHED_OTHER refused: %s; the worker "
				"inherits the caller's scheduling",
				mr_strerror(r));
			r = pthread_create(&ctx->worker, NULL, worker_main,
					   ctx);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0) {
		/* For ps, top and /proc/<pid>/task/<tid>/comm. */
		pthread_setname_np(ctx->worker, "memreclaim");
		ctx->worker_running = true;
	}
	pthread_mutex_unlock(&ctx->worker_lock);
	return -r;
}

MR_EXPORT int mr_ctx_worker_stop(mr_ctx_t *ctx)
{
	int r;

	if (!ctx)
		return -EINVAL;
	/* In a child the worker is the parent's thread: nothing to join. */
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ctx->worker_lock);
	if (!ctx->worker_running) {
		pthread_mutex_unlock(&ctx->worker_lock);
		return -ESRCH;
	}
	atomic_store(&ctx->worker_stop, true);
	mri_ctx_wake_worker(ctx);
	pthread_join(ctx->worker, NULL);
	ctx->worker_running = false;
	pthread_mutex_unlock(&ctx->worker_lock);
	return 0;
}
