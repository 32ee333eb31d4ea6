/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmemreclaim — the reclaim policy of the Linux memory controller, for
 * programs that manage memory cgroups.
 *
 * Conventions of the whole API (docs/design.md says more):
 *  - Sizes are bytes and times are nanoseconds, as uint64_t; shares are parts
 *    per million (ppm). The unit is in every name.
 *  - Every fallible call returns int: >= 0 on success, a negative errno value
 *    on failure. Fixed meanings: -EINVAL a bad argument, -ENOENT the cgroup is
 *    gone, -EOPNOTSUPP the backend cannot do this, -ENODEV no usable backend,
 *    -EAGAIN a reclaim that freed nothing, -ECHILD a handle used in a child
 *    after fork(), -ERANGE a margin that does not fit below the limit,
 *    -EBUSY a lock of the group is held (another handle keeps its margin,
 *    or a reclaim step or a reader, of this process or another, held it
 *    for longer than the wait, when the log names the holder) or the
 *    context's worker is busy (its thread runs, or a dispatch does),
 *    -EALREADY / -ESRCH the worker already runs / does not run, -EEXIST
 *    a group that already exists. mr_strerror() describes each.
 *  - Backends in this version: "cgroup1" (the cgroup v1 memory controller),
 *    "cgroup2" (the cgroup v2 memory controller; docs/kernels.md says which
 *    feature needs which kernel) and, in a program linked with
 *    libmemreclaim-sim (<memreclaim-sim.h>), "sim" (its simulator; chosen
 *    only by name).
 *  - MR_UNLIMITED stands for "no limit": cgroup v2 "max", cgroup v1 "-1" and
 *    every page-size form of v1's unlimited value.
 *  - Each function's comment ends with its thread class: "MT-safe" (any
 *    thread, any time), "MT-safe per handle" (concurrent calls on different
 *    handles only) or "not MT-safe".
 *  - The library never prints, installs no signal handler, and starts a
 *    thread only when asked (mr_ctx_worker_start()). Every fd it opens is
 *    O_CLOEXEC.
 *
 * The ten calls most programs need, in the order they make them:
 *
 *   mr_ctx_new(&ctx)                       a context: log, groups, worker
 *   mr_group_open(ctx, path, NULL, &g)     a memory cgroup ("auto" backend)
 *   mr_group_read_limits(g, &limits)       usage, limit, high, headroom
 *   mr_group_set_margin(g, margin_bytes, 0, hysteresis_bytes)
 *                                          a knob: keep usage below
 *                                          limit - margin ("Knobs" holds
 *                                          every setter)
 *   mr_ctx_worker_start(ctx)               background reclaim keeps it
 *   mr_group_reclaim(g, bytes, timeout_ns, &freed_bytes)
 *                                          reclaim now, on this thread
 *   mr_group_charge(g, bytes, &answer)     an allocator's "may I take
 *   mr_group_uncharge(g, bytes)            these bytes?", and the give-back
 *   mr_group_close(g)
 *   mr_ctx_free(ctx)                       stops the worker, closes groups
 *
 * and mr_strerror() for any negative return.
 */
#ifndef MEMRECLAIM_H
#define MEMRECLAIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MR_BUILDING_LIBRARY)
#define MR_EXPORT __attribute__((visibility("default")))
#else
#define MR_EXPORT
#endif

/* "No limit", in any size field or argument. */
#define MR_UNLIMITED UINT64_MAX

/* SWAP_CLUSTER_MAX (include/linux/swap.h) pages of 4 KiB: the kernel's
 * reclaim batch, the default and the floor of the library's batch. */
#define MR_SWAP_CLUSTER_MAX_BYTES (32ULL * 4096)

/* ------------------------------------------------------------------ */
/* Version                                                              */
/* ------------------------------------------------------------------ */

/* The version of this header. mr_version() gives the library's. */
#define MR_VERSION_MAJOR 0
#define MR_VERSION_MINOR 1
#define MR_VERSION_MICRO 0

/* The package version of the library that is running, e.g. "0.1.0".
 * Returns a static string. MT-safe. */
MR_EXPORT const char *mr_version(void);

/* A static, human-readable description of a negative errno value as this
 * library uses it (-ENOENT reads "no such cgroup, or it was removed",
 * -EAGAIN "nothing could be reclaimed", ...). Positive values are taken as
 * their negation; unknown values give "unknown error". Never NULL.
 * MT-safe. */
MR_EXPORT const char *mr_strerror(int err);

/* ------------------------------------------------------------------ */
/* Context                                                              */
/* ------------------------------------------------------------------ */

/* A context owns groups, the log callback and at most one margin worker
 * thread. There is no global default context. */
typedef struct mr_ctx mr_ctx_t;

/* Log levels, with syslog's numbers. */
enum mr_log_level {
	MR_LOG_ERR = 3,
	MR_LOG_WARNING = 4,
	MR_LOG_NOTICE = 5,
	MR_LOG_INFO = 6,
	MR_LOG_DEBUG = 7,
};

/* Log callback: level is an enum mr_log_level, msg a NUL-terminated line
 * without a trailing newline, valid only during the call. It may be called
 * from the margin worker thread and from any thread calling the library,
 * concurrently, so it must be thread-safe; it must not call back into the
 * library, nor fork() (it may run while the library holds the lock that
 * its fork handlers take). */
typedef void (*mr_log_fn)(int level, const char *msg, void *userdata);

/* Creates a context and stores it in *ret (only on success).
 * Errors: -EINVAL (ret NULL; $MEMRECLAIM_STATE_DIR set and not an
 * absolute path, or PATH_MAX - 64 bytes or longer), -ENOMEM.
 * The state directory for the limit journal (cgroup v1) is
 * $MEMRECLAIM_STATE_DIR, or /run/memreclaim when it is unset or empty,
 * read here once (ignored in a set-user-ID program: secure_getenv()).
 * MT-safe. */
MR_EXPORT int mr_ctx_new(mr_ctx_t **ret);

/* Stops the worker if it runs, closes every group still open (restoring any
 * lowered limit, as mr_group_close()), and frees the context. NULL is a
 * no-op. No other call on ctx or its groups may be running or follow.
 * Not MT-safe. */
MR_EXPORT void mr_ctx_free(mr_ctx_t *ctx);

/* Installs (fn non-NULL) or removes (fn NULL) the log callback; messages
 * above max_level (an enum mr_log_level, 0..7) are dropped before they are
 * formatted. Default: no callback, nothing logged.
 * Errors: -EINVAL (ctx NULL, max_level outside 0..7).
 * MT-safe (a message being delivered concurrently may still reach the old
 * callback). */
MR_EXPORT int mr_ctx_set_log(mr_ctx_t *ctx, mr_log_fn fn, void *userdata,
			     int max_level);

/* ------------------------------------------------------------------ */
/* Groups                                                               */
/* ------------------------------------------------------------------ */

typedef struct mr_group mr_group_t;

/* Opens the memory cgroup whose directory is the absolute path `path`
 * (e.g. "/sys/fs/cgroup/memory/db") and adds it to ctx.
 *
 * backend: "cgroup1" (cgroup v1 memory controller), "cgroup2" (cgroup v2
 * memory controller: a group whose parent does not enable the memory
 * controller in its cgroup.subtree_control is refused with -ENODEV and a
 * log line saying so), "sim" (a group of the simulator bound to ctx with
 * mr_sim_attach() of libmemreclaim-sim, which registers this backend when
 * it is loaded; path is then the group's path in the simulated hierarchy,
 * e.g. "/web"), or "auto" or NULL. With NULL the environment variable
 * MEMRECLAIM_BACKEND is used if set; "auto" picks from the filesystem of
 * path (statfs magic, then the memory files present) and never picks a
 * registered backend such as "sim". Names of backends neither built into
 * this version nor registered are unknown.
 *
 * On cgroup v2 kernels without memory.reclaim (before 5.19), reclaim lowers
 * memory.high for a moment, journaled the same way; the journal of such a
 * step is recovered here as well.
 *
 * On cgroup v1, a limit left lowered by a manager that died in the middle
 * of a reclaim step (see the journal in docs/design.md) is restored here,
 * but only if the limit still holds the value that manager wrote. (If a
 * live manager is in a step at that moment, the journal is its own; the
 * next step of any manager settles a stale one.)
 *
 * The group starts with no margin (the worker leaves it alone) and a fixed
 * batch of MR_SWAP_CLUSTER_MAX_BYTES.
 *
 * The fd budget: an open group keeps 1 fd on cgroup v1 (2 while it keeps
 * a margin, see mr_group_set_margin()), 2 on cgroup v2, 1 on the
 * simulator; a worker pass, a reclaim and a threshold registration open
 * up to 16 more for a moment (one directory per level above the group,
 * the step's files). An open is refused with -EMFILE, and a warning in
 * the log, unless its kept fds and those 16 after them are free below the
 * process's soft RLIMIT_NOFILE: with a limit of 1024 and nothing else
 * open, about 1000 v1 groups open, or 500 that keep a margin. The groups
 * already open are served as before. Raise RLIMIT_NOFILE for more.
 *
 * Errors: -EINVAL (ctx, path or ret NULL; path not absolute, containing
 * "." or ".." components, or longer than PATH_MAX; unknown backend name),
 * -ENOENT (no such directory, or no such simulated group), -ENOTDIR (a
 * file, e.g. a control file, not the group's directory), -ENODEV (no
 * backend recognises the path, or the named backend does not; "sim" on a
 * context bound to no simulator), -EACCES/-EPERM (cannot open its files),
 * -ENOMEM, -EMFILE (the fd budget above: nothing is opened), -EIO (a
 * control file could not be parsed, or the group's journal
 * holds an invalid record or another group's: it is kept for a person to
 * inspect, and the group is not opened), -ELOOP (the state directory or
 * the journal is a symlink), -EPERM (the state directory is not owned by
 * the caller or is writable by others), -ENOTDIR (the state directory is
 * not a directory), -ECHILD. The state directory holds one
 * journal per cgroup while a step is in progress or a restore failed,
 * named after the cgroup directory's device and inode.
 * MT-safe. */
MR_EXPORT int mr_group_open(mr_ctx_t *ctx, const char *path,
			    const char *backend, mr_group_t **ret);

/* Opens the memory cgroup the calling process belongs to, as
 * mr_group_open() opens a path: the v1 memory controller's group where
 * one is mounted, else the cgroup2 group (a host whose memory controller
 * is on cgroup2 gets the "cgroup2" backend at that mount). Found from
 * /proc/self/cgroup and /proc/self/mountinfo, with the mount's root
 * stripped from the path (inside a container whose cgroup mount is a bind
 * mount of /docker/ID, the group /docker/ID/sub is <mount point>/sub);
 * never from /proc/mounts, /proc/cgroups or libcgroup.
 * Errors: those of mr_group_open(), and -EIO (a malformed line of
 * /proc/self/cgroup or mountinfo, logged with its number), -ENODEV (no
 * mounted memory controller holds the process), -EREMOTE (the group is
 * outside what this process can see: above its cgroup namespace's root,
 * which /proc/self/cgroup shows as a path beginning "/..", or below no
 * mount's root), -ENAMETOOLONG. MT-safe. */
MR_EXPORT int mr_group_open_self(mr_ctx_t *ctx, mr_group_t **ret);

/* Opens the memory cgroup of the process `pid`, as mr_group_open_self()
 * opens the caller's: found from /proc/PID/cgroup, read in the caller's
 * cgroup namespace, and the caller's own /proc/self/mountinfo (the path
 * must be one the caller can open), never from anything the process or
 * its owner says about itself. For a container runtime's hook, which is
 * given the container's pid in its state (the OCI runtime
 * specification, "State"). A pidfd (pidfd_open(2), Linux 5.3) is taken
 * before the read and polled after it: a process that exited in between,
 * whose pid another process may have taken, is -ESRCH rather than that
 * other process's group (without pidfd_open, -ENOSYS, the file is read
 * without this check).
 * pid: > 0.
 * Errors: those of mr_group_open_self(), and -EINVAL (pid <= 0),
 * -ESRCH (no such process, the id of a thread other than its process's
 * first, or a process that exited during the call), -EACCES (the
 * caller may not read the process's cgroup file).
 * MT-safe. */
MR_EXPORT int mr_group_open_pid(mr_ctx_t *ctx, pid_t pid, mr_group_t **ret);

/* Removes the group from its context and frees it. A reclaim step that
 * lowered a limit is undone before this returns (the worker and synchronous
 * reclaim are waited for), and the group's margin, if this handle kept one,
 * is released. Returns 0, -ECHILD in a child after fork() (memory is freed,
 * the cgroup is not touched), or the negative errno of a failed restore
 * (the journal is then kept, so the next open retries). The handle is
 * freed in every case. NULL returns 0.
 * MT-safe per handle: the worker of the context may run, but no other
 * call may use this handle concurrently or after. */
MR_EXPORT int mr_group_close(mr_group_t *group);

/* The group's path in normal form (the path it was opened with, repeated
 * and trailing slashes removed), and the name of the backend chosen
 * ("cgroup1"). NULL for a NULL group. Valid until mr_group_close().
 * MT-safe. */
MR_EXPORT const char *mr_group_path(const mr_group_t *group);
MR_EXPORT const char *mr_group_backend(const mr_group_t *group);

/* Reads the group's current usage (v1 memory.usage_in_bytes, v2
 * memory.current) into *usage_bytes: one pread() on an fd kept open.
 * Errors: -EINVAL (NULL argument), -ENOENT (group removed), -EIO, -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_group_read_usage(mr_group_t *group, uint64_t *usage_bytes);

/* flags of struct mr_limits */
#define MR_LIMITS_ANCESTOR_BINDS (1u << 0) /* limit_bytes < own_limit_bytes */
/* The walk up the hierarchy ended at a group that is not the real root:
 * the top of a cgroup namespace or of a bind-mounted subtree, above which
 * nothing is visible. With limit_bytes MR_UNLIMITED this means "no limit
 * as far as visible": a limit may bind from above, unseen (never taken to
 * be the host's RAM). */
#define MR_LIMITS_PARTIAL_VIEW   (1u << 1)
/* cgroup v1: the kernel's hierarchical_memory_limit is lower than every
 * visible group's limit, so an invisible ancestor binds: limit_bytes is
 * right, but which group sets it and that group's usage are not known
 * (MR_LIMITS_HAS_BINDING is clear). */
#define MR_LIMITS_BINDING_HIDDEN (1u << 2)

/* A snapshot of usage and limits. The caller sets size = sizeof(struct
 * mr_limits); fields past size are neither read nor written, so fields can
 * be appended in later versions. */
