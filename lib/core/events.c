/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A context's events: the worker's epoll set, wake-ups, the tick, the
 * round's queue and the registrations waiting (see events.h). */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "context.h"
#include "events.h"
#include "fds.h"
#include "group.h"

int mri_events_init(mr_ctx_t *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = MRI_WAKE_ID };
	struct epoll_event tick = { .events = EPOLLIN, .data.u64 = MRI_TICK_ID };
	int r;

	mri_fd_begin();
	r = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ctx->wakefd = mri_fd_end(r < 0 ? -errno : r);
	mri_fd_begin();
	r = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ctx->tickfd = mri_fd_end(r < 0 ? -errno : r);
	mri_fd_begin();
	r = epoll_create1(EPOLL_CLOEXEC);
	ctx->epfd = mri_fd_end(r < 0 ? -errno : r);
	r = ctx->wakefd < 0 ? ctx->wakefd : ctx->tickfd < 0 ? ctx->tickfd :
	    ctx->epfd;
	if (r >= 0 &&
	    (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->wakefd, &ev) < 0 ||
	     epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->tickfd, &tick) < 0))
		r = -errno;
	if (r < 0) {
		mri_events_fini(ctx);
		return r;
	}
	return 0;
}

void mri_events_fini(mr_ctx_t *ctx)
{
	if (ctx->epfd >= 0)
		mri_fd_close(ctx->epfd);
	if (ctx->wakefd >= 0)
		mri_fd_close(ctx->wakefd);
	if (ctx->tickfd >= 0)
		mri_fd_close(ctx->tickfd);
	ctx->epfd = ctx->wakefd = ctx->tickfd = -1;
}

/* The group's struct mri_event_sink: the backend's new event fd, before the old one
 * is closed. Until the group is linked only recorded (mri_events_poll_locked()
 * adds it with the link); after mri_group_unpoll() ignored. */
