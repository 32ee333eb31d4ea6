/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator's model: a machine with RAM, CPUs, a disk and optional
 * swap, memory cgroups below its root, tasks that fault pages in, and the
 * kernel's reclaim, in a virtual clock counted in nanoseconds. Pages are
 * 4 KiB. Everything random comes from one seeded generator, and tasks are
 * coroutines run one at a time in (wake time, sequence) order, so a seed
 * gives the same run, byte for byte.
 *
 * The files of the model, built into libmemreclaim-sim:
 *   machine.c   clock, PRNG, tasks, wait queues, CPU and disk time
 *   costs.c     the cost parameter sets (2011, today; mr_sim_new()
 *               takes one, "today" by default)
 *   memcg.c     groups: limits, charge/uncharge, events, thresholds, PSI
 *   page.c      pages, objects (files and anonymous regions), faults,
 *               refaults through shadow entries, writeback
 *   vmscan.c    reclaim: LRU scanning, activation, soft-limit designs
 *   check.c     the model's invariants (sim_check_invariants())
 *   backend.c   the library's backend table on top of the model,
 *               registered with libmemreclaim as "sim" when loaded
 *   libworker.c the library's margin worker as a task of the machine
 *   api.c       the public mr_sim_* functions (include/memreclaim-sim.h)
 * The experiments (experiments/: workloads, the trace format and the
 * reference scenarios) are built on the functions below only, from a
 * convenience build of these files (libmemreclaim-sim-internal): they
 * are not exported by the installed library.
 */
#ifndef MR_SIM_H
#define MR_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "memreclaim-sim.h"

#define SIM_PAGE_SIZE 4096ULL
#define SIM_HPAGE_NR 512u           /* pages in a 2 MiB huge page */
#define SIM_SWAP_CLUSTER_MAX 32u    /* include/linux/swap.h */
#define SIM_DEF_PRIORITY 12         /* include/linux/mmzone.h */
#define SIM_NOPAGE UINT32_MAX
#define SIM_UNLIMITED UINT64_MAX    /* a limit in pages: none */
/* Groups per machine, the root included: enough for the scale benchmark's
 * 10 000 groups in one context (bench/bench-scale.c); ids fit the page's
 * uint16_t memcg and the shadow entry's id bits. */
#define SIM_MAX_GROUPS 16384
/* The machines mr_sim_new() accepts (and a trace may declare); page
 * numbers are 32-bit. */
#define SIM_MIN_RAM_BYTES (16ULL << 20)
#define SIM_MAX_RAM_BYTES (8ULL << 40)
#define SIM_MAX_CPUS 4096u

static inline uint64_t sim_pages(uint64_t bytes)
{
	return bytes == MR_UNLIMITED ? SIM_UNLIMITED : bytes / SIM_PAGE_SIZE;
}

static inline uint64_t sim_bytes(uint64_t pages)
{
	return pages == SIM_UNLIMITED ? MR_UNLIMITED : pages * SIM_PAGE_SIZE;
}

/* ------------------------------------------------------------- costs */

/* What things cost, in ns of virtual time. One set per era; see costs.c
 * for the source of every value. */
