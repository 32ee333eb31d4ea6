/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-margin: the margin worker on a real cgroup v1 group, through the
 * scripts/demo workload. It runs `examples/mr-demo --memreclaimd
 * examples/memreclaimd --json` (paths relative to the build directory, or
 * $MEMRECLAIM_BENCH_DEMO and $MEMRECLAIM_BENCH_MEMRECLAIMD) REPEATS
 * times; each run is a pair: the workload without memreclaimd, then with
 * it (256 MiB limit; a toucher mapping and touching 16 MiB per round for
 * 200 rounds, timed, while a reader streams a 1 GiB file through the
 * group; memreclaimd with a 32 MiB margin, hysteresis 32 MiB, batch auto:
 * examples/mr-demo.c). mr-demo makes a third run after the pair, with
 * memreclaimd --margin auto; its figures are not among these. Each
 * figure is the median over the pairs, the run without memreclaimd as
 * baseline:
 *  - memory.failcnt growth (charges that met the limit) and its ratio
 *    without / with (the median of the pairs' ratios);
 *  - the charge rounds' latency, p50, p99 and max (a round maps, touches
 *    and unmaps 16 MiB, so every round charges the group);
 *  - the reader's throughput;
 *  - the worker's CPU time (memreclaimd's whole process, user + system),
 *    against the direct reclaim it took off the workload, estimated two
 *    ways. First, where the host is hybrid (mr-demo then gives the group
 *    a cgroup2 twin), the workload's memory stall time (PSI some total)
 *    without the worker less with it: the kernel counts a charge's
 *    direct reclaim at the limit as a memory stall (try_charge_memcg()),
 *    so this is the wall time during which some task of the workload
 *    was in direct reclaim (two tasks stalled at once count once; a
 *    stalled task waiting for a CPU counts). Second, from the workload's
 *    system CPU time, where direct reclaim is counted among all its
 *    kernel work: the reader's system time per byte read without the
 *    worker, less with it, times the bytes read with it (the reader
 *    reads more or less in the same 200 rounds), plus the toucher's
 *    system time without, less with (the same rounds in both); the raw
 *    difference of the workload's system time is printed too. On a
 *    shared machine the system time varies by more than the reclaim in
 *    it.
 * A pair takes about 35 s here, plus mr-demo's adaptive run. Exit 77 (skipped) without root, or when
 * mr-demo found no writable cgroup v1 group and ran on the simulator.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define BENCH "margin-cgroup1"
#define REPEATS 3
#define OUT_MAX (64 * 1024)

/* One run (without or with memreclaimd) of a pair. */
struct side {
	double failcnt_growth;
	double p50_ms, p99_ms, max_ms;
	double reader_mib_s, reader_bytes;
	double reader_sys_ms, touch_sys_ms;
	double worker_cpu_ms, worker_calls; /* with memreclaimd only */
	double stall_some_ms;               /* < 0: no twin, not measured */
};

struct pair {
	struct side without, with;
	double failcnt_ratio;        /* without / with growth */
	double removed_ms;           /* direct reclaim CPU removed, est. */
	double removed_raw_ms;       /* workload system time, without - with */
	double stall_removed_ms;     /* PSI some, without - with */
};

/* Runs mr-demo once; its stdout (one JSON object) into out. Returns 0,
 * 77 (it ran on the simulator: no real group here) or -1. */
static int run_demo(char *out, size_t len)
{
	const char *demo = bench_env_or("MEMRECLAIM_BENCH_DEMO", "examples/mr-demo");
	const char *daemon = bench_env_or("MEMRECLAIM_BENCH_MEMRECLAIMD",
				    "examples/memreclaimd");
	size_t n = 0;
	ssize_t k;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl(demo, demo, "--memreclaimd", daemon, "--json",
		      (char *)NULL);
		fprintf(stderr, "bench-margin: running %s: %s\n", demo,
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while (n + 1 < len && (k = read(p[0], out + n, len - 1 - n)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		n += (size_t)k;
	}
	out[n] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-margin: %s failed (status 0x%x)\n", demo,
			status);
		return -1;
	}
	return 0;
}

/* The number at key of obj into *v; -1, said on stderr, when there is
 * none. */
