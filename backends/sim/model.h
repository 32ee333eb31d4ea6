/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The model's own structures, shared by its files (not by workloads). */
#ifndef MR_SIM_MODEL_H
#define MR_SIM_MODEL_H

#include "sim.h"

/* ------------------------------------------------------------- pages */

#define PG_REFERENCED  (1u << 0)  /* touched since last scanned */
#define PG_DIRTY       (1u << 1)
#define PG_WRITEBACK   (1u << 2)
#define PG_ANON        (1u << 3)
#define PG_WORKINGSET  (1u << 4)  /* refaulted while in the workingset */
/* A page cache page being read (PG_locked, !PG_uptodate): locked from
 * its insertion until its read completes at wb_done_ns (UINT64_MAX while
 * its request is not submitted yet). Reclaim skips it (trylock_page() in
 * shrink_page_list()), a reader waits for it (lock_page()). The flag is
 * cleared lazily: a page whose time has passed is unlocked. */
#define PG_LOCKED      (1u << 5)

struct sim_page {
	uint32_t prev, next;      /* LRU list links; SIM_NOPAGE at ends */
	sim_obj obj;
	uint32_t index;           /* page offset in the object */
	uint16_t memcg;           /* charged group's id */
	uint8_t lru;              /* enum sim_lru; 0xff when free */
	uint8_t flags;
	uint64_t wb_done_ns;      /* PG_WRITEBACK: when the write completes;
				     PG_LOCKED: when the read does */
};

/* A slot of an object: resident (pfn) or not, with its shadow entry. */
#define SLOT_EMPTY    0u
#define SLOT_SWAPPED  (1ULL << 63) /* anon: the page is in swap */
struct sim_slot {
	uint32_t pfn;             /* SIM_NOPAGE when not resident */
	uint64_t shadow;          /* evicting group's id and eviction
				     age, + 1; 0 for none; SLOT_SWAPPED
				     may be or'ed in */
};

struct sim_object {
	bool used;
	bool anon;
	uint64_t pages;
	uint64_t resident;
	uint64_t dirty;           /* pages dirty */
	/* On the machine's list of files with dirty pages, in the order
	 * they were first dirtied (the flusher's b_dirty list). */
	uint32_t dirty_prev, dirty_next;
	/* No page below this index is dirty: writeback starts there, as
	 * the kernel's looks up only pages tagged dirty. */
	uint64_t dirty_from;
	struct sim_slot *slots;
};

/* ------------------------------------------------------------- groups */

struct sim_threshold {
	void *owner;
	uint64_t pages;
	bool above;               /* usage was above at the last check */
	sim_event_fn fn;
	void *arg;
};

struct sim_evwatch {
	void *owner;
	sim_event_fn fn;
	void *arg;
};

#define SIM_MAX_WATCH 8
#define SIM_MEMCG_HASH 4096 /* buckets of the path index (power of 2) */

/* A PSI trigger (kernel/sched/psi.c struct psi_trigger and its
 * psi_window): the stall growth of one state within a moving window. */
struct sim_psi_trigger {
	struct sim_psi_trigger *next;
	int fd;                   /* the model's end of the socket pair */
	bool full;
	uint64_t threshold_ns;
	uint64_t window_ns;
	uint64_t win_start_ns, win_start_value, win_prev_growth;
	uint64_t last_total;      /* the total at the last check */
	uint64_t last_event_ns;   /* 0: never signalled */
	bool pending_event;       /* a breach waits for the rate limit */
};