struct sim_costs {
	const char *name;
	/* Reclaim. */
	uint64_t reclaim_call_ns;      /* per reclaim invocation: the node
					  and slab shrinker walk */
	uint64_t scan_page_ns;         /* per page scanned off an LRU */
	uint64_t free_page_ns;         /* per clean page freed */
	uint64_t activate_page_ns;     /* per page moved between lists */
	uint64_t lru_contention;       /* per-page cost multiplier per extra
					  concurrent reclaimer of one group,
					  in 1/1000 (0: none) */
	uint64_t dirty_stall_ns;       /* a reclaimer meeting dirty or
					  writeback pages with no progress
					  waits this long (congestion_wait) */
	uint64_t reclaim_nap_ns;       /* a direct reclaimer whose pass
					  below DEF_PRIORITY - 2 left its
					  target unmet naps this long
					  (do_try_to_free_pages; 0: never) */
	/* Faults and I/O. */
	uint64_t minor_fault_ns;       /* a page fault served from memory,
					  page allocation and charge */
	uint64_t hpage_fault_ns;       /* zeroing and mapping a huge page */
	uint64_t disk_latency_ns;      /* per disk request */
	uint64_t disk_page_ns;         /* per page transferred */
	uint64_t readahead_pages;      /* the largest read request of a
					  buffered read (the readahead
					  window); 0: a read's misses in one
					  request */
	uint64_t swap_out_page_ns;     /* disk swap, per page written */
	uint64_t zswap_store_page_ns;  /* zswap: compress one page */
	uint64_t zswap_load_page_ns;   /* zswap: decompress one page */
	uint64_t copy_page_ns;         /* CPU to copy or touch one page */
	uint64_t worker_wakeup_ns;     /* a threshold event to the worker
					  running */
	uint64_t usage_read_ns;        /* reading usage or a stat file */
};

/* The set called `name` ("2011", "today"), or NULL. */
const struct sim_costs *sim_costs_find(const char *name);

/* ------------------------------------------------------------- machine */

struct sim_machine;
struct sim_task;
struct sim_memcg;

typedef void (*sim_task_fn)(struct sim_task *t, void *arg);

/* A wait queue: tasks sleeping until woken or a timeout. */
struct sim_waitq {
	struct sim_task *head;
};

enum sim_swap_kind {
	SIM_SWAP_NONE = 0,
	SIM_SWAP_DISK = 1,
	SIM_SWAP_ZSWAP = 2,
};

struct sim_config {
	uint64_t seed;
	uint64_t ram_pages;
	unsigned cpus;
	uint64_t swap_pages;
	int swap_kind;                 /* enum sim_swap_kind */
	const struct sim_costs *costs;
};

/* A new machine: a root group "/" holding all RAM, no tasks, time 0.
 * NULL on allocation failure. */
struct sim_machine *sim_machine_new(const struct sim_config *cfg);
void sim_machine_free(struct sim_machine *m);

const struct sim_config *sim_machine_config(const struct sim_machine *m);
/* Free slots of the swap device (or zswap pool), in pages: 0 without. */
uint64_t sim_machine_swap_free(const struct sim_machine *m);
const struct sim_costs *sim_machine_costs(const struct sim_machine *m);
uint64_t sim_now(const struct sim_machine *m);

/* Runs tasks until none is runnable before until_ns (SIM_UNLIMITED: until
 * all have ended or sleep forever), then sets the clock to until_ns if it
 * is finite. Called outside any task. */
void sim_run(struct sim_machine *m, uint64_t until_ns);

/* Advances the clock by ns outside any task (a synchronous caller, such
 * as a reclaim made by the program that drives the machine). */
void sim_advance(struct sim_machine *m, uint64_t ns);

/* Deterministic random numbers (xoshiro256**, seeded with splitmix64). */
uint64_t sim_rand(struct sim_machine *m);
/* Uniform in [0, n), n > 0. */
uint64_t sim_rand_below(struct sim_machine *m, uint64_t n);
/* Normal with the given mean and standard deviation (Box-Muller). */
double sim_rand_normal(struct sim_machine *m, double mean, double sd);
/* Exponential with the given mean. */
double sim_rand_exp(struct sim_machine *m, double mean);

/* ------------------------------------------------------------- tasks */

/* A new task in group g that runs fn(task, arg) from start_ns on. The
 * machine frees it when fn returns. NULL on allocation failure. */
struct sim_task *sim_task_spawn(struct sim_machine *m, const char *name,
				struct sim_memcg *g, uint64_t start_ns,
				sim_task_fn fn, void *arg);
