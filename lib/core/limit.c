/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Setting a group's limit (memory.max, v1 memory.limit_in_bytes) and high
 * (v2 memory.high) without asking the kernel to reclaim everything in one
 * write: the group is first reclaimed in its own batches, as
 * mr_group_reclaim() does, down to the new value, then the value is
 * written once through the backend's write_limit. A kernel asked for a
 * large reduction in one write reclaims it in the writer's context, and
 * on v2 OOM-kills a task of the group when it cannot (memory_max_write());
 * with O_NONBLOCK (Linux 6.16) it leaves that to the group's next charge.
 * Reclaiming first keeps both in the library's hands.
 */
#include "config.h"

#include <errno.h>

#include "clock.h"
#include "context.h"
#include "control.h"
#include "events.h"
#include "group.h"
#include "reclaim.h"

/* Reclaims g towards `target` until usage fits or nothing more can be
 * freed or the deadline passes. Returns 0 with *fits telling whether usage
 * is at or below target, or a backend error (-ENOENT, -EBUSY, ...). Under
 * g->reclaim_lock. */
static int reclaim_to(struct mr_group *g, uint64_t target,
		      uint64_t deadline_ns, bool *fits)
{
	uint64_t usage, freed;
	int r;

	*fits = false;
	for (;;) {
		r = g->be->read_usage(g->priv, &usage);
		if (r < 0)
			return r;
		if (usage <= target) {
			*fits = true;
			return 0;
		}
		if (deadline_ns && mri_group_now_ns(g) >= deadline_ns)
			return 0;
		/* Batches of the group's policy down to the target; stops
		 * after MR_RECLAIM_MAX_EMPTY_BATCHES empty ones. */
		r = mri_reclaim(g, MR_REASON_REQUESTED, usage - target, target,
				deadline_ns, NULL, NULL, &freed);
		if (r == -EAGAIN || (r == 0 && freed == 0))
			return 0; /* nothing more to free */
		if (r < 0)
			return r;
	}
}

static int set_value(struct mr_group *g, int which, uint64_t bytes,
		     uint64_t timeout_ns)
{
	struct mr_limits l = { .size = sizeof(l) };
	uint64_t deadline;
	bool fits = true;
	int r, control;

	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (!g->be->write_limit)
		return -EOPNOTSUPP;
	control = which == MRI_LIMIT_MAX ? MR_CONTROL_LIMIT : MR_CONTROL_HIGH;
	r = mri_control_check(g, control);
	if (r < 0)
		return r;
	deadline = mri_deadline_ns(mri_group_now_ns(g), timeout_ns);
	pthread_mutex_lock(&g->reclaim_lock);
	/* A backend that reports no high has none (cgroup v1): refused
	 * before anything is reclaimed for it. */
	if (which == MRI_LIMIT_HIGH) {
		r = g->be->read_limits(g->priv, &l);
		if (r == 0 && !(l.present & MR_LIMITS_HAS_HIGH))
			r = -EOPNOTSUPP;
		if (r < 0)
			goto out;
	}
	if (bytes != MR_UNLIMITED && (g->be->caps & MRI_CAP_RECLAIM)) {
		r = reclaim_to(g, bytes, deadline, &fits);
		if (r < 0)
			goto out;
	}
	/* A limit that usage does not fit under is not written: the kernel
	 * would reclaim the rest in the charging tasks or OOM-kill one. A
	 * high is written all the same: throttling above it is its job. */
	if (which == MRI_LIMIT_MAX && !fits) {
		mri_log(&g->ctx->log, MR_LOG_NOTICE, "%s: usage could not be "
			"brought below the new limit of %llu bytes; limit "
			"left unchanged", g->path, (unsigned long long)bytes);
		r = -EBUSY;
		goto out;
	}
	r = mri_control_learn(g, control,
			      g->be->write_limit(g->priv, which, bytes));
out:
	pthread_mutex_unlock(&g->reclaim_lock);
	/* A running worker re-reads the limit it keeps the margin below. */
	if (r == 0)
		mri_ctx_wake_group(g->ctx, g);
	return r;
}

MR_EXPORT int mr_group_set_limit(mr_group_t *g, uint64_t limit_bytes,
				 uint64_t timeout_ns)
{
	if (!g || limit_bytes < 4096)
		return -EINVAL;
	return set_value(g, MRI_LIMIT_MAX, limit_bytes, timeout_ns);
}

MR_EXPORT int mr_group_set_high(mr_group_t *g, uint64_t high_bytes,
				uint64_t timeout_ns)
{
	if (!g)
		return -EINVAL;
	return set_value(g, MRI_LIMIT_HIGH, high_bytes, timeout_ns);
}
