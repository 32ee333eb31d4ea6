/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context: groups, the log callback, the worker's epoll set. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "group.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
/* ThreadSanitizer cannot see a lock made new by assignment: told that the
 * child's copy of fork_lock is released, it does not take every later
 * read lock in the child for one of a write-locked lock. */
#define FORK_LOCK_RENEWED(l) \
	(__tsan_mutex_pre_unlock((l), 0), __tsan_mutex_post_unlock((l), 0))
#else
#define FORK_LOCK_RENEWED(l) ((void)(l))
#endif

/* The registry's first size (buckets; a power of two). */
#define REGISTRY_MIN_BUCKETS 16

/* Bumped in the child of every fork(): a handle made before it answers
 * -ECHILD there (the worker thread did not survive the fork). */
static atomic_ulong mri_fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Held for reading while a group's backend fds are opened or closed and
 * the group is not (or no longer) on its context's list; held for writing
 * across fork(), so that the child's handler sees every group that has
 * fds. Writers first: opens cannot starve a fork. */
static pthread_rwlock_t fork_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

/* Every context of the process, for the fork handlers. Lock order:
 * fork_lock, all_lock, then each ctx->lock. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mr_ctx *all_ctx;

void mri_fork_hold(void)
{
	pthread_rwlock_rdlock(&fork_lock);
}

void mri_fork_release(void)
{
	pthread_rwlock_unlock(&fork_lock);
}

/* Before fork(): no group is being opened or closed, and no list changes,
 * while the child's copy is taken; liburcu-bp's own state is made safe to
 * copy (urcu-bp asks programs that fork without exec to call its hooks). */
static void on_fork_prepare(void)
{
	struct mr_ctx *c;

	pthread_rwlock_wrlock(&fork_lock);
	pthread_mutex_lock(&all_lock);
	for (c = all_ctx; c; c = c->next_ctx)
		pthread_mutex_lock(&c->lock);
	urcu_bp_before_fork();
}

static void on_fork_parent(void)
{
	struct mr_ctx *c;

	urcu_bp_after_fork_parent();
	for (c = all_ctx; c; c = c->next_ctx)
		pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&all_lock);
	pthread_rwlock_unlock(&fork_lock);
}

/* In the child: the cgroups are the parent's business. Close every fd the
 * library holds (a copy of a lock's open file description would hold the
 * parent's step lock and the keeper's lock for as long as the child
 * lives), touch nothing, and make old handles answer -ECHILD. A child of
 * clone() without fork() runs no handler: do not use handles there. */
static void on_fork_child(void)
{
	struct mr_group *g;
	struct mr_ctx *c;

	urcu_bp_after_fork_child();
	atomic_fetch_add(&mri_fork_gen, 1);
	for (c = all_ctx; c; c = c->next_ctx) {
		cds_list_for_each_entry(g, &c->groups, link) {
			g->be->forget(g->priv);
			mri_children_forget(g);
		}
		close(c->epfd);
		close(c->wakefd);
		close(c->tickfd);
		c->epfd = c->wakefd = c->tickfd = -1;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&all_lock);
	/* Not unlocked: glibc would take the child's thread, whose id is not
	 * the parent's writer's, for a reader. Made new instead. */
	fork_lock = (pthread_rwlock_t)
		PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	FORK_LOCK_RENEWED(&fork_lock);
}

