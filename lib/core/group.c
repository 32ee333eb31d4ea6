/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A managed group: open, close, reads and statistics (its knobs are
 * lib/core/knobs.c). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "context.h"
#include "control.h"
#include "events.h"
#include "fdbudget.h"
#include "group.h"
#include "path.h"
#include "psitrigger.h"
#include "registry.h"

/* The explicit name first, then MEMRECLAIM_BACKEND, then "auto". */
static int choose_backend(mr_ctx_t *ctx, const char *name, const char *path,
			  const struct mri_backend **out)
{
	const struct mri_backend *be;
	int r, first_err = 0;
	size_t i;

	if (!name) {
		name = secure_getenv("MEMRECLAIM_BACKEND");
		if (name && !*name)
			name = NULL; /* set but empty: as if unset */
	}
	if (name && strcmp(name, "auto") != 0) {
		be = mri_backend_find(name);
		if (!be) {
			mri_log(&ctx->log, MR_LOG_DEBUG, "%s: no backend named "
				"\"%s\" (built in: cgroup1, cgroup2; \"sim\" "
				"comes with libmemreclaim-sim)", path, name);
			return -EINVAL;
		}
		r = be->probe(path);
		if (r < 0)
			return r;
		if (r == 0) {
			mri_log(&ctx->log, MR_LOG_DEBUG, "%s: not a group of "
				"the backend %s", path, name);
			return -ENODEV;
		}
		*out = be;
		return 0;
	}
	for (i = 0; mri_backends[i]; i++) {
		r = mri_backends[i]->probe(path);
		if (r > 0) {
			*out = mri_backends[i];
			return 0;
		}
		if (r < 0 && !first_err)
			first_err = r;
	}
	if (first_err)
		return first_err;
	/* The probes' answers, in words: cgroup1.c cg1_probe(), cgroup2.c
	 * cg2_probe(). */
	mri_log(&ctx->log, MR_LOG_INFO, "%s: no backend takes it: neither "
		"a group of a cgroup v1 memory hierarchy (with "
		"memory.usage_in_bytes and memory.limit_in_bytes) nor a "
		"cgroup2 group below the root", path);
	return -ENODEV;
}

static void group_free(struct mr_group *g)
{
	mri_charge_fini(&g->charge);
	pthread_mutex_destroy(&g->policy_lock);
	pthread_mutex_destroy(&g->reclaim_lock);
	mri_proactive_destroy(&g->proactive);
	free(g->policy);
	free(g->priv);
	free(g->path);
	free(g);
}

MR_EXPORT int mr_group_open(mr_ctx_t *ctx, const char *path,
			    const char *backend, mr_group_t **ret)
{
	const struct mri_backend *be = NULL;
	char norm[PATH_MAX];
	int r;

	if (!ctx || !path || !ret)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	r = mri_path_normalize(path, norm, sizeof(norm));
	if (r < 0)
		return r;
	r = choose_backend(ctx, backend, norm, &be);
	if (r < 0)
		return r;
	return mri_group_open(ctx, norm, be, ret);
}

