/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every knob setter of a group. Each edits a copy of the one master policy
 * (struct mri_policy, lib/core/policy.h) under the group's policy_lock, then
 * publishes that copy twice: under RCU, for the worker, the reclaim loop
 * and soft-limit reclaim (lib/core/knobs.h), and to the allocator fast path's
 * latch (mri_charge_publish(), lib/core/chargestate.h). Nothing else writes a
 * knob, so the two forms never disagree for longer than one setter.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "chargestate.h"
#include "context.h"
#include "events.h"
#include "fdbudget.h"
#include "group.h"
#include "knobs.h"
#include "policy.h"
#include "sizing.h"

/* An edit of the master copy, or a refusal (a negative errno: then
 * nothing changes). */
typedef int (*edit_fn)(struct mr_group *g, struct mri_policy *p,
		       const void *arg);

/* Publishes a copy of the policy changed by `edit`, frees the old one
 * after a grace period, and wakes the worker when the change is its
 * (margin, batch, soft limit). */
static int update_policy(struct mr_group *g, edit_fn edit, const void *arg,
			 bool wake_worker)
{
	struct mri_policy *np, *old;
	int r;

	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	np = malloc(sizeof(*np));
	if (!np)
		return -ENOMEM;
	pthread_mutex_lock(&g->policy_lock);
	*np = *g->policy;
	r = edit(g, np, arg);
	if (r < 0) {
		pthread_mutex_unlock(&g->policy_lock);
		free(np);
		return r;
	}
	old = rcu_xchg_pointer(&g->policy, np);
	/* After the exchange: a fast-path state made meanwhile reads np
	 * itself, or is found here (both under the state's lock). */
	mri_charge_publish(g, np);
	pthread_mutex_unlock(&g->policy_lock);
	urcu_bp_synchronize_rcu();
	free(old);
	if (wake_worker)
		mri_ctx_wake_group(g->ctx, g);
	return 0;
}

/* A knob of the fast path: the group is armed first, so that the setter
 * reports what arming would (a removed group, an unreadable limit) and
 * the fast path's state exists before its first charge. */
static int update_fast(struct mr_group *g, edit_fn edit, const void *arg)
{
	int r = mri_ctx_check_fork(g->ctx);

	if (r == 0)
		r = mri_charge_arm(g);
	return r < 0 ? r : update_policy(g, edit, arg, false);
}

/* ------------------------------------------------------------ margin */

struct margin_arg {
	uint64_t bytes;
	uint32_t ppm;
	uint64_t hysteresis;
	/* An adaptive margin instead, its defaults filled in; NULL: none. */
	const struct mr_margin_adaptive *adaptive;
};

static int edit_margin(struct mr_group *g, struct mri_policy *p,
		       const void *arg)
{
	const struct margin_arg *a = arg;
	struct mr_limits l = { .size = sizeof(l) };
	bool was_on, on;
	uint64_t margin, limit = MR_UNLIMITED;
	int r;

	on = a->bytes || a->ppm || a->adaptive;
	if (on) {
		r = g->be->read_limits(g->priv, &l);
		if (r < 0)
			return r;
		limit = mri_margin_limit(&l);
		if (a->adaptive) {
			/* Its floor must leave room below the limit. */
			if (limit != MR_UNLIMITED &&
			    a->adaptive->min_bytes >= limit)
				return -ERANGE;
		} else if (limit != MR_UNLIMITED) {
			struct mri_policy np = { .margin_bytes = a->bytes,
						 .margin_ppm = a->ppm };

			margin = mri_margin_bytes(&np, limit);
			if (margin >= limit || a->hysteresis > limit - margin)
				return -ERANGE;
		}
	}
	/* One keeper per group: a second manager keeping a margin on the
	 * same group would count the first one's reclaim as its own and take
	 * its transient limits for the real one. */
	was_on = mri_margin_on(p);
	/* Keeping a margin keeps more fds (cgroup v1: the threshold's
	 * eventfd, opened by the claim below). */
	if (on && !was_on && g->be->margin_fds) {
		r = mri_fd_budget(&g->ctx->log, g->ctx->epfd,
				  g->be->margin_fds, g->path,
				  "keeping a margin");
		if (r < 0)
			return r;
	}
	if (on != was_on && g->be->claim_keeper) {
		r = g->be->claim_keeper(g->priv, on);
		if (r < 0 && on)
			return r;
	}
	p->margin_bytes = a->bytes;
	p->margin_ppm = a->ppm;
	p->hysteresis_bytes = a->hysteresis;
	p->margin_limit_bytes = limit;
	p->margin_adaptive = a->adaptive != NULL;
	if (a->adaptive) {
		p->adaptive = *a->adaptive;
		p->adaptive_gen++;
		/* Until the worker's first pass sizes it, the fast path keeps
		 * the floor, not an earlier call's margin. */
		atomic_store(&g->charge.adaptive_margin_bytes,
			     a->adaptive->min_bytes);
	}
	return 0;
}