static int num(json_object *obj, const char *key, double *v)
{
	json_object *x;

	if (!json_object_object_get_ex(obj, key, &x) ||
	    (!json_object_is_type(x, json_type_int) &&
	     !json_object_is_type(x, json_type_double))) {
		fprintf(stderr, "bench-margin: mr-demo gave no number for "
			"\"%s\"\n", key);
		return -1;
	}
	*v = json_object_get_double(x);
	return 0;
}

static int parse_side(json_object *run, bool with, struct side *s)
{
	double p50, p99, max, rsys, tsys, cpu;
	json_object *x;
	int r = 0;

	r |= num(run, "limit_hits_growth", &s->failcnt_growth);
	r |= num(run, "touch_p50_ns", &p50);
	r |= num(run, "touch_p99_ns", &p99);
	r |= num(run, "touch_max_ns", &max);
	r |= num(run, "reader_mib_s", &s->reader_mib_s);
	r |= num(run, "reader_bytes", &s->reader_bytes);
	r |= num(run, "reader_sys_ns", &rsys);
	r |= num(run, "touch_sys_ns", &tsys);
	if (with) {
		r |= num(run, "worker_cpu_ns", &cpu);
		r |= num(run, "worker_calls", &s->worker_calls);
		s->worker_cpu_ms = cpu / 1e6;
	}
	s->stall_some_ms = -1;
	if (json_object_object_get_ex(run, "memory_stall_some_us", &x) &&
	    !json_object_is_type(x, json_type_null))
		r |= num(run, "memory_stall_some_us", &s->stall_some_ms);
	if (s->stall_some_ms >= 0)
		s->stall_some_ms /= 1e3;
	s->p50_ms = p50 / 1e6;
	s->p99_ms = p99 / 1e6;
	s->max_ms = max / 1e6;
	s->reader_sys_ms = rsys / 1e6;
	s->touch_sys_ms = tsys / 1e6;
	return r ? -1 : 0;
}

/* One pair: runs mr-demo and reads its first two runs (without
 * memreclaimd, with its fixed margin; the third is the adaptive one's).
 * 77: simulator. */