/* The task running now, or NULL outside tasks. */
struct sim_task *sim_current(struct sim_machine *m);
struct sim_memcg *sim_task_memcg(const struct sim_task *t);
const char *sim_task_name(const struct sim_task *t);
/* Moves a task to another group (its charges stay, as on cgroup v1). */
void sim_task_move(struct sim_task *t, struct sim_memcg *g);

/* The running task sleeps ns (waiting, not using a CPU). Outside a task:
 * sim_advance(). */
void sim_sleep(struct sim_machine *m, uint64_t ns);
/* The running task uses ns of CPU: longer when more tasks want CPU than
 * the machine has. sim_cpu() is the task's own work (user time),
 * sim_kernel_cpu() work the kernel does for it (system time). */
void sim_cpu(struct sim_machine *m, uint64_t ns);
void sim_kernel_cpu(struct sim_machine *m, uint64_t ns);
/* The running task does a disk transfer of `pages` pages; the disk serves
 * requests one at a time in order. Returns the ns it waited. */
uint64_t sim_disk_io(struct sim_machine *m, uint64_t pages);

/* The running task sleeps on q until woken, or timeout_ns passed
 * (SIM_UNLIMITED: no timeout). True when woken. */
bool sim_wait(struct sim_machine *m, struct sim_waitq *q,
	      uint64_t timeout_ns);
/* Wakes every task sleeping on q (at the current time). */
void sim_wake_all(struct sim_machine *m, struct sim_waitq *q);

/* Per task accounting, for workloads and reports. */
struct sim_task_stats {
	uint64_t direct_reclaim_ns;    /* in reclaim at a limit (memcg or
					  machine) */
	uint64_t throttle_ns;          /* slept above memory.high */
	uint64_t throttle_count;       /* throttle sleeps */
	uint64_t throttle_max_ns;      /* the longest throttle sleep */
	uint64_t throttle_unjust_count; /* throttle sleeps taken although no
					  level was above its high after
					  reclaim (the 5.6 defect) */
	uint64_t stall_ns;             /* memstall: reclaim, refault I/O,
					  throttling (PSI) */
	uint64_t swapout_pages;        /* anon pages swapped out by the
					  reclaims the task ran (direct,
					  over high, proactive) */
	uint64_t user_ns;              /* CPU used in sim_cpu() */
	uint64_t sys_ns;               /* CPU used in the kernel: faults,
					  sim_kernel_cpu(), the work of the
					  reclaims the task runs, direct or
					  proactive (not their waits) */
};
const struct sim_task_stats *sim_task_stats(const struct sim_task *t);

/* ------------------------------------------------------------- groups */

/* Memory cgroup knobs, in pages; SIM_UNLIMITED for none. */
enum sim_knob {
	SIM_KNOB_MAX = 0,
	SIM_KNOB_HIGH,
	SIM_KNOB_LOW,
	SIM_KNOB_MIN,
	SIM_KNOB_SOFT,    /* the kernel's soft limit (S2) */
	SIM_NR_KNOBS,
};

/* The kernel era of memory.high's reclaim and penalty on the return to
 * user space (mm/memcontrol.c mem_cgroup_handle_over_high(),
 * calculate_overage(), calculate_high_delay()), the default:
 * KERNEL, since 5.8: no penalty at or below high, and reclaim retried
 * before the task sleeps; BUGGY_56, 5.6: one reclaim, and a level (the
 * group or an ancestor) whose usage is below its high gives a wrapped
 * overage, so the task sleeps the 2 s maximum after reclaim brought it
 * under high (S3). */
enum sim_high_mode {
	SIM_HIGH_KERNEL = 0,
	SIM_HIGH_BUGGY_56 = 1,
};

/* How the kernel charges a huge page that does not fit (S5; mm/memory.c
 * and mm/huge_memory.c, do_huge_pmd_anonymous_page() -> the charge of a
 * 512-page folio, which falls back to small pages when it fails), the
 * default: OLD, 3.17: reclaim in SWAP_CLUSTER_MAX batches while the
 * group has no room for even one small page, then fail; FULL, since the
 * 2014 fix: reclaim the whole 512-page goal, drain the stocks and try
 * once more, then fail (__GFP_NORETRY). */
