/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend ops table: the only door from the policy core to a cgroup.
 * A backend holds no policy; the core holds no path under /sys.
 */
#ifndef MR_BACKEND_H
#define MR_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "memreclaim.h"
#include "log.h"

/* Capability bits of a backend. */
#define MRI_CAP_RECLAIM     (1u << 0) /* reclaim() works */
#define MRI_CAP_THRESHOLD   (1u << 1) /* set_usage_threshold(), event fd */
/* set_usage_threshold() may block for long: cgroup v1's registration
 * waits for an RCU grace period in the kernel (mm/memcontrol-v1.c,
 * __mem_cgroup_usage_register_event(): synchronize_rcu() after swapping
 * the thresholds array in). The worker registers such thresholds after
 * serving the groups with work, a slice at a time (lib/core/worker.c), and
 * polls the groups waiting for theirs. */
#define MRI_CAP_SLOW_THRESHOLD (1u << 2)
/* The groups live in a virtual clock (the now_ns op) that moves only as
 * the thread driving the backend runs it: a context bound to such a
 * backend (mri_ctx_set_backend_arg() with an argument) runs its worker
 * only through mr_ctx_worker_dispatch(), called in that clock, and
 * mr_ctx_worker_start() answers -EOPNOTSUPP: a worker thread would race
 * the clock's thread. */
#define MRI_CAP_VIRTUAL_CLOCK (1u << 3)
/* reclaim() lowers the group's limit below usage for a moment (a
 * journaled lowering step, lib/cgroupfs/lowerstep.h), and while it is lowered the
 * group's own tasks charge against it: a charge that reclaim cannot
 * cover there OOM-kills one of them. cgroup v1: mem_cgroup_resize_max()
 * (mm/memcontrol-v1.c) sets the lowered limit once usage is below it;
 * a charge above it fails page_counter_try_charge(), reclaims in
 * try_charge_memcg() and, when that frees too little, ends in
 * mem_cgroup_oom() (mm/memcontrol.c). The core then asks a batch of at
 * most half of what reclaim can take from the group (lib/core/reclaim.c).
 * Not for cgroup v2: memory.reclaim lowers nothing, and a lowered
 * memory.high throttles the charging tasks on their way back to user
 * space (mem_cgroup_handle_over_high()) and never OOM-kills. */
#define MRI_CAP_STEP_CAN_OOM (1u << 4)

/* The fds one margin pass of the worker, or one mr_group_reclaim(), opens
 * for a moment beyond those the group keeps (cgroup v1: a reader's
 * directory per level up to the hierarchy's root and one file; a step's
 * two directories, journal and limit file, and memory.stat with the
 * group's directory for its batch's cap while the run keeps the step's
 * directories and limit file (lib/reclaim.c); a registration's directory
 * and cgroup.event_control). An open, or a margin's fds, is
 * refused while fewer than this many would stay free below RLIMIT_NOFILE
 * (lib/core/fdbudget.c): 16 covers a group 14 levels below the root. */
#define MRI_FD_RESERVE 16

/* What the core hands a backend when it opens a group. Valid until close. */

/* The period of a context's tick (mri_event_sink_tick()): 10 ms, about
 * 10 MB of charges at 1 GB/s, the fastest a single task faults in page
 * cache. */
#define MRI_TICK_NS 10000000ULL

/*
 * Where a MRI_CAP_THRESHOLD backend names the fd that signals a group's
 * events, which the core polls (level-triggered, for `events`: EPOLLIN, or
 * EPOLLPRI for a kernfs file's notifications) in its context's epoll set:
 * no fd of the backend's own has to stay stable. The backend calls
 * mri_event_sink_set() from open on, and whenever set_usage_threshold()
 * or event_ack() replaces the fd, with the new fd already open and the
 * old one still open (the core takes the old one out of the set first);
 * fd -1: none for now (cgroup1 while no threshold is armed, a removed
 * cgroup2 group). Returns 0 or a negative errno (the set refused the fd:
 * the backend fails its call and closes the new fd).
 *
 * A backend that cannot be told of a crossing (cgroup2 has no usage
 * thresholds) asks for the context's tick with mri_event_sink_tick(on):
 * while on, the core calls event_ack() every MRI_TICK_NS as for an event,
 * from one timer per context (a tick costs one event_ack() per group that
 * asked). Returns 0 or a negative errno (the timer could not be armed).
 *
 * Neither is called at close nor in forget(). fn NULL: nobody polls this
 * handle (a child handle of lib/core/childreclaim.c, a backend's own tests).
 */
