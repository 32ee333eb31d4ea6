/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workloads of the simulator: tasks that reproduce what the programs of
 * the reference experiments did to memory, built on sim.h only, so that
 * scenarios, the trace replay and the tests can reuse them. One section
 * per workload, each implemented in workload-<name>.c.
 */
#ifndef MR_SIM_WORKLOAD_H
#define MR_SIM_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

/* ------------------------------------------------------------- dd */

/* workload-dd.c: dd of one new file, read (if=) or written (of=) from
 * start to end in blocks of block_pages (bs=). A read fetches every block
 * from the disk and leaves the file in clean page cache charged to the
 * task's group; a write dirties the cache (throttled by the dirty limits,
 * written back by the flusher) and, with fsync (conv=fsync), waits at the
 * end until all of it is written back, so it too leaves clean cache. */
struct sim_dd {
	/* Set by the caller. */
	uint64_t file_pages;      /* the file's size, > 0 */
	uint64_t block_pages;     /* pages per read or write call, > 0 */
	bool write;
	bool fsync;               /* write only */
	/* Set by the workload. */
	struct sim_machine *m;
	sim_obj file;             /* the file, which outlives the task */
	int result;               /* 0, or -ENOMEM: the group ran out */
	uint64_t done_ns;         /* when the task ended */
};

/* Creates dd's file and spawns the task in group g (NULL: the root) at
 * start_ns. dd must stay valid until the task has ended. Returns 0,
 * -EINVAL (a size of 0) or -ENOMEM. */
int sim_dd_spawn(struct sim_machine *m, struct sim_memcg *g,
		 uint64_t start_ns, struct sim_dd *dd);

/* ------------------------------------------------------------- backup */

/* workload-backup.c: tar piping into gzip (S3). tar reads a tree of files
 * one after the other and copies them into a pipe; gzip takes pages out
 * of the pipe, compresses them and writes the archive. Both run in one
 * group; the caller runs the machine, the result fills as they run.
 *
 * With a library handle, tar is a program that accounts what it reads
 * through the library's fast path: before each read it asks
 * mr_group_charge() for the pages the read brings into the group and
 * sleeps the delay it is given (the library's throttle curve; the kernel
 * throttles with its own as well), and gives a file's pages back
 * (mr_group_uncharge()) once it has read the file to its end; from then
 * on the library sees them in the group's usage, for as long as the
 * kernel keeps them cached. A verdict that charges nothing (RECLAIM,
 * REFUSE: the estimate above the limit) leaves the read to the kernel's
 * limit. */
struct sim_backup_params {
	uint64_t files;          /* files in the tree */
	uint64_t tree_pages;     /* their mean total size (sizes are drawn
				    from an exponential distribution) */
	uint64_t read_pages;     /* tar's reads, as readahead makes them */
	uint64_t pipe_pages;     /* what the pipe holds */
	uint64_t compress_ns;    /* gzip's CPU per input page */
	uint64_t ratio;          /* input pages per archive page */
	uint64_t write_pages;    /* gzip's writes to the archive */
	mr_group_t *lib;         /* tar's handle on the group, or NULL: tar
				    asks the library nothing */
};

/* The delays the library gave tar (MR_CHARGE_DELAY), slept in full. A
 * delay counts as given at or below high when the group's usage plus the
 * batch the fast path drew for the charge (max(MR_CHARGE_BATCH_BYTES,
 * bytes), as try_charge_memcg() checks high with its batch charged) was
 * at or below the group's binding high. */
struct sim_backup_delays {
	uint64_t count, ns, max_ns;
	uint64_t at_or_below_high;
};

struct sim_backup_result {
	uint64_t start_ns, end_ns;     /* end: gzip wrote its last page */
	uint64_t read_pages;           /* of the tree */
	uint64_t archive_pages;
	int error;                     /* first error of a task, or 0 */
	struct sim_task_stats tar, gzip; /* at each task's end */
	struct sim_backup_delays lib;  /* tar's library delays */
};

struct sim_backup;

/* Creates the tree and the archive (files of the machine) and starts the
 * two tasks in group g. NULL on bad parameters or when nothing could be
 * started; a task that could not be started shows as -ENOMEM in the
 * result's error. */
struct sim_backup *sim_backup_start(struct sim_machine *m,
				    struct sim_memcg *g,
				    const struct sim_backup_params *p);
/* What the backup did; complete once both tasks have ended. */
const struct sim_backup_result *sim_backup_result(const struct sim_backup *b);
/* Frees the workload's state (not the machine's files). NULL is fine. */
void sim_backup_free(struct sim_backup *b);