static void install_fork_handler(void)
{
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

int mri_ctx_check_fork(const mr_ctx_t *ctx)
{
	return ctx->fork_gen == atomic_load(&mri_fork_gen) ? 0 : -ECHILD;
}

MR_EXPORT int mr_ctx_set_sim(mr_ctx_t *ctx, mr_sim_t *sim)
{
	struct mr_group *g;
	int r;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	/* The worker thread must not run on a simulator (worker_start()
	 * checks ctx->sim under the same two locks). */
	pthread_mutex_lock(&ctx->worker_lock);
	pthread_mutex_lock(&ctx->lock);
	if (sim && ctx->worker_running)
		r = -EBUSY;
	cds_list_for_each_entry(g, &ctx->groups, link) {
		if (g->be == &mri_backend_sim && ctx->sim != sim)
			r = -EBUSY;
	}
	if (!r)
		ctx->sim = sim;
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_unlock(&ctx->worker_lock);
	return r;
}

struct mri_logger *mri_ctx_logger(mr_ctx_t *ctx)
{
	return &ctx->log;
}

MR_EXPORT int mr_ctx_new(mr_ctx_t **ret)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = MRI_WAKE_ID };
	struct epoll_event tick = { .events = EPOLLIN, .data.u64 = MRI_TICK_ID };
	const char *dir;
	mr_ctx_t *ctx;
	int r;

	if (!ret)
		return -EINVAL;
	pthread_once(&fork_once, install_fork_handler);
	dir = secure_getenv("MEMRECLAIM_STATE_DIR");
	if (!dir || !*dir)
		dir = MR_DEFAULT_STATE_DIR;
	if (dir[0] != '/' || strlen(dir) >= PATH_MAX - 64)
		return -EINVAL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	/* No CDS_LFHT_AUTO_RESIZE: that would start liburcu's resize
	 * thread in the caller's process; mri_ctx_link_group() grows the
	 * table itself. */
	ctx->registry = cds_lfht_new_flavor(REGISTRY_MIN_BUCKETS,
					    REGISTRY_MIN_BUCKETS, 0, 0,
					    &urcu_bp_flavor, NULL);
	if (!ctx->registry) {
		free(ctx);
		return -ENOMEM;
	}
	ctx->registry_buckets = REGISTRY_MIN_BUCKETS;
	CDS_INIT_LIST_HEAD(&ctx->groups);
	CDS_INIT_LIST_HEAD(&ctx->pending);
	CDS_INIT_LIST_HEAD(&ctx->ticking);
	mri_logger_init(&ctx->log);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_cond_init(&ctx->unref, NULL);
	pthread_mutex_init(&ctx->worker_lock, NULL);
	mri_hybrid_init(&ctx->hybrid);
	strcpy(ctx->state_dir, dir);
	ctx->fork_gen = atomic_load(&mri_fork_gen);
	ctx->next_id = MRI_WAKE_ID + 1;
	ctx->sched = MR_SCHED_NICE;
	ctx->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ctx->tickfd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->wakefd < 0 || ctx->tickfd < 0 || ctx->epfd < 0 ||
	    epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->wakefd, &ev) < 0 ||
	    epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->tickfd, &tick) < 0) {
		r = -errno;
		if (ctx->wakefd >= 0)
			close(ctx->wakefd);
		if (ctx->tickfd >= 0)
			close(ctx->tickfd);
		if (ctx->epfd >= 0)
			close(ctx->epfd);
		mri_hybrid_destroy(&ctx->hybrid);
		pthread_mutex_destroy(&ctx->worker_lock);
		pthread_cond_destroy(&ctx->unref);
		pthread_mutex_destroy(&ctx->lock);
		mri_logger_destroy(&ctx->log);
		cds_lfht_destroy(ctx->registry, NULL);
		free(ctx);
		return r;
	}
	pthread_mutex_lock(&all_lock);
	ctx->next_ctx = all_ctx;
	all_ctx = ctx;
	pthread_mutex_unlock(&all_lock);
	*ret = ctx;
	return 0;
}

MR_EXPORT void mr_ctx_free(mr_ctx_t *ctx)
{
	struct mr_ctx **pp;
	struct mr_group *g;

	if (!ctx)
		return;
	if (mri_ctx_check_fork(ctx) == 0)
		mr_ctx_worker_stop(ctx);
	for (;;) {
		mri_fork_hold();
		pthread_mutex_lock(&ctx->lock);
		g = cds_list_empty(&ctx->groups) ? NULL :
		    cds_list_first_entry(&ctx->groups, struct mr_group, link);
		pthread_mutex_unlock(&ctx->lock);
		if (g)
			mri_group_destroy(g);
		mri_fork_release();
		if (!g)
			break;
	}
	pthread_mutex_lock(&all_lock);
	for (pp = &all_ctx; *pp; pp = &(*pp)->next_ctx) {
		if (*pp == ctx) {
			*pp = ctx->next_ctx;
			break;
		}
	}
	pthread_mutex_unlock(&all_lock);
	if (ctx->epfd >= 0)
		close(ctx->epfd);
	if (ctx->wakefd >= 0)
		close(ctx->wakefd);
	if (ctx->tickfd >= 0)
		close(ctx->tickfd);
	mri_hybrid_destroy(&ctx->hybrid);
	pthread_mutex_destroy(&ctx->worker_lock);
	pthread_cond_destroy(&ctx->unref);
	pthread_mutex_destroy(&ctx->lock);
	mri_logger_destroy(&ctx->log);
	/* Empty: every group was unlinked above. */
	cds_lfht_destroy(ctx->registry, NULL);
	free(ctx);
}

