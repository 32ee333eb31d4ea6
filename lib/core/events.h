/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A context's events (lib/core/events.c): the epoll set the worker waits on,
 * the eventfd that wakes it, the tick and the groups on it, the queue of
 * groups its next round serves, and the groups whose usage threshold waits
 * to be registered. Its lists are under ctx->lock.
 */
#ifndef MR_EVENTS_H
#define MR_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/list.h>

#include "backend.h"
#include "memreclaim.h"

struct mr_group;

/* Makes the context's eventfd, timerfd and epoll set, both fds in the
 * set (MRI_WAKE_ID, MRI_TICK_ID): 0, or a negative errno with nothing
 * left open. mri_events_fini() closes them (those a child after fork()
 * dropped are -1). */
int mri_events_init(mr_ctx_t *ctx);
void mri_events_fini(mr_ctx_t *ctx);

/* The struct mri_event_sink of g's backend: the new event fd is added to
 * the set once g is linked (mri_events_poll_locked()), the tick turned on
 * or off. */
void mri_events_sink(struct mr_group *g, struct mri_event_sink *sink);

/* Under ctx->lock, as g is linked: its event fd, if any, joins the set.
 * 0 or epoll_ctl()'s negative errno (g then stays out). */
int mri_events_poll_locked(mr_ctx_t *ctx, struct mr_group *g);

/* Under ctx->lock, as g is unlinked: off the queue, the tick and the
 * registration list. */
void mri_events_unlink_locked(mr_ctx_t *ctx, struct mr_group *g);

/* Wakes the worker (if running): it runs a round at once. */
void mri_ctx_wake_worker(mr_ctx_t *ctx);

/* Queues g for the worker's next round and wakes it: O(1), so that a
 * policy update or an open costs the worker one group's pass, not a pass
 * over every group of the context. */
void mri_ctx_wake_group(mr_ctx_t *ctx, struct mr_group *g);

/* Queues g for the next round without waking the worker: the worker's
 * own re-queue of a group its pass left above the mark (the round then
 * answers 1, and the next one comes at once). */
void mri_ctx_queue_group(mr_ctx_t *ctx, struct mr_group *g);

/* The worker's side: moves the queued groups to *batch (an initialised
 * list head), then mri_ctx_next_pending() gives their ids one by one
 * (false when none is left). A group closed meanwhile leaves the batch. */
void mri_ctx_take_pending(mr_ctx_t *ctx, struct cds_list_head *batch);
bool mri_ctx_next_pending(mr_ctx_t *ctx, struct cds_list_head *batch,
			  uint64_t *id);

/* Puts g on ctx->registering, or moves it: at the head when `first` (it
 * has work: its registration comes next), else at the tail if it was not
 * there. mri_ctx_next_register() takes the head off (false when none);
 * mri_ctx_registering_ids() lists them all (0 or -ENOMEM, as
 * mri_ctx_group_ids()). A group closed meanwhile leaves the list. */
void mri_ctx_register_later(mr_ctx_t *ctx, struct mr_group *g, bool first);
bool mri_ctx_next_register(mr_ctx_t *ctx, uint64_t *id);
int mri_ctx_registering_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n);

/* Takes the group's event fd out of the context's epoll set and off the
 * tick for good (its close, or its cgroup is gone). */
void mri_group_unpoll(struct mr_group *g);

/* The context's tick for g (struct mri_event_sink): on or off; the timer
 * runs while a group of the context asked for it. 0 or -errno. Takes
 * ctx->lock. */
int mri_ctx_tick(mr_ctx_t *ctx, struct mr_group *g, bool on);

/* The ids of the groups on the tick, in a new array (NULL when none) and
 * their number: 0 or -ENOMEM. */
int mri_ctx_ticking_ids(mr_ctx_t *ctx, uint64_t **ids, size_t *n);

#endif /* MR_EVENTS_H */