struct mr_limits {
	size_t size;
	uint64_t usage_bytes;
	/* The limit that binds the group: the lowest of its own and its
	 * ancestors' (v1: hierarchical_memory_limit). MR_UNLIMITED if none. */
	uint64_t limit_bytes;
	/* The group's own limit (v1: memory.limit_in_bytes). */
	uint64_t own_limit_bytes;
	/* Charges that met the limit since creation (v1: memory.failcnt; v2:
	 * the max counter of memory.events.local, or of memory.events on
	 * kernels before 5.2). */
	uint64_t limit_hits;
	uint32_t flags; /* MR_LIMITS_* */
	/* Which of the fields below the backend reported
	 * (MR_LIMITS_HAS_*). A clear bit means absent, not zero: cgroup v1
	 * has no memory.high, memory.low or memory.min; the fields then
	 * read MR_UNLIMITED (high) or 0. */
	uint32_t present;
	/* The high that binds the group: the lowest memory.high of it and
	 * its ancestors (MR_UNLIMITED if none), and its own. */
	uint64_t high_bytes;
	uint64_t own_high_bytes;
	/* The group's own memory.low and memory.min, and the protection the
	 * kernel actually gives it against global reclaim (effective low
	 * and min, computed as mm/memcontrol.c's effective_protection()
	 * does, with and without the memory_recursiveprot mount option,
	 * from the top of the hierarchy): what a reclaim from there leaves
	 * alone. A reclaim rooted lower, at an ancestor's limit, gives
	 * more: mr_group_read_protection(). */
	uint64_t low_bytes;
	uint64_t min_bytes;
	uint64_t effective_low_bytes;
	uint64_t effective_min_bytes;
	/* Highest usage seen (v2 memory.peak, Linux 5.19; v1
	 * memory.max_usage_in_bytes). */
	uint64_t peak_bytes;
	/* Swap charged to the group and its limit (v2 memory.swap.current
	 * and memory.swap.max; MR_UNLIMITED: none). */
	uint64_t swap_usage_bytes;
	uint64_t swap_limit_bytes;
	/* MR_LIMITS_HAS_BINDING. The group whose limit is
	 * limit_bytes, as a number of levels above this one (0: the group
	 * itself; its path is mr_group_path() without that many last
	 * components), that group's usage, and the headroom under it:
	 * limit_bytes - binding_usage_bytes, 0 when over. A pod at 11.5 of
	 * its 12 GiB over a child with no limit and 9 GiB used leaves the
	 * child 0.5 GiB of headroom, not 3 GiB. With no limit: level 0,
	 * the group's usage, headroom MR_UNLIMITED. */
	uint32_t binding_level;
	uint64_t binding_usage_bytes;
	uint64_t headroom_bytes;
	/* MR_LIMITS_HAS_SWAP_FREE. Whether a limit reclaim of
	 * the group may swap its anonymous memory out. swap_free_bytes: the
	 * swap the group may still use, the host's free swap (SwapFree of
	 * /proc/meminfo) and on cgroup v2 at most the headroom under
	 * memory.swap.max of the group and of each ancestor (mm/memcontrol.c,
	 * mem_cgroup_get_nr_swap_pages()). On v1 with memsw accounting, at
	 * most the swap that makes room: a swap-out leaves memsw usage as
	 * it was, and a charge that fails on the memsw limit reclaims
	 * without swapping (mm/memcontrol.c, try_charge_memcg()), so swap
	 * helps only as far as the memsw headroom exceeds the memory
	 * headroom, each the smallest over the group and the visible
	 * ancestors whose limits bind (for the group alone: swap limit -
	 * swap usage; memsw limit = limit: 0); 0: none. swappiness:
	 * the group's (v1 memory.swappiness; v2 has no such file and
	 * reclaim uses vm.swappiness); with 0 a limit reclaim takes page
	 * cache only (mm/vmscan.c, get_scan_count()). The simulator reports
	 * its swap device's free space and its reclaim's swappiness. */
	uint64_t swap_free_bytes;
	uint32_t swappiness;
};

/* Bits of struct mr_limits.present. */
#define MR_LIMITS_HAS_HIGH       (1u << 0) /* high_bytes, own_high_bytes */
#define MR_LIMITS_HAS_PROTECTION (1u << 1) /* low, min and effective ones */
#define MR_LIMITS_HAS_PEAK       (1u << 2) /* peak_bytes */
#define MR_LIMITS_HAS_SWAP       (1u << 3) /* swap_usage/limit_bytes */
#define MR_LIMITS_HAS_BINDING    (1u << 4) /* binding_level, _usage, headroom */
#define MR_LIMITS_HAS_SWAP_FREE  (1u << 5) /* swap_free_bytes, swappiness */

/* Fills *limits (see struct mr_limits). On cgroup v1 it first waits for
 * any reclaim step in progress on the group or an ancestor (of this or
 * another manager) to end, so a limit lowered for a moment is never taken
 * for the group's.
 * Errors: -EINVAL (NULL, size smaller than the 2 first fields), -ENOENT,
 * -EIO, -EBUSY (steps held on for longer than 1 s), -ECHILD. MT-safe. */
MR_EXPORT int mr_group_read_limits(mr_group_t *group, struct mr_limits *limits);

/* The reclaim roots of mr_group_read_protection(), beside a number of
 * levels above the group. */
#define MR_RECLAIM_ROOT_TOP     UINT32_MAX        /* global reclaim */
#define MR_RECLAIM_ROOT_BINDING (UINT32_MAX - 1)  /* at the binding limit */

/* A group's protection as one reclaim sees it. The caller sets
 * size = sizeof(struct mr_protection); fields past size are neither read
 * nor written. */
struct mr_protection {
	size_t size;
	/* The reclaim root the effective values are computed for, as a
	 * number of levels above the group (0: the group itself; the top
	 * of the hierarchy, as far as visible, for MR_RECLAIM_ROOT_TOP). */
	uint32_t root_level;
	/* The group's own memory.low and memory.min. */
	uint64_t low_bytes;
	uint64_t min_bytes;
	/* What that reclaim leaves alone: effective low and min. */
	uint64_t effective_low_bytes;
	uint64_t effective_min_bytes;
};

/* Reads the group's memory.low and memory.min and the effective protection
 * a reclaim rooted at one of its ancestors (or at itself) gives it. The
 * kernel computes protection relative to the reclaim's root
 * (mm/memcontrol.c, mem_cgroup_calculate_protection(root, memcg) and
 * effective_protection(); from Linux 6.11 mm/page_counter.c,
 * page_counter_calculate_protection()): the root itself gets none, the
 * root's children their own low and min, and each group further down a
 * share of its parent's effective protection in proportion to its
 * protected usage (min(usage, low)) among its siblings', plus, with the
 * memory_recursiveprot mount option, a share of what they leave
 * unclaimed. A limit reclaim is rooted at the group whose limit was met
 * (a parent with a limit and memory.low 0 leaves its children their
 * protection against its own limit), memory.reclaim at the group written
 * to, global reclaim at the real root; struct mr_limits reports the last.
 * root_level: levels above the group (0: the group, which gets none;
 * 1: its parent, ...), MR_RECLAIM_ROOT_TOP (the real root, or the top of
 * a namespace's or bind mount's view taken as its child: what
 * mr_limits.effective_low_bytes says), or MR_RECLAIM_ROOT_BINDING (the
 * group whose limit binds, struct mr_limits.binding_level; the top when
 * there is no limit). out->root_level says which was used.
 * Errors: -EINVAL (NULL argument, size below the first two fields,
 * root_level above the top), -EOPNOTSUPP (cgroup v1, which has no
 * memory.low: its backend reports none), -ENOENT, -EIO, -EBUSY (as
 * mr_group_read_limits(): MR_RECLAIM_ROOT_BINDING reads the limits,
 * which on cgroup v1 waits for reclaim steps in progress), -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_group_read_protection(mr_group_t *group, uint32_t root_level,
				       struct mr_protection *out);

/* Fields of struct mr_memstat, as bit numbers of its `present` mask. */
enum mr_memstat_field {
	MR_MEMSTAT_ANON = 0,
	MR_MEMSTAT_FILE,
	MR_MEMSTAT_SHMEM,
	MR_MEMSTAT_FILE_MAPPED,
	MR_MEMSTAT_FILE_DIRTY,
	MR_MEMSTAT_FILE_WRITEBACK,
	MR_MEMSTAT_ANON_THP,
	MR_MEMSTAT_INACTIVE_ANON,
	MR_MEMSTAT_ACTIVE_ANON,
	MR_MEMSTAT_INACTIVE_FILE,
	MR_MEMSTAT_ACTIVE_FILE,
	MR_MEMSTAT_UNEVICTABLE,
	MR_MEMSTAT_SWAP,
	MR_MEMSTAT_PGFAULT,
	MR_MEMSTAT_PGMAJFAULT,
	MR_MEMSTAT_PGPGIN,
	MR_MEMSTAT_PGPGOUT,
	MR_MEMSTAT_PGSCAN,
	MR_MEMSTAT_PGSTEAL,
	MR_MEMSTAT_WORKINGSET_REFAULT_ANON,
	MR_MEMSTAT_WORKINGSET_REFAULT_FILE,
	MR_MEMSTAT_KERNEL,
	/* Reclaim by reclaimer (v2 memory.stat): see struct mr_memstat. */
	MR_MEMSTAT_PGSCAN_KSWAPD,
	MR_MEMSTAT_PGSCAN_DIRECT,
	MR_MEMSTAT_PGSCAN_KHUGEPAGED,
	MR_MEMSTAT_PGSCAN_PROACTIVE,
	MR_MEMSTAT_PGSTEAL_KSWAPD,
	MR_MEMSTAT_PGSTEAL_DIRECT,
	MR_MEMSTAT_PGSTEAL_KHUGEPAGED,
	MR_MEMSTAT_PGSTEAL_PROACTIVE,
	MR_MEMSTAT_SLAB_RECLAIMABLE,
};

/* memory.stat mapped onto one set of names for every backend, counted over
 * the group and its descendants (v1: the total_* keys; v2's memory.stat is
 * hierarchical already). A field whose bit is clear in `present` was not
 * reported by the kernel and reads 0: it is absent, not zero (v1 has no
 * pgscan or pgsteal). Page counts are converted to bytes. Caller sets size.
 */
struct mr_memstat {
	size_t size;
	uint64_t present; /* bit (1ULL << MR_MEMSTAT_x) per field read */
	uint64_t anon_bytes;             /* v1 total_rss */
	uint64_t file_bytes;             /* v1 total_cache */
	uint64_t shmem_bytes;
	uint64_t file_mapped_bytes;      /* v1 total_mapped_file */
	uint64_t file_dirty_bytes;       /* v1 total_dirty */
	uint64_t file_writeback_bytes;   /* v1 total_writeback */
	uint64_t anon_thp_bytes;         /* v1 total_rss_huge */
	uint64_t inactive_anon_bytes;
	uint64_t active_anon_bytes;
	uint64_t inactive_file_bytes;
	uint64_t active_file_bytes;
	uint64_t unevictable_bytes;
	uint64_t swap_bytes;
	uint64_t pgfault;                /* events */
	uint64_t pgmajfault;             /* events */
	uint64_t pgpgin_bytes;           /* v1 only: pages charged, as bytes */
	uint64_t pgpgout_bytes;          /* v1 only: pages uncharged, bytes */
	uint64_t pgscan_bytes;           /* v2 only */
	uint64_t pgsteal_bytes;          /* v2 only */
	uint64_t workingset_refault_anon_bytes;
	uint64_t workingset_refault_file_bytes;
	/* Kernel memory charged to the group (v2 `kernel`, Linux
	 * 5.18; on older v2 kernels the sum of its parts: kernel_stack,
	 * pagetables, sec_pagetables, percpu, sock, vmalloc, slab; v1:
	 * absent). */
	uint64_t kernel_bytes;
	/* The pages scanned and reclaimed (stolen) from the group, as
	 * bytes, by who reclaimed them (cgroup v2; absent on v1 and on the
	 * simulator): kswapd (background), direct (a task's own charge or
	 * allocation, the group's memory.high and memory.max writes, and on
	 * kernels before 6.15 memory.reclaim too), khugepaged (Linux 6.3)
	 * and proactive (memory.reclaim, Linux 6.15: "mm: vmscan: split
	 * proactive reclaim statistics from direct reclaim statistics").
	 * pgscan_bytes and pgsteal_bytes above are the kernel's own sums of
	 * these (mm/memcontrol.c, memcg_stat_format()), read from their own
	 * lines, never added up here; pgsteal_anon/pgsteal_file, which count
	 * the same pages again by type, are not read. Where the proactive
	 * pair is absent, the library's own memory.reclaim writes are in
	 * the direct pair (docs/kernels.md). */
	uint64_t pgscan_kswapd_bytes;
	uint64_t pgscan_direct_bytes;
	uint64_t pgscan_khugepaged_bytes;
	uint64_t pgscan_proactive_bytes;
	uint64_t pgsteal_kswapd_bytes;
	uint64_t pgsteal_direct_bytes;
	uint64_t pgsteal_khugepaged_bytes;
	uint64_t pgsteal_proactive_bytes;
	/* The part of kernel_bytes in slab caches with a shrinker (v2
	 * slab_reclaimable: dentries, inodes; absent on v1 and on the
	 * simulator). Reclaim takes it: memory.reclaim and a lowered high
	 * or limit shrink the group's slab with its LRUs (mm/vmscan.c,
	 * shrink_node_memcgs() calls shrink_slab() for each group). */
	uint64_t slab_reclaimable_bytes;
};

/* Reads memory.stat into *stat (see struct mr_memstat).
 * Errors: -EINVAL (NULL; size smaller than its size and present fields),
 * -ENOENT, -EIO (unparsable), -ECHILD. MT-safe. */
MR_EXPORT int mr_group_read_memstat(mr_group_t *group, struct mr_memstat *stat);

/* Counters of memory.events, as bit numbers of struct mr_events.present. */
enum mr_event_field {
	MR_EVENT_LOW = 0,       /* reclaimed below memory.low */
	MR_EVENT_HIGH,          /* usage went over memory.high */
	MR_EVENT_MAX,           /* a charge met memory.max */
	MR_EVENT_OOM,           /* a charge failed at memory.max */
	MR_EVENT_OOM_KILL,      /* processes OOM-killed */
	MR_EVENT_OOM_GROUP_KILL /* the whole group killed (Linux 5.17) */
};

/* memory.events (or memory.events.local), one counter per event; caller
 * sets size. A field whose bit is clear in `present` was not reported by
 * the kernel: absent, not zero. */
struct mr_events {
	size_t size;
	uint64_t present; /* bit (1ULL << MR_EVENT_x) per counter read */
	uint64_t low;
	uint64_t high;
	uint64_t max;
	uint64_t oom;
	uint64_t oom_kill;
	uint64_t oom_group_kill;
};

/* flags of mr_group_read_events() */
#define MR_EVENTS_LOCAL (1u << 0) /* the group's own (memory.events.local) */

/* Reads the group's event counters into *events. Without MR_EVENTS_LOCAL
 * they count the group and its descendants (v2 memory.events), with it
 * the group alone (memory.events.local, Linux 5.2; -EOPNOTSUPP before).
 * cgroup v1 has neither file: `max` is memory.failcnt and `oom_kill` the
 * oom_kill line of memory.oom_control (Linux 4.13), both the group's own,
 * whatever the flags; the others are absent. On the simulator, the
 * simulated counters. Unknown keys are ignored.
 * Errors: -EINVAL (NULL, size smaller than its size and present fields,
 * unknown flags), -ENOENT (group removed), -EIO (unparsable),
 * -EOPNOTSUPP, -ECHILD. MT-safe. */
MR_EXPORT int mr_group_read_events(mr_group_t *group, unsigned flags,
				   struct mr_events *events);

/* One line of a pressure file (Documentation/accounting/psi.rst): the
 * share of wall time in which some (or all) of the group's tasks stalled
 * on memory, averaged over 10, 60 and 300 s, in ppm of the time (the
 * kernel prints percent with two decimals: 1.23 % is 12300 ppm), and the
 * total stall time in microseconds. */
struct mr_psi_stat {
	uint32_t avg10_ppm;
	uint32_t avg60_ppm;
	uint32_t avg300_ppm;
	uint64_t total_us;
};

/* Bits of struct mr_pressure.present. */
#define MR_PRESSURE_SOME (1u << 0)
/* memory.pressure has printed `full` since PSI arrived (4.20); a file
 * without the line leaves the bit clear. */
#define MR_PRESSURE_FULL (1u << 1)

/* Memory pressure of the group; caller sets size. */
struct mr_pressure {
	size_t size;
	uint32_t present; /* MR_PRESSURE_* */
	struct mr_psi_stat some;
	struct mr_psi_stat full;
};

/* Reads the group's memory pressure (v2 memory.pressure; on cgroup v1,
 * the one of the group's cgroup2 twin, see mr_ctx_set_hybrid_psi(), or
 * where it has none, of the cgroup2 group that holds exactly its tasks;
 * on the simulator, the simulated stall time). Unknown keys and lines are
 * ignored; a missing `full` line leaves MR_PRESSURE_FULL clear.
 * Errors: -EINVAL (NULL, size smaller than its size and present fields),
 * -EOPNOTSUPP (PSI unavailable: a kernel without CONFIG_PSI or booted
 * with psi=0, whose file fails with EOPNOTSUPP or reads empty; from
 * Linux 6.2 a cgroup v2 group whose cgroup.pressure is 0, which hides
 * the file; a cgroup v1 group without a twin nor a cgroup2 group of its
 * tasks alone), -ENOENT (group removed), -EIO (unparsable), -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_group_read_pressure(mr_group_t *group,
				     struct mr_pressure *pressure);

/* Kinds of PSI triggers */
enum mr_psi_kind {
	MR_PSI_SOME = 0, /* some task stalled */
	MR_PSI_FULL = 1, /* all non-idle tasks stalled at once */
};