static int sink_event_fd(void *arg, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events };
	struct mr_group *g = arg;
	mr_ctx_t *ctx = g->ctx;
	int r = 0;

	pthread_mutex_lock(&ctx->lock);
	if (g->polled && fd != g->event_fd) {
		ev.data.u64 = g->id;
		if (fd >= 0 && epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			r = -errno;
		else if (g->event_fd >= 0)
			epoll_ctl(ctx->epfd, EPOLL_CTL_DEL, g->event_fd, NULL);
	}
	if (!r) {
		g->event_fd = fd;
		g->event_events = events;
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* The group's struct mri_event_sink: the context's tick. Ignored after
 * mri_group_unpoll(). */
static int sink_tick(void *arg, bool on)
{
	struct mr_group *g = arg;

	return mri_ctx_tick(g->ctx, g, on);
}

void mri_group_unpoll(struct mr_group *g)
{
	pthread_mutex_lock(&g->ctx->lock);
	if (g->polled && g->event_fd >= 0)
		epoll_ctl(g->ctx->epfd, EPOLL_CTL_DEL, g->event_fd, NULL);
	g->polled = false;
	g->retired = true;
	pthread_mutex_unlock(&g->ctx->lock);
	mri_ctx_tick(g->ctx, g, false);
}

void mri_events_sink(struct mr_group *g, struct mri_event_sink *sink)
{
	sink->fn = sink_event_fd;
	sink->tick = sink_tick;
	sink->arg = g;
}

int mri_events_poll_locked(mr_ctx_t *ctx, struct mr_group *g)
{
	struct epoll_event ev = { .events = g->event_events,
				  .data.u64 = g->id };

	if (g->event_fd >= 0 &&
	    epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, g->event_fd, &ev) < 0)
		return -errno;
	g->polled = true;
	return 0;
}

void mri_ctx_wake_worker(mr_ctx_t *ctx)
{
	uint64_t one = 1;

	/* EAGAIN (counter saturated) still leaves it readable. */
	if (write(ctx->wakefd, &one, sizeof(one)) < 0)
		return;
}

void mri_ctx_queue_group(mr_ctx_t *ctx, struct mr_group *g)
{
	pthread_mutex_lock(&ctx->lock);
	if (!g->pending) {
		cds_list_add_tail(&g->pending_link, &ctx->pending);
		g->pending = true;
	}
	pthread_mutex_unlock(&ctx->lock);
}

void mri_ctx_wake_group(mr_ctx_t *ctx, struct mr_group *g)
{
	mri_ctx_queue_group(ctx, g);
	mri_ctx_wake_worker(ctx);
}

void mri_ctx_take_pending(mr_ctx_t *ctx, struct cds_list_head *batch)
{
	pthread_mutex_lock(&ctx->lock);
	cds_list_splice(&ctx->pending, batch);
	CDS_INIT_LIST_HEAD(&ctx->pending);
	pthread_mutex_unlock(&ctx->lock);
}

bool mri_ctx_next_pending(mr_ctx_t *ctx, struct cds_list_head *batch,
			  uint64_t *id)
{
	struct mr_group *g = NULL;

	pthread_mutex_lock(&ctx->lock);
	if (!cds_list_empty(batch)) {
		g = cds_list_first_entry(batch, struct mr_group, pending_link);
		cds_list_del(&g->pending_link);
		g->pending = false;
		*id = g->id;
	}
	pthread_mutex_unlock(&ctx->lock);
	return g != NULL;
}

/* Under ctx->lock: g on or off the tick; the timer runs while a group is
 * on it. */
static int tick_locked(mr_ctx_t *ctx, struct mr_group *g, bool on)
{
	struct itimerspec its = { 0 };

	if (on == g->ticking)
		return 0;
	if (on && ctx->nticking == 0) {
		its.it_interval.tv_nsec = (long)MRI_TICK_NS;
		its.it_value.tv_nsec = (long)MRI_TICK_NS;
		if (timerfd_settime(ctx->tickfd, 0, &its, NULL) < 0)
			return -errno;
	} else if (!on && ctx->nticking == 1) {
		/* Best effort: a spare tick serves nobody. */
		timerfd_settime(ctx->tickfd, 0, &its, NULL);
	}
	if (on) {
		cds_list_add_tail(&g->tick_link, &ctx->ticking);
		ctx->nticking++;
	} else {
		cds_list_del(&g->tick_link);
		ctx->nticking--;
	}
	g->ticking = on;
	return 0;
}

int mri_ctx_tick(mr_ctx_t *ctx, struct mr_group *g, bool on)
{
	int r;

	pthread_mutex_lock(&ctx->lock);
	/* A group taken off for good (gone, closing) stays off. */
	r = on && g->retired ? 0 : tick_locked(ctx, g, on);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

void mri_ctx_register_later(mr_ctx_t *ctx, struct mr_group *g, bool first)
{
	pthread_mutex_lock(&ctx->lock);
	/* Not for a group taken off for good (gone, closing). */
	if (!g->retired && (first || !g->registering)) {
		if (g->registering)
			cds_list_del(&g->register_link);
		else
			ctx->nregistering++;
		if (first)
			cds_list_add(&g->register_link, &ctx->registering);
		else
			cds_list_add_tail(&g->register_link, &ctx->registering);
		g->registering = true;
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* Under ctx->lock: g off ctx->registering. */
static void unregister_locked(mr_ctx_t *ctx, struct mr_group *g)
{
	if (!g->registering)
		return;
	cds_list_del(&g->register_link);
	g->registering = false;
	ctx->nregistering--;
}

bool mri_ctx_next_register(mr_ctx_t *ctx, uint64_t *id)
{
	struct mr_group *g = NULL;

	pthread_mutex_lock(&ctx->lock);
	if (!cds_list_empty(&ctx->registering)) {
		g = cds_list_first_entry(&ctx->registering, struct mr_group,
					 register_link);
		unregister_locked(ctx, g);
		*id = g->id;
	}
	pthread_mutex_unlock(&ctx->lock);
	return g != NULL;
}

int mri_ctx_registering_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return mri_ctx_list_ids(ctx, &ctx->registering, &ctx->nregistering,
			offsetof(struct mr_group, register_link), ids, n);
}

int mri_ctx_ticking_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return mri_ctx_list_ids(ctx, &ctx->ticking, &ctx->nticking,
			offsetof(struct mr_group, tick_link), ids, n);
}

void mri_events_unlink_locked(mr_ctx_t *ctx, struct mr_group *g)
{
	if (g->pending)
		cds_list_del(&g->pending_link); /* from the queue or a batch */
	g->pending = false;
	tick_locked(ctx, g, false);
	unregister_locked(ctx, g);
}
