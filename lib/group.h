/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal state of a context and its groups. */
#ifndef MR_GROUP_H
#define MR_GROUP_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/list.h>
#include <urcu/rculfhash.h>

#include "backend.h"
#include "charge.h"
#include "childreclaim.h"
#include "fds.h"
#include "hybrid.h"
#include "log.h"
#include "memreclaim.h"

/* A group's policy: immutable once published, replaced whole under RCU. */
struct mri_policy {
	uint64_t margin_bytes;     /* 0 with margin_ppm 0: no margin */
	uint32_t margin_ppm;
	uint64_t hysteresis_bytes;
	/* The margin limit (mri_margin_limit()) the setter checked margin
	 * and hysteresis against, MR_UNLIMITED when the group had none:
	 * only below it is the hysteresis capped (mri_margin_marks()). */
	uint64_t margin_limit_bytes;
	bool batch_proportional;
	uint64_t batch_bytes;      /* fixed mode */
	uint32_t share_ppm;        /* proportional mode */
	uint64_t max_bytes;
	uint32_t max_ppm;
	uint64_t soft_limit_bytes; /* MR_UNLIMITED: none */
};

#define MRI_NREASONS 3
_Static_assert(MRI_NREASONS == MR_REASON_SOFT + 1,
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
	 * (MRI_CAP_SLOW_THRESHOLD, lib/worker.c), under ctx->lock. */
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
	 * allows swapping (lib/swap.h). */
	atomic_int reclaim_swappiness;
	/* A backend call answered -ENOENT: the cgroup was removed, and the
	 * worker no longer serves the group (it stays open until closed). */
	bool gone;                        /* under reclaim_lock */
	/* Per enum mr_control: 0 not written yet, 1 writable, or the
	 * refusal's negative errno (lib/control.c). */
	atomic_int control_state[MR_NCONTROLS];
	/* Its reclaim refused: the children reclaimed instead (lib/
	 * childreclaim.c), under reclaim_lock. */
	struct mri_children children;
	struct mri_reason_stats stats[MRI_NREASONS];
	struct mri_charge charge;         /* the fast path (lib/charge.c) */
};

struct mr_ctx {
	struct mr_ctx *next_ctx;          /* every context: context.c */
	struct mri_logger log;
	char state_dir[PATH_MAX];
	struct mr_sim *sim;               /* mr_ctx_set_sim(), or NULL */
	struct mri_hybrid_psi hybrid;     /* mr_ctx_set_hybrid_psi() */
	char process_leaf[256];           /* mr_ctx_set_process_leaf(), or "" */
	unsigned long fork_gen;           /* mri_fork_gen at creation */
	pthread_mutex_t lock;             /* groups, registry writes, next_id */
	pthread_cond_t unref;             /* a group's refs fell to 0 */
	struct cds_list_head groups;      /* in opening order */
	/* Groups a round must serve besides those its events name: opened,
	 * their policy or limit changed, or left above their mark by the
	 * last pass (mri_ctx_wake_group()). */
	struct cds_list_head pending;
	/* Groups whose backend asked for the tick, and the timerfd (in
	 * epfd as MRI_TICK_ID) that runs while there is one. */
	struct cds_list_head ticking;
	size_t nticking;
	int tickfd;
	/* Groups whose usage threshold waits to be registered, those found
	 * above their mark first (mri_ctx_register_later()). */
	struct cds_list_head registering;
	size_t nregistering;
	/* The open groups by id (liburcu-bp's lock-free hash table): the
	 * worker finds an event's group in O(1) without ctx->lock. Grown by
	 * doubling when the groups outnumber its buckets (no resize
	 * thread), never shrunk. */
	struct cds_lfht *registry;
	size_t ngroups;
	unsigned long registry_buckets;
	uint64_t next_id;
	int epfd;                         /* groups' event fds + wakefd */
	int wakefd;                       /* eventfd: wakes the worker */
	/* Serialises worker start/stop and the start and end of a dispatch;
	 * guards the five fields below. Never taken by the worker thread,
	 * nor held across a round. Taken before ctx->lock when both are
	 * (mr_ctx_set_sim() and mr_ctx_worker_start() check ctx->sim and
	 * worker_running under both). */
	pthread_mutex_t worker_lock;
	bool worker_running;
	bool dispatching;                 /* mr_ctx_worker_dispatch() runs */
	pthread_t worker;
	int sched;
	int nice;
	atomic_bool worker_stop;
	/* The last round was to serve every group but could not get the
	 * memory for the list: the next one tries again. Only the worker
	 * (the thread, or the one dispatch that runs) touches it. */
	bool serve_all;
};

