/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of backends: those built in, those other libraries
 * register, and what a context binds for a registered one. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "backend.h"
#include "context.h"
#include "group.h"

/* The order "auto" tries them in. */
const struct mri_backend *const mri_backends[] = {
	&mri_backend_cgroup2,
	&mri_backend_cgroup1,
	NULL,
};

/* Registered tables, in registration order, never removed: a slot is
 * written once, under reg_lock, after the table it points to is complete,
 * so a lookup reads the slots with no lock. A program that opens a real
 * path never silently gets a group of one of them: they are chosen only
 * by name. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const struct mri_backend *) registered[MRI_MAX_REGISTERED];

static const struct mri_backend *find_builtin(const char *name)
{
	size_t i;

	for (i = 0; mri_backends[i]; i++) {
		if (strcmp(mri_backends[i]->name, name) == 0)
			return mri_backends[i];
	}
	return NULL;
}

/* The slot holding a table named `name`, or -1. */
static int find_registered(const char *name)
{
	const struct mri_backend *be;
	unsigned i;

	for (i = 0; i < MRI_MAX_REGISTERED; i++) {
		be = atomic_load_explicit(&registered[i], memory_order_acquire);
		if (!be)
			break;
		if (strcmp(be->name, name) == 0)
			return (int)i;
	}
	return -1;
}

MRI_PRIVATE_EXPORT int mri_backend_register(const struct mri_backend *be)
{
	unsigned i;
	int slot, r = 0;

	if (!be || !be->name || !*be->name || strcmp(be->name, "auto") == 0 ||
	    !be->probe || !be->open || !be->close || !be->read_usage ||
	    !be->read_limits || !be->read_memstat || !be->forget)
		return -EINVAL;
	/* Context state is for built-in backends alone (the core makes it
	 * at mr_ctx_new(), before any library could register). */
	if (be->ctx_size || be->ctx_init || be->ctx_fini)
		return -EINVAL;
	if (find_builtin(be->name))
		return -EEXIST;
	pthread_mutex_lock(&reg_lock);
	slot = find_registered(be->name);
	if (slot >= 0) {
		if (atomic_load_explicit(&registered[slot],
					 memory_order_relaxed) != be)
			r = -EEXIST;
	} else {
		for (i = 0; i < MRI_MAX_REGISTERED; i++) {
			if (!atomic_load_explicit(&registered[i],
						  memory_order_relaxed))
				break;
		}
		if (i == MRI_MAX_REGISTERED)
			r = -ENOSPC;
		else
			atomic_store_explicit(&registered[i], be,
					      memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	return r;
}

const struct mri_backend *mri_backend_find(const char *name)
{
	const struct mri_backend *be = find_builtin(name);
	int slot;

	if (be)
		return be;
	slot = find_registered(name);
	return slot < 0 ? NULL : mri_backend_at((unsigned)slot);
}

int mri_backend_slot(const struct mri_backend *be)
{
	unsigned i;

	if (!be)
		return -1;
	for (i = 0; i < MRI_MAX_REGISTERED; i++) {
		if (atomic_load_explicit(&registered[i],
					 memory_order_acquire) == be)
			return (int)i;
	}
	return -1;
}

const struct mri_backend *mri_backend_at(unsigned slot)
{
	if (slot >= MRI_MAX_REGISTERED)
		return NULL;
	return atomic_load_explicit(&registered[slot], memory_order_acquire);
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
