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

#endif /* MR_SIM_WORKLOAD_H */