static int measure(struct pair *pr)
{
	static char out[OUT_MAX];
	json_object *root, *sim, *runs;
	const struct side *wo = &pr->without, *w = &pr->with;
	int r;

	r = run_demo(out, sizeof(out));
	if (r)
		return r;
	root = json_tokener_parse(out);
	if (!root) {
		fprintf(stderr, "bench-margin: mr-demo's output is not JSON\n");
		return -1;
	}
	r = -1;
	if (json_object_object_get_ex(root, "simulator", &sim) &&
	    json_object_get_boolean(sim)) {
		fprintf(stderr, "bench-margin: mr-demo ran on the simulator "
			"(no writable cgroup v1 memory group); skipped\n");
		r = 77;
	} else if (json_object_object_get_ex(root, "runs", &runs) &&
		   json_object_array_length(runs) == 3 &&
		   parse_side(json_object_array_get_idx(runs, 0), false,
			      &pr->without) == 0 &&
		   parse_side(json_object_array_get_idx(runs, 1), true,
			      &pr->with) == 0) {
		r = 0;
	}
	json_object_put(root);
	if (r == 0 && (!wo->reader_bytes || !w->reader_bytes)) {
		fprintf(stderr, "bench-margin: the reader read nothing\n");
		r = -1;
	}
	if (r)
		return r;
	/* No hit with the worker: the ratio is at least the growth
	 * without; counted as such. */
	pr->failcnt_ratio = wo->failcnt_growth /
			    (w->failcnt_growth ? w->failcnt_growth : 1);
	pr->removed_raw_ms = wo->reader_sys_ms + wo->touch_sys_ms -
			     w->reader_sys_ms - w->touch_sys_ms;
	pr->stall_removed_ms = wo->stall_some_ms - w->stall_some_ms;
	pr->removed_ms = (wo->reader_sys_ms / wo->reader_bytes -
			  w->reader_sys_ms / w->reader_bytes) *
			 w->reader_bytes +
			 wo->touch_sys_ms - w->touch_sys_ms;
	fprintf(stderr, "bench-margin: failcnt %.0f / %.0f (%.1fx), p50 "
		"%.1f / %.1f ms, p99 %.1f / %.1f ms, max %.1f / %.1f ms, "
		"reader %.0f / %.0f MiB/s, workload sys %.0f / %.0f ms, "
		"stall %.0f / %.0f ms, worker CPU %.0f ms in %.0f calls, "
		"system time saved %.0f ms (raw %.0f)\n",
		wo->failcnt_growth, w->failcnt_growth, pr->failcnt_ratio,
		wo->p50_ms, w->p50_ms, wo->p99_ms, w->p99_ms, wo->max_ms,
		w->max_ms, wo->reader_mib_s, w->reader_mib_s,
		wo->reader_sys_ms + wo->touch_sys_ms,
		w->reader_sys_ms + w->touch_sys_ms, wo->stall_some_ms,
		w->stall_some_ms, w->worker_cpu_ms,
		w->worker_calls, pr->removed_ms, pr->removed_raw_ms);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of one field over the pairs. */
static double median(const struct pair *p, size_t off)
{
	double v[REPEATS];
	int i;

	for (i = 0; i < REPEATS; i++)
		v[i] = *(const double *)((const char *)&p[i] + off);
	qsort(v, REPEATS, sizeof(v[0]), cmp_double);
	return REPEATS % 2 ? v[REPEATS / 2] :
	       (v[REPEATS / 2 - 1] + v[REPEATS / 2]) / 2;
}

#define MED(field) median(pairs, offsetof(struct pair, field))

/* A figure with the worker against the same without it. */
static void emit_pair(const struct pair *pairs, const char *what,
		      size_t with_off, size_t without_off, const char *unit)
{
	char name[96], base[96];

	snprintf(name, sizeof(name), "%s_with_worker_median_of_%d", what,
		 REPEATS);
	snprintf(base, sizeof(base), "%s_without_worker_median_of_%d", what,
		 REPEATS);
	bench_emit(BENCH, name, median(pairs, with_off), unit, base,
		   median(pairs, without_off), unit);
}

#define EMIT_PAIR(what, field, unit)                                      \
	emit_pair(pairs, what, offsetof(struct pair, with.field),         \
		  offsetof(struct pair, without.field), unit)

int main(void)
{
	struct pair pairs[REPEATS];
	char name[96], base[96];
	int i, r;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-margin: needs root to create a memory "
			"cgroup; skipped\n");
		return 77;
	}
	for (i = 0; i < REPEATS; i++) {
		r = measure(&pairs[i]);
		if (r)
			return r == 77 ? 77 : 1;
	}
	EMIT_PAIR("failcnt_growth", failcnt_growth, "hits");
	snprintf(name, sizeof(name), "failcnt_ratio_median_of_%d", REPEATS);
	bench_emit(BENCH, name, MED(failcnt_ratio), "x", NULL, 0, NULL);
	EMIT_PAIR("charge_round_p50_ms", p50_ms, "ms");
	EMIT_PAIR("charge_round_p99_ms", p99_ms, "ms");
	EMIT_PAIR("charge_round_max_ms", max_ms, "ms");
	EMIT_PAIR("reader_mib_s", reader_mib_s, "MiB/s");
	EMIT_PAIR("workload_sys_cpu_reader_ms", reader_sys_ms, "ms");
	EMIT_PAIR("workload_sys_cpu_toucher_ms", touch_sys_ms, "ms");
	if (pairs[0].with.stall_some_ms >= 0) {
		EMIT_PAIR("workload_memory_stall_some_ms", stall_some_ms, "ms");
		snprintf(name, sizeof(name), "worker_cpu_ms_median_of_%d",
			 REPEATS);
		snprintf(base, sizeof(base),
			 "direct_reclaim_stall_removed_ms_median_of_%d",
			 REPEATS);
		bench_emit(BENCH, name, MED(with.worker_cpu_ms), "ms", base,
			   MED(stall_removed_ms), "ms");
	}
	snprintf(name, sizeof(name),
		 "worker_cpu_ms_vs_sys_cpu_estimate_median_of_%d", REPEATS);
	snprintf(base, sizeof(base), "workload_sys_cpu_saved_ms_median_of_%d",
		 REPEATS);
	bench_emit(BENCH, name, MED(with.worker_cpu_ms), "ms", base,
		   MED(removed_ms), "ms");
	snprintf(name, sizeof(name),
		 "workload_sys_cpu_saved_raw_ms_median_of_%d", REPEATS);
	bench_emit(BENCH, name, MED(removed_raw_ms), "ms", NULL, 0, NULL);
	return 0;
}