int mri_group_open(mr_ctx_t *ctx, const char *path,
		   const struct mri_backend *be, struct mr_group **ret)
{
	struct mri_open_env env;
	struct mr_group *g;
	int r = 0;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->policy_lock, NULL);
	pthread_mutex_init(&g->reclaim_lock, NULL);
	mri_proactive_init(&g->proactive);
	g->ctx = ctx;
	g->be = be;
	g->event_fd = -1;
	g->armed_threshold_bytes = MR_UNLIMITED;
	atomic_init(&g->reclaim_swappiness, -1);
	atomic_init(&g->mark_bytes, MR_UNLIMITED);
	g->path = strdup(path);
	g->priv = calloc(1, be->priv_size ? be->priv_size : 1);
	g->policy = malloc(sizeof(*g->policy));
	if (mri_charge_init(&g->charge) < 0 || !g->path || !g->priv ||
	    !g->policy) {
		group_free(g);
		return -ENOMEM;
	}
	*g->policy = mri_default_policy;
	g->id = mri_ctx_new_id(ctx);

	mri_ctx_open_env(ctx, be, &env);
	mri_events_sink(g, &env.events);
	/* The fds the group keeps, and the worker's passes room to run. */
	r = mri_fd_budget(&ctx->log, ctx->epfd, be->open_fds, g->path,
			  "opening the group");
	if (r < 0) {
		group_free(g);
		return r;
	}
	/* Not on the list yet: a fork() now gives the child copies of fds
	 * that its handler closes all the same (they are tracked, fds.h). */
	r = be->open(g->priv, g->path, &env);
	if (r < 0) {
		mri_ctx_tick(ctx, g, false);
		mri_log(&ctx->log, MR_LOG_DEBUG, "%s: open (%s): %s", g->path,
			be->name, mr_strerror(r));
		group_free(g);
		return r;
	}

	/* The event fd joins the set as the group joins the registry: the
	 * worker never sees an event it cannot route. */
	pthread_mutex_lock(&ctx->lock);
	r = mri_events_poll_locked(ctx, g);
	if (!r)
		mri_ctx_link_group(ctx, g);
	pthread_mutex_unlock(&ctx->lock);
	if (r < 0) {
		be->close(g->priv);
		mri_ctx_tick(ctx, g, false);
		group_free(g);
		return r;
	}
	mri_ctx_wake_group(ctx, g); /* a running worker serves it at once */
	*ret = g;
	return 0;
}

int mri_group_destroy(struct mr_group *g)
{
	int r;

	/* In a child after fork() the set is closed and the parent's. */
	if (mri_ctx_check_fork(g->ctx) == 0)
		mri_group_unpoll(g);
	mri_ctx_unlink_group(g->ctx, g);
	/* In a child after fork() the cgroup is the parent's business: the
	 * fork handler closed the fds; drop their numbers, free the memory. */
	if (mri_ctx_check_fork(g->ctx) < 0) {
		g->be->forget(g->priv);
		mri_children_close(g, true);
		group_free(g);
		return -ECHILD;
	}
	/* Wait for a worker pass or a synchronous reclaim in progress. */
	pthread_mutex_lock(&g->reclaim_lock);
	mri_children_close(g, false);
	pthread_mutex_unlock(&g->reclaim_lock);
	r = g->be->close(g->priv);
	if (r < 0)
		mri_log(&g->ctx->log, MR_LOG_ERR, "%s: close: %s", g->path,
			mr_strerror(r));
	group_free(g);
	return r;
}

MR_EXPORT int mr_group_close(mr_group_t *g)
{
	if (!g)
		return 0;
	return mri_group_destroy(g);
}

MR_EXPORT const char *mr_group_path(const mr_group_t *g)
{
	return g ? g->path : NULL;
}

MR_EXPORT const char *mr_group_backend(const mr_group_t *g)
{
	return g ? g->be->name : NULL;
}

MR_EXPORT int mr_group_read_usage(mr_group_t *g, uint64_t *usage_bytes)
{
	int r;

	if (!g || !usage_bytes)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	return r < 0 ? r : g->be->read_usage(g->priv, usage_bytes);
}

/* Copies a snapshot to a caller's struct of dst_size bytes (its first
 * field, size_t size, is left as the caller set it): fields the caller's
 * version does not have are not written, fields this version does not
 * have are not touched. */
static void copy_sized(void *dst, size_t dst_size, const void *src,
		       size_t src_size)
{
	size_t n = dst_size < src_size ? dst_size : src_size;

	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       n - sizeof(size_t));
}

MR_EXPORT int mr_group_read_limits(mr_group_t *g, struct mr_limits *limits)
{
	struct mr_limits l = { .size = sizeof(l) };
	int r;

	if (!g || !limits ||
	    limits->size < offsetof(struct mr_limits, limit_bytes))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	r = g->be->read_limits(g->priv, &l);
	if (r < 0)
		return r;
	mri_charge_note_limits(g, &l);
	copy_sized(limits, limits->size, &l, sizeof(l));
	return 0;
}

MR_EXPORT int mr_group_read_protection(mr_group_t *g, uint32_t root_level,
					struct mr_protection *out)
{
	struct mr_protection p = { .size = sizeof(p) };
	struct mr_limits l = { .size = sizeof(l) };
	int r;