struct mri_event_sink {
	int (*fn)(void *arg, int fd, uint32_t events);
	int (*tick)(void *arg, bool on);
	void *arg;
};

static inline int mri_event_sink_set(const struct mri_event_sink *s, int fd,
				     uint32_t events)
{
	return s->fn ? s->fn(s->arg, fd, events) : 0;
}

static inline int mri_event_sink_tick(const struct mri_event_sink *s,
				      bool on)
{
	return s->tick ? s->tick(s->arg, on) : 0;
}

struct mri_open_env {
	struct mri_logger *log;
	const char *state_dir; /* for journals; an absolute path */
	/* What the context bound for this backend with
	 * mri_ctx_set_backend_arg(), or NULL (always for a built-in one). */
	void *backend_arg;
	/* The context's state of this backend (ctx_size below), NULL for
	 * none: the backend reads it at each call, since an option in it
	 * may change while the group is open. */
	void *ctx_state;
	/* The group's event fd goes there (copied by the backend; valid
	 * until close). */
	struct mri_event_sink events;
};

/*
 * struct mri_backend — one per backend, filled with designated initializers.
 *
 * `priv` is a zeroed block of priv_size bytes the core allocates per group.
 * Read ops (read_*) may be called from several threads at once on one
 * group; reclaim, set_usage_threshold, event_ack and close are serialised
 * by the core (one at a time per group), but may run concurrently with
 * reads. All ops may block on file I/O unless said otherwise. All return
 * >= 0 on success or a negative errno: -ENOENT when the group is gone.
 */
struct mri_backend {
	const char *name;
	uint32_t caps;
	size_t priv_size;
	/* The fds a group keeps while open (cgroup v1 1, v2 2, sim 1), and
	 * the more it keeps while it keeps a margin, opened by
	 * claim_keeper(true) (cgroup v1: the threshold's eventfd). The core
	 * checks them against the fd budget (lib/core/fdbudget.c) before open and
	 * before claim_keeper(true). */
	unsigned int open_fds;
	unsigned int margin_fds;

	/* Mandatory. Returns 1 if `path` is a group this backend can open,
	 * 0 if not (another backend may), or a negative errno (-ENOENT: no
	 * such directory). Used by "auto". No priv. */
	int (*probe)(const char *path);

	/* Mandatory. Opens the group at absolute `path` into priv. Performs
	 * crash recovery (a journaled lowered limit) before returning. On
	 * error, priv holds nothing to release. */
	int (*open)(void *priv, const char *path,
		    const struct mri_open_env *env);

	/* Mandatory. Releases priv; undoes anything left lowered. Returns 0
	 * or the errno of a failed restore (the journal is then kept). */
	int (*close)(void *priv);

	/* Mandatory. Usage in bytes, one pread on a kept fd. */
	int (*read_usage)(void *priv, uint64_t *usage_bytes);

	/* Mandatory. Fills the whole *out (a struct of this version: the
	 * core copies what the caller's version has). */
	int (*read_limits)(void *priv, struct mr_limits *out);

	/* Mandatory. Fills the whole *out, as read_limits. */
	int (*read_memstat)(void *priv, struct mr_memstat *out);

	/* MRI_CAP_RECLAIM. One reclaim call to the kernel asking for at most
	 * `bytes` (cgroup1 and cgroup2 round to whole pages, and ask one
	 * page for less). The backend no longer caps a call of its own
	 * (cgroup1 held its steps to half the reclaimable page cache): how
	 * much a call asks is the core's batch (lib/core/reclaim.c), which for a
	 * MRI_CAP_STEP_CAN_OOM backend is at most half of what reclaim can
	 * take from the group. *asked_bytes receives what was asked of the
	 * kernel, *freed_bytes what the call freed: the fall in usage
	 * (clamped at 0) where the backend cannot tell more (cgroup1,
	 * cgroup2), the pages reclaimed where it can (sim). Returns 0
	 * (freed may still be 0), -EAGAIN when nothing is reclaimable (no
	 * call was made), -EBUSY when another process holds the group's
	 * reclaim lock, -ENOENT, or a write's errno. */
	int (*reclaim)(void *priv, uint64_t bytes, uint64_t *asked_bytes,
		       uint64_t *freed_bytes);

