/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A managed group (lib/core/group.c): its state, open and destroy. Its
 * context is lib/core/context.h. */
#ifndef MR_GROUP_H
#define MR_GROUP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/list.h>
#include <urcu/rculfhash.h>

#include "adaptive.h"
#include "backend.h"
#include "chargestate.h"
#include "childreclaim.h"
#include "log.h"
#include "memreclaim.h"
#include "policy.h"
#include "proactive.h"

#define MRI_NREASONS 4
_Static_assert(MRI_NREASONS == MR_REASON_PROACTIVE + 1,
	       "a statistics slot for each enum mr_reason");

struct mri_reason_stats {
	_Atomic uint64_t calls;
	_Atomic uint64_t empty_calls;
	_Atomic uint64_t asked_bytes;
	_Atomic uint64_t freed_bytes;
	_Atomic uint64_t elapsed_ns;
};

struct mr_group {
	mr_ctx_t *ctx;
	/* In ctx->groups (opening order, under ctx->lock) and in
	 * ctx->registry (keyed by id, read under RCU). */
	struct cds_list_head link;
	struct cds_lfht_node node;
	atomic_uint refs;                 /* worker's references */
	/* Queued for the worker's next round (ctx->pending or the round's
	 * batch), under ctx->lock. */
	struct cds_list_head pending_link;
	bool pending;
	uint64_t id;                      /* epoll key; never reused */
	/* The backend's event fd (struct mri_event_sink), -1: none, and
	 * whether it is in ctx->epfd (from the group's link to its close, or
	 * until it is gone); both under ctx->lock. */
	int event_fd;
	uint32_t event_events;            /* EPOLLIN or EPOLLPRI */
	bool polled;
	/* On ctx->ticking: its backend asked for the context's tick
	 * (mri_event_sink_tick()), under ctx->lock. */
	struct cds_list_head tick_link;
	bool ticking;
	/* On ctx->registering: its usage threshold waits to be registered
	 * (MRI_CAP_SLOW_THRESHOLD, lib/core/worker.c), under ctx->lock. */
	struct cds_list_head register_link;
	bool registering;
	bool retired;                     /* mri_group_unpoll() ran */
	char *path;
	const struct mri_backend *be;
	void *priv;
	struct mri_policy *policy;        /* RCU-published */
	pthread_mutex_t policy_lock;      /* serialises policy writers */
	/* Serialises backend reclaim, threshold and event calls (the worker
	 * and mr_group_reclaim()). Never taken with ctx->lock held. */
	pthread_mutex_t reclaim_lock;
	uint64_t armed_threshold_bytes;   /* under reclaim_lock */
	/* limit - margin as the last pass found it, MR_UNLIMITED for none:
	 * the threshold a slow backend's registration arms, and the mark a
	 * group waiting for it is compared with. Written under reclaim_lock,
	 * read without. */
	_Atomic uint64_t mark_bytes;
	bool margin_warned;               /* under reclaim_lock */
	/* The margin cannot be reached by reclaiming page cache (what is not
	 * cache is above limit - margin); warned once until it can again. */
	bool unreachable_warned;          /* under reclaim_lock */
	/* The swappiness the backend's reclaim calls pass
	 * (mr_group_set_reclaim_swappiness()), -1: the kernel's. Written
	 * under reclaim_lock; read by the worker and the fast path's
	 * refresh, which count anonymous memory reclaimable only when it
	 * allows swapping (lib/core/policy.h). */
	atomic_int reclaim_swappiness;
	/* A backend call answered -ENOENT: the cgroup was removed, and the
	 * worker no longer serves the group (it stays open until closed). */
	bool gone;                        /* under reclaim_lock */
	/* Per enum mr_control: 0 not written yet, 1 writable, or the
	 * refusal's negative errno (lib/core/control.c). */
	atomic_int control_state[MR_NCONTROLS];
	/* Its reclaim refused: the children reclaimed instead
	 * (lib/core/childreclaim.c), under reclaim_lock. */
	struct mri_children children;
	struct mri_reason_stats stats[MRI_NREASONS];
	/* mr_group_set_margin_adaptive()'s measurements (lib/core/adaptive.c) */
	struct mri_adaptive adaptive;
	/* mr_group_set_proactive()'s controller (lib/core/proactive.c) */
	struct mri_proactive proactive;
	struct mri_charge charge;         /* the fast path (lib/core/charge.c) */
};

/* Opens the group at `path` (normalised) with backend `be` and adds it
 * to ctx: mr_group_open() once the backend is chosen; tests open groups
 * of a fake backend with it. */
int mri_group_open(mr_ctx_t *ctx, const char *path,
		   const struct mri_backend *be, struct mr_group **ret);

/* Takes the group off its ctx's list, closes and frees it. Call without
 * ctx->lock. */
int mri_group_destroy(struct mr_group *g);

#endif /* MR_GROUP_H */