	if (!g || !out ||
	    out->size < offsetof(struct mr_protection, low_bytes))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->read_protection)
		return -EOPNOTSUPP;
	if (root_level == MR_RECLAIM_ROOT_BINDING) {
		/* A charge that meets the binding limit reclaims from the
		 * group that sets it (try_charge_memcg(): mem_over_limit);
		 * with no limit, reclaim is global. */
		r = g->be->read_limits(g->priv, &l);
		if (r < 0)
			return r;
		root_level = l.limit_bytes != MR_UNLIMITED &&
			     (l.present & MR_LIMITS_HAS_BINDING) ?
			     l.binding_level : MR_RECLAIM_ROOT_TOP;
	}
	r = g->be->read_protection(g->priv, root_level, &p);
	if (r < 0)
		return r;
	copy_sized(out, out->size, &p, sizeof(p));
	return 0;
}

MR_EXPORT int mr_group_read_memstat(mr_group_t *g, struct mr_memstat *stat)
{
	struct mr_memstat st = { .size = sizeof(st) };
	int r;

	if (!g || !stat || stat->size < offsetof(struct mr_memstat, anon_bytes))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	r = g->be->read_memstat(g->priv, &st);
	if (r < 0)
		return r;
	copy_sized(stat, stat->size, &st, sizeof(st));
	return 0;
}

MR_EXPORT int mr_group_read_pressure(mr_group_t *g,
				     struct mr_pressure *pressure)
{
	struct mr_pressure p = { .size = sizeof(p) };
	int r;

	if (!g || !pressure ||
	    pressure->size < offsetof(struct mr_pressure, present) +
			     sizeof(pressure->present))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->read_pressure)
		return -EOPNOTSUPP;
	r = g->be->read_pressure(g->priv, &p);
	if (r < 0)
		return r;
	copy_sized(pressure, pressure->size, &p, sizeof(p));
	return 0;
}

MR_EXPORT int mr_group_psi_trigger_open(mr_group_t *g, int kind,
					uint64_t stall_ns, uint64_t window_ns)
{
	int r;

	if (!g)
		return -EINVAL;
	r = mri_psi_trigger_check(kind, stall_ns, window_ns);
	if (r < 0)
		return r;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->psi_trigger_open)
		return -EOPNOTSUPP;
	r = mri_control_check(g, MR_CONTROL_PSI_TRIGGER);
	if (r < 0)
		return r;
	return mri_control_learn(g, MR_CONTROL_PSI_TRIGGER,
				 g->be->psi_trigger_open(g->priv, kind,
							 stall_ns / 1000,
							 window_ns / 1000));
}

MR_EXPORT int mr_group_read_reclaim_stats(mr_group_t *g, int reason,
					  struct mr_reclaim_stats *stats)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mri_reason_stats *s;

	if (!g || !stats || reason < 0 || reason >= MRI_NREASONS ||
	    stats->size < offsetof(struct mr_reclaim_stats, empty_calls))
		return -EINVAL;
	s = &g->stats[reason];
	st.calls = atomic_load(&s->calls);
	st.empty_calls = atomic_load(&s->empty_calls);
	st.asked_bytes = atomic_load(&s->asked_bytes);
	st.freed_bytes = atomic_load(&s->freed_bytes);
	st.elapsed_ns = atomic_load(&s->elapsed_ns);
	copy_sized(stats, stats->size, &st, sizeof(st));
	return 0;
}

MR_EXPORT int mr_group_read_events(mr_group_t *g, unsigned flags,
				   struct mr_events *events)
{
	struct mr_events ev = { .size = sizeof(ev) };
	int r;

	if (!g || !events || (flags & ~MR_EVENTS_LOCAL) ||
	    events->size < offsetof(struct mr_events, low))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->read_events)
		return -EOPNOTSUPP;
	r = g->be->read_events(g->priv, flags & MR_EVENTS_LOCAL, &ev);
	if (r < 0)
		return r;
	copy_sized(events, events->size, &ev, sizeof(ev));
	return 0;
}