	/* Optional, for MRI_CAP_STEP_CAN_OOM. The reclaim() calls on priv
	 * from now until rest() are the steps of one run, which means to
	 * free at most run_bytes (1 .. MR_UNLIMITED) from usage at its first
	 * step: cgroup1 takes its lock and journals once for them all, and
	 * keeps the lock between two steps (lib/cgroupfs/lowerstep.h), so
	 * the core calls nothing between two steps on priv that waits for
	 * anything but the kernel, reads priv's limits only after rest(),
	 * and rests priv before it steps on another handle
	 * (lib/core/reclaim.c). Never blocks. Serialised with reclaim. */
	void (*plan)(void *priv, uint64_t run_bytes);

	/* Optional, for MRI_CAP_STEP_CAN_OOM. Settles, without a step, what
	 * an earlier reclaim() left behind (the record of a failed restore,
	 * or of a dead manager's step), as reclaim() does first: the core
	 * calls it when it sizes a step to nothing (lib/core/reclaim.c), so
	 * that a failed restore is retried at every reclaim call and a limit
	 * is never left lowered because the group's cache ran out. Returns
	 * 0, -EBUSY (another manager holds the step's lock), -ENOENT, or the
	 * restore's error (the record kept). Serialised with reclaim. */
	int (*settle)(void *priv);

	/* Optional. Closes what reclaim() kept open from one call to the
	 * next of a run of batches (cgroup1: the step's directories and
	 * limit file, so that a batch costs no more opens than before the
	 * fd budget); the core calls it at the end of every run
	 * (mri_reclaim()) on each handle the run went through, so that a
	 * group at rest holds its two fds only. Serialised with reclaim. */
	void (*rest)(void *priv);

	/* Optional. Claims (claim true) or releases the right to keep the
	 * group's margin, exclusive among all open handles of the group in
	 * every process: -EBUSY when another holds it. Claiming opens the
	 * margin_fds fds keeping needs, so that the fd budget is met when the
	 * margin is set, not found short later in the worker: -EMFILE and
	 * nothing claimed when they cannot be had. Released at close. May run
	 * concurrently with set_usage_threshold(). */
	int (*claim_keeper)(void *priv, bool claim);

	/* Mandatory. In a child after fork(), whose handler has closed
	 * every fd the library tracks (lib/core/fds.h; a backend opens every fd
	 * through mri_open(), mri_openat() or mri_fd_begin()/_end()):
	 * drops priv's fd numbers without closing them (an fd it made
	 * untracked, as the simulator's library does its eventfd, it
	 * closes), may free priv's memory, touches no file or lock (the parent's step, if one is
	 * running, keeps its locks). Idempotent. */
	void (*forget)(void *priv);

	/* MRI_CAP_THRESHOLD. Arms a usage threshold at `bytes`: the event
	 * fd (struct mri_event_sink) becomes readable when usage crosses it
	 * in either direction. MR_UNLIMITED disarms (never slow). Replaces
	 * the previous threshold; may replace the event fd (reported before
	 * the old one is closed). With MRI_CAP_SLOW_THRESHOLD an arming may
	 * block for a kernel grace period, and the worker calls it only from
	 * its registration step (lib/core/worker.c). */
	int (*set_usage_threshold)(void *priv, uint64_t bytes);

	/* MRI_CAP_THRESHOLD. Consumes pending events so the event fd stops
	 * polling readable. Returns 1 when usage really crossed the armed
	 * threshold (cgroup1 and sim: their event fired), 0 when the wake-up
	 * had nothing to do (cgroup2: a timer tick with usage below the
	 * threshold; the worker then skips its margin pass), or a negative
	 * errno. Does not block. */
	int (*event_ack)(void *priv);

	/* Optional. The clock the group lives in, in ns: the core measures
	 * and bounds every time spent for the group in it (reclaim deadlines,
	 * the worker's passes, elapsed_ns of the statistics). A simulated
	 * group lives in a virtual clock that moves only as the simulation
	 * runs; a real one in CLOCK_MONOTONIC, which NULL stands for.
	 * Monotonic, never fails, does not block; may be called from any
	 * thread, concurrently with every other op. */
	uint64_t (*now_ns)(void *priv);