/* ------------------------------------------------------------- thp */

/* workload-thp.c: a file writer beside an anonymous faulter (S5). The
 * faulter maps a range, touches it in 4 KiB steps (with THP, each aligned
 * 2 MiB range is first tried as a huge page) and unmaps it; the writer
 * writes a file linearly, in write_pages writes, starting over (a new
 * file) at its end, until the faulter is done. The faulter starts once
 * the writer has written prefill_pages, so the group is full of cache.
 * With a library handle, the faulter is a program that asks the library
 * before each huge-page fault (sim_thp_advise()). */
struct sim_thp_params {
	uint64_t range_pages;    /* the faulter's range, a multiple of 512 */
	uint64_t touch_ns;       /* the faulter's work per page touched */
	bool thp;
	uint64_t file_pages;     /* the writer's file */
	uint64_t write_pages;
	uint64_t write_ns;       /* the writer's mean work per page written
				    (each write's is drawn exponentially) */
	uint64_t prefill_pages;
	mr_group_t *lib;         /* the faulter's handle on the group (THP
				    advice), or NULL: every huge-page fault
				    is the kernel's alone */
};

struct sim_thp_result {
	uint64_t start_ns;             /* the faulter started */
	uint64_t end_ns;               /* the faulter ended */
	uint64_t written_pages;        /* by the writer, in all */
	uint64_t pgalloc_pages;        /* allocated in the group while the
					  faulter ran */
	uint64_t advice_swapout_pages; /* anon swapped out by the reclaims
					  the library's advice asked for */
	int error;                     /* first error of a task, or 0 */
	struct sim_task_stats faulter, writer; /* at each task's end */
};

/* What a program that asks the library does before it faults a 2 MiB
 * range in (examples/alloc-hook: hook_thp_prepare(), hook_thp_apply()),
 * in the running task of m: it refreshes the group's fast path
 * (mr_group_charge_refresh(): the advice draws nothing, so it reads no
 * usage itself, and a program that charges nothing through the library
 * gives it no other; advice on a usage as old as the fast path's 10 ms
 * interval let S5's small group fault huge pages that no longer fitted,
 * and the kernel's charge swapped for them), asks
 * mr_group_thp_advise_reclaim() for 2 MiB and, for
 * MR_THP_ADVICE_RECLAIM_THEN_HUGE, reclaims the shortfall
 * (mr_group_reclaim(): the backend's reclaim, the model's memory.reclaim,
 * run by the task; the anon pages it swaps out are added to
 * *swapped_pages). Returns 1 to fault the range as a huge page
 * (MADV_HUGEPAGE: the kernel's charge of it decides, sim_anon_touch()
 * with thp), 0 for small pages (MADV_NOHUGEPAGE: the kernel tries no huge
 * page and counts no fallback), or a negative errno of the library (a
 * reclaim that freed nothing, -EAGAIN, is not one: the fault goes on). */
int sim_thp_advise(struct sim_machine *m, mr_group_t *lib,
		   uint64_t *swapped_pages);

struct sim_thp;

/* Starts the writer and the faulter in group g. NULL on allocation
 * failure or bad parameters. */
struct sim_thp *sim_thp_start(struct sim_machine *m, struct sim_memcg *g,
			      const struct sim_thp_params *p);
const struct sim_thp_result *sim_thp_result(const struct sim_thp *w);
void sim_thp_free(struct sim_thp *w);

/* ------------------------------------------------------------- build */

/* workload-build.c: a parallel build (make -jN): `jobs` tasks take the
 * build's compilation units one after another, as make hands them out. A
 * unit reads its source file (cold: from the disk) and the build's shared
 * headers (page cache re-read by every unit, so they stay hot), runs the
 * compiler (its anonymous memory walked compiler_passes times, each walk
 * followed by a share of the unit's CPU time), and writes its object file
 * (dirty page cache, written back by the flusher). A compiler's memory
 * and each walk's CPU time vary, uniformly between half and one and a
 * half times their mean.
 *
 * make runs a compiler process per unit. A job may instead keep one
 * compiler's memory for compiler_reuse units (faulted in by the first,
 * freed after the last): the same memory in use at any time for a
 * fraction of the page faults, which is what a simulation of a long build
 * costs. */
