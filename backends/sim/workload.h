/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workloads of the simulator: tasks that reproduce what the programs of
 * the reference experiments did to memory, built on sim.h only, so that
 * scenarios, the trace replay and the tests can reuse them. One section
 * per workload, each implemented in workload-<name>.c.
 */
#ifndef MR_SIM_WORKLOAD_H
#define MR_SIM_WORKLOAD_H

#include <stdint.h>

#include "sim.h"

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