/* epoll keys of ctx->wakefd and ctx->tickfd. Group ids start at 1 and
 * never reach MRI_TICK_ID. */
#define MRI_WAKE_ID 0
#define MRI_TICK_ID UINT64_MAX

/* The ctx's logger, for other library files. */
struct mri_logger *mri_ctx_logger(mr_ctx_t *ctx);

/* -ECHILD if ctx was created before a fork() in this process, else 0. */
int mri_ctx_check_fork(const mr_ctx_t *ctx);

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

/* Policy access for readers: copies the current policy under RCU. */
void mri_group_policy(struct mr_group *g, struct mri_policy *out);

/* The reclaim loop (lib/reclaim.c). Frees up to `bytes`, or down to a
 * usage of floor_bytes, whichever comes first, in batches of the group's
 * policy; stops at deadline_ns (the group's clock, 0: none), after
 * MR_RECLAIM_MAX_EMPTY_BATCHES empty batches in a row, when the backend has
 * nothing reclaimable, or when *stop becomes true (stop may be NULL).
 * A batch of a MRI_CAP_STEP_CAN_OOM backend asks at most half of what
 * reclaim can take from the group. Counts under `reason`. Caller holds g->reclaim_lock. Returns 0 if
 * something was freed or nothing was needed, -EAGAIN if nothing could be
 * freed, or the backend's error; *freed_bytes is set in every case. */
int mri_reclaim(struct mr_group *g, int reason, uint64_t bytes,
		uint64_t floor_bytes, uint64_t deadline_ns,
		const atomic_bool *stop, uint64_t *freed_bytes);

/* The margin pass of the worker for one group (lib/worker.c); caller
 * holds g->reclaim_lock. stop (may be NULL) ends the reclaim early. A
 * threshold of a MRI_CAP_SLOW_THRESHOLD backend is not armed here: the
 * group is put on ctx->registering for the round's registration step.
 * boost_idle: the pass runs on the worker thread, and a SCHED_IDLE worker
 * reclaims as SCHED_OTHER; false in a caller's dispatch, whose scheduling
 * is the caller's own. Returns true if usage is still above the margin
 * and another pass is due at once. */
bool mri_keep_margin(struct mr_group *g, const atomic_bool *stop,
		     bool boost_idle);

/* The limit the margin is kept below: the lower of limit_bytes and, where
 * the backend reports one, high_bytes (cgroup v2 memory.high). */
uint64_t mri_margin_limit(const struct mr_limits *l);

/* The margin in bytes for a given limit (margin_bytes, or margin_ppm of
 * the limit). */
uint64_t mri_margin_bytes(const struct mri_policy *p, uint64_t limit_bytes);

/* The worker's marks for a limit: it reclaims when usage is above
 * *high_mark = limit - margin, down to *low_mark = high_mark - hysteresis.
 * Once the limit has fallen below p->margin_limit_bytes (the one the
 * setter checked the hysteresis against), the hysteresis is capped at
 * half of high_mark; before that it is whole (the setter kept it at or
 * below high_mark). -ERANGE when there is no limit or the margin is not
 * below it. */
int mri_margin_marks(const struct mri_policy *p, uint64_t limit_bytes,
		     uint64_t *high_mark, uint64_t *low_mark);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t mri_now_ns(void);

/* Now in the group's clock (its backend's now_ns, or CLOCK_MONOTONIC):
 * every time measured or bounded for a group is taken from here. */
uint64_t mri_group_now_ns(struct mr_group *g);

/* The deadline timeout_ns after now_ns, or 0 (no deadline) for a timeout
 * of 0 or one that does not fit in the clock's range (MR_UNLIMITED
 * included): the sum would wrap to a time already passed. */
uint64_t mri_deadline_ns(uint64_t now_ns, uint64_t timeout_ns);

/* Opens the group at `path` (normalised) with backend `be` and adds it
 * to ctx: mr_group_open() once the backend is chosen; tests open groups
 * of a fake backend with it. */
int mri_group_open(mr_ctx_t *ctx, const char *path,
		   const struct mri_backend *be, struct mr_group **ret);

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

/* Takes the group off its ctx's list, closes and frees it. Call without
 * ctx->lock. */
int mri_group_destroy(struct mr_group *g);

#endif /* MR_GROUP_H */