/* Arms a PSI trigger on the group's memory pressure and returns its fd
 * (O_CLOEXEC), which polls POLLPRI each time the stall time of `kind`
 * within a moving window of window_ns exceeds stall_ns, and POLLERR once
 * the group is removed; closing the fd removes the trigger. The kernel
 * signals at most once per window (kernel/sched/psi.c, psi_trigger_create;
 * Documentation/accounting/psi.rst). On cgroup v1 it arms on the group's
 * cgroup2 twin, or the cgroup2 group of its tasks alone
 * (mr_ctx_set_hybrid_psi()). On the simulator the fd polls
 * POLLIN instead, with one message to read per event, and POLLHUP once
 * the group is removed (docs/simulator.md, "Events and PSI").
 *
 * stall_ns and window_ns are multiples of 1000 (the kernel counts in
 * microseconds) with 0 < stall_ns <= window_ns, and window_ns between
 * 500 ms and 10 s. A process without CAP_SYS_RESOURCE may arm only
 * windows that are multiples of 2 s (Linux 6.4's unprivileged
 * triggers): it gets -EINVAL for others, before anything is written. The
 * trigger is written with its terminating newline, since the kernel
 * overwrites the write's last byte.
 * Errors: -EINVAL (NULL group, unknown kind, values out of range),
 * -EOPNOTSUPP (PSI unavailable, see mr_group_read_pressure(); a backend
 * without triggers), -ENOENT (group removed), -EACCES/-EPERM, -EMFILE,
 * or the errno of the kernel's refusal of the write (a failed arm is
 * never silent), -ECHILD. MT-safe. */
MR_EXPORT int mr_group_psi_trigger_open(mr_group_t *group, int kind,
					uint64_t stall_ns, uint64_t window_ns);

/* Whether a POLLPRI of a trigger armed by mr_group_psi_trigger_open() on
 * this group is a real crossing: 1 when the group's stall total of the
 * trigger's kind grew by at least its stall_ns since the trigger was
 * armed or since the last wake-up confirmed (or dropped) here, 0 when it
 * did not (a wake-up to drop: acting on it would reclaim for nothing).
 * Call it once per POLLPRI, after poll() returned it (the kernel clears
 * the trigger's event as poll() reports it).
 *
 * Why: an unprivileged trigger (a window that is a multiple of 2 s, Linux
 * 6.4) is updated by the kernel's averaging worker against one stall
 * total but started its window at another, which only privileged triggers'
 * RT poll worker moves (kernel/sched/psi.c, psi_trigger_create(),
 * window_update(); the fix, "psi: fix avg trigger being fired
 * unexpectedly", was posted in February 2024 and again in July 2025): on
 * such kernels the first POLLPRI after arming can come while the stall
 * barely grew, and the next window can inherit it. The kernel's window
 * of a real crossing lies within the span checked here, so a real one
 * always answers 1 (docs/design.md, "Faults met in the field").
 *
 * The group remembers the last 8 triggers armed on it by fd number (an
 * older one's, or one whose total could not be read at arming, answers
 * -EBADF: judge it by the kernel's word alone). A trigger closed and its
 * fd number reused by another trigger armed here is the new one.
 * Errors: -EINVAL (NULL group, fd < 0), -EBADF (not a trigger the group
 * remembers), -ENOENT, -EIO, -EOPNOTSUPP (reading the pressure failed),
 * -ECHILD. MT-safe. */
MR_EXPORT int mr_group_psi_trigger_confirm(mr_group_t *group, int fd);

/* Conditions of a group the library detects and the caller polls for
 * (mr_group_conditions_fd()), as bits of struct mr_conditions.active. */
/* Stuck at memory.high: no usable swap, what reclaim cannot take
 * (anonymous memory the swap cannot hold, unevictable memory and kernel
 * memory but its reclaimable slab) fills at least 90 % of the memory.high
 * that binds the group, its usage is at or above that high when sampled
 * (held there, not brought back under by reclaim at high),
 * memory.events `high` rose over the worker's last two safety intervals
 * (at least once a second in each: a few times a second for each
 * throttled task, thousands for a group of many threads) and max, oom
 * and oom_kill did not over the last, and all its tasks stalled (PSI
 * full) at least 10 % of the last. The kernel then neither
 * fails the group's charges nor OOM-kills it: it throttles every task
 * returning to user space over high (mm/memcontrol.c,
 * mem_cgroup_handle_over_high(), up to 2 s per return), for as long as
 * high stays below what the group needs. Reclaim cannot help; raising
 * memory.high, adding swap or stopping work can. The library's own writes
 * never cause it (its reclaim stops at what reclaim cannot take when no
 * swap is usable: mr_group_reclaim()); a memory.high the caller set with
 * mr_group_set_high(), or someone else wrote, can, and the library
 * leaves it as it is and reports the condition. */
#define MR_CONDITION_STUCK_HIGH (1u << 0)

/* The group's conditions and the figures last weighed; caller sets
 * size (fields past it are neither read nor written). */
struct mr_conditions {
	size_t size;
	uint32_t active;              /* MR_CONDITION_* in force now */
	uint64_t stuck_high_entered;  /* times MR_CONDITION_STUCK_HIGH began */
	/* The worker's last sample: memory.events `high` per second over
	 * its interval, PSI full in ppm of the interval (0 unless `high`
	 * rose in it and in the one before: PSI is read only while `high`
	 * rises), what reclaim cannot take
	 * and the high that binds (MR_UNLIMITED: none), in bytes, as last
	 * read. */
	uint64_t high_events_per_s;
	uint32_t full_ppm;
	uint64_t unreclaimable_bytes;
	uint64_t high_bytes;
	/* Over the last interval, when `high` rose fast in it and in the
	 * one before (0 otherwise, and on cgroup v1 and the simulator, which
	 * report no reclaim by reclaimer): the pages the group's own tasks
	 * reclaimed for themselves (memory.stat pgsteal_direct, less what
	 * the library's reclaim freed where the kernel counts it there:
	 * before Linux 6.15 memory.reclaim is counted as direct reclaim),
	 * in bytes per second, and the reclaim's efficiency, pgsteal over
	 * pgscan in ppm, at most 1000000: a group stuck at high reclaims
	 * hard for little. */
	uint64_t direct_reclaim_bytes_per_s;
	uint32_t reclaim_efficiency_ppm;
};

/* A pollable fd (an eventfd, O_CLOEXEC and non-blocking) that polls
 * readable (POLLIN) each time a condition of the group begins or ends,
 * until mr_group_read_conditions() is called; readable at once when a
 * condition is already in force. The group's for its life: the caller
 * only polls it (never reads, writes or closes it); made on the first
 * call, the same fd after. The conditions are sampled by the context's
 * worker at its safety round (every MR_WORKER_SAFETY_NS: the thread of
 * mr_ctx_worker_start(), or mr_ctx_worker_dispatch() with
 * MR_DISPATCH_ALL), for every group of the context whose backend reports
 * memory.events (cgroup v2, the simulator; v1 has no memory.high): a read
 * of memory.events per group per second, and of memory.pressure,
 * memory.stat and the limits while `high` rises.
 * Errors: -EINVAL (NULL), -ECHILD, -EMFILE/-ENFILE/-ENOMEM (eventfd(2)).
 * MT-safe. */
MR_EXPORT int mr_group_conditions_fd(mr_group_t *group);

/* Reads the group's conditions into *out and consumes the fd's
 * readiness (mr_group_conditions_fd()). Works without the fd (a caller
 * that polls by reading). Errors: -EINVAL (NULL, size smaller than its
 * size and active fields), -ECHILD (in a child after fork(): the
 * conditions are the parent's worker's). MT-safe. */
MR_EXPORT int mr_group_read_conditions(mr_group_t *group,
				       struct mr_conditions *out);

/* Sets the group's limit (v2 memory.max, v1 memory.limit_in_bytes, the
 * simulator's max) to limit_bytes, MR_UNLIMITED for none (v2's literal
 * "max"). A limit below usage is reached in steps: first the group is
 * reclaimed in its target batches (as mr_group_reclaim() does) until its
 * usage fits, then the limit is written once, so no single write asks
 * the kernel to reclaim everything in the writer's context, and the
 * charging tasks never meet a limit that reclaim cannot satisfy: when
 * usage cannot be brought to the new limit before timeout_ns (0 or
 * MR_UNLIMITED: no bound), the call fails with -EBUSY and the limit is
 * left as it was (the kernel would OOM-kill a task instead). v2 writes
 * are made with O_NONBLOCK (on kernels that honour it, the write then
 * does not reclaim in the writer's context). Reclaim done on the way is
 * counted under MR_REASON_REQUESTED.
 * limit_bytes: 4096 .. MR_UNLIMITED (the kernel rounds down to a page).
 * Errors: -EINVAL (NULL group, limit below 4096), -EBUSY (usage could not
 * be brought below limit_bytes; or another manager held the group for
 * longer than 200 ms), -ENOENT, -EACCES/-EPERM/-EROFS (the write was
 * refused: a delegated group's own limits are its parent's to set),
 * -ECHILD, or the errno of the failed write. On error the limit is
 * unchanged (what was reclaimed towards it stays reclaimed).
 * MT-safe: serialised with the group's reclaim. */
MR_EXPORT int mr_group_set_limit(mr_group_t *group, uint64_t limit_bytes,
				 uint64_t timeout_ns);

/* Sets the group's memory.high (v2; the simulator's high) to high_bytes,
 * MR_UNLIMITED for none. Above high the kernel throttles the group's
 * charging tasks (mm/memcontrol.c, mem_cgroup_handle_over_high) rather
 * than failing charges: a high below usage is written after reclaiming
 * towards it in the group's batches until timeout_ns (0 or MR_UNLIMITED:
 * no bound), and written even if usage stays above (the tasks are then
 * throttled, which is what high is for). Written with O_NONBLOCK.
 * The reclaim towards it stops at what reclaim cannot take (see
 * mr_group_reclaim()), but the high is the caller's and is written as
 * asked: a high below the group's anonymous and unevictable memory with
 * no usable swap throttles its tasks for as long as it stays, and the
 * worker reports it as MR_CONDITION_STUCK_HIGH (mr_group_conditions_fd()).
 * high_bytes: 0 .. MR_UNLIMITED.
 * Errors: -EINVAL (NULL group), -EOPNOTSUPP (cgroup v1 has no high),
 * -ENOENT, -EACCES/-EPERM/-EROFS, -EBUSY, -ECHILD, or the errno of the
 * failed write. On error the high is unchanged (what was reclaimed
 * towards it stays reclaimed). MT-safe. */
MR_EXPORT int mr_group_set_high(mr_group_t *group, uint64_t high_bytes,
				uint64_t timeout_ns);

/* The controls the library writes, for mr_group_control_state(). */
enum mr_control {
	MR_CONTROL_LIMIT = 0,    /* memory.max; v1 memory.limit_in_bytes */
	MR_CONTROL_HIGH,         /* memory.high */
	MR_CONTROL_RECLAIM,      /* memory.reclaim; on v1 a step lowering
				    memory.limit_in_bytes */
	MR_CONTROL_PSI_TRIGGER,  /* a trigger written to memory.pressure */
	MR_NCONTROLS
};

/* What the library has learnt about writing `control` of the group: each
 * control learns on its first real write and keeps the answer. Returns 1
 * (a write was accepted), 0 (not written yet), the negative errno of the
 * kernel's refusal (-EACCES, -EPERM — cgroup2's nsdelegate refuses at
 * write(), not open() — or -EROFS), -EOPNOTSUPP (the backend has no such
 * control, or its first use answered so: cgroup v1 has no high, and PSI
 * triggers only with a cgroup2 twin) or -EINVAL. After a refusal, the
 * calls that would write the
 * control (mr_group_reclaim(), mr_ctx_reclaim(), mr_group_set_limit(),
 * mr_group_set_high(), mr_group_psi_trigger_open(), the margin worker)
 * answer that errno at once, without writing again: nothing retries it in
 * a loop. A group whose reclaim is refused degrades in order: it is
 * reclaimed through its child groups owned by the caller's effective uid
 * (in a delegated cgroup2 subtree the delegatee owns the children it
 * made, not the delegated group's own controls: cgroup-v2.rst,
 * "Delegation Containment"), taken in turn, each dropped when its own
 * reclaim is refused; with none left, the worker leaves the group to
 * statistics and events (advisory mode), with one warning, and reclaim
 * calls answer the refusal. The answers are this handle's; a new handle
 * learns again.
 * MT-safe; lock-free. */
MR_EXPORT int mr_group_control_state(mr_group_t *group, int control);

/* ------------------------------------------------------------------ */
/* Creating and removing groups (through libcgroup)                     */
/* ------------------------------------------------------------------ */

/* libcgroup is initialised once per process, on the first of these calls,
 * after installing a logger (libcgroup's own prints to stdout; its logger is
 * process-wide). A message libcgroup logs during one of these calls goes to
 * the log callback of the ctx of that call; messages outside our calls are
 * dropped. In a child after fork() these calls work but log nothing (the
 * ctx's log lock may have been held by a thread that did not survive the
 * fork). */

/* Creates the memory cgroup directory `path` (absolute; beneath a mounted
 * memory controller found in /proc/self/mountinfo; its parent must exist)
 * and sets its limit to limit_bytes (MR_UNLIMITED: none; else at least
 * 4096, rounded down to a page by the kernel).
 *
 * cgroup v1 goes through libcgroup. On cgroup2 (without libcgroup, so a
 * libcgroup that fails to initialise leaves cgroup2 working) the parent
 * must offer memory in its cgroup.controllers; +memory is enabled in its
 * cgroup.subtree_control if it is not. cgroup2's "no internal processes"
 * rule (Documentation/admin-guide/cgroup-v2.rst) forbids that in a
 * group, other than the root, that holds processes: its cgroup.procs is
 * read first, and a populated parent gives -EBUSY with nothing created,
 * unless mr_ctx_set_process_leaf() named a child to move them into.
 * memory.max is written with O_NONBLOCK.
 *
 * Errors: -EINVAL (NULL, relative path, "." or ".." components, limit
 * below 4096), -ENODEV (not beneath a memory controller mount; on cgroup2,
 * a parent without memory in cgroup.controllers), -EEXIST, -ENOENT
 * (parent missing), -EBUSY (cgroup2: the parent holds processes),
 * -EACCES/-EPERM, -ENOMEM, or the errno libcgroup reported (its positive
 * ECG* codes are translated; ECGOTHER is unwrapped to the kernel's
 * errno). On error nothing is left behind: no directory, no controller
 * enabled, no process moved. MT-safe. */
MR_EXPORT int mr_cgroup_create(mr_ctx_t *ctx, const char *path,
			       uint64_t limit_bytes);

/* Moves process `pid` (> 0) into the memory cgroup `path`. Only for a
 * process the caller started and a group the caller created: the library
 * cannot check this, it is the caller's duty (the library itself never
 * moves a process it was not asked to). Charges already made stay where
 * they are (neither v1 by default nor v2 moves charges). On cgroup2 a
 * group whose cgroup.subtree_control is not empty takes no process (the
 * root excepted): -EBUSY, nothing moved.
 * Errors: -EINVAL, -ENODEV, -ENOENT (no group), -ESRCH (no process),
 * -EBUSY, -EACCES/-EPERM. MT-safe. */
MR_EXPORT int mr_cgroup_attach(mr_ctx_t *ctx, const char *path, pid_t pid);

/* Removes the empty memory cgroup `path`. Never moves tasks: a group that
 * still has tasks or child groups gives -EBUSY and is left as it is.
 * Errors: -EINVAL, -ENODEV, -ENOENT, -EBUSY, -EACCES/-EPERM. MT-safe. */
MR_EXPORT int mr_cgroup_remove(mr_ctx_t *ctx, const char *path);

/* Names the child into which mr_cgroup_create() on cgroup2 moves the
 * processes of a parent that holds some, so that +memory can be enabled
 * in the parent (cgroup2's "no internal processes" rule), as systemd
 * moves a delegated unit's processes into a leaf. The child is created
 * if missing; if a move or the enabling fails, the processes are moved
 * back and the child removed. This moves processes the call did not
 * start: turn it on only for a subtree whose processes are the caller's.
 * name: a single path component (no '/', not "." or ".."), shorter than
 * 256 bytes, or NULL (the default) to refuse with -EBUSY instead.
 * Errors: -EINVAL, -ECHILD. MT-safe; applies to later calls. */
MR_EXPORT int mr_ctx_set_process_leaf(mr_ctx_t *ctx, const char *name);