	/* Optional. The CPU time the calling thread has used, in the clock
	 * of now_ns(): a simulated task's work (user and kernel, not its
	 * waits); NULL stands for CLOCK_THREAD_CPUTIME_ID. The adaptive
	 * margin weighs the worker's CPU against its waits with it. Never
	 * fails, does not block. */
	uint64_t (*thread_cpu_ns)(void *priv);

	/* Optional (NULL: the core answers -EOPNOTSUPP). Fills the whole
	 * *out with memory.events, or memory.events.local when `local`;
	 * -EOPNOTSUPP when the kernel lacks the file. */
	int (*read_events)(void *priv, bool local, struct mr_events *out);

	/* Optional (NULL: -EOPNOTSUPP). Fills the whole *out with the
	 * group's memory pressure; -EOPNOTSUPP when PSI is unavailable. */
	int (*read_pressure)(void *priv, struct mr_pressure *out);

	/* Optional (NULL: -EOPNOTSUPP). Fills the whole *out with the
	 * group's I/O pressure (io.pressure; on cgroup v1 the twin's);
	 * -EOPNOTSUPP when unavailable. The proactive controller's I/O
	 * gate (lib/core/proactive.c). */
	int (*read_io_pressure)(void *priv, struct mr_pressure *out);

	/* Optional (NULL: -EOPNOTSUPP). Opens a new fd holding a PSI trigger
	 * on the group's memory pressure, `kind` MR_PSI_SOME or MR_PSI_FULL,
	 * stall and window in microseconds, already validated by the core
	 * (0 < stall_us <= window_us, window in 500 ms .. 10 s, a multiple
	 * of 2 s without CAP_SYS_RESOURCE). The fd is the caller's. */
	int (*psi_trigger_open)(void *priv, int kind, uint64_t stall_us,
				uint64_t window_us);

	/* Optional (NULL: -EOPNOTSUPP). One write of the group's limit
	 * (which = MRI_LIMIT_MAX) or high (MRI_LIMIT_HIGH) to `bytes`
	 * (MR_UNLIMITED: none), with no reclaim of its own beyond what the
	 * kernel does: the core reclaims first (mr_group_set_limit()). May
	 * return -EOPNOTSUPP for a `which` the backend lacks. */
	int (*write_limit)(void *priv, int which, uint64_t bytes);

	/* Optional (NULL: -EOPNOTSUPP). Sets the swappiness the backend's
	 * reclaim calls pass from now on: -1 for the kernel's own, else
	 * 0..200. The backend probes once whether the kernel takes it and
	 * answers -EOPNOTSUPP if not (then reclaim is unchanged). Called
	 * serialised with reclaim. */
	int (*set_swappiness)(void *priv, int swappiness);

	/* Optional (NULL: -EOPNOTSUPP). Fills the whole *out with the
	 * group's memory.low and memory.min and the effective ones as a
	 * reclaim rooted root_level levels above the group sees them
	 * (mm/memcontrol.c, mem_cgroup_calculate_protection(root, memcg)):
	 * 0 the group itself (none), MR_RECLAIM_ROOT_TOP the top of the
	 * hierarchy as read_limits() reports; root_level in *out is the
	 * one used. -EINVAL for a level above the top. */
	int (*read_protection)(void *priv, uint32_t root_level,
			       struct mr_protection *out);

	/* Optional (NULL: the backend offers no children, and a group
	 * whose reclaim the kernel refused goes to advisory mode). Calls
	 * fn(arg, child_path) for each child group of the group at absolute
	 * `path` that the caller may reclaim through (lib/core/childreclaim.c):
	 * a child directory owned by the caller's effective uid, as a
	 * delegatee owns the groups it created; child_path is absolute and
	 * valid during the call only; the core probes and opens it with
	 * this backend. fn returns 0 to go on or a negative errno to stop
	 * the walk, which is then returned. Returns 0 after the last child,
	 * fn's negative return, or the -errno of listing the directory
	 * (-ENOENT: the group is gone). May block on the directory's
	 * reads. No priv; called under the group's reclaim_lock, once per
	 * group. cgroup1 and cgroup2: mri_cgroup_list_children()
	 * (lib/cgroupfs/cgchildren.h); the simulator has none (its reclaim is never
	 * refused). */
	int (*list_children)(const char *path,
			     int (*fn)(void *arg, const char *child_path),
			     void *arg);