struct sim_memcg {
	struct sim_machine *m;
	uint16_t id;
	char *path;
	struct sim_memcg *hash_next; /* machine's memcg_hash chain */
	/* Its first child and its next sibling, removed ones included. */
	struct sim_memcg *child, *sibling;
	struct sim_memcg *parent;
	uint64_t knob[SIM_NR_KNOBS];
	uint64_t usage;           /* hierarchical, pages */
	uint64_t self_usage;      /* own pages only */
	/* Its part of its parent's children_low_usage and children_min_usage:
	 * min(usage, low) and min(usage, min), 0 once removed; and those sums
	 * over its own children, kept at every change of a child's usage,
	 * low, min or removal (mm/page_counter.c propagate_protected_usage()),
	 * so that effective protection reads no siblings. Pages. */
	uint64_t low_usage, min_usage;
	uint64_t children_low_usage, children_min_usage;
	uint32_t lru_head[SIM_NR_LRU]; /* most recent end */
	uint32_t lru_tail[SIM_NR_LRU]; /* oldest end */
	uint64_t lru_size[SIM_NR_LRU];
	uint64_t dirty, writeback;
	uint64_t nonresident_age; /* evictions and activations: the clock
				     of shadow entries (mm/workingset.c) */
	uint64_t counter[SIM_NR_COUNTERS]; /* own events only */
	unsigned reclaimers;      /* tasks in reclaim of this group now */
	/* Walks of this group's subtree resume after the group the last
	 * one stopped at (the kernel keeps that position in the reclaim
	 * root: mem_cgroup_iter() with a reclaim cookie). A group id. */
	unsigned reclaim_cursor;
	/* PSI (kernel/sched/psi.c, simplified to whole tasks): how many of
	 * the group's tasks are stalled on memory, how many exist, and the
	 * totals. */
	unsigned nr_tasks, nr_stalled;
	uint64_t psi_since_ns;
	uint64_t psi_some_ns, psi_full_ns;
	/* psi.c update_averages(): the end of the current 2 s period, the
	 * totals at the start of it, and avg10/60/300 of some and full in
	 * FIXED_1 units of a percent (include/linux/sched/loadavg.h). */
	uint64_t psi_avg_next_ns;
	uint64_t psi_avg_total[2];
	uint64_t psi_avg[2][3];
	struct sim_psi_trigger *psi_triggers;
	uint64_t peak;            /* highest usage, pages (memory.peak) */
	uint64_t swap_self;       /* own anon pages out in swap */
	bool removed;             /* rmdir'ed: found by no path, its charges
				     stay until reclaimed (an offline memcg) */
	struct sim_threshold thr[SIM_MAX_WATCH];
	struct sim_evwatch evw[SIM_MAX_WATCH];
};

/* ------------------------------------------------------------- tasks */

struct sim_task {
	struct sim_machine *m;
	char name[32];
	struct sim_memcg *memcg;
	sim_task_fn fn;
	void *arg;
	ucontext_t uc;
	void *stack;
	uint64_t wake_ns;
	uint64_t seq;
	size_t heap_pos;          /* SIZE_MAX when not in the run heap */
	struct sim_task *wait_next; /* on a wait queue */
	struct sim_waitq *waiting;
	bool woken;
	bool done;
	unsigned stall_depth;     /* nested memstall sections */
	uint64_t stall_start_ns;
	/* mm/memcontrol.c try_charge(): what is left of the charge batch
	 * the task charged last (the per-CPU stock), and the pages of the
	 * batches it charged while a level was above its high, reclaimed
	 * on its return to user space (memcg_nr_pages_over_high). */
	uint64_t charge_stock;
	uint64_t nr_pages_over_high;
	struct sim_task_stats stats;
	/* In the machine's list of tasks: unlinked in O(1). */
	struct sim_task *all_next, **all_pprev;
};

/* ------------------------------------------------------------- machine */

struct sim_machine {
	struct sim_config cfg;
	struct sim_costs costs;
	uint64_t now;
	uint64_t rng[4];
	/* Tasks: a binary heap on (wake_ns, seq). */
	struct sim_task **heap;
	size_t nheap, heap_cap;
	uint64_t seq;
	struct sim_task *current;
	uint64_t run_until;       /* the bound of the sim_run() running */
	struct sim_task *all_tasks;
	size_t ntasks;            /* in all_tasks */
	ucontext_t main_uc;
	unsigned cpu_busy;        /* tasks in sim_cpu() now */
	uint64_t disk_free_ns;    /* the disk is busy until then */
	sim_obj disk_last_obj;    /* the request queued last, for merging */
	uint64_t disk_last_end;
	/* Pages. */
	struct sim_page *pages;
	uint32_t free_head;
	uint64_t nr_free;
	uint64_t swap_used;
	uint64_t dirty, writeback;
	/* Pages in writeback, in submission order; the disk serves in
	 * order, so their completion times never decrease. An entry whose
	 * page was freed or written again since is skipped. */
	struct sim_wb { uint32_t pfn; uint64_t done_ns; } *wb_queue;
	uint64_t wb_head, wb_tail, wb_cap; /* ring: [head, tail) mod cap */
	struct sim_waitq writeback_wq; /* woken when writeback completes */
	struct sim_waitq pagelock_wq;  /* woken when reads are submitted */
	struct sim_task *flusher, *kswapd;
	bool flusher_idle;        /* asleep with nothing dirty: no timer */
	uint64_t last_old_flush_ns; /* the flusher's last pass for old data */
	struct sim_waitq flusher_wq, kswapd_wq;
	uint64_t wmark_min, wmark_low, wmark_high; /* free pages */
	/* Objects. */
	struct sim_object *objs;
	uint32_t nobjs, objs_cap;
	uint32_t objs_free;       /* no object below it is free */
	uint32_t dirty_head, dirty_tail; /* files with dirty pages */
	/* Groups, by id; [0] is the root. */
	struct sim_memcg *memcg[SIM_MAX_GROUPS];
	unsigned nmemcg;
	/* And by path (chains of hash_next, removed groups included), so
	 * that finding one costs O(1), not O(groups). */
	struct sim_memcg *memcg_hash[SIM_MEMCG_HASH];
	int high_mode, thp_mode, soft_mode;
};

