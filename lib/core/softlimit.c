/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim across a context's groups in soft-limit order (the 2013 memcg
 * soft-limit reclaim rework): the goal is planned with
 * mr_soft_limit_plan(), then each group's share is reclaimed with the
 * reclaim loop, with the group's own batch and the same effort for every
 * group. No pass tries harder on some groups than the others: a group
 * that falls short leaves the rest to one more planned round over the
 * groups that still have something.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "context.h"
#include "events.h"
#include "group.h"
#include "knobs.h"
#include "reclaim.h"
#include "registry.h"

/* The first plan, and one more after some groups fell short. */
#define ROUNDS 2

/* Remembers the first error worth reporting when nothing was freed: a
 * group removed (-ENOENT), without reclaim (-EOPNOTSUPP) or with nothing
 * to reclaim (-EAGAIN) is only left out. */
static void keep_error(int *err, int r)
{
	if (!*err && r < 0 && r != -ENOENT && r != -EOPNOTSUPP && r != -EAGAIN)
		*err = r;
}

/* Reads the usage and soft limit of every group still in the plan. A
 * group out of it (closed, removed, unable to reclaim, failed or short
 * in an earlier round) plans with a usage of 0, which gives it no share;
 * a group whose usage cannot be read leaves the plan. */
static void read_groups(mr_ctx_t *ctx, const uint64_t *ids, size_t n,
			bool *out, uint64_t *usage, uint64_t *soft, int *err)
{
	struct mri_policy p;
	struct mr_group *g;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		usage[i] = 0;
		soft[i] = MR_UNLIMITED;
		if (out[i])
			continue;
		g = mri_ctx_get_group(ctx, ids[i]);
		if (!g) {
			out[i] = true;
			continue;
		}
		r = g->be->caps & MRI_CAP_RECLAIM ?
		    g->be->read_usage(g->priv, &usage[i]) : -EOPNOTSUPP;
		mri_group_policy(g, &p);
		mri_ctx_put_group(ctx, g);
		if (r < 0) {
			keep_error(err, r);
			out[i] = true;
			usage[i] = 0;
		} else {
			soft[i] = p.soft_limit_bytes;
		}
	}
}

/* Reclaims `share` bytes of the group `id` under MR_REASON_SOFT. When
 * bounded, within *left_ns (> 0) of the group's clock, and the time it
 * took there, waiting for the group included, is taken off *left_ns.
 * Returns what mri_reclaim() returns, or -ENOENT for a group closed
 * meanwhile; *freed is set in every case. */
static int reclaim_share(mr_ctx_t *ctx, uint64_t id, uint64_t share,
			 bool bounded, uint64_t *left_ns, uint64_t *freed)
{
	struct mr_group *g = mri_ctx_get_group(ctx, id);
	uint64_t t0, spent;
	int r;

	*freed = 0;
	if (!g)
		return -ENOENT;
	t0 = mri_group_now_ns(g);
	pthread_mutex_lock(&g->reclaim_lock);
	r = mri_reclaim(g, MR_REASON_SOFT, share, 0,
			bounded ? mri_deadline_ns(t0, *left_ns) : 0, NULL,
			NULL, freed);
	pthread_mutex_unlock(&g->reclaim_lock);
	if (bounded) {
		spent = mri_group_now_ns(g) - t0;
		*left_ns -= spent < *left_ns ? spent : *left_ns;
	}
	mri_ctx_put_group(ctx, g);
	return r;
}

MR_EXPORT int mr_ctx_reclaim(mr_ctx_t *ctx, uint64_t bytes,
			     uint64_t timeout_ns, uint64_t *freed_bytes)
{
	uint64_t *ids, *usage = NULL, *soft = NULL, *share = NULL;
	uint64_t total = 0, left_ns = timeout_ns, freed;
	bool *out = NULL, bounded = timeout_ns != 0, fell_short = true;
	int round, r, err = 0;
	size_t n, i;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	if (bytes == 0) {
		if (freed_bytes)
			*freed_bytes = 0;
		return 0;
	}
	r = mri_ctx_group_ids(ctx, &ids, &n);
	if (r < 0)
		return r;
	if (n) {
		usage = malloc(3 * n * sizeof(*usage));
		out = calloc(n, sizeof(*out));
		if (!usage || !out) {
			err = -ENOMEM;
			goto done;
		}
		soft = usage + n;
		share = soft + n;
	}
	for (round = 0; round < ROUNDS && fell_short && total < bytes &&
	     (!bounded || left_ns); round++) {
		read_groups(ctx, ids, n, out, usage, soft, &err);
		mr_soft_limit_plan(n, usage, soft, bytes - total, share);
		fell_short = false;
		for (i = 0; i < n && (!bounded || left_ns); i++) {
			if (!share[i])
				continue;
			r = reclaim_share(ctx, ids[i], share[i], bounded,
					  &left_ns, &freed);
			total += freed;
			/* Nothing more to take here (or it is gone, or
			 * failed): the next round plans without it. */
			if (r < 0 || freed < share[i]) {
				keep_error(&err, r);
				out[i] = true;
				fell_short = true;
			}
		}
	}
done:
	free(out);
	free(usage);
	free(ids);
	if (freed_bytes)
		*freed_bytes = total;
	if (total)
		return 0;
	return err ? err : -EAGAIN;
}