enum sim_thp_mode {
	SIM_THP_OLD = 0,
	SIM_THP_FULL = 1,
};

/* Soft-limit reclaim under machine pressure (S2). NONE: soft limits are
 * ignored; OLD: before each priority of global reclaim, a separate pass
 * at priority 0 over the group furthest above its soft limit
 * (mm/memcontrol.c mem_cgroup_soft_limit_reclaim(), cgroup v1's since
 * 2.6.32); REWORKED: inside normal reclaim, the groups above their soft
 * limit first, then all, at the same priority (Michal Hocko's 2013
 * rework, not merged). */
enum sim_soft_mode {
	SIM_SOFT_NONE = 0,
	SIM_SOFT_OLD = 1,
	SIM_SOFT_REWORKED = 2,
};

enum sim_counter {
	SIM_PGFAULT = 0,
	SIM_PGMAJFAULT,
	SIM_PGSCAN,
	SIM_PGSTEAL,
	SIM_PGSCAN_DIRECT,
	SIM_PGSTEAL_DIRECT,
	SIM_PGACTIVATE,
	SIM_PGDEACTIVATE,
	SIM_PGALLOC,
	SIM_PSWPIN,
	SIM_PSWPOUT,
	SIM_REFAULT_ANON,
	SIM_REFAULT_FILE,
	SIM_ACTIVATE_ANON,
	SIM_ACTIVATE_FILE,
	SIM_THP_FAULT_ALLOC,
	SIM_THP_FAULT_FALLBACK,
	SIM_THP_SWPOUT,                /* anon pages swapped out by reclaim
					  for huge-page charges */
	SIM_FAILCNT,                   /* charges that met max */
	SIM_EV_LOW,                    /* memory.events */
	SIM_EV_HIGH,
	SIM_EV_MAX,
	SIM_EV_OOM,
	SIM_EV_OOM_KILL,
	SIM_NR_COUNTERS,
};

enum sim_lru {
	SIM_LRU_INACTIVE_ANON = 0,
	SIM_LRU_ACTIVE_ANON,
	SIM_LRU_INACTIVE_FILE,
	SIM_LRU_ACTIVE_FILE,
	SIM_NR_LRU,
};

/* The root group "/" of the machine. */
struct sim_memcg *sim_root(struct sim_machine *m);
/* Creates the group at `path` ("/a/b"; its parent must exist). -EEXIST,
 * -ENOENT (no parent), -EINVAL, -ENOSPC (SIM_MAX_GROUPS), -ENOMEM. */
int sim_memcg_create(struct sim_machine *m, const char *path,
		     struct sim_memcg **ret);
/* The group at path, or NULL. */
struct sim_memcg *sim_memcg_find(struct sim_machine *m, const char *path);
const char *sim_memcg_path(const struct sim_memcg *g);
/* The group's id: 0 for the root, below SIM_MAX_GROUPS, never reused. */
unsigned sim_memcg_id(const struct sim_memcg *g);
struct sim_memcg *sim_memcg_parent(const struct sim_memcg *g);

/* Sets a knob, in pages. Lowering max below usage reclaims down to it at
 * once (as a write to memory.max does), in the running task or, outside
 * tasks, advancing the clock; -EBUSY when reclaim cannot get there (the
 * limit is then left as it was, as cgroup v1 does). */
int sim_memcg_set(struct sim_memcg *g, int knob, uint64_t pages);
uint64_t sim_memcg_get(const struct sim_memcg *g, int knob);
/* The effective low and min of g, in pages, as a reclaim rooted at root
 * (an ancestor of g, or g) sees them: mm/memcontrol.c,
 * mem_cgroup_calculate_protection(root, g), without
 * memory_recursiveprot (lib/cgroupfs/protection.c). The root gets none, its
 * children their own settings. Every value is read as it is now: g's and
 * each ancestor's usage and settings, and the parents' children_low_usage
 * and children_min_usage, which charge, uncharge, sim_memcg_set() and
 * sim_memcg_remove() keep (propagate_protected_usage()); O(depth). */
