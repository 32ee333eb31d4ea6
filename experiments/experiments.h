/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The experiments on the simulator: the reference scenarios S1-S5 and the
 * replay of traces (docs/trace-format.md), built on the model of
 * backends/sim with the library's policies. A convenience library of the
 * project (libmemreclaim-experiments), linked by mrsim, mr-demo, the
 * tests and the benchmarks; its header is not installed. The conventions
 * are those of <memreclaim.h>.
 */
#ifndef MR_EXPERIMENTS_H
#define MR_EXPERIMENTS_H

#include <stddef.h>
#include <stdint.h>

#include <memreclaim.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a scenario's figures compare with its published reference. */
enum mr_sim_verdict {
	MR_SIM_OUTSIDE = 0,       /* a figure is outside the band */
	MR_SIM_INSIDE = 1,        /* every band holds */
	MR_SIM_NO_REFERENCE = 2,  /* nothing published for these costs */
};

/* Receives one figure of a run: the policy compared ("without",
 * "margin", ...), the figure with its unit in its name ("p99_ms",
 * "elapsed_s", "thp_fault_alloc_count") and its value. The strings are
 * valid during the call only: copy what you keep. */
typedef void (*mr_sim_figure_fn)(const char *policy, const char *figure,
				 double value, void *userdata);

/* The reference scenarios ("S1" .. "S5", docs/simulator.md): the name of
 * the index-th (NULL past the last), the title of one, and the cost set
 * it reproduces by default ("2011"). NULL for an unknown name.
 * MT-safe. */
const char *mr_sim_scenario_name(unsigned index);
const char *mr_sim_scenario_title(const char *name);
const char *mr_sim_scenario_costs(const char *name);

/* Runs the scenario `name` on its own simulated machines with `seed` and
 * the cost set `costs` (NULL: the scenario's default), calls fn (may be
 * NULL) once per figure, stores in *table (may be NULL; free() it) the
 * experiment's table in the reference's form followed by the band check,
 * one line per figure, and in *verdict (may be NULL) an enum
 * mr_sim_verdict. The same seed and costs give the same output, byte for
 * byte. A scenario takes one to a few seconds of CPU. Returns 0. Errors:
 * -EINVAL (unknown scenario or cost set), -ENOMEM, -EIO (an invariant of
 * the model broke or a workload failed: a bug). The names, titles and
 * cost names returned above are static strings.
 * MT-safe: each run has its own machines. */
int mr_sim_run_scenario(const char *name, uint64_t seed, const char *costs,
			mr_sim_figure_fn fn, void *userdata, char **table,
			int *verdict);

/* A parsed trace: a workload written in the trace format
 * (docs/trace-format.md) — a machine, its memory cgroups and their knobs,
 * files, anonymous regions, and tasks with their operations in order —
 * checked whole and ready to run on a fresh simulated machine as many
 * times as wanted. Read-only once parsed. */
typedef struct mr_sim_trace mr_sim_trace_t;

/* Parses the trace text[0 .. len) (no NUL terminator needed) and stores
 * the trace in *ret (only on success). Every check is made here (syntax,
 * units, names declared before use, offsets inside their file or region,
 * blocks and request markers balanced, and each task that is not
 * background bounded, its repeats unrolled with saturating products:
 * at most 10^10 operations and 10^16 ns, about 116 days, of start, cpu,
 * sleep and at times), so a trace that parses runs to its end. Parsing
 * takes time linear in the text (names are found by hash). On error
 * errbuf (may be NULL with errlen 0) receives one line,
 * no newline, truncated to errlen - 1: "line N: " and what was expected
 * there, e.g. "line 12: read past the end of file 'docroot' (629145600
 * bytes)"; N counts from 1, and an error found at the end of the text
 * names the line after the last.
 * Errors: -EINVAL (text or ret NULL, or a trace that does not parse: the
 * message says where and why), -ENOMEM. MT-safe. */
int mr_sim_trace_parse(const char *text, size_t len, mr_sim_trace_t **ret,
		       char *errbuf, size_t errlen);

/* Frees a trace. NULL is a no-op. Not while a run of it is going on.
 * MT-safe per handle. */