MR_EXPORT int mr_group_set_margin(mr_group_t *g, uint64_t margin_bytes,
				  uint32_t margin_ppm,
				  uint64_t hysteresis_bytes)
{
	struct margin_arg a = { margin_bytes, margin_ppm, hysteresis_bytes };

	if (!g || (margin_bytes && margin_ppm) || margin_ppm >= 1000000 ||
	    (margin_bytes && margin_bytes < MR_MARGIN_MIN_BYTES))
		return -EINVAL;
	return update_policy(g, edit_margin, &a, true);
}

/* The defaults of struct mr_margin_adaptive (include/memreclaim.h). */
#define ADAPTIVE_MAX_PPM 100000U
#define ADAPTIVE_SAFETY_PPM 3000000U
#define ADAPTIVE_HYSTERESIS_PPM 1000000U
#define ADAPTIVE_MAX_INTERVAL_NS 60000000000ULL

/* Whether the bytes of a sized struct past this library's size of it,
 * known_size, are all zero. */
static bool tail_is_zero(const struct mr_margin_adaptive *a,
			 size_t known_size)
{
	const unsigned char *b = (const unsigned char *)a;
	size_t i;

	for (i = known_size; i < a->size; i++)
		if (b[i])
			return false;
	return true;
}

/* Why the bounds and factors are refused, or NULL. */
static const char *adaptive_refusal(const struct mr_margin_adaptive *a)
{
	if (a->max_bytes && a->max_ppm)
		return "both max_bytes and max_ppm";
	if (a->max_ppm >= 1000000)
		return "max_ppm not below 1000000";
	if (a->min_bytes && a->min_bytes < MR_MARGIN_MIN_BYTES)
		return "min_bytes below MR_MARGIN_MIN_BYTES";
	if (a->max_bytes && a->min_bytes > a->max_bytes)
		return "min_bytes above max_bytes";
	if ((a->safety_ppm && a->safety_ppm < 1000000) ||
	    a->safety_ppm > 100000000)
		return "safety_ppm not in 1000000 .. 100000000";
	if (a->hysteresis_ppm > 1000000)
		return "hysteresis_ppm above 1000000";
	if (a->interval_ns > ADAPTIVE_MAX_INTERVAL_NS)
		return "interval_ns above 60 s";
	if (a->min_strength_ppm > 1000000 ||
	    (a->min_strength_ppm && a->min_strength_ppm < MRI_SIZING_FLOOR))
		return "min_strength_ppm not 0 nor in 62500 .. 1000000";
	return NULL;
}

MR_EXPORT int mr_group_set_margin_adaptive(
	mr_group_t *g, const struct mr_margin_adaptive *adaptive)
{
	struct mr_margin_adaptive a = { .size = sizeof(a) };
	struct margin_arg arg = { .adaptive = &a };
	const char *bad;

	if (!g)
		return -EINVAL;
	if (adaptive && adaptive->size < sizeof(*adaptive)) {
		bad = "size smaller than struct mr_margin_adaptive";
	} else if (adaptive && !tail_is_zero(adaptive, sizeof(*adaptive))) {
		/* A caller built against a later header that set a field
		 * this library does not know (the kernel's
		 * copy_struct_from_user() rule). */
		mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: adaptive margin "
			"refused: a field past this library's struct is set",
			g->path);
		return -E2BIG;
	} else {
		if (adaptive)
			a = *adaptive;
		a.size = sizeof(a);
		bad = adaptive_refusal(&a);
	}
	if (bad) {
		mri_log(&g->ctx->log, MR_LOG_DEBUG,
			"%s: adaptive margin refused: %s", g->path, bad);
		return -EINVAL;
	}
	if (!a.max_bytes && !a.max_ppm)
		a.max_ppm = ADAPTIVE_MAX_PPM;
	if (!a.safety_ppm)
		a.safety_ppm = ADAPTIVE_SAFETY_PPM;
	if (!a.hysteresis_ppm)
		a.hysteresis_ppm = ADAPTIVE_HYSTERESIS_PPM;
	if (a.interval_ns < MR_WORKER_SAFETY_NS)
		a.interval_ns = MR_WORKER_SAFETY_NS;
	return update_policy(g, edit_margin, &arg, true);
}

/* ------------------------------------------------------------- batch */

static int edit_batch(struct mr_group *g, struct mri_policy *p,
		      const void *arg)
{
	const struct mri_policy *a = arg;

	(void)g;
	p->batch_proportional = a->batch_proportional;
	p->batch_bytes = a->batch_bytes;
	p->share_ppm = a->share_ppm;
	p->max_bytes = a->max_bytes;
	p->max_ppm = a->max_ppm;
	return 0;
}

MR_EXPORT int mr_group_set_batch_fixed(mr_group_t *g, uint64_t batch_bytes)
{
	struct mri_policy a = { .batch_bytes = batch_bytes };

	if (!g || batch_bytes < 4096 || batch_bytes > (1ULL << 40) ||
	    batch_bytes % 4096)
		return -EINVAL;
	return update_policy(g, edit_batch, &a, true);
}