void sim_memcg_protection(const struct sim_memcg *root,
			  const struct sim_memcg *g, uint64_t *elow,
			  uint64_t *emin);
/* The smallest max of g and its ancestors. */
uint64_t sim_memcg_binding_max(const struct sim_memcg *g);
/* The group whose max is sim_memcg_binding_max(g): the nearest of g and
 * its ancestors with the smallest max (g itself when none has one), and
 * how many levels above g it is. */
const struct sim_memcg *sim_memcg_binding_group(const struct sim_memcg *g,
					       unsigned *levels);
/* The smallest high of g and its ancestors. */
uint64_t sim_memcg_binding_high(const struct sim_memcg *g);
/* Removes the group (rmdir): -EBUSY while it has tasks or live
 * children, -EBUSY for the root, -ENOENT if removed already. It is found
 * by no path from then on (its path may be created again, as a new
 * group), its PSI triggers are closed (their fds poll POLLHUP), its
 * threshold and events watchers run once, and its charges stay until
 * reclaim from an ancestor frees them (an offline memcg). */
int sim_memcg_remove(struct sim_memcg *g);
bool sim_memcg_removed(const struct sim_memcg *g);

/* The kernel's behaviours the scenarios compare, machine-wide: enum
 * sim_high_mode, enum sim_thp_mode, enum sim_soft_mode. */
void sim_memcg_set_high_mode(struct sim_machine *m, int mode);
void sim_memcg_set_thp_mode(struct sim_machine *m, int mode);
void sim_memcg_set_soft_mode(struct sim_machine *m, int mode);

/* Usage in pages, hierarchical (the group and its descendants). */
uint64_t sim_memcg_usage(const struct sim_memcg *g);
/* Pages on an LRU list, dirty and under writeback: the group and its
 * descendants. */
uint64_t sim_memcg_lru(const struct sim_memcg *g, int lru);
uint64_t sim_memcg_dirty(const struct sim_memcg *g);
uint64_t sim_memcg_writeback(const struct sim_memcg *g);
/* A counter, hierarchical. */
uint64_t sim_memcg_counter(const struct sim_memcg *g, int counter);
/* A counter of the group alone (memory.events.local). */
uint64_t sim_memcg_counter_local(const struct sim_memcg *g, int counter);
/* The highest usage since creation, hierarchical, pages (memory.peak). */
uint64_t sim_memcg_peak(const struct sim_memcg *g);
/* Anonymous pages of g's subtree out in swap (memory.swap.current). */
uint64_t sim_memcg_swap(const struct sim_memcg *g);
/* PSI: total stall time of the group's tasks, some and full, in ns. */
void sim_memcg_psi(const struct sim_memcg *g, uint64_t *some_ns,
		   uint64_t *full_ns);
/* PSI: avg10, avg60 and avg300 of some (full false) or full, in ppm of
 * the time, as kernel/sched/psi.c computes them: one sample of the stall
 * share per 2 s period of virtual time, decayed with EXP_10s, EXP_60s
 * and EXP_300s, rounded to the two decimals of a percent the kernel
 * prints. */
void sim_memcg_psi_avg(const struct sim_memcg *g, bool full,
		       uint32_t avg_ppm[3]);
/* A PSI trigger (kernel/sched/psi.c psi_trigger_create()): returns a new
 * fd (O_CLOEXEC, non-blocking; the caller's to close) that receives one
 * message each time the stall time of some (full false) or full within a
 * moving window of window_ns reaches threshold_ns, at most once per
 * window, and no new message while the last is unread. The kernel's fd
 * polls POLLPRI and is consumed by the poll; this one, the read end of an
 * AF_UNIX socket pair, polls POLLIN until the message is read, and
 * POLLHUP once the group is removed or the machine freed (POLLERR on the
 * kernel's). Checked whenever the group's stall state changes or its
 * pressure is read. Closing the fd removes the trigger. -EINVAL (0 or
 * threshold above window), -ENOENT (removed), -ENOMEM, -EMFILE. */
