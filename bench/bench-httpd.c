/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-httpd: a real web server in a memory cgroup, without and with
 * examples/memreclaimd keeping a margin below the group's limit.
 *
 * Debian's Apache (httpd-server.h: mpm_event, one child process of 16
 * threads, sendfile, no access log) runs in its own memory group with a
 * 300 MiB limit, on cgroup v1 or v2, whichever holds the memory
 * controller (httpd-group.h), and serves a 600 MiB set of files from a
 * docroot on a disk filesystem (BENCH_HTTPD_DIR, default /var/tmp; never
 * tmpfs, whose pages are shmem, not reclaimable cache), written and
 * fsynced by this process outside the group and dropped from the page
 * cache (POSIX_FADV_DONTNEED per file) before the first pass. A client in
 * this process (httpd-client.h), outside the group, sends 40960
 * HTTP/1.1 keep-alive GETs a pass over 4 connections; each request's file
 * is drawn from a normal distribution around the middle of the set with
 * sigma = files / 6 (fixed seed, the same sequence every pass; clamped to
 * the set): 68% of the requests fall in the middle third, 200 MiB, and
 * 95% in the middle two thirds, 400 MiB, so the hot set does not fit in
 * the group's cache. Every response must be a complete 200 of the file
 * (a pass with an error fails the bench).
 *
 * The arms: no keeper; memreclaimd --cgroup G --margin 4M, 8M, 16M and
 * 32M (its other options at their defaults); memreclaimd --margin auto
 * ("adaptive", its default margin). A keeper is a fresh process
 * each pass, started 0.5 s before the pass and stopped (SIGTERM, waited
 * for) after it, its stdout and stderr kept in BENCH_HTTPD_LOGS (default
 * bench/httpd-logs) as BENCH-roundN-ARM.log; a keeper that exits before
 * it is stopped fails the bench. After a warm-up pass without a keeper
 * (not counted), each round runs every arm once, in an order rotated by
 * one arm each round, so that drift reaches all arms alike.
 *
 * Per pass: requests/s (requests over the wall time from the first
 * request sent to the last response read); each request's latency (its
 * first byte sent to its response's last byte read, CLOCK_MONOTONIC),
 * p50, p99, p99.9 and max, exact nearest-rank percentiles over all
 * samples; over the pass, the growth of the group's limit hits (v1
 * memory.failcnt, v2 memory.events max), of its page-cache refaults
 * (memory.stat's file refaults, in MiB), of its memory stall time (PSI
 * "some" total of the group's cgroup2 twin, which holds the same
 * processes, or of the v2 group itself), of the server's CPU time (the
 * twin's cpu.stat usage_usec) and of the keeper's CPU time (usage_usec
 * of the keeper's own cgroup2 group: the kernel's reclaim run by its
 * limit writes included).
 *
 * Figures (bench "httpd-1m" for 1 MiB files, "httpd-256k" for 256 KiB
 * files, 2400 of them, the same set), per arm and measure: the median
 * over the rounds, the no-keeper arm's median as baseline, and the ratio
 * arm / no keeper as "ratio" and "ci95" (bench.h): from the rounds'
 * ratios (each arm against the no-keeper pass of the same round), their
 * geometric mean and its 95% Student t-interval on the log-ratios (null
 * where a round's value is 0, or with one round). stderr has a line per
 * pass and the tables of docs/PERFORMANCE.md.
 *
 * Options (environment in brackets): --rounds N [BENCH_HTTPD_ROUNDS],
 * default 5; --requests N [BENCH_HTTPD_REQUESTS] a pass, default 40960;
 * --file-size SIZE[,SIZE] [BENCH_HTTPD_FILE_SIZES], default 1M,256K (a
 * multiple of 4K dividing 600 MiB, K or M suffix). memreclaimd is
 * examples/memreclaimd or $MEMRECLAIM_BENCH_MEMRECLAIMD. apache2 is
 * installed with apt-get when missing; the distribution's instance is
 * stopped (and started again at the end only if it ran before and the
 * bench did not install it). SIGINT, SIGTERM and SIGHUP stop the bench
 * cleanly: the keeper, Apache, the groups and the docroot go. Exit 77
 * (skipped) without root or a writable memory controller: cgroup v1's
 * with a cgroup2 mount at /sys/fs/cgroup/unified, or cgroup v2's
 * enabled for the children of /sys/fs/cgroup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "httpd-client.h"
#include "httpd-group.h"
#include "httpd-server.h"
#include "scratch.h"

#define PROG "bench-httpd"
#define MIB (1024.0 * 1024.0)
#define SET_BYTES (600ULL << 20)
#define LIMIT_BYTES (300ULL << 20)
#define CONNECTIONS 4
#define SEED 0x6874747064ULL
#define SETTLE_MS 500
#define KEEPER_STOP_MS 10000
#define MAX_SIZES 8
#define MAX_ROUNDS 1000
#define GROUP_PREFIX "memreclaim-bench-httpd-"

struct arm {
	const char *name;   /* in figures */
	const char *slug;   /* in log file names */
	const char *margin; /* memreclaimd --margin; NULL: no keeper */
};

static const struct arm arms[] = {
	{ "no keeper", "none", NULL },
	{ "margin 4M", "margin-4M", "4M" },
	{ "margin 8M", "margin-8M", "8M" },
	{ "margin 16M", "margin-16M", "16M" },
	{ "margin 32M", "margin-32M", "32M" },
	{ "adaptive", "adaptive", "auto" },
};
#define NARMS (sizeof(arms) / sizeof(arms[0]))
#define ADAPTIVE (NARMS - 1)

enum {
	M_RPS, M_P50, M_P99, M_P999, M_MAX, M_HITS, M_REFAULT, M_PSI,
	M_SERVER_CPU, M_KEEPER_CPU, NMEASURES
};

static const struct measure {
	const char *name, *unit, *column;
} measures[NMEASURES] = {
	[M_RPS] = { "requests/s", "req/s", "req/s" },
	[M_P50] = { "latency p50", "ms", "p50 ms" },
	[M_P99] = { "latency p99", "ms", "p99 ms" },
	[M_P999] = { "latency p99.9", "ms", "p99.9 ms" },
	[M_MAX] = { "latency max", "ms", "max ms" },
	/* Named after the file they come from: measure_name(). */
	[M_HITS] = { NULL, "hits", NULL },
	[M_REFAULT] = { "page-cache refaults", "MiB", "refault MiB" },
	[M_PSI] = { "memory stall (PSI some)", "ms", "PSI some ms" },
	[M_SERVER_CPU] = { "server CPU", "s", "server CPU s" },
	[M_KEEPER_CPU] = { "keeper CPU", "s", "keeper CPU s" },
};

struct pass {
	double v[NMEASURES];
};

struct options {
	unsigned rounds;
	size_t requests;
	uint64_t sizes[MAX_SIZES];
	unsigned nsizes;
	const char *dir;         /* the docroot's parent */
	const char *logs;        /* the keepers' logs */
	const char *memreclaimd;
	enum httpd_layout layout; /* of this host's groups */
};

/* One experiment: one file size. */
struct run {
	const struct options *o;
	char bench[32];
	uint64_t file_bytes;
	uint32_t nfiles;
	char tmp[PATH_MAX];       /* docroot and ServerRoot below */
	char docroot[PATH_MAX + 16];
	struct httpd_group group;
	char hits_name[48];       /* "memory.failcnt growth" */
	struct httpd_server server;
	pid_t keeper;
	uint32_t *files;          /* the request sequence */
	uint64_t *latency_ns;
	struct pass *passes;      /* [arm * rounds + round] */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* A measure's name in figures and its column in the tables. Limit hits
 * are named after the file they come from on this host
 * (httpd_group_hits_name()): "memory.failcnt growth" and "failcnt" on
 * cgroup v1, "memory.events max growth" and "events max" on v2. */
static const char *measure_name(const struct run *r, unsigned m)
{
	return m == M_HITS ? r->hits_name : measures[m].name;
}

static const char *measure_column(const struct run *r, unsigned m)
{
	return m == M_HITS ? httpd_group_hits_name(r->o->layout) +
			     strlen("memory.") : measures[m].column;
}

/* ------------------------------------------------------------ options */

static int parse_count(const char *s, const char *what, uint64_t max,
		       uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *v < 1 || *v > max) {
		fprintf(stderr, PROG ": %s '%s': a number from 1 to %" PRIu64
			"\n", what, s, max);
		return -1;
	}
	return 0;
}

/* "1M,256K": sizes that are 4K multiples and divide the set. */
static int parse_sizes(const char *s, struct options *o)
{
	char buf[256], *tok, *save, *end;

	snprintf(buf, sizeof(buf), "%s", s);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v = strtoull(tok, &end, 10);

		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (*end || !v || v % 4096 || SET_BYTES % v ||
		    SET_BYTES / v > 99999 || o->nsizes == MAX_SIZES) {
			fprintf(stderr, PROG ": file size '%s': a multiple "
				"of 4K dividing 600M (K or M suffix), at most "
				"%d sizes\n", tok, MAX_SIZES);
			return -1;
		}
		o->sizes[o->nsizes++] = v;
	}
	return o->nsizes ? 0 : -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "requests", required_argument, NULL, 'n' },
		{ "file-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rounds = bench_env_or("BENCH_HTTPD_ROUNDS", "5");
	const char *requests = bench_env_or("BENCH_HTTPD_REQUESTS", "40960");
	const char *sizes = bench_env_or("BENCH_HTTPD_FILE_SIZES", "1M,256K");
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = optarg;
			break;
		case 'n':
			requests = optarg;
			break;
		case 's':
			sizes = optarg;
			break;
		case 'h':
			printf("usage: " PROG " [--rounds N] [--requests N] "
			       "[--file-size SIZE[,SIZE]...]\n"
			       "defaults: 5 rounds, 40960 requests a pass, "
			       "1M,256K (see the comment of bench/"
			       "bench-httpd.c)\n");
			exit(0);
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (parse_count(rounds, "rounds", MAX_ROUNDS, &v))
		return -1;
	o->rounds = (unsigned)v;
	if (parse_count(requests, "requests", 100000000, &v))
		return -1;
	o->requests = (size_t)v;
	if (parse_sizes(sizes, o))
		return -1;
	o->dir = bench_env_or("BENCH_HTTPD_DIR", "/var/tmp");
	o->logs = bench_env_or("BENCH_HTTPD_LOGS", "bench/httpd-logs");
	o->memreclaimd = bench_env_or("MEMRECLAIM_BENCH_MEMRECLAIMD",
				"examples/memreclaimd");
	return 0;
}