MR_EXPORT int mr_group_set_batch_proportional(mr_group_t *g,
					      uint32_t share_ppm,
					      uint64_t max_bytes,
					      uint32_t max_ppm)
{
	struct mri_policy a = {
		.batch_proportional = true,
		.batch_bytes = MR_SWAP_CLUSTER_MAX_BYTES,
		.share_ppm = share_ppm,
		.max_bytes = max_bytes,
		.max_ppm = max_ppm,
	};

	if (!g || share_ppm < 1 || share_ppm > 1000000 ||
	    max_bytes < MR_SWAP_CLUSTER_MAX_BYTES || max_ppm > 1000000)
		return -EINVAL;
	return update_policy(g, edit_batch, &a, true);
}

/* -------------------------------------------------------- soft limit */

static int edit_soft_limit(struct mr_group *g, struct mri_policy *p,
			   const void *arg)
{
	(void)g;
	p->soft_limit_bytes = *(const uint64_t *)arg;
	return 0;
}

MR_EXPORT int mr_group_set_soft_limit(mr_group_t *g, uint64_t soft_limit_bytes)
{
	if (!g)
		return -EINVAL;
	return update_policy(g, edit_soft_limit, &soft_limit_bytes, true);
}

MR_EXPORT int mr_group_read_soft_limit(mr_group_t *g,
				       uint64_t *soft_limit_bytes)
{
	struct mri_policy p;

	if (!g || !soft_limit_bytes)
		return -EINVAL;
	mri_group_policy(g, &p);
	*soft_limit_bytes = p.soft_limit_bytes;
	return 0;
}

/* ---------------------------------------------------------- throttle */

static int edit_curve(struct mr_group *g, struct mri_policy *p,
		      const void *arg)
{
	const struct mr_throttle_curve *curve = arg;

	(void)g;
	p->throttle_kind = curve->kind;
	p->throttle_max_delay_ns = curve->max_delay_ns;
	p->throttle_scale_ns = curve->scale_ns;
	p->throttle_doubling_ppm = curve->doubling_ppm;
	p->throttle_npoints = curve->kind == MR_THROTTLE_TABLE ?
			      (uint32_t)curve->npoints : 0;
	memset(p->throttle_points, 0, sizeof(p->throttle_points));
	if (p->throttle_npoints)
		memcpy(p->throttle_points, curve->points,
		       curve->npoints * sizeof(*curve->points));
	return 0;
}

MR_EXPORT int mr_group_set_throttle(mr_group_t *g,
				    const struct mr_throttle_curve *curve)
{
	static const struct mr_throttle_curve none = {
		.size = sizeof(none),
		.kind = MR_THROTTLE_NONE,
	};
	uint64_t delay;

	if (!g)
		return -EINVAL;
	if (!curve)
		curve = &none;
	/* The pure function checks the curve whole (size, kind, points,
	 * order). */
	if (mr_throttle_delay_ns(curve, 2, 1, 1, &delay) < 0)
		return -EINVAL;
	return update_fast(g, edit_curve, curve);
}

static int edit_high(struct mr_group *g, struct mri_policy *p,
		     const void *arg)
{
	(void)g;
	p->throttle_high_bytes = *(const uint64_t *)arg;
	return 0;
}

MR_EXPORT int mr_group_set_throttle_high(mr_group_t *g, uint64_t high_bytes)
{
	if (!g)
		return -EINVAL;
	return update_fast(g, edit_high, &high_bytes);
}

/* --------------------------------------------------------------- THP */

struct thp_arg {
	int policy;
	uint64_t budget_ns;
};

static int edit_thp(struct mr_group *g, struct mri_policy *p,
		    const void *arg)
{
	const struct thp_arg *a = arg;

	(void)g;
	p->thp_policy = a->policy;
	p->thp_budget_ns = a->budget_ns;
	return 0;
}

MR_EXPORT int mr_group_set_thp_policy(mr_group_t *g, int policy,
				      uint64_t budget_ns)
{
	struct thp_arg a = { .policy = policy, .budget_ns = budget_ns };

	if (!g || policy < MR_THP_RECLAIM_FULL || policy > MR_THP_BUDGET ||
	    (policy == MR_THP_BUDGET) != (budget_ns != 0))
		return -EINVAL;
	return update_fast(g, edit_thp, &a);
}

/* -------------------------------------------------------- swappiness */

/* Not a policy field: the backend passes it to its reclaim calls, so it
 * is set under the reclaim lock, between two batches. */
MR_EXPORT int mr_group_set_reclaim_swappiness(mr_group_t *g, int swappiness)
{
	int r;

	if (!g || swappiness < -1 || swappiness > 200)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->set_swappiness)
		return -EOPNOTSUPP;
	/* Serialised with reclaim: a batch uses one swappiness. */
	pthread_mutex_lock(&g->reclaim_lock);
	r = g->be->set_swappiness(g->priv, swappiness);
	if (r == 0)
		atomic_store(&g->reclaim_swappiness, swappiness);
	pthread_mutex_unlock(&g->reclaim_lock);
	return r;
}