/* Per-group PSI for cgroup v1 on hybrid hosts (cgroup v1 memory beside a
 * cgroup2 hierarchy without the memory controller, as systemd's "hybrid"
 * layout mounts at /sys/fs/cgroup/unified): cgroup2 accounts pressure for
 * every group, memory controller or not. With enable non-zero, the
 * context's mr_cgroup_create() on a v1 memory path also creates the
 * cgroup2 group of the same relative path (its twin), mr_cgroup_attach()
 * moves the process into both, and mr_cgroup_remove() removes both; the
 * v1 groups of the context then read pressure and arm PSI triggers on
 * their twin (mr_group_read_pressure(), mr_group_psi_trigger_open()).
 * A v1 group without a twin (one the library did not create: a
 * runtime's, a systemd unit's) reads pressure from the cgroup2 group of
 * its tasks (/proc/PID/cgroup of each task in its cgroup.procs) when
 * that is one group, not the root, holding those tasks alone and no
 * descendant group: only then is its pressure the v1 group's
 * (kernel/sched/psi.c accounts a task's stalls to its cgroup2 group and
 * that group's ancestors). It is looked up at each read (at most 256
 * tasks); otherwise the group has no PSI.
 * Off by default. It moves only the processes the caller asks
 * mr_cgroup_attach() to move, which must be its own: on hybrid hosts
 * systemd tracks its units by their cgroup2 group, and moving a process
 * it manages breaks that.
 * With it on, each of the three calls does both groups or neither:
 * mr_cgroup_create() fails with -EEXIST when a cgroup2 group of the twin's
 * name exists (never adopted) and -ENOENT when the twin's parent does not,
 * before creating anything, and removes the new v1 group if the twin's
 * mkdir fails (its errno is returned); mr_cgroup_attach() fails with
 * -ENOENT, moving nothing, for a group without a twin, and when the twin
 * refuses the process, moves it back to its former v1 memory group and
 * returns the twin's errno (if even that move fails, it is logged at
 * MR_LOG_ERR and the process stays in the v1 group alone);
 * mr_cgroup_remove() removes the twin first (-EBUSY, nothing removed, if
 * it holds a process) and makes it again if the v1 group then cannot go.
 * Mounts are looked up at the first successful enable
 * (/proc/self/mountinfo; kernel/sched/psi.c accounts stalls to the task's
 * cgroup2 group, task_dfl_cgroup()).
 * Errors: -EINVAL (ctx NULL), -ENODEV (no cgroup2 mount without a memory
 * controller beside a v1 memory mount: not a hybrid host), -EIO
 * (mountinfo or the cgroup2 root's cgroup.controllers unreadable),
 * -ECHILD. Turning it off always succeeds.
 * MT-safe; applies to the calls that start after it. */
MR_EXPORT int mr_ctx_set_hybrid_psi(mr_ctx_t *ctx, int enable);

/* ------------------------------------------------------------------ */
/* Policy math: pure functions, no state, MT-safe, async-signal-safe    */
/* ------------------------------------------------------------------ */

/* Bytes to ask for in one reclaim call in proportional mode:
 * min(excess, clamp(excess * share_ppm / 10^6, MR_SWAP_CLUSTER_MAX_BYTES,
 * max)), where max is the smaller of max_bytes and max_ppm of limit_bytes
 * (max_ppm 0 or limit MR_UNLIMITED: no relative bound), and never below
 * MR_SWAP_CLUSTER_MAX_BYTES. So the batch is never below 32 pages unless the
 * excess is, and never above its maximum. Rounded down to 4 KiB when at
 * least 4 KiB. Arguments out of the ranges of
 * mr_group_set_batch_proportional() are clamped into them. */
MR_EXPORT uint64_t mr_batch_proportional_bytes(uint64_t excess_bytes,
					       uint64_t limit_bytes,
					       uint32_t share_ppm,
					       uint64_t max_bytes,
					       uint32_t max_ppm);

/* Shapes of the throttle curve: the delay given to a charge above high. */
enum mr_throttle_kind {
	MR_THROTTLE_NONE = 0,        /* never delay */
	MR_THROTTLE_LINEAR = 1,      /* scale_ns * r */
	MR_THROTTLE_KERNEL = 2,      /* the kernel's 64 s * r^2 */
	MR_THROTTLE_EXPONENTIAL = 3, /* scale_ns * (2^(r / doubling) - 1) */
	MR_THROTTLE_TABLE = 4,       /* points, linear between them */
};

/* One point of a MR_THROTTLE_TABLE curve: the delay per 64 pages at an
 * overage of overage_ppm of high. */
struct mr_throttle_point {
	uint64_t overage_ppm;
	uint64_t delay_ns;
};

/* A throttle curve. r is the overage (usage - high) / high. Every curve
 * gives the delay for a charge of 64 pages (MEMCG_CHARGE_BATCH, 256 KiB),
 * scaled in proportion to the charge, then clamped to max_delay_ns, as
 * mm/memcontrol.c calculate_high_delay() does. The caller sets size =
 * sizeof(struct mr_throttle_curve). Later versions accept this size; a
 * size this version does not know (0, or a later, larger struct) is
 * refused (-EINVAL), so that a field appended later is never ignored. */
struct mr_throttle_curve {
	size_t size;
	int kind;                 /* enum mr_throttle_kind */
	uint64_t max_delay_ns;    /* clamp, every kind; 0 never delays; the
				     kernel's is 2 s */
	uint64_t scale_ns;        /* LINEAR: delay at r = 1;
				     EXPONENTIAL: delay at r = doubling */
	uint64_t doubling_ppm;    /* EXPONENTIAL: overage that doubles the
				     delay, 1 .. 10^12 */
	const struct mr_throttle_point *points; /* TABLE: overage_ppm strictly
				     increasing, delay_ns non-decreasing; an
				     implicit (0, 0) first; flat after the
				     last */
	size_t npoints;           /* TABLE: 1 .. MR_THROTTLE_MAX_POINTS */
};

#define MR_THROTTLE_MAX_POINTS 64
/* The kernel's clamp, MEMCG_MAX_HIGH_DELAY_JIFFIES (2 s). */
#define MR_THROTTLE_KERNEL_MAX_DELAY_NS 2000000000ULL

/* Computes in *delay_ns the delay for charging charge_bytes to a group at
 * usage_bytes whose high boundary is high_bytes.
 *
 * The delay is exactly 0 whenever usage_bytes <= high_bytes (the 2020
 * report against Linux 5.6/5.7: the penalty was computed from an ancestor
 * whose usage was below its high, the negative overage wrapped around, and
 * tasks that had already reclaimed below high slept the 2 s maximum; S3 in
 * docs/design.md). It never decreases as usage grows, never exceeds
 * max_delay_ns, and no input overflows: the math is done in 128 bits and
 * saturates. high_bytes = 0 is taken as one page in the ratio, as the
 * kernel takes it as 1.
 *
 * MR_THROTTLE_KERNEL mirrors mm/memcontrol.c calculate_overage() and
 * calculate_high_delay(): overage in 2^-20 units, then
 * overage^2 * HZ >> (20 + 14) jiffies, i.e. 64 s * r^2 per 64 pages; with
 * high = 100 MiB and a 64-page charge, 101 MiB gives 6 ms, 105 MiB 159 ms,
 * 110 MiB 639 ms, 115 MiB 1439 ms, 118 MiB and above the 2 s clamp. (The
 * kernel then skips sleeps under 10 ms; this function reports them.)
 *
 * Errors: -EINVAL (curve or delay_ns NULL, curve->size not the size of
 * struct mr_throttle_curve, unknown kind, a TABLE with no points, too
 * many, or not ordered, an EXPONENTIAL doubling of 0).
 * MT-safe, async-signal-safe. */
MR_EXPORT int mr_throttle_delay_ns(const struct mr_throttle_curve *curve,
				   uint64_t usage_bytes, uint64_t high_bytes,
				   uint64_t charge_bytes, uint64_t *delay_ns);

/* What to do when a transparent huge page charge would not fit. From the
 * 2014 memcg THP charge patch and its review (reclaim the full 512-page
 * goal vs. reclaim only clean cache). */
enum mr_thp_policy {
	MR_THP_RECLAIM_FULL = 0,  /* always reclaim the shortfall */
	MR_THP_CLEAN_CACHE = 1,   /* reclaim only if clean cache covers it */
	MR_THP_FALLBACK = 2,      /* use small pages at once */
	MR_THP_BUDGET = 3,        /* reclaim if the budget covers shortfall */
};

enum mr_thp_advice {
	MR_THP_ADVICE_HUGE = 0,              /* fits below limit - margin */
	MR_THP_ADVICE_RECLAIM_THEN_HUGE = 1, /* reclaim the shortfall first */
	MR_THP_ADVICE_SMALL = 2,             /* use small pages */
};

/* Decides how to charge a huge page of huge_bytes (2 MiB on x86-64) to a
 * group at usage_bytes with binding limit limit_bytes (MR_UNLIMITED: none)
 * and margin margin_bytes. The shortfall is what usage + huge would exceed
 * limit - margin by. HUGE when there is none; SMALL when the page cannot fit
 * even in an empty group (huge > limit - margin, a margin at or above the
 * limit included); otherwise by policy:
 * RECLAIM_FULL reclaims; CLEAN_CACHE reclaims when clean_cache_bytes (clean
 * page cache reclaimable without swap or writeback) covers the shortfall
 * (swappable anonymous memory is not weighed here, where
 * mr_group_charge() counts it);
 * FALLBACK never reclaims; BUDGET reclaims when budget_bytes (what the
 * caller's time budget can free at its measured reclaim rate) covers it.
 * Writes the enum mr_thp_advice to *advice.
 * Errors: -EINVAL (advice NULL, unknown policy, huge_bytes 0).
 * MT-safe, async-signal-safe. */
MR_EXPORT int mr_thp_decide(int policy, uint64_t huge_bytes,
			    uint64_t usage_bytes, uint64_t limit_bytes,
			    uint64_t margin_bytes, uint64_t clean_cache_bytes,
			    uint64_t budget_bytes, int *advice);

/* The soft-limit plan: how many bytes to reclaim from each of n groups so
 * that goal_bytes are freed among them, as mr_ctx_reclaim() plans. From
 * the 2013 rework of memcg soft-limit reclaim (Michal Hocko, "memcg: soft
 * limit reclaim rework"): soft reclaim as a pass of the normal reclaim at
 * the same priority, over the groups above their soft limit first, then
 * over all, with no priority-0 last-resort pass.
 *
 * First the groups over their soft limit give, in proportion to their
 * excess usage_bytes[i] - soft_limit_bytes[i], each at most its excess.
 * If goal_bytes is larger than the total excess, the rest comes from all
 * groups in proportion to what they have left once the excess is taken
 * (their usage up to their soft limit), each at most that. So
 * share_bytes[i] <= usage_bytes[i], and the shares sum to
 * min(goal_bytes, the total usage) exactly.
 *
 * In each pass a share is the integer part of its proportion, computed in
 * 128 bits (no input overflows, 2^64 - 1 included), plus one byte for the
 * groups with the largest remainders until the pass's bytes are all given
 * (the largest remainder method), equal remainders to the lower index:
 * deterministic, and never above a group's cap.
 *
 * n: the number of groups, 0 .. SIZE_MAX (0 writes nothing).
 * usage_bytes, soft_limit_bytes: n values each, in bytes; a soft limit of
 * MR_UNLIMITED, or at or above the usage, means no excess.
 * goal_bytes: 0 .. MR_UNLIMITED. share_bytes: n values written, in bytes;
 * it must not overlap the inputs.
 * Errors: -EINVAL (an array NULL with n > 0).
 * MT-safe, async-signal-safe (no allocation: where the remainders are cut
 * is found by bisection, at most 128 scans of the n groups). */
MR_EXPORT int mr_soft_limit_plan(size_t n, const uint64_t *usage_bytes,
				 const uint64_t *soft_limit_bytes,
				 uint64_t goal_bytes, uint64_t *share_bytes);
/* ------------------------------------------------------------------ */
/* Knobs: every setter of a group's policy                              */
/* ------------------------------------------------------------------ */

/* A group's knobs: the margin the worker keeps, the reclaim batch, the
 * soft limit, and the fast path's throttle curve, throttle high and
 * THP-charge policy, plus the swappiness of its reclaim calls. Each setter
 * checks its arguments whole and, on error, changes nothing; the worker,
 * mr_group_reclaim() and the fast path see a change at their next step.
 * The fast path's knobs arm the group for it first (mr_group_charge()
 * below), so that they answer what arming would: a removed group, an
 * unreadable limit. A setter waits for a liburcu grace period before it
 * returns (the old policy is freed then): none is for a hot path. (mr_group_set_limit() and mr_group_set_high() above write the cgroup's
 * own limits; they are not knobs.) */

/* The smallest margin in bytes mr_group_set_margin() takes: 4 KiB, the
 * smallest page size Linux has (arm64 and ppc64 kernels may use 64 KiB
 * pages, where a margin below a page cannot be kept as given). */
#define MR_MARGIN_MIN_BYTES 4096ULL

/* Sets the margin the worker keeps between usage and the binding limit
 * (struct mr_limits.limit_bytes): when usage rises above limit - margin,
 * the worker reclaims down to limit - margin - hysteresis, so charges
 * rarely meet the limit and no reclaim runs in the charging tasks. From
 * the memcg asynchronous reclaim work (Kamezawa, 2011: "memcg async
 * reclaim", high/low watermarks per memcg).
 *
 * Give the margin either in bytes (margin_ppm = 0, margin_bytes
 * MR_MARGIN_MIN_BYTES .. MR_UNLIMITED: the kernel charges and counts
 * usage in whole pages, mm/page_counter.c, so a margin below a page could
 * not be kept as given) or in ppm of the limit (margin_bytes = 0,
 * margin_ppm in 1..999999); both 0 turns the margin off.
 * hysteresis_bytes: how far below the margin to reclaim, 0 ..
 * MR_UNLIMITED; 0 reclaims just below limit - margin. With 0 each wake-up
 * frees only the small excess, in small batches, and a group charging at
 * GB/s outruns the worker; a hysteresis near the margin lets it free
 * margin-sized chunks (memreclaimd's default; docs/PERFORMANCE.md).
 *
 * One handle per group keeps a margin: turning a margin on claims the
 * group for this handle, exclusively among all handles of the group in
 * every process (a lock in the state directory), and turning it off or
 * closing the handle releases it. Two keepers would count each other's
 * reclaim as their own and take each other's transient limits for the
 * real one.
 *
 * On cgroup v1 turning a margin on opens the eventfd of the group's usage
 * threshold (kept until the margin is off or the group closed: 2 fds for
 * the group in all), under the fd budget of mr_group_open(): -EMFILE, and
 * a warning in the log, when it and 16 more fds are not free. The worker
 * registers the threshold (cgroup.event_control) after serving the groups
 * above their marks, one registration per round (each waits for an RCU
 * grace period in the kernel, about 10 ms); until then it compares the
 * group's usage with its mark at every round.
 *
 * Errors: -EINVAL (group NULL; both margin_bytes and margin_ppm set;
 * margin_bytes 1 .. MR_MARGIN_MIN_BYTES - 1; margin_ppm >= 1000000),
 * -ERANGE (the group has a limit now and the margin is at or above it,
 * or the margin plus hysteresis is above it),
 * -EBUSY (the group's keeper lock is held: another handle, in this
 * process or another, keeps a margin on it; or, as in
 * mr_group_read_limits(), cgroup v1 reclaim steps held it on for longer
 * than 1 s while the limit was read), -ENOENT, -EIO (reading the limit),
 * -ECHILD, -ENOMEM,
 * -EMFILE (the fd budget). On error nothing changes.
 *
 * "The limit" is the binding limit of struct mr_limits, or on cgroup v2
 * the lower of it and the binding memory.high (above high the kernel
 * throttles the charging tasks). cgroup v2 has no usage thresholds: the
 * worker looks at a v2 group's memory.current every 10 ms while its
 * margin is armed, and at once when memory.events changes (a high or max
 * event).
 *
 * A group with no limit accepts a margin; while it has no limit, or
 * whenever its limit falls to the margin or below, the worker leaves it
 * alone and logs why. The hysteresis accepted here is kept whole while
 * the limit stays at or above the one it was checked against (up to all
 * of limit - margin: usage may be reclaimed to 0). Once the limit falls
 * below that one (or, for a margin set while the group had no limit, once
 * it has one), a hysteresis above half of limit - margin is capped at
 * that half, so the worker never empties the group. A group
 * with nothing reclaimable (v1 without swap: no page cache) is retried at
 * the worker's safety-net period, MR_WORKER_SAFETY_NS.
 * MT-safe: the policy is published with RCU; the worker picks it up at
 * its next wake-up, which this call triggers. */
