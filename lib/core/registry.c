/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A context's groups: the list, the registry by id and the references
 * (see registry.h). */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "context.h"
#include "events.h"
#include "group.h"
#include "registry.h"

/* The registry's first size (buckets; a power of two). */
#define REGISTRY_MIN_BUCKETS 16

int mri_registry_init(mr_ctx_t *ctx)
{
	CDS_INIT_LIST_HEAD(&ctx->groups);
	/* No CDS_LFHT_AUTO_RESIZE: that would start liburcu's resize
	 * thread in the caller's process; mri_ctx_link_group() grows the
	 * table itself. */
	ctx->registry = cds_lfht_new_flavor(REGISTRY_MIN_BUCKETS,
					    REGISTRY_MIN_BUCKETS, 0, 0,
					    &urcu_bp_flavor, NULL);
	if (!ctx->registry)
		return -ENOMEM;
	ctx->registry_buckets = REGISTRY_MIN_BUCKETS;
	ctx->next_id = MRI_WAKE_ID + 1;
	return 0;
}

void mri_registry_fini(mr_ctx_t *ctx)
{
	/* Empty: every group was unlinked before. */
	cds_lfht_destroy(ctx->registry, NULL);
	ctx->registry = NULL;
}

int mri_ctx_group_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n)
{
	return mri_ctx_list_ids(ctx, &ctx->groups, &ctx->ngroups,
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
	mri_events_unlink_locked(ctx, g);
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