/* machine.c */
/* Queues a disk request for pages [index, index + pages) of object obj
 * (SIM_NOPAGE: not mergeable) without waiting; returns when it
 * completes. */
uint64_t sim_disk_submit(struct sim_machine *m, sim_obj obj, uint64_t index,
			 uint64_t pages);
void sim_stall_begin(struct sim_machine *m);
void sim_stall_end(struct sim_machine *m);
/* The group a charge made now goes to: the current task's, or the root. */
struct sim_memcg *sim_charge_target(struct sim_machine *m);
/* Adds a reclaim pass to the current task's stats: work_ns of work
 * (system time, whoever reclaims: a charging task, kswapd, the library's
 * worker through memory.reclaim) and, for direct reclaim, its work and
 * wait_ns of congestion waits as direct reclaim time. */
void sim_account_reclaim(struct sim_machine *m, bool direct,
			 uint64_t work_ns, uint64_t wait_ns);

/* memcg.c */
void sim_memcg_free_all(struct sim_machine *m);
/* Charges n pages to g and its ancestors, reclaiming at max (direct
 * reclaim in the running task) and throttling above high. huge: one
 * 512-page huge-page charge, which may fail with -ENOMEM without OOM (the
 * caller falls back to small pages). Returns 0 or -ENOMEM. */
int sim_memcg_try_charge(struct sim_machine *m, struct sim_memcg *g,
			 uint64_t n, bool huge);
void sim_memcg_uncharge(struct sim_memcg *g, uint64_t n);
/* Counts an event in g (hierarchical reads sum descendants). */
void sim_memcg_count(struct sim_memcg *g, int counter, uint64_t n);
/* Usage moved: runs threshold callbacks that were crossed. */
void sim_memcg_usage_changed(struct sim_memcg *g);
/* The running task's return to user space after a fault or a system
 * call: memory.high reclaim and throttling for the batches it charged
 * above high (mem_cgroup_handle_over_high()). */
void sim_memcg_handle_high(struct sim_machine *m);
/* Whether a is g or an ancestor of g. */
bool sim_memcg_is_ancestor(const struct sim_memcg *a,
			   const struct sim_memcg *g);
/* A page of the group whose id is in `shadow` (a swapped slot's) left
 * swap (swapped in, or its slot dropped). */
void sim_memcg_swap_uncharge(struct sim_machine *m, uint64_t shadow);
/* PSI bookkeeping when a task starts or stops stalling. */
void sim_memcg_psi_change(struct sim_memcg *g, int stalled_delta,
			  int tasks_delta);

/* page.c */
uint32_t sim_page_alloc(struct sim_machine *m);
/* Frees a page taken off its LRU: uncharges, returns it to the free
 * list. */
void sim_page_release(struct sim_machine *m, uint32_t pfn);
void sim_lru_add(struct sim_machine *m, uint32_t pfn, int lru);
void sim_lru_del(struct sim_machine *m, uint32_t pfn);
/* Makes room on the machine for n pages: wakes kswapd below the low
 * watermark, reclaims directly below min. -ENOMEM when nothing more can
 * be reclaimed (the machine is out of memory). */
int sim_make_room(struct sim_machine *m, uint64_t n);
/* Completes writebacks due by now. */
void sim_writeback_complete(struct sim_machine *m);
/* Starts writeback of page pfn (reclaim or the flusher). */
void sim_writeback_start(struct sim_machine *m, uint32_t pfn,
			 uint64_t done_ns);
/* Evicts a page from its object: leaves a shadow entry (file) or marks
 * it swapped (anon), then releases it. */
void sim_page_evict(struct sim_machine *m, uint32_t pfn);
/* Whether a page can be freed without I/O. */
static inline bool sim_page_clean(const struct sim_page *p)
{
	return !(p->flags & (PG_DIRTY | PG_WRITEBACK | PG_ANON));
}

static inline struct sim_page *sim_page(struct sim_machine *m, uint32_t pfn)
{
	return &m->pages[pfn];
}

/* Whether a page is still being read (PG_LOCKED until its read
 * completes); a page whose read is done is unlocked on the way. */
static inline bool sim_page_locked(const struct sim_machine *m,
				   struct sim_page *p)
{
	if (!(p->flags & PG_LOCKED))
		return false;
	if (p->wb_done_ns > m->now)
		return true;
	p->flags &= ~PG_LOCKED;
	return false;
}

#endif /* MR_SIM_MODEL_H */
