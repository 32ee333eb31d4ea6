/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workloads of the simulator: tasks that behave like the programs of the
 * reference experiments, built on the model's interface (sim.h) only, so
 * that the scenarios and the trace replay can share them. One section per
 * workload, each in its workload-<name>.c.
 */
#ifndef MR_SIM_WORKLOAD_H
#define MR_SIM_WORKLOAD_H

#include <stdint.h>

#include "sim.h"

/* ------------------------------------------------------------- build */

/* A parallel build (make -jN): `jobs` tasks take the build's compilation
 * units one after another, as make hands them out. A unit reads its
 * source file (cold: from the disk) and the build's shared headers (page
 * cache re-read by every unit, so they stay hot), runs the compiler (its
 * anonymous memory walked compiler_passes times, each walk followed by a
 * share of the unit's CPU time), and writes its object file (dirty page
 * cache, written back by the flusher). The compiler's memory and CPU time
 * vary from unit to unit, uniformly between half and one and a half times
 * their mean.
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

#endif /* MR_SIM_WORKLOAD_H */