	/* Optional, built-in backends only: context-wide state of ctx_size
	 * bytes that every open of the context gets (mri_open_env.ctx_state):
	 * zeroed and set up by ctx_init at mr_ctx_new() (0, or a negative
	 * errno that fails it), torn down by ctx_fini at mr_ctx_free().
	 * cgroup v1: hybrid PSI's switch and mounts (lib/cgroupfs/hybrid.h), which
	 * mr_ctx_set_hybrid_psi() sets through mri_ctx_backend_state(). */
	size_t ctx_size;
	int (*ctx_init)(void *ctx_state);
	void (*ctx_fini)(void *ctx_state);
};

/* `which` of write_limit */
#define MRI_LIMIT_MAX  0
#define MRI_LIMIT_HIGH 1

/* The backends built in, NULL-terminated, in the order "auto" tries them;
 * at most MRI_MAX_BUILTIN. */
#define MRI_MAX_BUILTIN 4
extern const struct mri_backend *const mri_backends[];

extern const struct mri_backend mri_backend_cgroup1;
extern const struct mri_backend mri_backend_cgroup2;

/*
 * Backends of other libraries (the simulator's, libmemreclaim-sim)
 * register their table with the core, which then opens their groups by
 * name. "auto" never picks one: a program that opens a real path never
 * silently gets a group of a registered backend.
 *
 * The two functions below make the private node LIBMEMRECLAIM_PRIVATE_<the
 * package version> of lib/libmemreclaim.sym: exported from libmemreclaim.so
 * for the project's own libraries only, declared in no installed header,
 * renamed with every release (a library built against another release
 * does not load).
 */
#if defined(MR_BUILDING_LIBRARY)
#define MRI_PRIVATE_EXPORT __attribute__((visibility("default")))
#else
#define MRI_PRIVATE_EXPORT
#endif

/* The most backends registered at once. */
#define MRI_MAX_REGISTERED 4

/* Registers `be`, a table that stays valid and unchanged for the life of
 * the process (a registering shared object is linked -z nodelete, so
 * that dlclose() leaves it loaded), under be->name. Idempotent: the same
 * table again returns 0. Errors: -EINVAL (be or its name NULL, the name
 * empty or "auto", a mandatory op NULL, context state asked: ctx_size,
 * ctx_init and ctx_fini are for built-in backends), -EEXIST (a built-in backend or
 * another registered table has the name), -ENOSPC (MRI_MAX_REGISTERED
 * tables registered already). MT-safe: registrations serialise on one
 * mutex, lookups take no lock. */
MRI_PRIVATE_EXPORT int mri_backend_register(const struct mri_backend *be);

/* Binds `arg` (NULL: unbinds) as what ctx's opens pass the registered
 * backend `be` (mri_open_env.backend_arg), for the groups opened from now
 * on, in ctx and in its children reclaim (lib/core/childreclaim.c). Errors:
 * -EINVAL (ctx or be NULL, be not registered), -EBUSY (ctx has groups of
 * be open and arg is not the bound one; or arg is not NULL, be has
 * MRI_CAP_VIRTUAL_CLOCK and the worker thread of mr_ctx_worker_start()
 * runs), -ECHILD (ctx was created before a fork()). MT-safe: serialised
 * with mr_ctx_worker_start() (both take worker_lock, then ctx->lock). */
MRI_PRIVATE_EXPORT int mri_ctx_set_backend_arg(mr_ctx_t *ctx,
					       const struct mri_backend *be,
					       void *arg);

/* Finds a built-in or registered backend by name; NULL if unknown.
 * MT-safe. */
const struct mri_backend *mri_backend_find(const char *name);

/* The registry's slot of a registered backend, 0 .. MRI_MAX_REGISTERED -
 * 1 (the index of its argument in a context), or -1 for a built-in or
 * unknown table. MT-safe. */
int mri_backend_slot(const struct mri_backend *be);

/* The table registered in `slot`, or NULL (none yet, or slot out of
 * range). MT-safe. */
const struct mri_backend *mri_backend_at(unsigned slot);

#endif /* MR_BACKEND_H */
