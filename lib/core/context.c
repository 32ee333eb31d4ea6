/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context: its creation and end, its options, the fork handlers. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-bp.h>

#include "childreclaim.h"
#include "context.h"
#include "events.h"
#include "group.h"
#include "registry.h"
#include "worker.h"

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
	mri_fds_child();
	for (c = all_ctx; c; c = c->next_ctx) {
		cds_list_for_each_entry(g, &c->groups, link) {
			g->be->forget(g->priv);
			mri_children_forget(g);
			mri_shrink_forget(&g->shrink);
			/* The conditions eventfd was tracked: closed. */
			g->stuck.fd = -1;
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

/* Each built-in backend's context state (struct mri_backend.ctx_size). */
static void builtin_states_fini(mr_ctx_t *ctx)
{
	size_t i;

	for (i = 0; i < MRI_MAX_BUILTIN && mri_backends[i]; i++) {
		if (!ctx->builtin_state[i])
			continue;
		if (mri_backends[i]->ctx_fini)
			mri_backends[i]->ctx_fini(ctx->builtin_state[i]);
		free(ctx->builtin_state[i]);
		ctx->builtin_state[i] = NULL;
	}
}

static int builtin_states_init(mr_ctx_t *ctx)
{
	const struct mri_backend *be;
	size_t i;
	int r;

	for (i = 0; i < MRI_MAX_BUILTIN && (be = mri_backends[i]); i++) {
		if (!be->ctx_size)
			continue;
		ctx->builtin_state[i] = calloc(1, be->ctx_size);
		r = !ctx->builtin_state[i] ? -ENOMEM :
		    be->ctx_init ? be->ctx_init(ctx->builtin_state[i]) : 0;
		if (r < 0) {
			free(ctx->builtin_state[i]);
			ctx->builtin_state[i] = NULL;
			builtin_states_fini(ctx);
			return r;
		}
	}
	return 0;
}

MR_EXPORT int mr_ctx_new(mr_ctx_t **ret)
{
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
	r = mri_registry_init(ctx);
	if (r < 0) {
		free(ctx);
		return r;
	}
	CDS_INIT_LIST_HEAD(&ctx->pending);
	CDS_INIT_LIST_HEAD(&ctx->ticking);
	CDS_INIT_LIST_HEAD(&ctx->registering);
	mri_logger_init(&ctx->log);
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_cond_init(&ctx->unref, NULL);
	pthread_mutex_init(&ctx->worker_lock, NULL);
	strcpy(ctx->state_dir, dir);
	ctx->fork_gen = atomic_load(&mri_fork_gen);
	ctx->sched = MR_SCHED_NICE;
	r = builtin_states_init(ctx);
	if (r == 0) {
		r = mri_events_init(ctx);
		if (r < 0)
			builtin_states_fini(ctx);
	}
	if (r < 0) {
		pthread_mutex_destroy(&ctx->worker_lock);
		pthread_cond_destroy(&ctx->unref);
		pthread_mutex_destroy(&ctx->lock);
		mri_logger_destroy(&ctx->log);
		mri_registry_fini(ctx);
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
	mri_events_fini(ctx);
	builtin_states_fini(ctx);
	pthread_mutex_destroy(&ctx->worker_lock);
	pthread_cond_destroy(&ctx->unref);
	pthread_mutex_destroy(&ctx->lock);
	mri_logger_destroy(&ctx->log);
	mri_registry_fini(ctx);
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
