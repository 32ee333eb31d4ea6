/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The margin worker: one thread per context that keeps each group's usage
 * a margin below its limit (memcg async reclaim, 2011). It sleeps in
 * epoll_wait on the groups' usage-threshold events and a wake-up eventfd;
 * the timeout is only a safety net, never a poll loop.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "group.h"

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

uint64_t mri_margin_bytes(const struct mri_policy *p, uint64_t limit_bytes)
{
	if (p->margin_bytes)
		return p->margin_bytes;
	return (uint64_t)((unsigned __int128)limit_bytes * p->margin_ppm /
			  1000000);
}

int mri_margin_marks(const struct mri_policy *p, uint64_t limit_bytes,
		     uint64_t *high_mark, uint64_t *low_mark)
{
	uint64_t margin = mri_margin_bytes(p, limit_bytes);

	if (limit_bytes == MR_UNLIMITED || margin >= limit_bytes)
		return -ERANGE;
	*high_mark = limit_bytes - margin;
	/* A limit lowered since the margin was set may leave less room than
	 * the hysteresis: never reclaim more than half of what is left. */
	*low_mark = *high_mark - (p->hysteresis_bytes < *high_mark / 2 ?
				  p->hysteresis_bytes : *high_mark / 2);
	return 0;
}

static void disarm(struct mr_group *g)
{
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

bool mri_keep_margin(struct mr_group *g, const atomic_bool *stop)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_policy p;
	uint64_t high_mark, low_mark, freed, usage;
	int r;

	if (!(g->be->caps & MRI_CAP_THRESHOLD) ||
	    !(g->be->caps & MRI_CAP_RECLAIM))
		return false;
	mri_group_policy(g, &p);
	if (!p.margin_bytes && !p.margin_ppm) {
		disarm(g);
		return false;
	}
	r = g->be->read_limits(g->priv, &l);
	if (r < 0) {
		mri_log(&g->ctx->log, MR_LOG_ERR, "%s: reading limits: %s",
			g->path, mr_strerror(r));
		return false;
	}
	if (l.limit_bytes == MR_UNLIMITED) {
		leave_alone(g, "the group has no limit");
		return false;
	}
	if (mri_margin_marks(&p, l.limit_bytes, &high_mark, &low_mark) < 0) {
		leave_alone(g, "the limit fell to the margin or below");
		return false;
	}
	g->margin_warned = false;
	if (g->armed_threshold_bytes != high_mark) {
		r = g->be->set_usage_threshold(g->priv, high_mark);
		if (r < 0)
			mri_log(&g->ctx->log, MR_LOG_ERR,
				"%s: arming threshold at %llu: %s", g->path,
				(unsigned long long)high_mark, mr_strerror(r));
		else
			g->armed_threshold_bytes = high_mark;
	}
	if (l.usage_bytes <= high_mark)
		return false;

	r = mri_reclaim(g, MR_REASON_MARGIN, MR_UNLIMITED, low_mark,
			mri_now_ns() + PASS_NS, stop, &freed);
	if (r < 0) {
		mri_log(&g->ctx->log, r == -EAGAIN ? MR_LOG_DEBUG : MR_LOG_ERR,
			"%s: margin reclaim: %s", g->path, mr_strerror(r));
		return false;
	}
	return g->be->read_usage(g->priv, &usage) == 0 && usage > high_mark;
}

/* Ids of all groups of ctx, in a new array; NULL with *n = 0 if none. */
static uint64_t *all_ids(mr_ctx_t *ctx, size_t *n)
{
	struct mr_group *g;
	uint64_t *ids = NULL;
	size_t count = 0;

	pthread_mutex_lock(&ctx->lock);
	for (g = ctx->groups; g; g = g->next)
		count++;
	if (count)
		ids = malloc(count * sizeof(*ids));
	*n = 0;
	if (ids) {
		for (g = ctx->groups; g; g = g->next)
			ids[(*n)++] = g->id;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ids;
}

static bool serve(mr_ctx_t *ctx, uint64_t id)
{
	struct mr_group *g = mri_ctx_lock_group(ctx, id);
	bool again;

	if (!g)
		return false;
	if (g->be->caps & MRI_CAP_THRESHOLD)
		g->be->event_ack(g->priv);
	again = mri_keep_margin(g, &ctx->worker_stop);
	pthread_mutex_unlock(&g->reclaim_lock);
	return again;
}

void *mri_worker_main(void *arg)
{
	mr_ctx_t *ctx = arg;
	struct epoll_event evs[32];
	bool all = true, again = false;
	uint64_t drain, *ids;
	size_t n, i;
	int nev, k;

	apply_sched(ctx);
	while (!atomic_load(&ctx->worker_stop)) {
		if (all) {
			ids = all_ids(ctx, &n);
			for (i = 0; i < n; i++)
				again |= serve(ctx, ids[i]);
			free(ids);
			all = false;
		}
		nev = epoll_wait(ctx->epfd, evs, 32,
				 again ? 0 : (int)(MR_WORKER_SAFETY_NS / 1000000));
		if (nev < 0 && errno != EINTR) {
			mri_log(&ctx->log, MR_LOG_ERR, "worker: epoll_wait: %s",
				mr_strerror(errno));
			break;
		}
		if (nev <= 0 || again) {
			/* The safety net, or a group still above its margin. */
			all = true;
			again = false;
		}
		for (k = 0; k < nev; k++) {
			if (evs[k].data.u64 == MRI_WAKE_ID) {
				if (read(ctx->wakefd, &drain, sizeof(drain)) < 0)
					drain = 0;
				all = true;
			} else if (!all) {
				again |= serve(ctx, evs[k].data.u64);
			}
		}
	}
	return NULL;
}

MR_EXPORT int mr_ctx_worker_start(mr_ctx_t *ctx)
{
	sigset_t all, old;
	int r;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ctx->worker_lock);
	if (ctx->worker_running) {
		pthread_mutex_unlock(&ctx->worker_lock);
		return -EALREADY;
	}
	atomic_store(&ctx->worker_stop, false);
	/* The worker takes no signal: the program's handling is its own. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&ctx->worker, NULL, mri_worker_main, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		ctx->worker_running = true;
	pthread_mutex_unlock(&ctx->worker_lock);
	return -r;
}

MR_EXPORT int mr_ctx_worker_stop(mr_ctx_t *ctx)
{
	if (!ctx)
		return -EINVAL;
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