MR_EXPORT int mr_group_set_margin(mr_group_t *group, uint64_t margin_bytes,
				  uint32_t margin_ppm,
				  uint64_t hysteresis_bytes);

/* The bounds and factors of an adaptive margin; the caller sets size
 * (sizeof(struct mr_margin_adaptive); later versions accept this size,
 * and a larger one whose bytes past this size are zero). A field left 0
 * takes the default given with it. */
struct mr_margin_adaptive {
	size_t size;
	/* The margin never goes below min_bytes (0, the default: it may
	 * shrink to nothing, and the worker then leaves the group alone)
	 * nor above max_bytes, or max_ppm of the limit (at most one of the
	 * two; both 0: 100000 ppm, a tenth of the limit). */
	uint64_t min_bytes;
	uint64_t max_bytes;
	uint32_t max_ppm;
	/* The margin is safety_ppm / 10^6 times the charge rate times the
	 * reaction time (default 3000000: three times what one reaction
	 * lets in, since on cgroup v1 the rate is a lower bound;
	 * 1000000 .. 100000000). */
	uint32_t safety_ppm;
	/* The least hysteresis, in ppm of the margin (default 1000000,
	 * the margin itself: each wake-up frees at least a margin's worth,
	 * as memreclaimd's fixed default, where half of what lies below
	 * the margin is not less; 1 .. 1000000). It is the hysteresis
	 * until the worker's CPU per pass and the refaults of what it
	 * keeps empty are measured; then the economic order quantity of
	 * the two, up to max_bytes (below). */
	uint32_t hysteresis_ppm;
	/* How often the margin is sized again, in ns (default and minimum
	 * MR_WORKER_SAFETY_NS, the worker's safety round; at most 60 s).
	 * A multiple of it in practice: the worker sizes at its rounds. */
	uint64_t interval_ns;
	/* The least strength the cost gate may leave (below), in ppm
	 * (default 0: the gate may turn the margin off; 1000000 turns the
	 * gate off and keeps the sized margin whole, for a workload whose
	 * latency is worth the worker's CPU whatever the waits it removes;
	 * 0, or 62500 .. 1000000: below 1/16 the gate's strength is 0). */
	uint32_t min_strength_ppm;
};

/* Sets an adaptive margin: the worker keeps usage below limit - margin as
 * for mr_group_set_margin(), with a margin and hysteresis it sizes itself
 * every interval from what it measures on the group:
 *
 * - what the group charges past limit - margin before the worker can see
 *   it (the overshoot: what usage has above the mark when a pass that
 *   answers the threshold's event first reads it; the kernel tells of a
 *   crossing late, cgroup v1 checking its thresholds every 128 page
 *   events per CPU, charges come in bursts, and the wake-up follows),
 *   plus the charge rate (bytes charged per second, smoothed over about
 *   four intervals: the growth of usage plus what was reclaimed,
 *   memory.stat pgsteal on cgroup v2, the worker's own reclaim on v1,
 *   which counts no reclaimed bytes) times the worker's reaction time
 *   (from the wake-up that found usage above the mark to when the
 *   reclaim brought it back to the mark, within the step that did; not
 *   to the pass's end, for the hysteresis below the mark is the worker's
 *   choice, and timed with it the reaction, and so the margin, grew with
 *   the hysteresis) times the safety factor, within the bounds. Both
 *   overshoot and reaction are the 95th percentile (nearest rank) of
 *   the largest of each of the last 32 intervals that had one (of 32
 *   the second largest, of fewer than 20 the largest): half a minute
 *   at the default interval, or more, so that
 *   slow reactions seconds apart, as writeback brings, are not pushed
 *   out by the fast ones between them. More than 2 limit hits
 *   in an interval (the group's own: memory.events.local `max`, or
 *   `high` when the margin is kept below memory.high; v1 memory.failcnt
 *   less what the worker's own steps caused; a direct reclaim of a
 *   small charge fails it twice on v1, once on v2) double it instead, from
 *   one SWAP_CLUSTER_MAX batch (on v1 they are charges the rate does
 *   not see, nor a crossing the kernel told late), and it is held
 *   there for 32 intervals, while the strength is above 0, before it
 *   comes back toward the measured size by at most a tenth an
 *   interval;
 * - scaled by a strength between 0 and 1 that weighs what the margin
 *   costs against what it removes from the workload's path. A direct
 *   reclaim in a charging task costs it the reclaim's CPU and its waits
 *   (for writeback, I/O, locks). Moved to the worker, the CPU is still
 *   spent, and on a busy machine taken from the workload; what the
 *   workload gains is its stall. Where the group's memory PSI is read
 *   (cgroup v2, the simulator, cgroup v1 with mr_ctx_set_hybrid_psi()),
 *   the benefit of an interval is the stall it took away: PSI some's
 *   growth per second at the floor (smoothed over intervals at the
 *   floor that met the limit) times the interval, less the interval's
 *   own growth, never below 0 (direct reclaim runs under
 *   psi_memstall_enter(), mm/vmscan.c try_to_free_mem_cgroup_pages(),
 *   and so do waits on refaulting working-set pages, so a margin whose
 *   emptied cache thrashes earns nothing). Otherwise the benefit is the
 *   time the worker's reclaim was blocked: its wall time less its CPU
 *   time and its time waiting for a CPU (/proc/thread-self/schedstat,
 *   kernel time included; the simulated task's work on the simulator);
 *   an upper bound of what the workload would have waited (a charge
 *   reclaims SWAP_CLUSTER_MAX pages at a time, and one without
 *   __GFP_FS never waits on writeback; time the worker spends waiting
 *   for another manager's lock counts as blocked too);
 *   the cost is its CPU time plus the refaults
 *   its margin causes (memory.stat workingset_refault_file beyond the
 *   refaults per charged byte measured with the margin at its floor;
 *   per second on cgroup v1, which does not see every charge),
 *   each refaulted byte priced at one more reclaim of it. The strength
 *   halves when the cost exceeds the benefit and doubles when the benefit
 *   exceeds the cost by a quarter; below 1/16 it is 0, the margin goes to
 *   min_bytes, and a probe comes after 8 intervals, then after twice as
 *   many after each probe that did not pay (at most 256). A probe keeps
 *   the sized margin whole until an interval in which it reclaimed
 *   decides it (an interval that ends early once the worker spent 20 ms
 *   of CPU on the probe; one in which charges still met the limit more
 *   than twice doubles the probe's size instead, up to its bound): it
 *   stays if it paid, and goes back to 0 at once if not
 *   (a margin's cost per byte falls with its size, so a fraction of it
 *   would judge a dearer margin than the one kept if it pays).
 *   It never goes below min_strength_ppm (1000000: always whole).
 *   Clean page cache on a busy machine reclaims without waiting: the
 *   margin cannot pay there and shrinks away; dirty cache or slow I/O
 *   makes the stall it removes larger than its CPU, and it grows.
 * - The hysteresis (how far below the mark each wake-up reclaims) is
 *   the economic order quantity sqrt(2 x rate x K / H) (F. W. Harris,
 *   1913): K is the worker's CPU per pass, the interval's CPU over its
 *   passes that freed something (a pass: one wake-up's reclaim, cut at
 *   100 ms; on v1 a run of steps, each two limit writes and reads,
 *   whatever its size; the CPU of passes that freed nothing counts in
 *   K), H what a byte kept empty costs a second (the refaults above the
 *   floor's, per byte of the margin and half the hysteresis, priced as
 *   in the cost; measured in the intervals whose cost the strength
 *   weighs, and only where the backend counts refaults), both smoothed
 *   over about four intervals. A streamed cache refaults nothing
 *   whatever is kept empty, and the hysteresis goes to its bound,
 *   max_bytes (fewer, larger passes); a reused one keeps it small. It
 *   is never below the margin times hysteresis_ppm, which it is until
 *   both prices are measured (at the start, and again from each probe
 *   on, which measures them afresh; always where no refaults are
 *   counted), and never above half of what lies below the margin,
 *   which wins over the least.
 * - The margin moves only by more than a sixteenth, or to min_bytes or
 *   max_bytes (on cgroup v1 each new mark is a threshold registration,
 *   which waits for an RCU grace period), and the hysteresis only by
 *   more than a sixteenth, or to its least or max_bytes.
 *
 * The first interval keeps the margin at min_bytes: it measures the
 * charge rate and the refaults at the floor. Then it probes, with a
 * reaction time of 1 ms until one is measured.
 * mr_group_read_margin_stats() shows every figure of the decision, and
 * each decision that changes the strength, the margin or the hysteresis
 * is logged at debug level with its figures. The fixed margin of
 * mr_group_set_margin() replaces an adaptive one, and the reverse;
 * mr_group_set_margin(group, 0, 0, 0) turns either off.
 *
 * adaptive: NULL takes every default. The keeper lock, the fd budget and
 * the cgroup v1 threshold are those of mr_group_set_margin(). The fast
 * path (mr_group_charge(), mr_group_thp_advise()) keeps the margin in
 * force at each moment.
 * A margin is never kept at or above half the limit, whatever max_bytes
 * allows (it would empty the group), nor below a page (0 instead).
 * Errors: -EINVAL (group NULL; size smaller than this struct's; a field
 * out of its range; both max_bytes and max_ppm; min_bytes above
 * max_bytes, or 1 .. MR_MARGIN_MIN_BYTES - 1; the log says which, at
 * debug level), -E2BIG (size larger than this struct's, with a byte past
 * it set: a field of a later version this library does not know),
 * -ERANGE (the group has a limit and min_bytes is at or above it),
 * -EBUSY, -ENOENT, -EIO, -ECHILD, -ENOMEM, -EMFILE as for
 * mr_group_set_margin(). On error nothing changes. MT-safe. */
MR_EXPORT int mr_group_set_margin_adaptive(
	mr_group_t *group, const struct mr_margin_adaptive *adaptive);

/* What an adaptive margin decided at its last interval, and the
 * measurements it decided on (all 0 but adaptive until the worker's
 * first pass over the group); the caller sets size. For a fixed margin
 * all 0 but margin_bytes (one in ppm: of the limit the worker last read,
 * 0 before it read one) and hysteresis_bytes. */
struct mr_margin_stats {
	size_t size;
	int adaptive;                  /* 1: mr_group_set_margin_adaptive() */
	uint64_t margin_bytes;         /* in force now (0: none) */
	uint64_t hysteresis_bytes;
	uint64_t sized_bytes;          /* overshoot + safety x rate x
					  reaction, or larger: doubled by
					  limit hits, held 32 intervals,
					  then falling back a tenth an
					  interval
					  (mr_group_set_margin_adaptive()) */
	uint32_t strength_ppm;         /* 0 .. 1000000 */
	uint64_t charge_bytes_per_s;   /* smoothed; on cgroup v1 a lower
					  bound: charges that met the
					  limit are not seen */
	uint64_t reaction_ns;          /* the 95th percentile */
	uint64_t benefit_ns;           /* last interval: the waits removed */
	uint64_t cost_ns;              /* last interval: CPU + refaults */
	uint64_t refault_bytes;        /* last interval's refaults */
	uint64_t limit_hits;           /* last interval's (v1 failcnt, v2
					  memory.events max) */
	uint64_t intervals;            /* sized so far */
	uint64_t worker_cpu_ns;        /* the worker's CPU on the group,
					  in all */
	/* The hysteresis's prices (mr_group_set_margin_adaptive()),
	 * smoothed; 0 until measured, and from each probe until it has
	 * measured them again. */
	uint64_t pass_cpu_ns;          /* the worker's CPU per pass that
					  freed something */
	uint64_t empty_cost_ns_per_gib_s; /* the refaults a second of each
					  GiB kept empty, priced as in
					  cost_ns; 0 also when measured
					  and nothing refaulted beyond the
					  floor's (hysteresis_bytes then
					  max_bytes, or half of what lies
					  below the margin) */
	uint64_t overshoot_bytes;      /* the 95th percentile of what usage
					  had above limit - margin when a
					  pass answering the threshold's
					  event first read it: charged
					  before the worker could see it;
					  0 until measured */
};

/* Reads the group's margin statistics (see struct mr_margin_stats).
 * Works in a child after fork() (it reads memory only).
 * Errors: -EINVAL (NULL; size smaller than its size and adaptive
 * fields). MT-safe: the fields are read one by one, so a read racing an
 * interval's end may mix two intervals. */
MR_EXPORT int mr_group_read_margin_stats(mr_group_t *group,
					 struct mr_margin_stats *stats);

/* Fixed target batch: each reclaim call asks the kernel for batch_bytes
 * (or the remaining excess, if smaller). The default, and the kernel's own
 * batch, is MR_SWAP_CLUSTER_MAX_BYTES (SWAP_CLUSTER_MAX pages).
 * On cgroup v1 the batch is the first step of each reclaim
 * (mr_group_reclaim(), a worker pass): a later step of the same reclaim
 * asks what it still lacks at once, less the kernel's over-reclaim of the
 * step before, at most half of the clean, unmapped page cache (see
 * mr_group_reclaim()).
 * batch_bytes: 4096 .. 1 TiB, a multiple of 4096.
 * Errors: -EINVAL (group NULL, batch out of range), -ENOMEM, -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_group_set_batch_fixed(mr_group_t *group, uint64_t batch_bytes);

/* Proportional target batch (see mr_batch_proportional_bytes()): each call
 * asks for share_ppm of the remaining excess, at least
 * MR_SWAP_CLUSTER_MAX_BYTES, at most the smaller of max_bytes and max_ppm
 * of the limit, never more than the excess. From the 2018 discussion of
 * batching in memory.force_empty and limit resizing (a 1 GiB shrink in
 * 32-page calls costs 8192 fixed per-call costs). On cgroup v1, as for
 * the fixed batch, it sizes the first step of each reclaim only.
 * share_ppm: 1..1000000. max_bytes: MR_SWAP_CLUSTER_MAX_BYTES..MR_UNLIMITED
 * (MR_UNLIMITED: no bound in bytes). max_ppm: 0 (no bound relative to the
 * limit) or 1..1000000.
 * Errors: -EINVAL (group NULL, an argument out of range), -ENOMEM, -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_group_set_batch_proportional(mr_group_t *group,
					      uint32_t share_ppm,
					      uint64_t max_bytes,
					      uint32_t max_ppm);

/* Sets the group's soft limit: the usage above which mr_ctx_reclaim()
 * takes from the group first, before it takes from any group at or below
 * its own (see mr_soft_limit_plan()). It means what cgroup v1's
 * memory.soft_limit_in_bytes means, acted on with the policy of the 2013
 * rework of soft-limit reclaim (Michal Hocko, "memcg: soft limit reclaim
 * rework"): groups over their soft limit first, in proportion to their
 * excess, then all, at the same priority. The library keeps it in the
 * group's policy and never writes it to the cgroup (v1's
 * memory.soft_limit_in_bytes is deprecated, and the kernel acts on it
 * only in its global reclaim; v2 has no soft limit), nor reads it from
 * there.
 * soft_limit_bytes: 0 .. MR_UNLIMITED, in bytes; MR_UNLIMITED (the
 * default) means no soft limit, 0 makes all of the group's usage excess.
 * Errors: -EINVAL (group NULL), -ENOMEM, -ECHILD.
 * MT-safe: published with RCU; a mr_ctx_reclaim() that has read the old
 * value plans with it. */
MR_EXPORT int mr_group_set_soft_limit(mr_group_t *group,
				      uint64_t soft_limit_bytes);

/* Reads the group's soft limit (MR_UNLIMITED: none) into
 * *soft_limit_bytes. Works in a child after fork() too (it reads memory
 * only). Errors: -EINVAL (NULL argument). MT-safe. */
MR_EXPORT int mr_group_read_soft_limit(mr_group_t *group,
				       uint64_t *soft_limit_bytes);

/* Default proportional batch, as memreclaimd --batch auto uses it: a
 * quarter of the excess, at most 64 MiB and at most 1/8 of the limit. */
#define MR_BATCH_DEFAULT_SHARE_PPM 250000u
#define MR_BATCH_DEFAULT_MAX_BYTES (64ULL << 20)
#define MR_BATCH_DEFAULT_MAX_PPM 125000u

/* Sets the throttle curve of the fast path: the delay of a batch drawn
 * above the throttle high (see mr_throttle_delay_ns()). The curve is
 * checked and copied (a TABLE's points too). NULL sets MR_THROTTLE_NONE,
 * the default: never delay.
 * Errors: -EINVAL (group NULL, a curve mr_throttle_delay_ns() refuses),
 * -ECHILD, and those of arming; on error nothing changes.
 * MT-safe: charges see the new curve at their next batch. */