void mr_sim_trace_free(mr_sim_trace_t *trace);

/* Applies a policy before a trace runs: called by mr_sim_trace_run()
 * once the machine is built, with ctx bound to it and every group of the
 * trace opened there with the "sim" backend, in the order the trace
 * declares them (ngroups may be 0). It may call any group or context
 * function (mr_group_set_margin(), mr_group_set_batch_*(),
 * mr_group_set_soft_limit(), mr_group_reclaim(), ...), but must not
 * close the groups, free ctx, or start the worker thread: the run
 * serves ctx's margins with the library's worker as a simulated task
 * (mr_ctx_worker_dispatch() in virtual time). Returns >= 0, or a negative
 * errno that aborts the run (mr_sim_trace_run() returns it). */
typedef int (*mr_sim_setup_fn)(mr_ctx_t *ctx, mr_group_t *const *groups,
			       size_t ngroups, void *userdata);

/* Runs a trace on a fresh simulated machine, as the trace declares it,
 * with `seed` (every random draw of the trace: uniform and normal
 * offsets, exponential times) and the cost set `costs` ("2011" or
 * "today"; NULL: "today"). The machine behaves as today's kernel does
 * where eras differ: a huge-page charge that does not fit asks reclaim
 * for the whole charge, 512 pages, whatever the shortfall (mm/memcontrol.c
 * try_charge_memcg() passes nr_pages to try_to_free_mem_cgroup_pages()),
 * retries once after draining the stocks and then falls back to small
 * pages; and soft limits are served by cgroup v1's soft-limit pass under
 * machine pressure.
 *
 * setup (may be NULL: the baseline, no library policy) is called with
 * setup_data before any task starts (see mr_sim_setup_fn); with a setup,
 * the library's margin worker runs as a task of the machine from time 0
 * until every task of the trace has ended. Then the tasks run, each
 * interpreting its operations; a task whose charge meets an OOM is killed
 * (counted in oom_count) and its open requests dropped.
 *
 * fn (may be NULL) receives every figure once the run is over, in a fixed
 * order: first the whole machine's (policy "machine"), then each group's
 * in declaration order (policy: the group's path), a group's counting its
 * descendants too, as cgroup statistics do. The figures: elapsed_s (when
 * the last of the tasks ended, from time 0), failcnt_count (charges that
 * met a max), limit_reclaim_s (the tasks' direct reclaim: at a max, above
 * high, or for the machine), margin_calls_count, margin_freed_bytes and
 * margin_reclaim_s (the margin worker's calls, as
 * mr_group_read_reclaim_stats() counts them under MR_REASON_MARGIN, in
 * virtual time; the machine's: the sum over groups), pgscan_pages,
 * pgsteal_pages, pgmajfault_count, refault_file_pages, psi_some_s,
 * psi_full_s (memory stall, as memory.pressure totals), oom_count (tasks
 * killed); then, for each request name of the trace that has ended
 * requests there, req_NAME_count, req_NAME_mean_ms and req_NAME_p50_ms,
 * _p90_ms, _p95_ms, _p98_ms, _p99_ms (nearest rank) and _max_ms. They are
 * taken when the last task ends. fn is called after the worker has
 * stopped and before the groups handed to setup are closed, so a setup
 * may keep those handles for fn to read the state the run ended in
 * (mr_group_read_margin_stats(), for example; mr-demo does). The same
 * trace, seed and costs give the
 * same figures, bit for bit. The run takes real time in proportion to the
 * pages the trace touches (about a microsecond a page).
 *
 * Errors: -EINVAL (trace NULL, unknown cost set), -ENOMEM, -EIO (the
 * model broke one of its invariants: a bug to report), or the negative
 * value setup returned. No figure is reported on error.
 * MT-safe: each run has its own machine and context; one trace may be
 * run by several threads at once. */
int mr_sim_trace_run(const mr_sim_trace_t *trace, uint64_t seed,
		     const char *costs, mr_sim_setup_fn setup, void *setup_data,
		     mr_sim_figure_fn fn, void *fn_data);

#ifdef __cplusplus
}
#endif

#endif /* MR_EXPERIMENTS_H */
