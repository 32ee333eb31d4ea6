/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A context (lib/core/context.c): its groups' list and registry
 * (lib/core/registry.c), its events and the worker's epoll set
 * (lib/core/events.c), the worker's state (lib/core/worker.c), its log
 * and options, and the fork check every entry point makes.
 */
#ifndef MR_CONTEXT_H
#define MR_CONTEXT_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/list.h>
#include <urcu/rculfhash.h>

#include "backend.h"
#include "fds.h"
#include "group.h"
#include "log.h"
#include "memreclaim.h"

struct mr_ctx {
	struct mr_ctx *next_ctx;          /* every context: context.c */
	struct mri_logger log;
	char state_dir[PATH_MAX];
	/* Per registry slot (mri_backend_slot()): what opens pass that
	 * backend (mri_ctx_set_backend_arg()), or NULL. */
	void *backend_arg[MRI_MAX_REGISTERED];
	/* Per built-in backend (mri_backends[]), its context state
	 * (struct mri_backend.ctx_size), or NULL. */
	void *builtin_state[MRI_MAX_BUILTIN];
	char process_leaf[256];           /* mr_ctx_set_process_leaf(), or "" */
	unsigned long fork_gen;           /* mri_fork_gen at creation */
	pthread_mutex_t lock;             /* groups, registry writes, next_id */
	pthread_cond_t unref;             /* a group's refs fell to 0 */
	struct cds_list_head groups;      /* in opening order */
	/* Groups a round must serve besides those its events name: opened,
	 * their policy or limit changed, or left above their mark by the
	 * last pass (mri_ctx_wake_group()). */
	struct cds_list_head pending;
	/* Groups whose backend asked for the tick, and the timerfd (in
	 * epfd as MRI_TICK_ID) that runs while there is one. */
	struct cds_list_head ticking;
	size_t nticking;
	int tickfd;
	/* Groups whose usage threshold waits to be registered, those found
	 * above their mark first (mri_ctx_register_later()). */
	struct cds_list_head registering;
	size_t nregistering;
	/* The open groups by id (liburcu-bp's lock-free hash table): the
	 * worker finds an event's group in O(1) without ctx->lock. Grown by
	 * doubling when the groups outnumber its buckets (no resize
	 * thread), never shrunk. */
	struct cds_lfht *registry;
	size_t ngroups;
	unsigned long registry_buckets;
	uint64_t next_id;
	int epfd;                         /* groups' event fds + wakefd */
	int wakefd;                       /* eventfd: wakes the worker */
	/* Serialises worker start/stop and the start and end of a dispatch;
	 * guards the five fields below. Never taken by the worker thread,
	 * nor held across a round. Taken before ctx->lock when both are
	 * (mri_ctx_set_backend_arg() and mr_ctx_worker_start() check
	 * backend_arg and worker_running under both). */
	pthread_mutex_t worker_lock;
	bool worker_running;
	bool dispatching;                 /* mr_ctx_worker_dispatch() runs */
	pthread_t worker;
	int sched;
	int nice;
	atomic_bool worker_stop;
	/* The last round was to serve every group but could not get the
	 * memory for the list: the next one tries again. Only the worker
	 * (the thread, or the one dispatch that runs) touches it. */
	bool serve_all;
};

/* epoll keys of ctx->wakefd and ctx->tickfd. Group ids start at 1 and
 * never reach MRI_TICK_ID. */
#define MRI_WAKE_ID 0
#define MRI_TICK_ID UINT64_MAX

/* The ctx's logger, for other library files. */
static inline struct mri_logger *mri_ctx_logger(mr_ctx_t *ctx)
{
	return &ctx->log;
}

/* -ECHILD if ctx was created before a fork() in this process, else 0.
 * Inline: every entry point of the core asks. */
static inline int mri_ctx_check_fork(const mr_ctx_t *ctx)
{
	return ctx->fork_gen == atomic_load(&mri_fork_gen) ? 0 : -ECHILD;
}

/* The ids of the `count` groups on the list `head` (their link at
 * `link_offset` in struct mr_group), under ctx->lock, in a new array. */
static inline int mri_ctx_list_ids(mr_ctx_t *ctx, struct cds_list_head *head,
				   const size_t *count, size_t link_offset,
				   uint64_t **ids, size_t *n)
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


/* ctx's state of the built-in backend be (struct mri_backend.ctx_size),
 * or NULL (be has none, or is not built in). */
static inline void *mri_ctx_backend_state(mr_ctx_t *ctx,
					  const struct mri_backend *be)
{
	size_t i;

	for (i = 0; i < MRI_MAX_BUILTIN && mri_backends[i]; i++) {
		if (mri_backends[i] == be)
			return ctx->builtin_state[i];
	}
	return NULL;
}

/* Fills *env for an open of a group of `be` in ctx: ctx's logger, state
 * directory, its state of be (built in) or what it bound for be
 * (registered), no event sink
 * (the caller sets env->events if it polls the handle). Takes ctx->lock
 * for a moment. */
static inline void mri_ctx_open_env(mr_ctx_t *ctx,
				    const struct mri_backend *be,
				    struct mri_open_env *env)
{
	int slot = mri_backend_slot(be);

	memset(env, 0, sizeof(*env));
	env->log = &ctx->log;
	env->state_dir = ctx->state_dir;
	env->ctx_state = mri_ctx_backend_state(ctx, be);
	if (slot >= 0) {
		pthread_mutex_lock(&ctx->lock);
		env->backend_arg = ctx->backend_arg[slot];
		pthread_mutex_unlock(&ctx->lock);
	}
}

#endif /* MR_CONTEXT_H */
