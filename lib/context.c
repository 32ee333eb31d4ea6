/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context: groups, the log callback, the worker's epoll set. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "group.h"

/* The registry's first size (buckets; a power of two). */
#define REGISTRY_MIN_BUCKETS 16

/* Bumped in the child of every fork(): a handle made before it answers
 * -ECHILD there (the worker thread did not survive the fork). */
static atomic_ulong mri_fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Every context of the process, for the fork handlers. Lock order:
 * the fork lock (fds.h), all_lock, then each ctx->lock. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mr_ctx *all_ctx;

/* Before fork(): no fd of the library is being opened or closed, and no
 * list changes, while the child's copy is taken; liburcu-bp's own state
 * is made safe to copy (urcu-bp asks programs that fork without exec to
 * call its hooks). */
static void on_fork_prepare(void)
{
	struct mr_ctx *c;

	mri_fds_prepare();
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
	mri_fds_parent();
}

/* In the child: the cgroups are the parent's business. Close every fd the
 * library holds, kept or opened for one read by any thread (a copy of a
 * lock's open file description would hold the parent's step lock, a
 * reader's shared lock or the keeper's lock for as long as the child
 * lives), unlock nothing, touch nothing, and make old handles answer
 * -ECHILD; their backends drop the numbers of the closed fds. A child of
 * clone() without fork() runs no handler: do not use handles there. */
static void on_fork_child(void)
{
	struct mr_group *g;
	struct mr_ctx *c;

	urcu_bp_after_fork_child();
	atomic_fetch_add(&mri_fork_gen, 1);
	mri_fds_child();
	for (c = all_ctx; c; c = c->next_ctx) {
		cds_list_for_each_entry(g, &c->groups, link) {
			g->be->forget(g->priv);
			mri_children_forget(g);
		}
		c->epfd = c->wakefd = c->tickfd = -1;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&all_lock);
}

static void install_fork_handler(void)
{
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

int mri_ctx_check_fork(const mr_ctx_t *ctx)
{
	return ctx->fork_gen == atomic_load(&mri_fork_gen) ? 0 : -ECHILD;
}

MRI_PRIVATE_EXPORT int mri_ctx_set_backend_arg(mr_ctx_t *ctx,
					       const struct mri_backend *be,
					       void *arg)
{
	struct mr_group *g;
	int slot, r;

	if (!ctx || !be)
		return -EINVAL;
	slot = mri_backend_slot(be);
	if (slot < 0)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	/* The worker thread must not run in a virtual clock
	 * (mr_ctx_worker_start() checks the arguments under the same two
	 * locks). */
	pthread_mutex_lock(&ctx->worker_lock);
	pthread_mutex_lock(&ctx->lock);
	if (arg && (be->caps & MRI_CAP_VIRTUAL_CLOCK) && ctx->worker_running)
		r = -EBUSY;
	cds_list_for_each_entry(g, &ctx->groups, link) {
		if (g->be == be && ctx->backend_arg[slot] != arg)
			r = -EBUSY;
	}
	if (!r)
		ctx->backend_arg[slot] = arg;
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_unlock(&ctx->worker_lock);
	return r;
}

bool mri_ctx_virtual_clock_locked(const mr_ctx_t *ctx)
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

void mri_ctx_open_env(mr_ctx_t *ctx, const struct mri_backend *be,
		      struct mri_open_env *env)
{
	int slot = mri_backend_slot(be);

	memset(env, 0, sizeof(*env));
	env->log = &ctx->log;
	env->state_dir = ctx->state_dir;
	env->hybrid = &ctx->hybrid;
	if (slot >= 0) {
		pthread_mutex_lock(&ctx->lock);
		env->backend_arg = ctx->backend_arg[slot];
		pthread_mutex_unlock(&ctx->lock);
	}
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
	CDS_INIT_LIST_HEAD(&ctx->registering);
	mri_logger_init(&ctx->log);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_cond_init(&ctx->unref, NULL);
	pthread_mutex_init(&ctx->worker_lock, NULL);
	mri_hybrid_init(&ctx->hybrid);
	strcpy(ctx->state_dir, dir);
	ctx->fork_gen = atomic_load(&mri_fork_gen);
	ctx->next_id = MRI_WAKE_ID + 1;
	ctx->sched = MR_SCHED_NICE;
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
		if (ctx->wakefd >= 0)
			mri_fd_close(ctx->wakefd);
		if (ctx->tickfd >= 0)
			mri_fd_close(ctx->tickfd);
		if (ctx->epfd >= 0)
			mri_fd_close(ctx->epfd);
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
		pthread_mutex_lock(&ctx->lock);
		g = cds_list_empty(&ctx->groups) ? NULL :
		    cds_list_first_entry(&ctx->groups, struct mr_group, link);
		pthread_mutex_unlock(&ctx->lock);
		if (!g)
			break;
		mri_group_destroy(g);
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
		mri_fd_close(ctx->epfd);
	if (ctx->wakefd >= 0)
		mri_fd_close(ctx->wakefd);
	if (ctx->tickfd >= 0)
		mri_fd_close(ctx->tickfd);
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

/* The ids of the `count` groups on the list `head` (their link at
 * `link_offset` in struct mr_group), under ctx->lock, in a new array. */
static int list_ids(mr_ctx_t *ctx, struct cds_list_head *head,
		    const size_t *count, size_t link_offset, uint64_t **ids,
		    size_t *n)
{
	struct cds_list_head *pos;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&ctx->lock);
	if (*count) {
		*ids = malloc(*count * sizeof(**ids));
		if (!*ids) {
			pthread_mutex_unlock(&ctx->lock);
			return -ENOMEM;
		}
	}
	cds_list_for_each(pos, head)
		(*ids)[(*n)++] = ((struct mr_group *)
				  ((char *)pos - link_offset))->id;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int mri_ctx_registering_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return list_ids(ctx, &ctx->registering, &ctx->nregistering,
			offsetof(struct mr_group, register_link), ids, n);
}

int mri_ctx_ticking_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return list_ids(ctx, &ctx->ticking, &ctx->nticking,
			offsetof(struct mr_group, tick_link), ids, n);
}

int mri_ctx_group_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return list_ids(ctx, &ctx->groups, &ctx->ngroups,
			offsetof(struct mr_group, link), ids, n);
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
	unregister_locked(ctx, g);
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