MR_EXPORT int mr_group_set_throttle(mr_group_t *group,
				    const struct mr_throttle_curve *curve);

/* The default throttle high: the backend's binding high (cgroup v2
 * memory.high, the lowest of the group and its ancestors); cgroup v1 has
 * none, so nothing is delayed there unless a high is set. */
#define MR_HIGH_FROM_BACKEND (UINT64_MAX - 1)

/* Sets the high above which the fast path delays charges: high_bytes in
 * 0 .. MR_UNLIMITED (none), kept by the library and never written to the
 * cgroup (mr_group_set_high() writes memory.high), or
 * MR_HIGH_FROM_BACKEND (the default). The way to throttle on cgroup v1,
 * which has no memory.high.
 * Errors: -EINVAL (group NULL), -ECHILD, and those of arming.
 * MT-safe: charges see it at their next batch. */
MR_EXPORT int mr_group_set_throttle_high(mr_group_t *group,
					 uint64_t high_bytes);

/* Sets the THP-charge policy of mr_group_thp_advise(): an enum
 * mr_thp_policy, and for MR_THP_BUDGET the time the caller may spend
 * reclaiming before a huge page, budget_ns 1 .. MR_UNLIMITED (0 for the
 * other policies). The default is MR_THP_RECLAIM_FULL: always reclaim,
 * as today's kernel does for a huge-page charge that does not fit; the
 * kernel asks reclaim for the whole charge, 512 pages, whatever the
 * shortfall (mm/memcontrol.c try_charge_memcg() passes nr_pages to
 * try_to_free_mem_cgroup_pages(), since the 2014 fix), where the
 * advice's reclaim is the shortfall.
 * Errors: -EINVAL (group NULL, unknown policy, budget_ns 0 with
 * MR_THP_BUDGET or not 0 without it), -ECHILD, and those of arming.
 * MT-safe. */
MR_EXPORT int mr_group_set_thp_policy(mr_group_t *group, int policy,
				      uint64_t budget_ns);

/* Sets the swappiness of the group's reclaim calls: -1 (the default) lets
 * the kernel use the group's own; 0 .. 200 is passed with each call (v2
 * memory.reclaim's swappiness= argument, Linux 6.11; 0 reclaims page cache
 * only, which is the no-swap option). Whether the kernel accepts the
 * argument is probed once per group, on this call, with a request for 0
 * bytes. On the simulator it weighs anonymous against file pages as
 * vmscan's get_scan_count() does.
 * Errors: -EINVAL (NULL group, swappiness out of range), -EOPNOTSUPP (the
 * kernel or backend has no such argument: cgroup v1, v2 before 6.11),
 * -ENOENT, -ECHILD. MT-safe. */
MR_EXPORT int mr_group_set_reclaim_swappiness(mr_group_t *group,
					      int swappiness);

/* ------------------------------------------------------------------ */
/* Reclaim                                                              */
/* ------------------------------------------------------------------ */

/* Reasons for reclaim, for statistics. Values are stable; later versions
 * append. */
enum mr_reason {
	MR_REASON_MARGIN = 0,    /* the worker keeping the margin */
	MR_REASON_REQUESTED = 1, /* mr_group_reclaim() */
	MR_REASON_SOFT = 2,      /* mr_ctx_reclaim(), in soft-limit order */
	MR_REASON_PROACTIVE = 3, /* the proactive controller
				    (mr_group_set_proactive()) */
};

/* Reclaims up to `bytes` from the group in batches of the group's target
 * batch, now, in the calling thread. Stops when `bytes` are freed, when
 * timeout_ns has passed since the call in the group's clock
 * (CLOCK_MONOTONIC; virtual time on the simulator; a batch already
 * started finishes), or when MR_RECLAIM_MAX_EMPTY_BATCHES batches in a
 * row free nothing. timeout_ns 0 or MR_UNLIMITED means no time bound, and
 * so does any timeout too large to add to the clock's time of the call
 * (the deadline saturates instead of wrapping around). Freeing fewer
 * bytes than asked is normal and a success.
 * bytes: 0 .. MR_UNLIMITED (0 returns 0 at once). *freed_bytes (may be
 * NULL) receives the fall in usage the calls caused, clamped at zero.
 *
 * cgroup v1 has no reclaim file: each step lowers memory.limit_in_bytes to
 * usage - step and restores it at once (journaled, see docs/design.md); a
 * step never exceeds half of the group's clean, unmapped page cache, since
 * while the limit is lowered a charge that cache cannot cover would
 * OOM-kill a task. A step's cost is mostly fixed (two limit writes that
 * drain every CPU's charge stock, reads of the limit and usage), and the
 * kernel frees more than a small step asks (a reclaim cluster, a whole
 * large folio), so only the first step of a call asks the group's batch:
 * each later one asks what the call still lacks, scaled down by what the
 * step before freed over what it asked when that was more than 1 (the
 * over-reclaim is carried, not added to the goal), within the cap. A call
 * of tens of MiB is then a few steps, each counted as one call in
 * mr_group_read_reclaim_stats(), and a step, which is not interrupted,
 * may last as long as the kernel takes to reclaim it. The steps of one
 * call take the cgroup's lock and write the journal once: the steps of
 * all managers of one cgroup, in every process and by every path to it,
 * are serialised by a lock on the cgroup's directory, which one call
 * holds from its first step to its return (the limit is restored after
 * every step; other managers' steps, and mr_group_read_limits() in any
 * process, wait for the call), and the calling thread blocks its signals
 * for the length of each step.
 *
 * freed_bytes may exceed bytes: the kernel reclaims at least
 * SWAP_CLUSTER_MAX pages per attempt and drains its per-CPU charge stock,
 * and on cgroup v1 the group's own charges reclaim too while a step has
 * the limit lowered (see mr_group_read_reclaim_stats()).
 *
 * On cgroup v2 one write of memory.reclaim asks at most 16 MiB, whatever
 * the batch: the kernel's loop for a write stops only when it has
 * reclaimed the request or given up, and before Linux 6.6 it could free
 * 1.7 GiB for a request of 1 GiB. A larger batch is written as 16 MiB
 * chunks, each asking only what the call still lacks (what a chunk freed
 * beyond its ask is carried into the next), and the deadline is checked
 * between chunks: a call lasts at most timeout_ns plus one chunk's
 * reclaim.
 *
 * No call brings usage below what reclaim cannot take: unevictable
 * memory, kernel memory but its reclaimable slab (struct mr_memstat
 * slab_reclaimable_bytes, which reclaim shrinks), and the anonymous
 * memory (shmem included) that the swap
 * left to the group cannot hold (none with memory.swap.max 0, no swap
 * device or swappiness 0). There memory.reclaim would scan in vain, and
 * the memory.high step of kernels without it would throttle the group's
 * tasks below what they need. A call that starts there, or gets there
 * without freeing anything, answers -EAGAIN.
 *
 * Returns 0 when something was freed (or bytes was 0), -EAGAIN when
 * nothing could be freed, -ENOENT (the group was removed), -EBUSY (another
 * manager, in this process or another, held the group's reclaim lock for
 * longer than 200 ms), -EINVAL (group NULL), -ECHILD, or the errno of a
 * failed write. Counted under MR_REASON_REQUESTED.
 * MT-safe: calls on one group are serialised with the worker's. */
MR_EXPORT int mr_group_reclaim(mr_group_t *group, uint64_t bytes,
			       uint64_t timeout_ns, uint64_t *freed_bytes);

/* Batches in a row that may free nothing before a reclaim gives up. */
#define MR_RECLAIM_MAX_EMPTY_BATCHES 3

/* Reclaims `bytes` from the context's groups together, now, in the
 * calling thread, in soft-limit order: the groups over their soft limit
 * (mr_group_set_soft_limit()) give first, in proportion to their excess,
 * and only what their excess cannot cover comes from all groups, in
 * proportion to what they have left (mr_soft_limit_plan(), on the usage
 * read at the start of the round). Each group's share is reclaimed as
 * mr_group_reclaim() reclaims, in the group's batches, with the same loop and
 * bail-out for
 * every group, one group after the other in the order they were opened,
 * counted under MR_REASON_SOFT. When groups fall short of their share
 * (nothing more reclaimable, removed, an error), one more round is
 * planned, for what is still missing, over the groups that gave their
 * whole share; then the call returns: it never loops.
 *
 * From the 2013 rework of memcg soft-limit reclaim (Michal Hocko, "memcg:
 * soft limit reclaim rework"): soft-limit reclaim as a pass of the normal
 * reclaim at the same priority, over the groups above their soft limit
 * first, then over all, with no priority-0 last-resort pass. (The
 * kernel's own soft-limit reclaim, mem_cgroup_soft_limit_reclaim(), cgroup
 * v1 only, instead picks the group furthest over its soft limit and
 * reclaims it in a loop of its own.)
 *
 * Works on every backend; groups whose backend cannot reclaim, groups
 * removed (-ENOENT) and groups that fail are left out, and the second
 * round asks the others for what they did not give. The groups are taken
 * as disjoint: a context that holds a group and one of its descendants
 * counts the descendant's usage in both.
 *
 * bytes: 0 .. MR_UNLIMITED (0 returns 0 at once). timeout_ns bounds the
 * time spent reclaiming, summed over the groups, each group's part in the
 * group's clock (CLOCK_MONOTONIC; virtual time on the simulator; a batch
 * already started finishes, and no group is started once it is spent);
 * 0 or MR_UNLIMITED means no time bound. *freed_bytes (may be NULL)
 * receives the sum of the groups' falls in usage, each as
 * mr_group_reclaim() counts it; it may exceed bytes.
 *
 * Returns 0 when something was freed (freeing less than asked is normal)
 * or bytes was 0, -EAGAIN when nothing could be freed (no group had
 * anything reclaimable, or there is none), -EINVAL (ctx NULL), -ECHILD,
 * -ENOMEM, or, when nothing was freed, the first error of a group other
 * than -ENOENT (-EBUSY: another manager held it for longer than 200 ms;
 * -EIO; the errno of a failed write).
 * MT-safe: each group's reclaim is serialised with the worker's and with
 * mr_group_reclaim(). */
MR_EXPORT int mr_ctx_reclaim(mr_ctx_t *ctx, uint64_t bytes,
			     uint64_t timeout_ns, uint64_t *freed_bytes);

/* Statistics of one reclaim reason; the caller sets size. */
struct mr_reclaim_stats {
	size_t size;
	uint64_t calls;        /* reclaim calls made to the backend */
	uint64_t empty_calls;  /* of which freed nothing */
	uint64_t asked_bytes;  /* sum of the batches asked */
	uint64_t freed_bytes;  /* sum of the bytes freed */
	uint64_t elapsed_ns;   /* time spent in the calls, in the group's
				  clock (CLOCK_MONOTONIC; virtual time on
				  the simulator) */
	/* The sum of the rises of the swap charged to the group across
	 * each reclaim that freed something (a mr_group_reclaim() call, a
	 * worker's pass, a proactive step: one read before and one after;
	 * v2 memory.swap.current; the simulator's swapped pages; 0 where not
	 * measured: cgroup v1, a v2 group without swap accounting): what
	 * reclaim moved to swap rather than dropped (what the group's own
	 * swap-ins and swap-outs do meanwhile counts too).
	 * freed_bytes is the fall of memory.current, so with swap the
	 * memory freed is partly offloaded, not gone: it still takes swap
	 * space, and with zswap or zram compressed memory (zswap's pool is
	 * charged to the group: memory.current falls by a page less its
	 * compressed size while memory.swap.current rises by the page, so
	 * offloaded_bytes can exceed freed_bytes). freed_bytes -
	 * offloaded_bytes, at 0 at least, is what was dropped (page cache). */
	uint64_t offloaded_bytes;
};

/* Reads the statistics of `reason` for the group, counted since open.
 * freed_bytes is the fall in usage across each call: on cgroup v1 it also
 * counts what the group's own charges reclaimed while the limit was
 * lowered, so under a fast-charging workload it can exceed asked_bytes.
 * Works in a child after fork() too (it reads memory only).
 * Errors: -EINVAL (NULL, size smaller than its size and calls fields,
 * unknown reason). MT-safe. */
MR_EXPORT int mr_group_read_reclaim_stats(mr_group_t *group, int reason,
					  struct mr_reclaim_stats *stats);

/* ------------------------------------------------------------------ */
/* The margin worker                                                    */
/* ------------------------------------------------------------------ */

enum mr_sched {
	MR_SCHED_NICE = 0, /* SCHED_OTHER at a nice level (the default: 0) */
	MR_SCHED_IDLE = 1, /* SCHED_IDLE: runs only when a CPU is else idle */
};

/* Sets the worker's scheduling, applied when it next starts. nice:
 * -20..19, used with MR_SCHED_NICE (0 otherwise). The default is
 * MR_SCHED_NICE at 0: on a busy 2-core machine SCHED_IDLE starves the
 * worker while the workload fills the cache (docs/PERFORMANCE.md has the
 * measurement).
 *
 * The worker never takes the policy of the thread that starts it (a
 * SCHED_FIFO caller's would let it monopolise a CPU): it is created
 * SCHED_OTHER at priority 0, then takes this class. Its nice level is the
 * starting thread's, as for any thread, until the class sets another
 * (MR_SCHED_NICE at 0 leaves it). A nice level below the caller's own
 * needs CAP_SYS_NICE; when the kernel refuses it, the worker runs at the
 * inherited level and logs a warning. (An unprivileged SCHED_IDLE caller
 * may not create a SCHED_OTHER thread: the worker then inherits the
 * caller's policy, with a warning.)
 *
 * MR_SCHED_IDLE: the worker waits and decides as SCHED_IDLE, but runs
 * each reclaim pass as SCHED_OTHER at nice 0 and goes back to SCHED_IDLE
 * after. A cgroup v1 step lowers the limit and restores it at once; an
 * idle thread preempted in between would leave the group's own charges
 * meeting the lowered limit for as long as other threads keep the CPUs
 * busy (a priority inversion). Leaving SCHED_IDLE needs CAP_SYS_NICE (or
 * an RLIMIT_NICE of 20); when the kernel refuses, the pass runs idle and
 * the worker logs one warning.
 * Errors: -EINVAL (ctx NULL, unknown class, nice out of range), -EBUSY
 * (the worker runs). MT-safe. */
MR_EXPORT int mr_ctx_set_worker_sched(mr_ctx_t *ctx, int sched, int nice);

/* Starts the context's margin worker: one thread that keeps each group's
 * margin (mr_group_set_margin()), groups opened later included. It sleeps
 * until a group's usage crosses
 * limit - margin (a usage-threshold event from the backend), with a timer
 * of MR_WORKER_SAFETY_NS only as a safety net, and reclaims with the
 * group's target batch, counted under MR_REASON_MARGIN. The thread is
 * named "memreclaim" (/proc/<pid>/task/<tid>/comm) and scheduled as
 * mr_ctx_set_worker_sched() says, whatever the caller's own scheduling.
 *
 * A margin that reclaim cannot reach is left alone: when usage minus the
 * group's page cache (memory.stat inactive_file + active_file) is already
 * above limit - margin (anonymous memory without swap, kernel memory),
 * reclaiming would only strip the cache at every wake-up. The worker then
 * does not reclaim and logs one warning, with the numbers, again only
 * after the margin has become reachable in between.
 *
 * A group whose cgroup was removed (a backend call answers -ENOENT) gets
 * one warning ("cgroup is gone; no longer served") and is no longer
 * served; its handle stays valid until mr_group_close().
 * Errors: -EINVAL (ctx NULL), -EALREADY (already running), -EBUSY (a
 * mr_ctx_worker_dispatch() on ctx runs: one worker per context),
 * -EOPNOTSUPP (ctx is bound to a simulator, mr_sim_attach() of
 * libmemreclaim-sim: its worker runs in virtual time as a simulated task,
 * never as a thread beside the simulation), -ENOMEM, -EAGAIN (no thread could be created), -ECHILD.
 * MT-safe. */
MR_EXPORT int mr_ctx_worker_start(mr_ctx_t *ctx);

/* Stops the worker and waits for it to finish the batch it is in (a
 * lowered v1 limit is restored before it returns). Errors: -EINVAL (ctx
 * NULL), -ESRCH (not running), -ECHILD (in a child after fork(): the
 * worker is the parent's). MT-safe. */
MR_EXPORT int mr_ctx_worker_stop(mr_ctx_t *ctx);