int sim_memcg_psi_trigger_open(struct sim_memcg *g, bool full,
			       uint64_t threshold_ns, uint64_t window_ns);

/* A usage threshold: fn(arg) runs when usage crosses `pages` either way.
 * One per owner pointer; pages SIM_UNLIMITED removes it. -ENOMEM. */
typedef void (*sim_event_fn)(void *arg);
int sim_memcg_set_threshold(struct sim_memcg *g, void *owner,
			    uint64_t pages, sim_event_fn fn, void *arg);
/* fn(arg) runs when a memory.events counter grows (one per owner). */
int sim_memcg_set_events_fn(struct sim_memcg *g, void *owner,
			    sim_event_fn fn, void *arg);

/* ------------------------------------------------------------- memory */

/* An object: a file (page cache) or an anonymous region. Index into the
 * machine's object table. */
typedef uint32_t sim_obj;

sim_obj sim_file_new(struct sim_machine *m, uint64_t pages);
sim_obj sim_anon_new(struct sim_machine *m, uint64_t pages);
/* Unmaps and frees every page of the object (unlink, munmap, exit):
 * uncharges it, drops its shadow entries. The object can be reused by
 * sim_file_new() afterwards. */
void sim_obj_free(struct sim_machine *m, sim_obj o);
/* The same, keeping the object, empty, at its size (truncate_inode_pages
 * of an unlinked file, a munmap of a whole region mapped again later):
 * every page freed at once, dirty or under writeback too, every shadow
 * and swap entry dropped. Tasks may be using the object meanwhile. */
void sim_obj_truncate(struct sim_machine *m, sim_obj o);
uint64_t sim_obj_pages(const struct sim_machine *m, sim_obj o);
uint64_t sim_obj_resident(const struct sim_machine *m, sim_obj o);

/* The running task reads pages [off, off + n) of file o: hits mark the
 * page referenced (or activate it, as mark_page_accessed does on a second
 * touch); misses are read from disk in readahead windows of at most
 * costs.readahead_pages (0: one request), charged to the task's group, the
 * pages locked until read, and the read counts a major fault (a refault
 * per page when a shadow entry says so). Returns 0, or -ENOMEM when the group is OOM (nothing is
 * left charged for the failed pages). */
int sim_file_read(struct sim_machine *m, sim_obj o, uint64_t off,
		  uint64_t n);
/* Writes pages: as read without the disk read for whole pages, and the
 * pages become dirty. Dirty pages are written back by the flusher and by
 * reclaim; a writer above the dirty limit waits (balance_dirty_pages). */
int sim_file_write(struct sim_machine *m, sim_obj o, uint64_t off,
		   uint64_t n);
/* Writes back every dirty page of o and waits for it (fsync). */
void sim_file_sync(struct sim_machine *m, sim_obj o);
/* posix_fadvise(POSIX_FADV_DONTNEED) on all of file o: starts writeback
 * of its dirty pages without waiting, frees its clean pages and drops
 * its shadow entries (so reading it again is no refault). */
void sim_file_drop(struct sim_machine *m, sim_obj o);
/* The running task touches pages [off, off + n) of anonymous region o:
 * absent pages are faulted in (a swapped-out one is read back: a major
 * fault). With thp, each aligned 512-page range still wholly absent is
 * first tried as one huge page charge (thp_fault_alloc or
 * thp_fault_fallback). Returns 0 or -ENOMEM (OOM). */
int sim_anon_touch(struct sim_machine *m, sim_obj o, uint64_t off,
		   uint64_t n, bool thp);

/* Pages of the machine free and in use. */
uint64_t sim_free_pages(const struct sim_machine *m);