struct sim_build_params {
	unsigned jobs;             /* make -j */
	unsigned units;            /* compilation units of the build */
	uint64_t source_pages;     /* a unit's source file */
	uint64_t header_pages;     /* the shared headers, read by each unit */
	uint64_t object_pages;     /* a unit's object file */
	uint64_t compiler_pages;   /* anonymous memory, mean */
	unsigned compiler_passes;  /* walks over it per unit, >= 1 */
	unsigned compiler_reuse;   /* units a compiler's memory serves, >= 1
				      (1: a process per unit, as make) */
	uint64_t user_ns;          /* compiler CPU per unit (user time),
				      mean */
	uint64_t kernel_ns;        /* kernel CPU per unit that the model
				      does not derive itself: fork, exec,
				      exit, system calls (system time) */
};

/* What a build measured, as /usr/bin/time reports it for make. */
struct sim_build_stats {
	uint64_t elapsed_ns;       /* start to the end of the last job */
	uint64_t user_ns;          /* summed over the jobs */
	uint64_t sys_ns;           /* kernel time: the per-unit kernel work,
				      faults, direct reclaim */
	unsigned units_done;
	int error;                 /* 0, or the first failure (-ENOMEM) */
};

struct sim_build;

/* Starts the build in group g at start_ns: its files, then its jobs as
 * tasks of g. done(arg), if not NULL, runs in the last job to end.
 * -EINVAL (no jobs, units, passes or reuse), -ENOMEM. */
int sim_build_start(struct sim_machine *m, struct sim_memcg *g,
		    const struct sim_build_params *p, uint64_t start_ns,
		    void (*done)(void *arg), void *arg,
		    struct sim_build **ret);
/* Its figures; final once every job has ended. */
const struct sim_build_stats *sim_build_stats(const struct sim_build *b);
/* Frees the build (its files stay in the machine). NULL is a no-op. */
void sim_build_free(struct sim_build *b);

/* ------------------------------------------------------------- web */

/* A web server under a load generator (ab -c clients -n requests): each
 * client sends its next request as soon as the last one is answered. A
 * request runs the server's code (CPU), reads one file of the working set
 * through the page cache (misses are read from the disk and charged to
 * the group) and sends it (CPU per page). The file is drawn from a normal
 * distribution over the files' indexes, mean at the middle ("normally
 * distributed access"), so a band of hot files around the middle is read
 * far more often than the ends. Every draw of a request is made when it
 * starts, in the order requests start: two runs with one seed serve the
 * same sequence of requests whatever the policy, and differ only by what
 * the policy changed. */
struct sim_web_params {
	unsigned files;            /* files of the working set, > 0 */
	uint64_t file_pages;       /* pages per file, > 0 */
	double sd_files;           /* sd of the file index, in files, > 0 */
	uint64_t read_pages;       /* pages a request reads, at a random
				      offset; 0 (or file_pages): the
				      whole file */
	unsigned clients;          /* concurrent clients, > 0 */
	uint64_t requests;         /* over all clients, > 0 */
	uint64_t cpu_request_ns;   /* server CPU per request: mean */
	uint64_t cpu_request_sd_ns; /* and sd (normal, cut at 0) */
	uint64_t cpu_page_ns;      /* server CPU per page sent */
};

struct sim_web_result {
	uint64_t done;             /* requests answered */
	uint64_t start_ns, end_ns; /* first request sent, last answered */
	int error;                 /* first failed read (-ENOMEM), or 0 */
	/* Summed over the clients, taken as each ends. */
	struct sim_task_stats clients;
};

struct sim_web;

/* Creates the files (objects of the machine, left to it) and starts the
 * clients as tasks of group g (NULL: the root) at start_ns. done(arg), if
 * not NULL, runs in the last client to end (to stop a worker task, say).
 * NULL on bad parameters or allocation failure. */
struct sim_web *sim_web_start(struct sim_machine *m, struct sim_memcg *g,
			      const struct sim_web_params *p,
			      uint64_t start_ns, void (*done)(void *arg),
			      void *arg);
/* What the clients measured; final once the last client has ended. */
const struct sim_web_result *sim_web_result(const struct sim_web *w);
/* The latency of the answered requests, in virtual ns: their mean, and
 * the pct-th percentile as ab reports it ("percentage of the requests
 * served within a certain time": the sorted latencies' element at
 * done * pct / 100; 100 is the longest). 0 before any answer. */
double sim_web_mean_ns(const struct sim_web *w);
uint64_t sim_web_percentile_ns(struct sim_web *w, unsigned pct);
/* Frees the workload's state (not the machine's files). NULL is fine. */
void sim_web_free(struct sim_web *w);

#endif /* MR_SIM_WORKLOAD_H */
