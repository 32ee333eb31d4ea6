/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The margin worker (lib/core/worker.c): its pass over one group. */
#ifndef MR_WORKER_H
#define MR_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct mr_group;

/* The margin pass of the worker for one group (lib/core/worker.c); caller
 * holds g->reclaim_lock. stop (may be NULL) ends the reclaim early. A
 * threshold of a MRI_CAP_SLOW_THRESHOLD backend is not armed here: the
 * group is put on ctx->registering for the round's registration step.
 * boost_idle: the pass runs on the worker thread, and a SCHED_IDLE worker
 * reclaims as SCHED_OTHER; false in a caller's dispatch, whose scheduling
 * is the caller's own. woke_ns: when the worker woke for the pass, in
 * g's clock (an adaptive margin times its reactions from it).
 * signalled: the pass answers the group's own threshold event (or its
 * tick), so that what usage has above the mark, where that mark is the
 * one armed, is what the group charged before the worker could see it
 * (mri_adaptive_note_reclaim()); not a poll while a registration waits,
 * nor a round over every group. Returns
 * true if usage is still above the margin and another pass is due at
 * once. */
bool mri_keep_margin(struct mr_group *g, const atomic_bool *stop,
		     bool boost_idle, uint64_t woke_ns, bool signalled);

#endif /* MR_WORKER_H */