MR_EXPORT int mr_ctx_set_log(mr_ctx_t *ctx, mr_log_fn fn, void *userdata,
			     int max_level)
{
	if (!ctx || max_level < 0 || max_level > MR_LOG_DEBUG)
		return -EINVAL;
	pthread_mutex_lock(&ctx->log.lock);
	ctx->log.fn = fn;
	ctx->log.userdata = userdata;
	ctx->log.max_level = max_level;
	pthread_mutex_unlock(&ctx->log.lock);
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

int mri_ctx_ticking_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	struct mr_group *g;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->nticking) {
		*ids = malloc(ctx->nticking * sizeof(**ids));
		if (!*ids) {
			pthread_mutex_unlock(&ctx->lock);
			return -ENOMEM;
		}
	}
	cds_list_for_each_entry(g, &ctx->ticking, tick_link)
		(*ids)[(*n)++] = g->id;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int mri_ctx_group_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	struct mr_group *g;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->ngroups) {
		*ids = malloc(ctx->ngroups * sizeof(**ids));
		if (!*ids) {
			pthread_mutex_unlock(&ctx->lock);
			return -ENOMEM;
		}
	}
	cds_list_for_each_entry(g, &ctx->groups, link)
		(*ids)[(*n)++] = g->id;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* Ids are handed out in sequence: as their own hash they fill the
 * table's buckets evenly (the split-ordered list indexes buckets by the
 * low bits). */
static unsigned long id_hash(uint64_t id)
{
	return (unsigned long)id;
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct mr_group, node)->id ==
	       *(const uint64_t *)key;
}

struct mr_group *mri_ctx_get_group(mr_ctx_t *ctx, uint64_t id)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct mr_group *g = NULL;

	urcu_bp_read_lock();
	cds_lfht_lookup(ctx->registry, id_hash(id), match_id, &id, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node) {
		g = caa_container_of(node, struct mr_group, node);
		/* Inside the read-side section: mri_ctx_unlink_group()
		 * waits for a grace period after taking g out, then for
		 * every reference taken before. */
		atomic_fetch_add(&g->refs, 1);
	}
	urcu_bp_read_unlock();
	return g;
}

void mri_ctx_put_group(mr_ctx_t *ctx, struct mr_group *g)
{
	/* g may be freed as soon as the count is 0: not touched after. */
	if (atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	pthread_mutex_lock(&ctx->lock);
	pthread_cond_broadcast(&ctx->unref);
	pthread_mutex_unlock(&ctx->lock);
}

uint64_t mri_ctx_new_id(mr_ctx_t *ctx)
{
	uint64_t id;

	pthread_mutex_lock(&ctx->lock);
	id = ctx->next_id++;
	pthread_mutex_unlock(&ctx->lock);
	return id;
}

void mri_ctx_link_group(mr_ctx_t *ctx, struct mr_group *g)
{
	cds_lfht_node_init(&g->node);
	cds_list_add_tail(&g->link, &ctx->groups);
	urcu_bp_read_lock();
	cds_lfht_add(ctx->registry, id_hash(g->id), &g->node);
	urcu_bp_read_unlock();
	/* Doubling keeps chains short at an amortised O(1) per open. The
	 * resize waits for grace periods, which no reader holding ctx->lock
	 * can block (lookups take no lock). A table that cannot get the
	 * memory stays as it is: longer chains, nothing lost. */
	if (++ctx->ngroups > ctx->registry_buckets) {
		ctx->registry_buckets *= 2;
		cds_lfht_resize(ctx->registry, ctx->registry_buckets);
	}
}

void mri_ctx_unlink_group(mr_ctx_t *ctx, struct mr_group *g)
{
	pthread_mutex_lock(&ctx->lock);
	cds_list_del(&g->link);
	if (g->pending)
		cds_list_del(&g->pending_link); /* from the queue or a batch */
	g->pending = false;
	tick_locked(ctx, g, false);
	ctx->ngroups--;
	urcu_bp_read_lock();
	cds_lfht_del(ctx->registry, &g->node);
	urcu_bp_read_unlock();
	pthread_mutex_unlock(&ctx->lock);
	/* Every lookup that found g has taken its reference by now. */
	urcu_bp_synchronize_rcu();
	/* In a child after fork() the references were the parent's worker
	 * thread's, which is not here: nothing to wait for. */
	pthread_mutex_lock(&ctx->lock);
	while (atomic_load(&g->refs) && mri_ctx_check_fork(ctx) == 0)
		pthread_cond_wait(&ctx->unref, &ctx->lock);
	pthread_mutex_unlock(&ctx->lock);
}
