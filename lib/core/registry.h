/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A context's groups (lib/core/registry.c): the list in opening order and the
 * registry by id (liburcu's lock-free hash table), with the references
 * that keep a group the worker found from being freed under it.
 */
#ifndef MR_REGISTRY_H
#define MR_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "memreclaim.h"

struct mr_group;

/* Makes / frees the context's registry (empty at free): 0 or -ENOMEM. */
int mri_registry_init(mr_ctx_t *ctx);
void mri_registry_fini(mr_ctx_t *ctx);

/* The ids of ctx's groups, in the order they were opened, in a new array
 * in *ids (NULL when there are none) and their number in *n. Returns 0 or
 * -ENOMEM. */
int mri_ctx_group_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n);

/* Looks a group up by id and takes a reference (the group is not freed
 * until mri_ctx_put_group()), or returns NULL. O(1), lock-free (an RCU
 * read-side section over ctx->registry): the caller then takes
 * g->reclaim_lock without holding ctx->lock. */
struct mr_group *mri_ctx_get_group(mr_ctx_t *ctx, uint64_t id);
void mri_ctx_put_group(mr_ctx_t *ctx, struct mr_group *g);

/* The next group id of ctx (never reused; a failed open uses one up). */
uint64_t mri_ctx_new_id(mr_ctx_t *ctx);

/* Puts g (its id taken from mri_ctx_new_id()) on the list and in the
 * registry: from then on the worker can find it. Call with ctx->lock. */
void mri_ctx_link_group(mr_ctx_t *ctx, struct mr_group *g);

/* Takes g off its context's list and registry and waits until nobody
 * holds a reference. */
void mri_ctx_unlink_group(mr_ctx_t *ctx, struct mr_group *g);

#endif /* MR_REGISTRY_H */