/* The worker's safety-net period: its thread serves every group at least
 * this often, busy or idle (a limit changed by someone else, a group left
 * above its mark with no crossing to signal). */
#define MR_WORKER_SAFETY_NS 1000000000ULL

/* The worker in the caller's own event loop, instead of its thread: for
 * runtimes with an epoll loop of their own, and for the simulator, which
 * runs the worker as a task in virtual time. A context has one worker:
 * the thread of mr_ctx_worker_start() or these calls, never both. */

/* A pollable fd for the context's worker: the context's epoll fd, so it
 * nests in the caller's own epoll set. It polls readable (POLLIN) while a
 * group's event is pending (cgroup v1: usage crossed limit - margin) or
 * the context was woken (a policy changed, a group was added), until
 * mr_ctx_worker_dispatch() has taken them. The same fd for the context's
 * life; the caller only polls it (never reads, writes or closes it).
 * Errors: -EINVAL (ctx NULL), -ECHILD. MT-safe. */
MR_EXPORT int mr_ctx_worker_fd(mr_ctx_t *ctx);

/* flags of mr_ctx_worker_dispatch() */
#define MR_DISPATCH_ALL (1u << 0) /* serve every group: the safety tick */

/* Runs one round of the margin worker in the calling thread, without
 * waiting for events: what the worker thread does each time it wakes up.
 * Serves the groups whose events are pending and those queued for it (a
 * group opened, its policy changed, or left above its mark by the last
 * round), and every group when flags has MR_DISPATCH_ALL. Call it when
 * mr_ctx_worker_fd() polls readable, and with MR_DISPATCH_ALL every
 * MR_WORKER_SAFETY_NS, the
 * caller's safety tick (it catches a limit changed by someone else and a
 * group that stayed above its mark because nothing was reclaimable, as
 * the thread's timeout does). flags: 0 or MR_DISPATCH_ALL.
 *
 * Each group is served as by the thread (see mr_ctx_worker_start()):
 * reclaim down to limit - margin - hysteresis, in a pass of at most
 * 100 ms of the group's clock, counted under MR_REASON_MARGIN. The call
 * blocks for as long as its passes (a v1 step included) and waits for a
 * mr_group_reclaim() running on a group it serves. It runs at the
 * caller's scheduling: mr_ctx_set_worker_sched() is the thread's alone,
 * and the call never changes the calling thread's class (no SCHED_IDLE
 * boost).
 *
 * cgroup v1 thresholds are registered here too, after the groups with
 * work are served: one per call, each waiting for an RCU grace period in
 * the kernel (about 10 ms; mm/memcontrol-v1.c,
 * __mem_cgroup_usage_register_event()), while the groups still waiting
 * are looked at by one usage read each and served when above their mark
 * (see mr_group_set_margin()).
 *
 * Returns 1 when a group is still above its margin after its pass or
 * thresholds are left to register (call again soon: the next call serves
 * that group again, or registers the next), 0 when neither.
 * Errors: -EINVAL (ctx NULL, unknown flags), -ECHILD, -EBUSY (the worker
 * thread of mr_ctx_worker_start() runs, or another dispatch on ctx does:
 * one worker per context), or the errno of a failed epoll_wait(). While
 * a dispatch runs, mr_ctx_worker_start() answers -EBUSY.
 * MT-safe. */
MR_EXPORT int mr_ctx_worker_dispatch(mr_ctx_t *ctx, unsigned flags);

/* ------------------------------------------------------------------ */
/* Proactive reclaim                                                    */
/* ------------------------------------------------------------------ */

/* Flags of struct mr_proactive. */
#define MR_PROACTIVE_DRY_RUN (1u << 0) /* decide and report, never reclaim */

/* The proactive controller's target and bounds; the caller sets size
 * (sizeof(struct mr_proactive); later versions accept this size, and a
 * larger one whose bytes past this size are zero). A field left 0 takes
 * the default given with it. */
struct mr_proactive {
	size_t size;
	/* How often it measures and steps, in ns (default and minimum
	 * MR_WORKER_SAFETY_NS, 1 s; at most 60 s). */
	uint64_t interval_ns;
	/* The pressure it keeps the group under: at most stall_ns of PSI
	 * "some" memory stall per window_ns of wall time (default 10 ms
	 * per 6 s, Senpai's; window_ns 1 s .. 600 s, stall_ns 1 us ..
	 * window_ns). Scaled to each interval's length. */
	uint64_t stall_ns;
	uint64_t window_ns;
	/* The largest step: the share of what is reclaimable above the
	 * floor taken in one interval, in ppm (default 100000, a tenth;
	 * 1 .. 1000000). */
	uint32_t step_ppm;
	/* The refault ratio (refaults of one kind, file or anonymous, over
	 * reclaimed, in one interval and the one before) at which that
	 * kind's share of the steps stops, in ppm (default 10000:
	 * Katalyst's accuracy of 0.99; 1 .. 1000000). */
	uint32_t refault_ppm;
	/* The I/O gate: no step while the group's io "some" stall is above
	 * this share of the interval, in ppm (default 50000, 5%; 1 ..
	 * 1000000). Kernels and backends without io.pressure have no gate
	 * (struct mr_proactive_stats.io_gate says so). */
	uint32_t io_stall_ppm;
	/* The least size it takes the group to, in bytes (default 0;
	 * 0 .. MR_UNLIMITED). */
	uint64_t min_bytes;
	uint32_t flags;      /* MR_PROACTIVE_* */
};

/* Turns the group's proactive controller on (proactive not NULL: its
 * target and bounds) or off (NULL). The controller shrinks the group to
 * the smallest size that does not hurt it, below any limit, while
 * pressure allows, as Senpai (facebookincubator/senpai) and Meta's TMO
 * (Weiner et al., "TMO: Transparent Memory Offloading in Datacenters",
 * ASPLOS '22) do. Every interval it reads the group's memory PSI "some"
 * total, memory.stat and its limits, and reclaims
 *
 *     step = step_ppm x R x max(0, 1 - P) x W
 *     W = (Rf x max(0, 1 - Qf) + Ra x max(0, 1 - Qa)) / (Rf + Ra)
 *
 * where R is what reclaim can take above the floor (Rf page cache, Ra
 * the anonymous memory the group may swap out), P the interval's stall
 * over the target stall of an interval, and Qf, Qa the interval's
 * refault ratio of each kind (memory.stat workingset_refault_file, and
 * _anon, over pgsteal of this interval and the one before; on cgroup v1,
 * which has no pgsteal, over what the controller itself freed; with
 * nothing reclaimed, over the group's usage) over refault_ppm. Each
 * kind's refaults hold that kind's share of the step only: memory.reclaim
 * before Linux 6.11 cannot be told which kind to take, and hot file
 * pages coming back leave the cold anonymous memory still to be taken.
 * P, Qf and Qa are held
 * (each interval at least 3/4 of the one before), so a stall or a
 * refault burst keeps steps small for a few intervals (the refault check
 * is ByteDance Katalyst's, 1 - refaults/pgsteal >= 0.99). Far from the
 * group's working set the steps are a tenth of what is reclaimable per
 * second by default (a 220 MiB group of 20 MiB hot cache is within 10%
 * of its hot set in about 22 intervals, where Senpai's 1% per 6 s takes
 * about 23 minutes); docs/design.md says why it converges without
 * oscillating.
 *
 * The floor: never below min_bytes, the group's memory.min or effective
 * memory.low (memory.reclaim on a group ignores the group's own
 * protection, mm/memcontrol.c mem_cgroup_calculate_protection(): the
 * library keeps it), nor below what reclaim cannot take (unevictable
 * memory, kernel memory, and anonymous memory and shmem the group's swap
 * cannot hold).
 *
 * It reclaims as mr_group_reclaim() does, with the group's reclaim
 * swappiness (mr_group_set_reclaim_swappiness(): memory.reclaim's
 * swappiness= on cgroup v2 from Linux 6.11), counted under
 * MR_REASON_PROACTIVE: memory.reclaim on cgroup v2, limit steps on cgroup
 * v1 (each lowers memory.limit_in_bytes for a moment), the model's
 * reclaim on the simulator. On cgroup v1 PSI comes from the group's
 * cgroup2 twin, or the cgroup2 group that holds exactly its tasks
 * (mr_ctx_set_hybrid_psi()).
 *
 * It pauses (no step) while the io "some" stall is above io_stall_ppm of
 * the interval (TMO's I/O gate; cgroup v2 io.pressure, the twin's on
 * cgroup v1), and for 8 intervals after the group's own memory.high
 * changed: someone else (kubelet's MemoryQoS, systemd's MemoryHigh=,
 * Senpai; the caller's own mr_group_set_high() counts too) manages it,
 * and the controller, which never writes it, does not fight them; the
 * change is logged and counted. With
 * MR_PROACTIVE_DRY_RUN it reclaims nothing and reports the size it would
 * have taken the group to (mr_proactive_stats.dry_run_bytes: the law
 * applied to that size rather than to usage; without the refaults and
 * stall its own steps would have caused, so past the working set it goes
 * on towards the floor: a lower bound of where a real run settles). Each
 * decision is logged at MR_LOG_DEBUG. Where the group's pressure or
 * statistics can no longer be read while it runs (a cgroup v1 group's
 * twin removed, its tasks no longer alone in one cgroup2 group), it takes
 * no step and counts no interval, tries again every interval, and says so
 * once at MR_LOG_WARNING, and at MR_LOG_INFO when a read works again.
 *
 * It runs in the context's worker, beside the margin keeper: the thread
 * of mr_ctx_worker_start(), or the caller's mr_ctx_worker_dispatch()
 * with MR_DISPATCH_ALL every MR_WORKER_SAFETY_NS; a group needs no margin
 * nor limit for it. The first interval only measures. A new call starts
 * it afresh.
 *
 * size: the bytes of *proactive, equal to proactive->size (0 with NULL).
 * Errors: -EINVAL (group NULL; size smaller than this struct's, or not
 * proactive->size; a field out of its range; unknown flags; the log says
 * which, at debug level),
 * -E2BIG (size larger than this struct's, with a byte past it set),
 * -EOPNOTSUPP (the backend cannot reclaim, or the group has no PSI: a
 * kernel without CONFIG_PSI or booted with psi=0, a cgroup v1 group
 * without a twin or a cgroup2 group of its tasks alone; logged with the
 * reason), -ENOENT (group removed),
 * -ECHILD. On error nothing changes. MT-safe: the worker picks the
 * change up at its next pass over the group. */
MR_EXPORT int mr_group_set_proactive(mr_group_t *group,
				     const struct mr_proactive *proactive,
				     size_t size);

/* Values of struct mr_proactive_stats.io_gate. */
#define MR_PROACTIVE_IO_GATE_NONE 0   /* no io.pressure: no gate */
#define MR_PROACTIVE_IO_GATE_ON 1     /* gating on the group's io PSI */

/* What the proactive controller measured and decided; the caller sets
 * size. Totals count since the controller was last turned on. */
struct mr_proactive_stats {
	size_t size;
	int enabled;                   /* 1: on (a dry run included) */
	int dry_run;                   /* 1: MR_PROACTIVE_DRY_RUN */
	int io_gate;                   /* MR_PROACTIVE_IO_GATE_* */
	uint64_t intervals;            /* measured so far */
	/* The last interval: */
	uint64_t usage_bytes;          /* usage at its end */
	uint64_t floor_bytes;          /* the floor (see above) */
	uint64_t target_bytes;         /* the size it aimed at: usage less
					  the step (usage when paused) */
	uint64_t step_bytes;           /* asked of reclaim */
	uint32_t step_ppm;             /* the step over R */
	uint64_t stall_ns;             /* PSI some stall in it */
	uint64_t target_stall_ns;      /* the stall allowed in it */
	uint64_t io_stall_ns;          /* io some stall in it */
	uint32_t refault_ratio_ppm;    /* refaults / reclaimed, both
					  kinds */
	uint64_t refault_bytes;        /* refaults in it, both kinds */
	uint64_t dry_run_bytes;        /* dry run: the size it would have
					  taken the group to (0: none) */
	/* Totals: */
	uint64_t reclaimed_bytes;      /* freed by its steps */
	uint64_t pauses_pressure;      /* intervals held by the stall */
	uint64_t pauses_refaults;      /* held by refaults */
	uint64_t pauses_io;            /* held by the I/O gate */
	uint64_t pauses_external;      /* held after memory.high changed */
	uint64_t external_high_changes;/* memory.high changed by others */
	uint64_t last_external_high_bytes; /* what it was changed to */
};

/* Reads the group's proactive statistics (see struct mr_proactive_stats)
 * into *stats, of `size` bytes (sizeof(struct mr_proactive_stats) or
 * more; fields past this version's are zeroed). Works in a child after
 * fork() (it reads memory only).
 * Errors: -EINVAL (NULL, size smaller than this struct's). MT-safe: the
 * fields are read one by one, so a read racing an interval's end may mix
 * two intervals; but intervals is read first and counted last, so a read
 * that sees an interval's count sees its usage, floor, target, step,
 * stall, refaults and dry-run size (reclaimed_bytes grows after, with
 * the interval's step). */
MR_EXPORT int mr_group_read_proactive_stats(mr_group_t *group,
					    struct mr_proactive_stats *stats,
					    size_t size);

/* ------------------------------------------------------------------ */
/* The allocator fast path                                              */
/* ------------------------------------------------------------------ */

/* For allocators and databases that ask, on their hot path, "may I take
 * these bytes now, should this region be a huge page, how long should I
 * back off?" without a syscall per question.
 *
 * The group keeps an estimate of its usage: the usage read from the
 * backend at the last refresh, plus the net bytes drawn since, and never
 * less than a floor: what the group held at the last full refresh that
 * reclaim cannot free and the fast path did not charge, plus every byte
 * charged and not uncharged since arming. The floor is what keeps memory
 * charged but not yet touched (malloc now, write later), which the
 * kernel's usage does not show, from being forgotten at the next usage
 * refresh. A thread
 * draws from the group in batches of MR_CHARGE_BATCH_BYTES into a stock of
 * its own and serves its charges from it with no shared write, as the
 * kernel's per-CPU charge stock does (mm/memcontrol.c consume_stock(),
 * refill_stock(), try_charge_memcg(): MEMCG_CHARGE_BATCH). The limit and
 * high checks are made only when a batch is drawn, against the binding
 * limit (struct mr_limits.limit_bytes) and the throttle high
 * (mr_group_set_throttle_high()), as the kernel checks them only when the
 * stock runs out.
 *
 * Freshness. The usage is read again (one pread on a kept fd) at most once
 * per MR_CHARGE_USAGE_REFRESH_NS, by the one thread that draws a batch
 * after the interval has passed (the others go on with the old value).
 * The limit, the high and memory.stat's clean page cache are never read
 * on the fast path once the group is armed (on cgroup v1 reading them may
 * wait for another manager's reclaim step, which a charge must never do):
 * they are as fresh as the last of arming, mr_group_charge_refresh(),
 * mr_group_read_limits() and the margin worker's pass over the group
 * (limits only; the clean cache at arming and refresh). The margin is
 * taken from mr_group_set_margin() as it is set; mr_group_reclaim() that
 * frees memory publishes the new usage and cache at once. Above the floor
 * the estimate is off the kernel's usage by at most the stocks held
 * (MR_CHARGE_BATCH_BYTES per thread that charged the group, stocks of
 * threads that exited or moved to another group included) plus what was
 * charged or freed in one refresh interval. The floor may stand above the
 * kernel's usage by the memory charged and never touched, and by the
 * stocks of threads that exited (at most MR_CHARGE_THREAD_SLOTS stocks; a
 * new thread that takes over a slot takes its stock).
 *
 * Threads. Every call below may be made from any thread, threads that never
 * registered with liburcu included. A thread's stock and counters live in
 * a slot of the group (MR_CHARGE_THREAD_SLOTS per group, claimed without a
 * lock on a thread's first charge of the group, and taken over by a later
 * thread at the same thread-local address once its owner has exited);
 * threads beyond those share one slot with atomic counters and no stock.
 * Counters are folded on read (mr_group_read_charge_stats()) and outlive
 * the thread. The policy is read, at batch boundaries only, from a latch
 * (include/linux/seqlock.h, seqcount_latch_t): no lock, no registration,
 * docs/design.md says why not liburcu there.
 *
 * Allocation and signals. Once the group is armed, mr_group_charge(),
 * mr_group_uncharge() and mr_group_thp_advise() never allocate, never map
 * memory, never take a lock and never call a function that might, and are
 * async-signal-safe (a handler may charge while the thread it interrupted
 * is inside one of them: the stock is then bypassed). The thread-local
 * data is initial-exec TLS. A group is armed by mr_group_charge_refresh(),
 * by any setter of this section, or by its first charge, uncharge or
 * advice, which then reads the limits as mr_group_charge_refresh() does
 * and allocates the group's fast-path state (about 12 KiB: the policy and
 * MR_CHARGE_THREAD_SLOTS slots; a group never armed costs none of it):
 * arm the group before charging from a malloc hook or a signal handler.
 * (One exception:
 * a usage file that does not parse is logged, and the log callback is
 * called under the context's log lock.)
 *
 * fork(): in the child, every call below answers -ECHILD. On the
 * simulator, call them from the simulator's thread only, as everything
 * else of a simulated group. */