/* ------------------------------------------------------------ docroot */

static void remove_tree(char *path)
{
	scratch_remove(path);
	path[0] = '\0';
}

/* The private directory on a disk filesystem: docroot/ and server/. */
static int make_tmp(struct run *r)
{
	char server[PATH_MAX + 16];
	struct statfs sf;

	snprintf(r->tmp, sizeof(r->tmp), "%s/memreclaim-bench-httpd.XXXXXX",
		 r->o->dir);
	if (!mkdtemp(r->tmp)) {
		fprintf(stderr, PROG ": creating a directory in %s: %s\n",
			r->o->dir, strerror(errno));
		r->tmp[0] = '\0';
		return -1;
	}
	if (statfs(r->tmp, &sf) == 0 && (sf.f_type == TMPFS_MAGIC ||
					 sf.f_type == RAMFS_MAGIC)) {
		fprintf(stderr, PROG ": %s is on tmpfs or ramfs, whose pages "
			"are not reclaimable page cache; set BENCH_HTTPD_DIR "
			"to a disk filesystem\n", r->o->dir);
		return -1;
	}
	/* Apache's workers (www-data) read the docroot. */
	snprintf(r->docroot, sizeof(r->docroot), "%s/docroot", r->tmp);
	snprintf(server, sizeof(server), "%s/server", r->tmp);
	if (chmod(r->tmp, 0755) || scratch_mkdir(r->docroot) || scratch_mkdir(server))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ keeper */

static void log_path(const struct run *r, const char *label,
		     const char *slug, char *path, size_t len)
{
	snprintf(path, len, "%s/%s-%s-%s.log", r->o->logs, r->bench, label,
		 slug);
}

/* Starts memreclaimd on the group in the keeper's cgroup2 group, its
 * output into log. */
static int keeper_start(struct run *r, const char *margin, const char *log)
{
	const char *const argv[] = { r->o->memreclaimd, "--cgroup",
				     r->group.memory, "--margin", margin,
				     NULL };
	pid_t pid = httpd_group_spawn_keeper(&r->group, argv, log);

	if (pid < 0)
		return -1;
	r->keeper = pid;
	return 0;
}

/* True when the keeper has exited (then reaped, its status in *status;
 * a keeper that cannot be waited for counts as exited with status 255). */
static bool keeper_exited(struct run *r, int *status)
{
	pid_t w;

	if (r->keeper <= 0)
		return false;
	w = waitpid(r->keeper, status, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return false;
	if (w < 0)
		*status = 255 << 8;
	r->keeper = 0;
	return true;
}

/* Stops the keeper; its wait status, or -1 when none ran. */
static int keeper_stop(struct run *r)
{
	int status = -1, waited = 0;

	if (r->keeper <= 0)
		return -1;
	kill(r->keeper, SIGTERM);
	while (!keeper_exited(r, &status)) {
		if ((waited += 10) == KEEPER_STOP_MS)
			kill(r->keeper, SIGKILL);
		bench_sleep_ms(10);
	}
	return status;
}

static void print_status(const char *what, int status, const char *log)
{
	if (WIFEXITED(status))
		fprintf(stderr, PROG ": %s exited with status %d (its output: "
			"%s)\n", what, WEXITSTATUS(status), log);
	else
		fprintf(stderr, PROG ": %s was killed by signal %d (its "
			"output: %s)\n", what, WTERMSIG(status), log);
}

/* ------------------------------------------------------------ a pass */

static double percentile_ms(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	return sorted[rank ? rank - 1 : 0] / 1e6;
}

/* One pass of arm; label names it ("warmup", "round3"). */
static int run_pass(struct run *r, const struct arm *arm, const char *label,
		    struct pass *p)
{
	struct httpd_load load = {
		.port = r->server.port,
		.connections = CONNECTIONS,
		.requests = r->o->requests,
		.files = r->files,
		.file_bytes = r->file_bytes,
		.stop = &stop_signal,
	};
	struct httpd_result res = { .latency_ns = r->latency_ns };
	struct httpd_counters a, b;
	char log[PATH_MAX + 96];
	int status, client;

	log_path(r, label, arm->slug, log, sizeof(log));
	if (arm->margin) {
		if (keeper_start(r, arm->margin, log))
			return -1;
		bench_sleep_ms(SETTLE_MS);
		if (keeper_exited(r, &status)) {
			print_status("memreclaimd, before the pass,", status,
				     log);
			return -1;
		}
	}
	if (httpd_group_read(&r->group, &a)) {
		keeper_stop(r);
		return -1;
	}
	client = httpd_run(&load, &res);
	if (httpd_group_read(&r->group, &b)) {
		keeper_stop(r);
		return -1;
	}
	if (arm->margin) {
		if (keeper_exited(r, &status)) {
			print_status("memreclaimd, during the pass,", status,
				     log);
			return -1;
		}
		status = keeper_stop(r);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			print_status("memreclaimd, stopped,", status, log);
	}
	if (client) {
		fprintf(stderr, PROG ": %s %s %s: %s\n", r->bench, label,
			arm->name, res.error);
		return -1;
	}
	p->v[M_RPS] = r->o->requests / (res.wall_ns / 1e9);
	p->v[M_P50] = percentile_ms(res.latency_ns, r->o->requests, 0.5);
	p->v[M_P99] = percentile_ms(res.latency_ns, r->o->requests, 0.99);
	p->v[M_P999] = percentile_ms(res.latency_ns, r->o->requests, 0.999);
	p->v[M_MAX] = res.latency_ns[r->o->requests - 1] / 1e6;
	p->v[M_HITS] = (double)(b.limit_hits - a.limit_hits);
	p->v[M_REFAULT] = (b.refault_pages - a.refault_pages) *
			  (double)sysconf(_SC_PAGESIZE) / MIB;
	p->v[M_PSI] = (b.psi_some_us - a.psi_some_us) / 1e3;
	p->v[M_SERVER_CPU] = (b.server_cpu_us - a.server_cpu_us) / 1e6;
	p->v[M_KEEPER_CPU] = (b.keeper_cpu_us - a.keeper_cpu_us) / 1e6;
	fprintf(stderr, PROG ": %s %s %s: %.0f req/s, p50 %.2f p99 %.2f "
		"p99.9 %.2f max %.2f ms, %s %.0f, refault %.0f MiB, PSI "
		"some %.0f ms, server CPU %.2f s, keeper CPU %.2f s\n",
		r->bench, label, arm->name, p->v[M_RPS], p->v[M_P50],
		p->v[M_P99], p->v[M_P999], p->v[M_MAX],
		measure_column(r, M_HITS), p->v[M_HITS],
		p->v[M_REFAULT], p->v[M_PSI], p->v[M_SERVER_CPU],
		p->v[M_KEEPER_CPU]);
	return 0;
}

/* ------------------------------------------------------------ figures */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The two-sided 95% quantile of Student's t with df degrees of freedom. */
static double t975(unsigned df)
{
	static const double t[] = {
		12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
		2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
		2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};

	return df <= sizeof(t) / sizeof(t[0]) ? t[df - 1] : 1.960;
}

struct figure {
	double median, ratio, lo, hi;
};

/* Measure m of arm over the rounds: the median, and against the
 * no-keeper pass of each round the geometric mean of the ratios with
 * its t-interval (NaN where a value is not positive, or the interval
 * with one round). */
static struct figure figure(const struct run *r, unsigned arm, unsigned m)
{
	const unsigned n = r->o->rounds;
	const struct pass *a = &r->passes[arm * n], *base = r->passes;
	struct figure f = { .ratio = NAN, .lo = NAN, .hi = NAN };
	double v[MAX_ROUNDS], sum = 0, ss = 0, mean, half;
	unsigned i;

	for (i = 0; i < n; i++)
		v[i] = a[i].v[m];
	f.median = median(v, n);
	for (i = 0; i < n; i++) {
		if (!(a[i].v[m] > 0) || !(base[i].v[m] > 0))
			return f;
		v[i] = log(a[i].v[m] / base[i].v[m]);
		sum += v[i];
	}
	mean = sum / n;
	f.ratio = exp(mean);
	if (n < 2)
		return f;
	for (i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	half = t975(n - 1) * sqrt(ss / (n - 1) / n);
	f.lo = exp(mean - half);
	f.hi = exp(mean + half);
	return f;
}

static void emit(const struct run *r)
{
	char name[96], base[96];
	unsigned arm, m;

	for (arm = 0; arm < NARMS; arm++) {
		for (m = 0; m < NMEASURES; m++) {
			struct figure f = figure(r, arm, m);
			struct figure b = figure(r, 0, m);

			if (!arms[arm].margin && m == M_KEEPER_CPU)
				continue;
			snprintf(name, sizeof(name), "%s: %s", arms[arm].name,
				 measure_name(r, m));
			snprintf(base, sizeof(base), "%s: %s", arms[0].name,
				 measure_name(r, m));
			if (!arms[arm].margin || m == M_KEEPER_CPU)
				bench_emit(r->bench, name, f.median,
					   measures[m].unit, NULL, 0, NULL);
			else
				bench_emit_ci(r->bench, name, f.median,
					      measures[m].unit, base, b.median,
					      measures[m].unit, f.ratio, f.lo,
					      f.hi);
		}
	}
}

/* The tables of docs/PERFORMANCE.md, on stderr. */
static void print_tables(const struct run *r)
{
	unsigned arm, m;

	fprintf(stderr, "\n%s: medians of %u rounds, %zu requests a pass, "
		"%u files of %" PRIu64 " KiB\n\n| arm |", r->bench,
		r->o->rounds, r->o->requests, r->nfiles, r->file_bytes >> 10);
	for (m = 0; m < NMEASURES; m++)
		fprintf(stderr, " %s |", measure_column(r, m));
	fputs("\n|---|", stderr);
	for (m = 0; m < NMEASURES; m++)
		fputs("---:|", stderr);
	for (arm = 0; arm < NARMS; arm++) {
		fprintf(stderr, "\n| %s |", arms[arm].name);
		for (m = 0; m < NMEASURES; m++) {
			double v = figure(r, arm, m).median;

			if (!arms[arm].margin && m == M_KEEPER_CPU)
				fputs(" - |", stderr);
			else if (m == M_HITS || m == M_RPS)
				fprintf(stderr, " %.0f |", v);
			else
				fprintf(stderr, " %.2f |", v);
		}
	}
	fprintf(stderr, "\n\n%s: ratio to no keeper, geometric mean of the "
		"rounds' ratios [95%% t-interval]\n\n| arm |", r->bench);
	for (m = 0; m < M_KEEPER_CPU; m++)
		fprintf(stderr, " %s |", measure_column(r, m));
	fputs("\n|---|", stderr);
	for (m = 0; m < M_KEEPER_CPU; m++)
		fputs("---:|", stderr);
	for (arm = 1; arm < NARMS; arm++) {
		fprintf(stderr, "\n| %s |", arms[arm].name);
		for (m = 0; m < M_KEEPER_CPU; m++) {
			struct figure f = figure(r, arm, m);

			if (isnan(f.ratio))
				fputs(" - |", stderr);
			else if (isnan(f.lo))
				fprintf(stderr, " %.3f |", f.ratio);
			else
				fprintf(stderr, " %.3f [%.3f, %.3f] |",
					f.ratio, f.lo, f.hi);
		}
	}
	fputs("\n\n", stderr);
}

/* ------------------------------------------------------------ a run */

static int run_rounds(struct run *r)
{
	const unsigned n = r->o->rounds;
	unsigned round, i;
	struct pass warm;
	char label[32];

	if (run_pass(r, &arms[0], "warmup", &warm))
		return -1;
	for (round = 0; round < n; round++) {
		snprintf(label, sizeof(label), "round%u", round + 1);
		for (i = 0; i < NARMS; i++) {
			unsigned arm = (i + round) % NARMS;

			if (stop_signal ||
			    run_pass(r, &arms[arm], label,
				     &r->passes[arm * n + round]))
				return -1;
		}
	}
	return 0;
}

static void run_cleanup(struct run *r)
{
	char log[PATH_MAX + 96];

	keeper_stop(r);
	log_path(r, "apache", "error", log, sizeof(log));
	httpd_server_stop(&r->server, r->server.dir[0] ? log : NULL);
	httpd_group_remove(&r->group);
	remove_tree(r->tmp);
}

static int run_size(const struct options *o, uint64_t file_bytes)
{
	struct run r = { .o = o, .file_bytes = file_bytes };
	char name[64], server[PATH_MAX + 16];
	int e = -1;

	snprintf(r.hits_name, sizeof(r.hits_name), "%s growth",
		 httpd_group_hits_name(o->layout));
	r.nfiles = (uint32_t)(SET_BYTES / file_bytes);
	if (file_bytes % (1 << 20) == 0)
		snprintf(r.bench, sizeof(r.bench), "httpd-%" PRIu64 "m",
			 file_bytes >> 20);
	else
		snprintf(r.bench, sizeof(r.bench), "httpd-%" PRIu64 "k",
			 file_bytes >> 10);
	r.files = malloc(o->requests * sizeof(*r.files));
	r.latency_ns = malloc(o->requests * sizeof(*r.latency_ns));
	r.passes = calloc(NARMS * o->rounds, sizeof(*r.passes));
	if (!r.files || !r.latency_ns || !r.passes)
		goto out;
	httpd_schedule(r.files, o->requests, r.nfiles, r.nfiles / 6.0, SEED);
	fprintf(stderr, PROG ": %s: %u files of %" PRIu64 " KiB, limit %llu "
		"MiB, %zu requests a pass over %d connections, sigma %.0f "
		"files, %u rounds\n", r.bench, r.nfiles, file_bytes >> 10,
		LIMIT_BYTES >> 20, o->requests, CONNECTIONS, r.nfiles / 6.0,
		o->rounds);
	if (make_tmp(&r) ||
	    httpd_write_files(r.docroot, r.nfiles, file_bytes, &stop_signal))
		goto out;
	snprintf(name, sizeof(name), GROUP_PREFIX "%d", (int)getpid());
	if (httpd_group_create(&r.group, o->layout, name, LIMIT_BYTES))
		goto out;
	snprintf(server, sizeof(server), "%s/server", r.tmp);
	if (httpd_server_start(&r.server, server, r.docroot, &r.group))
		goto out;
	if (run_rounds(&r))
		goto out;
	e = 0;
out:
	if (e && stop_signal)
		fprintf(stderr, PROG ": %s: stopped by signal %d\n", r.bench,
			(int)stop_signal);
	run_cleanup(&r);
	if (!e) {
		emit(&r);
		print_tables(&r);
	}
	free(r.files);
	free(r.latency_ns);
	free(r.passes);
	return e;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct options o;
	unsigned i;
	int e = 0;

	if (parse_options(argc, argv, &o))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, PROG ": needs root (memory cgroups, Apache); "
			"skipped\n");
		return 77;
	}
	if (httpd_group_probe(&o.layout))
		return 77;
	if (access(o.memreclaimd, X_OK)) {
		fprintf(stderr, PROG ": %s: %s (build it, or set "
			"MEMRECLAIM_BENCH_MEMRECLAIMD)\n", o.memreclaimd,
			strerror(errno));
		return 1;
	}
	if (scratch_mkdirs(o.logs))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (httpd_server_prepare())
		return 1;
	for (i = 0; i < o.nsizes && !e && !stop_signal; i++)
		e = run_size(&o, o.sizes[i]);
	httpd_server_restore_distro();
	return e || stop_signal ? 1 : 0;
}