/* ------------------------------------------------------------- reclaim */

/* Why reclaim runs, for the cost accounting. */
enum sim_reclaim_ctx {
	SIM_RECLAIM_LIMIT = 0,    /* direct, at a group's max */
	SIM_RECLAIM_HIGH,         /* over high, on return to user */
	SIM_RECLAIM_GLOBAL,       /* direct, the machine is out of memory */
	SIM_RECLAIM_KSWAPD,       /* background, machine watermarks */
	SIM_RECLAIM_PROACTIVE,    /* memory.reclaim / the library */
};

struct sim_reclaim_result {
	uint64_t scanned;
	uint64_t reclaimed;
	uint64_t swapped;         /* of reclaimed: anon pages to swap */
	uint64_t ns;              /* virtual time it cost */
};

/* One try_to_free_mem_cgroup_pages(): reclaims up to nr pages from g's
 * subtree, priority from SIM_DEF_PRIORITY down, swapping anon only when
 * may_swap and there is swap; only clean cache when clean_only. Runs in
 * the current task (its time advances by the cost, and the stall counts
 * for PSI) or, outside tasks, advances the clock. */
void sim_reclaim(struct sim_machine *m, struct sim_memcg *g, uint64_t nr,
		 int why, bool may_swap, bool clean_only,
		 struct sim_reclaim_result *res);
/* vm.swappiness, the default of every reclaim. */
#define SIM_SWAPPINESS_DEFAULT 60
/* sim_reclaim() with a swappiness of its own, 0 .. 200 (memory.reclaim's
 * swappiness=, Linux 6.11): anon and file lists are scanned in the shares
 * swappiness and 200 - swappiness (get_scan_count()'s SCAN_FRACT), and a
 * group's reclaim at swappiness 0 scans page cache only (SCAN_FILE). */
void sim_reclaim_swappiness(struct sim_machine *m, struct sim_memcg *g,
			    uint64_t nr, int why, bool may_swap,
			    bool clean_only, int swappiness,
			    struct sim_reclaim_result *res);

/* Clean page cache of g's subtree that reclaim could free without I/O. */
uint64_t sim_memcg_clean_cache(const struct sim_memcg *g);

/* ------------------------------------------------------------- checks */

/* Verifies the model's invariants (usage is the sum of charged pages at
 * every level, LRU sizes match their lists, pgsteal <= pgscan, usage
 * <= max + the kernel's slack, each group's children_low_usage and
 * children_min_usage are the sums over its live children). Returns 0 or -EIO, with the first broken
 * invariant in buf. */
int sim_check_invariants(const struct sim_machine *m, char *buf,
			 size_t len);

/* ------------------------------------------------------------- handle */

/* The simulator's backend table (backend.c), registered with the core
 * under the name "sim"; its open takes the struct mr_sim bound to the
 * context. */
struct mri_backend;
extern const struct mri_backend mri_backend_sim;

/* The public mr_sim_t: a machine and what the library keeps on it. One
 * thread drives a simulator, its groups and its contexts. */
struct mr_sim {
	struct sim_machine *m;
	unsigned open_groups;           /* backend handles open on it */
	void *keeper[SIM_MAX_GROUPS];   /* margin keeper per group id */
	struct sim_waitq events;        /* the library worker task waits */
	uint64_t events_pending;
};

/* The library's margin worker as a task of sim's machine (libworker.c):
 * runs mr_ctx_worker_dispatch(ctx) in virtual time whenever a group of
 * ctx on sim signals an event, and every MR_WORKER_SAFETY_NS. NULL on
 * allocation failure. Stop it before the workload's end, or sim_run()
 * with no bound never returns; the task frees itself at its next
 * wake-up. */
struct sim_libworker;
struct sim_libworker *sim_libworker_start(struct mr_sim *sim, mr_ctx_t *ctx);
void sim_libworker_stop(struct sim_libworker *w);

#endif /* MR_SIM_H */