/* The kernel's MEMCG_CHARGE_BATCH, 64 pages of 4 KiB: the batch a thread
 * draws and the most its stock keeps. */
#define MR_CHARGE_BATCH_BYTES (64ULL * 4096)
/* The usage refresh interval of the fast path, in the group's clock. */
#define MR_CHARGE_USAGE_REFRESH_NS 10000000ULL
/* Thread slots per group (see above). */
#define MR_CHARGE_THREAD_SLOTS 64
/* The largest charge or uncharge of one call: 2^48 bytes (256 TiB). */
#define MR_CHARGE_MAX_BYTES (1ULL << 48)

/* The answer to a charge. Values are stable. */
enum mr_charge_verdict {
	MR_CHARGE_GO = 0,      /* charged: go ahead */
	MR_CHARGE_DELAY = 1,   /* charged: go ahead after answer->delay_ns */
	MR_CHARGE_RECLAIM = 2, /* not charged: reclaim answer->reclaim_bytes
				  (mr_group_reclaim(), which publishes
				  what it freed to the fast path; or leave
				  it to the worker and call
				  mr_group_charge_refresh()), then charge
				  again */
	MR_CHARGE_REFUSE = 3,  /* not charged: cannot fit even after reclaim */
};

struct mr_charge_answer {
	uint64_t delay_ns;      /* DELAY: the throttle delay; else 0 */
	uint64_t reclaim_bytes; /* RECLAIM: what to reclaim for the charge
				   to fit with usage at limit - margin;
				   else 0 */
};

/* Asks to charge `bytes` to the group. Served from the calling thread's
 * stock when it holds enough (GO, no shared write). Otherwise a batch of
 * max(MR_CHARGE_BATCH_BYTES, bytes) is drawn (just what is missing when
 * the batch does not fit below the limit but the charge does, as
 * try_charge_memcg() retries with nr_pages), and judged with the estimate
 * after the draw:
 *  - at or below the throttle high: GO;
 *  - above it, at or below the binding limit: DELAY by the throttle curve
 *    (mr_group_set_throttle(), mr_throttle_delay_ns() for the batch),
 *    GO when the curve gives 0;
 *  - above the limit: nothing is charged; RECLAIM when the reclaimable
 *    memory covers what the estimate exceeds the limit by, else REFUSE.
 *    Reclaimable, at the last refresh: memory.stat's clean page cache
 *    (inactive_file + active_file - dirty - writeback) and, when a limit
 *    reclaim of the group may swap (struct mr_limits.swap_free_bytes not
 *    0, swappiness not 0: mm/vmscan.c, get_scan_count()), its anonymous
 *    memory (inactive_anon + active_anon) up to the free swap.
 *    RECLAIM's reclaim_bytes is sized as mr_group_thp_advise() sizes its
 *    shortfall: what the estimate after the charge exceeds limit - margin
 *    by (mr_group_set_margin(); 0 without one), so that after the reclaim
 *    the charge fits and the margin is kept, but at most the reclaimable
 *    memory (never less than the excess over the limit, which it
 *    covers): a request past it would have memory.reclaim retry and
 *    fail with -EAGAIN (mm/memcontrol.c, memory_reclaim()). 2 MiB
 *    charged at 63 MiB of a 64 MiB limit with a 4 MiB margin asks 5 MiB
 *    when 5 MiB or more is reclaimable, 3 MiB when 3 MiB is, and is
 *    REFUSE with 1 MiB reclaimable.
 * The draw is added to the group's estimate before the check and taken
 * back on RECLAIM or REFUSE, as page_counter_try_charge() does, so
 * concurrent draws never pass the limit together. A RECLAIM also adds
 * reclaim_bytes to the group's shrink request when the program opened
 * one (mr_group_shrink_fd(): one write(2) to an eventfd, no wait).
 * bytes: 1 .. MR_CHARGE_MAX_BYTES. answer: may be NULL; else filled on
 * every verdict.
 * Returns an enum mr_charge_verdict (>= 0), or -EINVAL (group NULL, bytes
 * out of range), -ECHILD (in a child after fork()), -ENOENT (the refresh
 * found the cgroup removed; nothing charged), or the errno of arming (see
 * mr_group_charge_refresh()). A usage refresh that fails otherwise keeps
 * the old estimate (counted in refresh_errors).
 * MT-safe; async-signal-safe and allocation-free once armed. */
MR_EXPORT int mr_group_charge(mr_group_t *group, uint64_t bytes,
			      struct mr_charge_answer *answer);

/* Gives back `bytes` charged earlier: they refill the calling thread's
 * stock, and a stock above MR_CHARGE_BATCH_BYTES is returned whole to
 * the group (refill_stock(), drain_stock()). Bytes charged by another
 * thread may be uncharged here. Uncharging more than was charged is not
 * detected (the kernel's refill_stock() does not check either): the
 * estimate and its floor stop at 0, and uncharged_bytes counts it.
 * bytes: 1 .. MR_CHARGE_MAX_BYTES.
 * Returns 0, or -EINVAL (group NULL, bytes out of range), -ECHILD, or
 * the errno of arming (an uncharge arms a group not armed yet).
 * MT-safe; async-signal-safe and allocation-free once armed. */
MR_EXPORT int mr_group_uncharge(mr_group_t *group, uint64_t bytes);

/* Advises how to back a region of length_bytes: with huge pages
 * (MR_THP_ADVICE_HUGE), small pages (MR_THP_ADVICE_SMALL), or huge pages
 * after reclaiming the shortfall (MR_THP_ADVICE_RECLAIM_THEN_HUGE). The
 * region is taken as round_up(length_bytes, 2 MiB) of huge pages and
 * judged by mr_thp_decide() with the group's THP policy
 * (mr_group_set_thp_policy()), the usage estimate, the binding limit, the
 * margin (mr_group_set_margin()) and the clean page cache reclaimable
 * (clean cache only, as MR_THP_CLEAN_CACHE's contract is: unlike the
 * charge's RECLAIM-or-REFUSE, which also counts the anonymous memory the
 * group may swap out, mr_charge_stats.swappable_bytes);
 * for MR_THP_BUDGET the budget in bytes is budget_ns times the reclaim
 * rate measured on the group (freed_bytes / elapsed_ns of the margin and
 * requested reclaims so far; none measured: 0, and the advice falls back).
 * Nothing is charged; a SMALL answer is counted in
 * mr_charge_stats.thp_fallbacks.
 * length_bytes: 1 .. MR_CHARGE_MAX_BYTES.
 * Returns an enum mr_thp_advice (>= 0), or -EINVAL, -ECHILD, or the errno
 * of arming. MT-safe; async-signal-safe and allocation-free once armed. */
MR_EXPORT int mr_group_thp_advise(mr_group_t *group, uint64_t length_bytes);

/* mr_group_thp_advise(), and the shortfall to reclaim before
 * the huge pages are charged: for MR_THP_ADVICE_RECLAIM_THEN_HUGE, what
 * the estimate with the region would exceed limit - margin by, written
 * to *reclaim_bytes (0 for the other answers). Reclaim it
 * (mr_group_reclaim()) before charging: mr_group_charge() answers
 * RECLAIM only above the limit, so a region charged between
 * limit - margin and the limit is GO with nothing reclaimed, and eats
 * the margin. Under MR_THP_RECLAIM_FULL the shortfall may exceed what is
 * reclaimable (the policy reclaims whatever it is).
 * Errors: those of mr_group_thp_advise(), and -EINVAL for reclaim_bytes
 * NULL. MT-safe; async-signal-safe and allocation-free once armed. */
MR_EXPORT int mr_group_thp_advise_reclaim(mr_group_t *group,
					  uint64_t length_bytes,
					  uint64_t *reclaim_bytes);

/* Arms the group's fast path, or refreshes it: reads the usage, the limits
 * (mr_group_read_limits()) and memory.stat now and publishes them, with
 * the margin, to the fast path. Call it once before charging from a malloc
 * hook or a signal handler, and from a housekeeping thread as often as the
 * limits may change (the margin worker, when running, refreshes the groups
 * it serves).
 * Errors: -EINVAL (group NULL), -ECHILD, and those of
 * mr_group_read_limits() and mr_group_read_memstat(); on error nothing is
 * published. MT-safe; may block (cgroup v1: a reclaim step in progress). */
MR_EXPORT int mr_group_charge_refresh(mr_group_t *group);

/* Counters of the fast path since the group was opened, summed over the
 * threads (those that exited included), and the state it decides with.
 * The caller sets size = sizeof(struct mr_charge_stats); fields past size
 * are neither read nor written. */
struct mr_charge_stats {
	size_t size;
	uint64_t charges;          /* mr_group_charge() verdicts given */
	uint64_t uncharges;        /* mr_group_uncharge() calls */
	uint64_t go;               /* verdicts: GO */
	uint64_t delayed;          /*           DELAY */
	uint64_t reclaim;          /*           RECLAIM */
	uint64_t refused;          /*           REFUSE */
	uint64_t delay_ns;         /* sum of the delays given */
	uint64_t charged_bytes;    /* sum of the bytes of GO and DELAY */
	uint64_t uncharged_bytes;  /* sum of the bytes uncharged */
	uint64_t batches;          /* draws from the group */
	uint64_t stock_returns;    /* stocks returned to the group */
	uint64_t usage_refreshes;  /* usage reads by the fast path */
	uint64_t refresh_errors;   /* of which failed */
	uint64_t limits_refreshes; /* snapshots of limits published */
	uint64_t usage_estimate_bytes; /* usage at the last refresh + drawn */
	uint64_t usage_age_ns;     /* since the last usage refresh */
	uint64_t limits_age_ns;    /* since the last limits snapshot; both
				      MR_UNLIMITED before the group is armed */
	uint64_t limit_bytes;      /* the binding limit in use */
	uint64_t high_bytes;       /* the throttle high in use */
	uint64_t reclaimable_bytes; /* the clean page cache in use */
	uint64_t thp_fallbacks;    /* mr_group_thp_advise() answers
				      MR_THP_ADVICE_SMALL: huge pages wanted,
				      small pages advised */
	/* The anonymous memory in use as reclaimable by swap (lib/core/policy.h:
	 * at most the swap left for the group; 0 with swappiness 0): the
	 * charge's RECLAIM-or-REFUSE counts it with reclaimable_bytes, THP
	 * advice does not. */
	uint64_t swappable_bytes;
};

/* Reads the fast path's counters and state into *stats; the per-thread
 * counters are read without stopping their owners, so a sum may miss the
 * calls in flight. Works in a child after fork() too (it reads memory
 * only). Errors: -EINVAL (NULL, size smaller than its size and charges
 * fields). MT-safe. */
MR_EXPORT int mr_group_read_charge_stats(mr_group_t *group,
					 struct mr_charge_stats *stats);

/* ------------------------------------------------------------------ */
/* The shrink request                                                   */
/* ------------------------------------------------------------------ */

/* Before the library reclaims a group's page cache, it can ask the
 * program to give memory back first: an allocator's cached free pages
 * (jemalloc's arena.<i>.purge, glibc's malloc_trim()), a cache of its
 * own. That memory is what the program knows it will not miss; the page
 * cache the worker reclaims is what the kernel's LRU thinks is cold, and
 * may be read again. The request is an eventfd (eventfd(2)) the program
 * polls, and the answer a call (mr_group_shrink_done()): no callback runs
 * on a library thread.
 *
 * When it is asked:
 *  - the margin worker, about to reclaim the group because usage crossed
 *    limit - margin (mr_ctx_worker_start(), mr_ctx_worker_dispatch()),
 *    adds the bytes it would reclaim (usage - (limit - margin -
 *    hysteresis)) to the eventfd's counter. The worker thread then waits
 *    for the answer up to the grace given to mr_group_shrink_fd(), and
 *    reads usage again: at or below limit - margin, the pass is not run
 *    (mr_shrink_stats.avoided); above it, the pass reclaims down to
 *    limit - margin - hysteresis as ever, less what the program gave back.
 *    A request not answered within its grace (a timeout) is not waited
 *    for again until an answer comes: a program that stopped answering
 *    costs one grace, not one per pass. mr_ctx_worker_dispatch() asks
 *    without waiting (its caller's loop is the one that would answer);
 *  - mr_group_charge(), answering MR_CHARGE_RECLAIM (the charge meets
 *    the limit, and the caller is to reclaim reclaim_bytes), adds
 *    reclaim_bytes, without waiting: the program may purge before it
 *    reclaims, or instead.
 * Reading the eventfd (8 bytes, as eventfd(2) says) takes the bytes asked
 * since the last read, in bytes, and makes it poll unreadable; the
 * counter saturates at 2^64 - 2 (a request is then pending all the same).
 * Requests are hints: nothing is charged or reserved, and the program may
 * give back more, less or nothing. */

/* The longest grace the worker waits for an answer: a margin pass's turn
 * (the worker serves no other group meanwhile). */
#define MR_SHRINK_GRACE_MAX_NS 100000000ULL

/* Opens the group's shrink request, or changes its grace: returns the
 * eventfd the program polls for POLLIN and reads (never writes or closes:
 * mr_group_close() closes it), the same fd for the group's life.
 * grace_ns: 0 .. MR_SHRINK_GRACE_MAX_NS, how long the worker thread waits
 * for mr_group_shrink_done() before it reclaims (0: it asks and goes on).
 * While the worker thread waits (grace_ns at most, under the group's
 * reclaim lock), the calls that take that lock wait too:
 * mr_group_reclaim(), mr_group_set_limit(), mr_group_set_high(),
 * mr_group_set_reclaim_swappiness(), this call, mr_ctx_reclaim() on
 * reaching the group, and mr_group_close(); so do the worker's passes
 * over the context's other groups (one thread serves them all) and
 * mr_ctx_worker_stop(). Charges and reads take no lock and never wait.
 * A thread that answers the request must not make one of those calls
 * of the group first (each request would then cost the whole grace).
 * fork(): the fd is the library's, closed in a child by the library's
 * fork handler like its other fds (its number may then be taken by the
 * child's next open: a child must not poll it), so a child can neither
 * take the parent's requests nor answer them; in the child, this call and
 * mr_group_shrink_done() answer -ECHILD.
 * Errors: -EINVAL (group NULL, grace_ns out of range), -ECHILD, -EMFILE,
 * -ENFILE, -ENOMEM (eventfd(2)).
 * MT-safe. */
MR_EXPORT int mr_group_shrink_fd(mr_group_t *group, uint64_t grace_ns);

/* Answers the group's shrink request: the program has given back what it
 * will (call it after the purge, whatever it freed). The worker, if it
 * waits, reads usage again at once. An answer with no request waiting
 * stands for the next one.
 * Errors: -EINVAL (group NULL), -EBADF (no request was opened:
 * mr_group_shrink_fd()), -ECHILD.
 * MT-safe; async-signal-safe (one write(2)). */
MR_EXPORT int mr_group_shrink_done(mr_group_t *group);

/* The shrink request's counters since it was opened. The caller sets
 * size = sizeof(struct mr_shrink_stats); fields past size are neither
 * read nor written. */
struct mr_shrink_stats {
	size_t size;
	uint64_t requests;        /* requests made (worker and charges) */
	uint64_t requested_bytes; /* the bytes they asked for, summed */
	uint64_t answered;        /* worker requests answered in time */
	uint64_t timeouts;        /* worker requests not answered in time */
	uint64_t avoided;         /* margin passes not run: the answer
				     brought usage to limit - margin */
};

/* Reads the counters into *stats. Works in a child after fork() (memory
 * only). Errors: -EINVAL (NULL, size smaller than its size and requests
 * fields). MT-safe. */
MR_EXPORT int mr_group_read_shrink_stats(mr_group_t *group,
					 struct mr_shrink_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* MEMRECLAIM_H */
