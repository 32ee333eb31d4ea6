/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-proactive: proactive reclaim side by side, on workloads whose hot
 * set is known, in a memory cgroup without a limit: no controller,
 * Senpai (a peer program, run only when MEMRECLAIM_SENPAI names its
 * senpai.py) and examples/memreclaimd --proactive.
 *
 * The workloads, each in a group of its own (httpd-group.h: cgroup v1
 * with its cgroup2 twin for PSI, or cgroup v2, whichever holds the
 * memory controller), on a disk filesystem (BENCH_PROACTIVE_DIR, default
 * /var/tmp; never tmpfs, whose pages are not reclaimable cache), the
 * files written once by this process outside the groups and dropped from
 * the page cache before every arm:
 *
 *  - "cache": 256 files of 1 MiB (256 MiB) read once (the cold phase),
 *    then a separate 32 MiB file read whole, again and again, with a
 *    100 ms pause after each pass (the hot phase). Hot set: 32 MiB.
 *  - "anon": the same, and 64 MiB of anonymous memory written once in the
 *    cold phase (each page its own words, not a same-filled page that
 *    zram keeps for free), of which the first 16 MiB are written again
 *    (a word a page) in every hot pass. Hot set: 48 MiB. Needs swap
 *    (zram in the guest: bench/bench-proactive-guest); skipped without.
 *  - "httpd": Debian's Apache (httpd-server.h) in the group serving a
 *    256 MiB docroot of 1024 files of 256 KiB; the client
 *    (httpd-client.h, 4 keep-alive connections) in a process of the
 *    bench outside the group fetches every file once (the cold phase),
 *    then the first 128 files, 32 MiB, again and again, a 100 ms pause
 *    after each pass. Hot set: 32 MiB beside Apache's own memory.
 *
 * The known hot set of an arm: the hot file data above (32 MiB) plus
 * what the group holds beside page cache when the cold phase is done
 * (usage less memory.stat's file: the reader's buffer and anonymous
 * memory, less the anon workload's 48 MiB it leaves cold; Apache's
 * threads, heap and sockets once it has served every file: 4-9 MiB,
 * where before its first request it held 0.6-3 MiB).
 *
 * The arms: no controller; Senpai with its defaults and --min-size
 * MIN_SIZE ("Senpai"); Senpai with --interval 1 --max-probe 0.05 as well
 * ("Senpai fast"); memreclaimd --cgroup G --proactive --min-size
 * MIN_SIZE, its pressure target at its default (10ms/6s), with
 * --hybrid-psi on cgroup v1 (the workload's cgroup2 twin is at the path
 * the library's hybrid PSI reads: the v1 group's, below the cgroup2
 * mount). Each
 * controller is a fresh process started when the cold phase has ended,
 * in a cgroup2 group of its own beside the workload's (its CPU time, the
 * reclaim its writes run included, from that group's cpu.stat), and
 * stopped with SIGTERM at the end; a controller that exits before
 * fails the bench. Senpai needs cgroup v2: on cgroup v1 its arms are
 * skipped, as they are when MEMRECLAIM_SENPAI is unset or names no
 * file (said on stderr). Each arm runs once, in the order above, after
 * a warm-up of each workload (its no-controller arm with a 5 s hot
 * phase, not counted: the first arm would otherwise pay alone for what
 * the first run brings into the caches, Apache's modules and the
 * programs' pages, over 9p under qemu).
 *
 * Per arm, over the hot phase (DURATION seconds from the controller's
 * start), from samples every 100 ms: the mean and peak of the group's
 * memory usage (v1 memory.usage_in_bytes, v2 memory.current), of usage +
 * swap (v1 memory.memsw, v2 memory.swap.current), and the time from the
 * controller's start to the first sample within 10% of the known hot set
 * (usage <= 1.1 x hot set; null when never); the work, hot passes per
 * second and the mean time of a pass (the reads, or the client's
 * requests, without the pause); the growth of the group's PSI "some"
 * total (the cgroup2 twin on v1) in ms and per 6 s (the controllers'
 * default target is 10 ms per 6 s), of its refaults (file + anonymous,
 * in MiB) and of its OOM kills (over the whole arm); the controller's
 * CPU time. Ratios to the no-controller arm of the same run are given as
 * "ratio", "ci95" null (one run: bench.h). stderr has a line per arm and
 * the tables of docs/PERFORMANCE.md.
 *
 * Options (environment in brackets): --workloads LIST
 * [BENCH_PROACTIVE_WORKLOADS], default cache,anon,httpd; --arms LIST
 * [BENCH_PROACTIVE_ARMS], default none,senpai,senpai-fast,proactive;
 * --duration SECONDS [BENCH_PROACTIVE_DURATION], default 45, the hot
 * phase of each arm; --list: prints the arms it would run, one
 * "WORKLOAD ARM" a line, or "WORKLOAD ARM skipped: WHY" where it knows
 * already, and exits without measuring (no root needed). memreclaimd is
 * examples/memreclaimd or $MEMRECLAIM_BENCH_MEMRECLAIMD; the logs of the
 * controllers and Apache go to BENCH_PROACTIVE_LOGS (default
 * bench/proactive-logs). Exit 2 on bad arguments, 77 (skipped) without
 * root or a writable memory controller, 1 on a failure. SIGINT, SIGTERM
 * and SIGHUP stop the bench cleanly: the controller, the workload,
 * Apache, the groups and the files go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

#define PROG "bench-proactive"
#define MIB (1024.0 * 1024.0)
#define COLD_FILES 256
#define COLD_FILE_BYTES (1ULL << 20)
#define HOT_FILE_BYTES (32ULL << 20)
#define ANON_BYTES (64ULL << 20)
#define ANON_HOT_BYTES (16ULL << 20)
#define WEB_FILES 1024
#define WEB_HOT_FILES 128
#define WEB_FILE_BYTES (256ULL << 10)
#define CONNECTIONS 4
#define READ_BYTES (1 << 20)
#define PAUSE_MS 100
#define SAMPLE_MS 100
/* The minimum size given to both controllers: below every hot set. */
#define MIN_SIZE_BYTES (16ULL << 20)
#define MIN_SIZE_ARG "16M"
#define NEAR_HOT 1.10
#define PSI_TARGET_WINDOW_S 6.0
#define MAX_DURATION_S 3600
#define WARMUP_S 5
/* How long a phase may take to begin or end, and a process to stop. */
#define PHASE_TIMEOUT_MS 900000
#define STOP_TIMEOUT_MS 10000
#define GROUP_PREFIX "memreclaim-bench-proactive-"

/* ------------------------------------------------------------ tables */

enum workload_id { W_CACHE, W_ANON, W_HTTPD, NWORKLOADS };

static const struct workload {
	const char *name;
	uint64_t hot_file_bytes;  /* the page cache of the hot phase */
	uint64_t cold_anon_bytes; /* anonymous memory it leaves cold */
} workloads[NWORKLOADS] = {
	[W_CACHE] = { "cache", HOT_FILE_BYTES, 0 },
	[W_ANON] = { "anon", HOT_FILE_BYTES, ANON_BYTES - ANON_HOT_BYTES },
	[W_HTTPD] = { "httpd", WEB_HOT_FILES * WEB_FILE_BYTES, 0 },
};

enum arm_kind { A_NONE, A_SENPAI, A_PROACTIVE };

static const struct arm {
	const char *name;       /* in figures */
	const char *slug;       /* in --arms, log and group names */
	enum arm_kind kind;
	const char *args[5];    /* Senpai's options beside --min-size */
} arms[] = {
	{ "no controller", "none", A_NONE, { NULL } },
	{ "Senpai", "senpai", A_SENPAI, { NULL } },
	{ "Senpai fast", "senpai-fast", A_SENPAI,
	  { "--interval", "1", "--max-probe", "0.05", NULL } },
	{ "memreclaimd --proactive", "proactive", A_PROACTIVE, { NULL } },
};
#define NARMS (sizeof(arms) / sizeof(arms[0]))

enum {
	M_MEAN, M_PEAK, M_MEAN_TOTAL, M_PEAK_TOTAL, M_HOT_S, M_PASSES,
	M_PASS_MS, M_PSI, M_PSI6, M_REFAULT, M_OOM, M_CTL_CPU, NMEASURES
};

static const struct measure {
	const char *name, *unit, *column;
} measures[NMEASURES] = {
	[M_MEAN] = { "mean memory usage", "MiB", "mean MiB" },
	[M_PEAK] = { "peak memory usage", "MiB", "peak MiB" },
	[M_MEAN_TOTAL] = { "mean memory + swap", "MiB", "mean +swap MiB" },
	[M_PEAK_TOTAL] = { "peak memory + swap", "MiB", "peak +swap MiB" },
	[M_HOT_S] = { "time to within 10% of the hot set", "s",
		      "to hot set s" },
	[M_PASSES] = { "hot passes/s", "passes/s", "passes/s" },
	[M_PASS_MS] = { "hot pass time", "ms", "pass ms" },
	[M_PSI] = { "memory stall (PSI some)", "ms", "PSI some ms" },
	[M_PSI6] = { "memory stall (PSI some) per 6 s", "ms",
		     "PSI ms/6 s" },
	[M_REFAULT] = { "refaults (file + anon)", "MiB", "refault MiB" },
	[M_OOM] = { "OOM kills", "kills", "OOM kills" },
	[M_CTL_CPU] = { "controller CPU", "s", "ctl CPU s" },
};

/* ------------------------------------------------------------ state */

struct options {
	bool workload[NWORKLOADS];
	bool arm[NARMS];
	unsigned duration_s;
	bool list;
	const char *dir;
	const char *logs;
	const char *memreclaimd;
	const char *senpai;       /* NULL: unset */
};

/* What the bench and its workload process share (MAP_SHARED). */
enum phase { P_SETUP, P_READY, P_COLD, P_COLD_DONE, P_HOT, P_STOP,
	     P_FAILED };

struct shared {
	_Atomic int phase;       /* the workload's: P_READY, P_COLD_DONE,
				    P_FAILED */
	_Atomic int go;          /* the bench's: P_COLD, P_HOT, P_STOP */
	_Atomic uint64_t passes;
	_Atomic uint64_t busy_ns;
	char error[256];
};

struct result {
	bool ran;
	double v[NMEASURES];
	double hot_mib, cold_s;
	/* At the end of the hot phase: usage, and its page cache,
	 * anonymous memory and swap. */
	double final_mib, final_file_mib, final_anon_mib, final_swap_mib;
};

struct bench {
	struct options o;
	enum httpd_layout layout;
	char parent[128];         /* the parent group's name */
	bool made_parent_memory, made_parent_twin;
	char tmp[PATH_MAX];
	char cold[PATH_MAX + 8], hot[PATH_MAX + 8], web[PATH_MAX + 8];
	struct result results[NWORKLOADS][NARMS];
	const char *skip[NWORKLOADS][NARMS]; /* why an arm does not run */
	/* The arm running. */
	struct httpd_group group;
	struct httpd_server server;
	pid_t controller, worker;
	struct shared *sh;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* ------------------------------------------------------------ options */

/* A comma-separated list of names from names[0..n) into chosen. */
static int parse_list(const char *s, const char *what,
		      const char *(*name)(unsigned), unsigned n, bool *chosen)
{
	char buf[256], *tok, *save;
	unsigned i;
	bool any = false;

	if (strlen(s) >= sizeof(buf)) {
		fprintf(stderr, PROG ": %s '%s': too long\n", what, s);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	memset(chosen, 0, n * sizeof(*chosen));
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, name(i)); i++)
			;
		if (i == n) {
			fprintf(stderr, PROG ": %s '%s': not one of", what,
				tok);
			for (i = 0; i < n; i++)
				fprintf(stderr, "%s %s", i ? "," : "",
					name(i));
			fputc('\n', stderr);
			return -1;
		}
		chosen[i] = any = true;
	}
	if (!any) {
		fprintf(stderr, PROG ": %s: an empty list\n", what);
		return -1;
	}
	return 0;
}

static const char *workload_name(unsigned i)
{
	return workloads[i].name;
}

static const char *arm_slug(unsigned i)
{
	return arms[i].slug;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--workloads LIST] [--arms LIST] "
		"[--duration SECONDS] [--list]\n"
		"workloads: cache,anon,httpd (default all); arms: none,"
		"senpai,senpai-fast,proactive (default all);\n"
		"duration: the hot phase of each arm, 1 to %d s (default "
		"45). See the comment of bench/bench-proactive.c.\n",
		MAX_DURATION_S);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "workloads", required_argument, NULL, 'w' },
		{ "arms", required_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *wl = bench_env_or("BENCH_PROACTIVE_WORKLOADS",
				"cache,anon,httpd");
	const char *ar = bench_env_or("BENCH_PROACTIVE_ARMS",
				"none,senpai,senpai-fast,proactive");
	const char *du = bench_env_or("BENCH_PROACTIVE_DURATION", "45");
	unsigned long long v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			wl = optarg;
			break;
		case 'a':
			ar = optarg;
			break;
		case 'd':
			du = optarg;
			break;
		case 'l':
			o->list = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (parse_list(wl, "workloads", workload_name, NWORKLOADS,
		       o->workload) ||
	    parse_list(ar, "arms", arm_slug, NARMS, o->arm))
		return -1;
	errno = 0;
	v = strtoull(du, &end, 10);
	if (errno || end == du || *end || du[0] == '-' || v < 1 ||
	    v > MAX_DURATION_S) {
		fprintf(stderr, PROG ": duration '%s': a number of seconds "
			"from 1 to %d\n", du, MAX_DURATION_S);
		return -1;
	}
	o->duration_s = (unsigned)v;
	o->dir = bench_env_or("BENCH_PROACTIVE_DIR", "/var/tmp");
	o->logs = bench_env_or("BENCH_PROACTIVE_LOGS", "bench/proactive-logs");
	o->memreclaimd = bench_env_or("MEMRECLAIM_BENCH_MEMRECLAIMD",
				"examples/memreclaimd");
	o->senpai = getenv("MEMRECLAIM_SENPAI");
	if (o->senpai && !*o->senpai)
		o->senpai = NULL;
	return 0;
}

/* Why Senpai cannot run, or NULL. */
static const char *senpai_missing(const struct options *o)
{
	if (!o->senpai)
		return "MEMRECLAIM_SENPAI is not set (the path of Senpai's "
		       "senpai.py)";
	if (access(o->senpai, R_OK))
		return "MEMRECLAIM_SENPAI names no readable file";
	return NULL;
}

/* Whether memreclaimd's --help offers --proactive; why not, or NULL. */
static const char *proactive_missing(const struct options *o)
{
	char cmd[PATH_MAX + 64], line[512];
	bool found = false;
	FILE *p;

	if (access(o->memreclaimd, X_OK))
		return "memreclaimd is not built (examples/memreclaimd, or "
		       "set MEMRECLAIM_BENCH_MEMRECLAIMD)";
	if (strchr(o->memreclaimd, '\''))
		return "memreclaimd's path has a quote";
	snprintf(cmd, sizeof(cmd), "'%s' --help 2>&1", o->memreclaimd);
	p = popen(cmd, "re");
	if (!p)
		return "memreclaimd --help could not run";
	while (fgets(line, sizeof(line), p))
		found = found || strstr(line, "--proactive");
	pclose(p);
	return found ? NULL : "this memreclaimd has no --proactive";
}

/* Whether this machine has swap in use (a line beyond /proc/swaps'
 * header). */
static bool have_swap(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/swaps", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n > 1;
}

/* The skips known before measuring. On cgroup v1 Senpai cannot run;
 * known_layout false (--list) leaves that to the run. */
static void plan(struct bench *b, bool known_layout)
{
	const char *senpai = senpai_missing(&b->o);
	const char *proactive = b->o.arm[NARMS - 1] ?
				proactive_missing(&b->o) : NULL;
	bool swap = have_swap();
	unsigned w, a;

	for (w = 0; w < NWORKLOADS; w++) {
		for (a = 0; a < NARMS; a++) {
			const char **why = &b->skip[w][a];

			if (!b->o.workload[w] || !b->o.arm[a])
				continue;
			if (w == W_ANON && !swap)
				*why = "no swap on this machine (the anon "
				       "workload's cold part has nowhere to go)";
			else if (arms[a].kind == A_SENPAI && known_layout &&
				 b->layout == HTTPD_HYBRID)
				*why = "Senpai needs cgroup v2 (memory.high, "
				       "memory.pressure of the memory group)";
			else if (arms[a].kind == A_SENPAI && senpai)
				*why = senpai;
			else if (arms[a].kind == A_PROACTIVE && proactive)
				*why = proactive;
		}
	}
}

static void print_list(const struct bench *b)
{
	unsigned w, a;

	for (w = 0; w < NWORKLOADS; w++)
		for (a = 0; a < NARMS; a++) {
			if (!b->o.workload[w] || !b->o.arm[a])
				continue;
			if (b->skip[w][a])
				printf("%s %s skipped: %s\n", workloads[w].name,
				       arms[a].slug, b->skip[w][a]);
			else
				printf("%s %s\n", workloads[w].name,
				       arms[a].slug);
		}
}

/* ------------------------------------------------------------ files */

/* The private directory on a disk filesystem, and the files of the
 * chosen workloads in it. */
static int make_files(struct bench *b)
{
	const struct options *o = &b->o;
	bool cache = false, web = false;
	struct statfs sf;
	unsigned a;

	for (a = 0; a < NARMS; a++) {
		cache |= (!b->skip[W_CACHE][a] && o->workload[W_CACHE] &&
			  o->arm[a]) ||
			 (!b->skip[W_ANON][a] && o->workload[W_ANON] &&
			  o->arm[a]);
		web |= !b->skip[W_HTTPD][a] && o->workload[W_HTTPD] &&
		       o->arm[a];
	}
	snprintf(b->tmp, sizeof(b->tmp), "%s/memreclaim-bench-proactive."
		 "XXXXXX", o->dir);
	if (!mkdtemp(b->tmp)) {
		fprintf(stderr, PROG ": creating a directory in %s: %s\n",
			o->dir, strerror(errno));
		b->tmp[0] = '\0';
		return -1;
	}
	if (statfs(b->tmp, &sf) == 0 && (sf.f_type == TMPFS_MAGIC ||
					 sf.f_type == RAMFS_MAGIC)) {
		fprintf(stderr, PROG ": %s is on tmpfs or ramfs, whose pages "
			"are not reclaimable page cache; set "
			"BENCH_PROACTIVE_DIR to a disk filesystem\n", o->dir);
		return -1;
	}
	/* Apache's workers (www-data) read the docroot. */
	if (chmod(b->tmp, 0755))
		return -1;
	snprintf(b->cold, sizeof(b->cold), "%s/cold", b->tmp);
	snprintf(b->hot, sizeof(b->hot), "%s/hot", b->tmp);
	snprintf(b->web, sizeof(b->web), "%s/web", b->tmp);
	if (cache) {
		fprintf(stderr, PROG ": writing %d MiB of cold files and a "
			"%llu MiB hot file in %s\n", COLD_FILES,
			HOT_FILE_BYTES >> 20, b->tmp);
		if (scratch_mkdir(b->cold) || scratch_mkdir(b->hot) ||
		    httpd_write_files(b->cold, COLD_FILES, COLD_FILE_BYTES,
				      &stop_signal) ||
		    httpd_write_files(b->hot, 1, HOT_FILE_BYTES, &stop_signal))
			return -1;
	}
	if (web) {
		fprintf(stderr, PROG ": writing a docroot of %d files of "
			"%llu KiB in %s\n", WEB_FILES, WEB_FILE_BYTES >> 10,
			b->web);
		if (scratch_mkdir(b->web) ||
		    httpd_write_files(b->web, WEB_FILES, WEB_FILE_BYTES,
				      &stop_signal))
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ groups */

static int parent_create(struct bench *b)
{
	char path[PATH_MAX];

	snprintf(b->parent, sizeof(b->parent), GROUP_PREFIX "%d",
		 (int)getpid());
	if (b->layout == HTTPD_HYBRID) {
		snprintf(path, sizeof(path), HTTPD_V1_MEMORY "/%s", b->parent);
		if (mkdir(path, 0755))
			goto fail;
		b->made_parent_memory = true;
		snprintf(path, sizeof(path), HTTPD_V2_HYBRID "/%s", b->parent);
		if (mkdir(path, 0755))
			goto fail;
		b->made_parent_twin = true;
		return 0;
	}
	snprintf(path, sizeof(path), HTTPD_V2_ROOT "/%s", b->parent);
	if (mkdir(path, 0755))
		goto fail;
	b->made_parent_memory = true;
	snprintf(path, sizeof(path), HTTPD_V2_ROOT "/%s/cgroup.subtree_control",
		 b->parent);
	if (httpd_write_file(path, "+memory"))
		goto fail;
	return 0;
fail:
	fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
	return -1;
}

static void parent_remove(struct bench *b)
{
	char path[PATH_MAX];

	if (b->made_parent_twin) {
		snprintf(path, sizeof(path), HTTPD_V2_HYBRID "/%s", b->parent);
		if (rmdir(path))
			fprintf(stderr, PROG ": removing %s: %s\n", path,
				strerror(errno));
		b->made_parent_twin = false;
	}
	if (b->made_parent_memory) {
		snprintf(path, sizeof(path), "%s/%s",
			 b->layout == HTTPD_HYBRID ? HTTPD_V1_MEMORY :
			 HTTPD_V2_ROOT, b->parent);
		if (rmdir(path))
			fprintf(stderr, PROG ": removing %s: %s\n", path,
				strerror(errno));
		b->made_parent_memory = false;
	}
}

/* ------------------------------------------------------------ processes */

/* Stops pid (SIGTERM, SIGKILL after STOP_TIMEOUT_MS) and reaps it; its
 * wait status, or -1 when pid is 0. */
static int stop_process(pid_t *pid)
{
	int status = -1, waited = 0;
	pid_t w;

	if (*pid <= 0)
		return -1;
	kill(*pid, SIGTERM);
	for (;;) {
		w = waitpid(*pid, &status, WNOHANG);
		if (w == *pid || (w < 0 && errno != EINTR))
			break;
		if ((waited += 10) == STOP_TIMEOUT_MS)
			kill(*pid, SIGKILL);
		bench_sleep_ms(10);
	}
	*pid = 0;
	return status;
}

/* True when pid has exited (then reaped, its wait status in *status). */
static bool exited(pid_t *pid, int *status)
{
	pid_t w;

	if (*pid <= 0)
		return false;
	w = waitpid(*pid, status, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return false;
	if (w < 0)
		*status = 255 << 8;
	*pid = 0;
	return true;
}

static void print_status(const char *what, int status, const char *log)
{
	if (WIFEXITED(status))
		fprintf(stderr, PROG ": %s exited with status %d%s%s%s\n",
			what, WEXITSTATUS(status), log ? " (its output: " : "",
			log ? log : "", log ? ")" : "");
	else if (WIFSIGNALED(status))
		fprintf(stderr, PROG ": %s was killed by signal %d%s%s%s\n",
			what, WTERMSIG(status), log ? " (its output: " : "",
			log ? log : "", log ? ")" : "");
}

/* Starts the arm's controller on the group, in the keeper's group, its
 * output into log. */
static int controller_start(struct bench *b, const struct arm *arm,
			    const char *log)
{
	char min_size[32];
	const char *argv[16];
	unsigned n = 0, i;
	pid_t pid;

	snprintf(min_size, sizeof(min_size), "%llu", MIN_SIZE_BYTES);
	if (arm->kind == A_SENPAI) {
		argv[n++] = "python3";
		argv[n++] = "-u";   /* its log lines as they come */
		argv[n++] = b->o.senpai;
		argv[n++] = b->group.memory;
		argv[n++] = "--min-size";
		argv[n++] = min_size;
		for (i = 0; arm->args[i]; i++)
			argv[n++] = arm->args[i];
	} else {
		argv[n++] = b->o.memreclaimd;
		argv[n++] = "--cgroup";
		argv[n++] = b->group.memory;
		argv[n++] = "--proactive";
		if (b->layout == HTTPD_HYBRID)
			argv[n++] = "--hybrid-psi";
		argv[n++] = "--min-size";
		argv[n++] = MIN_SIZE_ARG;
	}
	argv[n] = NULL;
	pid = httpd_group_spawn_keeper(&b->group, argv, log);
	if (pid < 0)
		return -1;
	b->controller = pid;
	return 0;
}

/* ------------------------------------------------------------ workload */

static void fail_shared(struct shared *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail_shared(struct shared *sh, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->error, sizeof(sh->error), fmt, ap);
	va_end(ap);
	atomic_store(&sh->phase, P_FAILED);
}

/* Waits until the bench says at least phase p (P_STOP counts as any);
 * false when it said stop. */
static bool wait_go(struct shared *sh, int p)
{
	int g;

	while ((g = atomic_load(&sh->go)) < p)
		bench_sleep_ms(1);
	return g != P_STOP || p == P_STOP;
}

/* Reads the file at path whole into buf (READ_BYTES). */
static int read_file(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -1;
	while ((k = read(fd, buf, READ_BYTES)) > 0)
		;
	close(fd);
	return k < 0 ? -1 : 0;
}

/* The cache and anon workloads, in the group. */
static int run_local(struct bench *b, enum workload_id w)
{
	struct shared *sh = b->sh;
	char path[PATH_MAX + 32], hot[PATH_MAX + 32];
	char *buf = malloc(READ_BYTES);
	uint64_t *anon = NULL, t0, i, j;
	const uint64_t words = 4096 / sizeof(uint64_t);
	unsigned f;

	if (!buf) {
		fail_shared(sh, "out of memory");
		return 1;
	}
	memset(buf, 0, READ_BYTES);
	if (w == W_ANON) {
		anon = mmap(NULL, ANON_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (anon == MAP_FAILED) {
			fail_shared(sh, "mmap: %s", strerror(errno));
			return 1;
		}
		/* Whole pages: huge pages would make the hot part's words
		 * keep cold neighbours resident. */
		madvise(anon, ANON_BYTES, MADV_NOHUGEPAGE);
	}
	snprintf(hot, sizeof(hot), "%s/" HTTPD_FILE_NAME_FMT, b->hot, 0);
	atomic_store(&sh->phase, P_READY);
	if (!wait_go(sh, P_COLD))
		return 0;
	for (f = 0; f < COLD_FILES; f++) {
		snprintf(path, sizeof(path), "%s/" HTTPD_FILE_NAME_FMT,
			 b->cold, f);
		if (read_file(path, buf)) {
			fail_shared(sh, "reading %s: %s", path,
				    strerror(errno));
			return 1;
		}
	}
	if (anon)
		for (i = 0; i < ANON_BYTES / 4096; i++)
			for (j = 0; j < words; j++)
				anon[i * words + j] =
					(i * words + j) * 0x9e3779b97f4a7c15ULL;
	atomic_store(&sh->phase, P_COLD_DONE);
	if (!wait_go(sh, P_HOT))
		return 0;
	while (atomic_load(&sh->go) != P_STOP) {
		t0 = bench_now_ns();
		if (read_file(hot, buf)) {
			fail_shared(sh, "reading %s: %s", hot,
				    strerror(errno));
			return 1;
		}
		if (anon)
			for (i = 0; i < ANON_HOT_BYTES / 4096; i++)
				anon[i * words] += 1;
		atomic_fetch_add(&sh->busy_ns, bench_now_ns() - t0);
		atomic_fetch_add(&sh->passes, 1);
		bench_sleep_ms(PAUSE_MS);
	}
	return 0;
}

/* The httpd workload's client, outside the group. */
static int run_web(struct bench *b)
{
	static volatile sig_atomic_t never;
	struct shared *sh = b->sh;
	uint32_t files[WEB_FILES];
	uint64_t *latency = calloc(WEB_FILES, sizeof(*latency));
	struct httpd_load load = {
		.port = b->server.port,
		.connections = CONNECTIONS,
		.requests = WEB_FILES,
		.files = files,
		.file_bytes = WEB_FILE_BYTES,
		.stop = &never,
	};
	struct httpd_result res = { .latency_ns = latency };
	unsigned i;

	if (!latency) {
		fail_shared(sh, "out of memory");
		return 1;
	}
	for (i = 0; i < WEB_FILES; i++)
		files[i] = i;
	atomic_store(&sh->phase, P_READY);
	if (!wait_go(sh, P_COLD))
		return 0;
	if (httpd_run(&load, &res)) {
		fail_shared(sh, "the cold pass: %s", res.error);
		return 1;
	}
	atomic_store(&sh->phase, P_COLD_DONE);
	if (!wait_go(sh, P_HOT))
		return 0;
	load.requests = WEB_HOT_FILES;
	while (atomic_load(&sh->go) != P_STOP) {
		if (httpd_run(&load, &res)) {
			fail_shared(sh, "a hot pass: %s", res.error);
			return 1;
		}
		atomic_fetch_add(&sh->busy_ns, res.wall_ns);
		atomic_fetch_add(&sh->passes, 1);
		bench_sleep_ms(PAUSE_MS);
	}
	return 0;
}

static int worker_start(struct bench *b, enum workload_id w)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (w != W_HTTPD && httpd_group_enter_server(&b->group))
			_exit(126);
		_exit(w == W_HTTPD ? run_web(b) : run_local(b, w));
	}
	b->worker = pid;
	return 0;
}

/* Waits until the workload reaches phase p; -1 when it failed, exited
 * or the bench was stopped. */
static int wait_phase(struct bench *b, int p, const char *what)
{
	int waited = 0, status, ph;

	while ((ph = atomic_load(&b->sh->phase)) != p) {
		if (ph == P_FAILED) {
			fprintf(stderr, PROG ": the workload, %s: %s\n", what,
				b->sh->error);
			return -1;
		}
		if (exited(&b->worker, &status)) {
			print_status("the workload", status, NULL);
			return -1;
		}
		if (stop_signal)
			return -1;
		if ((waited += 5) > PHASE_TIMEOUT_MS) {
			fprintf(stderr, PROG ": the workload, %s: not done "
				"in %d s\n", what, PHASE_TIMEOUT_MS / 1000);
			return -1;
		}
		bench_sleep_ms(5);
	}
	return 0;
}

/* ------------------------------------------------------------ an arm */

struct sample_sums {
	double sum, peak, sum_total, peak_total;
	unsigned n;
	double hot_s;
};

static void log_path(const struct bench *b, enum workload_id w,
		     const char *what, char *path, size_t len)
{
	snprintf(path, len, "%s/%s-%s-%s.log", b->o.logs,
		 b->layout == HTTPD_HYBRID ? "v1" : "v2", workloads[w].name,
		 what);
}

static void arm_cleanup(struct bench *b, enum workload_id w,
			const char *slug)
{
	char log[PATH_MAX + 96], what[64];

	stop_process(&b->controller);
	stop_process(&b->worker);
	snprintf(what, sizeof(what), "%s-apache", slug);
	log_path(b, w, what, log, sizeof(log));
	httpd_server_stop(&b->server, b->server.dir[0] ? log : NULL);
	httpd_group_remove(&b->group);
	if (b->sh)
		munmap(b->sh, sizeof(*b->sh));
	b->sh = NULL;
}

/* Runs arm ai of workload w; warmup: the no-controller arm for
 * WARMUP_S, its figures not kept (the first arm of a workload would
 * otherwise pay alone for what its first run brings into the caches:
 * Apache's modules, the programs' pages, which under qemu come over
 * 9p). */
static int run_arm(struct bench *b, enum workload_id w, unsigned ai,
		   bool warmup)
{
	const struct arm *arm = &arms[ai];
	const char *slug = warmup ? "warmup" : arm->slug;
	const char *label = warmup ? "warm-up (not counted)" : arm->name;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct result scratch, *r = warmup ? &scratch : &b->results[w][ai];
	struct httpd_counters c0, c1, c2;
	struct httpd_memory m, m0, m1, m2;
	struct sample_sums s = { .hot_s = NAN };
	char name[192], log[PATH_MAX + 96], server[PATH_MAX + 64];
	uint64_t t_start, t_cold, t0, t, end, passes, busy;
	double base, hot;
	int status = 0, e = -1;

	memset(&b->group, 0, sizeof(b->group));
	memset(&b->server, 0, sizeof(b->server));
	b->sh = mmap(NULL, sizeof(*b->sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b->sh == MAP_FAILED) {
		b->sh = NULL;
		return -1;
	}
	snprintf(name, sizeof(name), "%s/%s-%s", b->parent, workloads[w].name,
		 slug);
	if (httpd_group_create(&b->group, b->layout, name, HTTPD_NO_LIMIT))
		goto out;
	if ((w == W_HTTPD && httpd_drop_files(b->web, WEB_FILES)) ||
	    (w != W_HTTPD && (httpd_drop_files(b->cold, COLD_FILES) ||
			      httpd_drop_files(b->hot, 1))))
		goto out;
	if (w == W_HTTPD) {
		snprintf(server, sizeof(server), "%s/server-%s-%s", b->tmp,
			 workloads[w].name, slug);
		if (scratch_mkdir(server) ||
		    httpd_server_start(&b->server, server, b->web, &b->group))
			goto out;
	}
	t_start = bench_now_ns();
	if (worker_start(b, w) || wait_phase(b, P_READY, "setting up"))
		goto out;
	atomic_store(&b->sh->go, P_COLD);
	if (wait_phase(b, P_COLD_DONE, "its cold phase"))
		goto out;
	t_cold = bench_now_ns();
	if (httpd_group_read(&b->group, &c0) ||
	    httpd_group_read_memory(&b->group, &m0))
		goto out;
	/* What is not page cache once the cold phase is done (the
	 * reader's buffer, its anonymous memory, Apache's threads and
	 * sockets after a pass over every file), less what the workload
	 * leaves cold, plus the hot file data. */
	base = m0.current_bytes > m0.file_bytes ?
	       (m0.current_bytes - m0.file_bytes) / MIB : 0;
	hot = fmax(base - workloads[w].cold_anon_bytes / MIB, 0) +
	      workloads[w].hot_file_bytes / MIB;
	log_path(b, w, slug, log, sizeof(log));
	if (arm->kind != A_NONE && controller_start(b, arm, log))
		goto out;
	t0 = bench_now_ns();
	atomic_store(&b->sh->go, P_HOT);
	end = t0 + (warmup ? WARMUP_S : b->o.duration_s) * 1000000000ULL;
	for (t = t0; t < end; t = bench_now_ns()) {
		double cur, total;

		if (stop_signal)
			goto out;
		if (atomic_load(&b->sh->phase) == P_FAILED) {
			fprintf(stderr, PROG ": the workload: %s\n",
				b->sh->error);
			goto out;
		}
		if (exited(&b->worker, &status)) {
			print_status("the workload", status, NULL);
			goto out;
		}
		if (exited(&b->controller, &status)) {
			print_status(arm->name, status, log);
			goto out;
		}
		if (httpd_group_read_usage(&b->group, &m))
			goto out;
		cur = m.current_bytes / MIB;
		total = (m.current_bytes + m.swap_bytes) / MIB;
		s.sum += cur;
		s.sum_total += total;
		s.peak = fmax(s.peak, cur);
		s.peak_total = fmax(s.peak_total, total);
		s.n++;
		if (isnan(s.hot_s) && cur <= NEAR_HOT * hot)
			s.hot_s = (t - t0) / 1e9;
		bench_sleep_ms(SAMPLE_MS);
	}
	/* The end of the hot phase, the workload still running. */
	if (httpd_group_read(&b->group, &c1) ||
	    httpd_group_read_memory(&b->group, &m1))
		goto out;
	atomic_store(&b->sh->go, P_STOP);
	t = bench_now_ns();
	passes = atomic_load(&b->sh->passes);
	busy = atomic_load(&b->sh->busy_ns);
	/* The workload ends its pass and its pause. */
	while (b->worker > 0 && !exited(&b->worker, &status)) {
		if (bench_now_ns() - t > STOP_TIMEOUT_MS * 1000000ULL) {
			fprintf(stderr, PROG ": the workload did not stop\n");
			goto out;
		}
		bench_sleep_ms(5);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		print_status("the workload", status, NULL);
		if (b->sh->error[0])
			fprintf(stderr, PROG ": the workload: %s\n",
				b->sh->error);
		goto out;
	}
	if (arm->kind != A_NONE) {
		if (exited(&b->controller, &status)) {
			print_status(arm->name, status, log);
			goto out;
		}
		status = stop_process(&b->controller);
		if (!WIFSIGNALED(status) &&
		    (!WIFEXITED(status) || WEXITSTATUS(status)))
			print_status(arm->name, status, log);
	}
	/* After the controller stopped: its CPU time whole, and every OOM
	 * kill of the arm. */
	if (httpd_group_read(&b->group, &c2) ||
	    httpd_group_read_memory(&b->group, &m2))
		goto out;
	r->v[M_MEAN] = s.sum / s.n;
	r->v[M_PEAK] = s.peak;
	r->v[M_MEAN_TOTAL] = s.sum_total / s.n;
	r->v[M_PEAK_TOTAL] = s.peak_total;
	r->v[M_HOT_S] = s.hot_s;
	r->v[M_PASSES] = passes / ((t - t0) / 1e9);
	r->v[M_PASS_MS] = passes ? busy / 1e6 / passes : NAN;
	r->v[M_PSI] = (c1.psi_some_us - c0.psi_some_us) / 1e3;
	r->v[M_PSI6] = r->v[M_PSI] * PSI_TARGET_WINDOW_S / ((t - t0) / 1e9);
	r->v[M_REFAULT] = ((c1.refault_pages - c0.refault_pages) +
			   (m1.refault_anon_pages - m0.refault_anon_pages)) *
			  (double)page / MIB;
	r->v[M_OOM] = (double)m2.oom_kills;
	r->v[M_CTL_CPU] = arm->kind == A_NONE ? NAN :
			  (c2.keeper_cpu_us - c0.keeper_cpu_us) / 1e6;
	r->hot_mib = hot;
	r->cold_s = (t_cold - t_start) / 1e9;
	r->final_mib = m1.current_bytes / MIB;
	r->final_file_mib = m1.file_bytes / MIB;
	r->final_anon_mib = m1.anon_bytes / MIB;
	r->final_swap_mib = m1.swap_bytes / MIB;
	r->ran = true;
	fprintf(stderr, PROG ": %s %s: not page cache %.1f MiB, hot set %.1f MiB, "
		"cold phase %.1f s; mean %.1f peak %.1f MiB (+swap %.1f, "
		"%.1f), at the end %.1f MiB (file %.1f, anon %.1f, swap %.1f), "
		"hot set %s%.1f s; %.2f passes/s, "
		"%.1f ms a pass; PSI some %.0f ms (%.1f ms per 6 s), refaults "
		"%.1f MiB, OOM kills %.0f, controller CPU %.2f s\n",
		workloads[w].name, label, base, hot, r->cold_s,
		r->v[M_MEAN], r->v[M_PEAK], r->v[M_MEAN_TOTAL],
		r->v[M_PEAK_TOTAL], r->final_mib, r->final_file_mib,
		r->final_anon_mib, r->final_swap_mib,
		isnan(s.hot_s) ? "not reached in " : "at ",
		isnan(s.hot_s) ? (t - t0) / 1e9 : s.hot_s, r->v[M_PASSES],
		r->v[M_PASS_MS], r->v[M_PSI], r->v[M_PSI6], r->v[M_REFAULT],
		r->v[M_OOM], isnan(r->v[M_CTL_CPU]) ? 0 : r->v[M_CTL_CPU]);
	e = 0;
out:
	arm_cleanup(b, w, slug);
	return e;
}

/* ------------------------------------------------------------ figures */

static void bench_name(const struct bench *b, enum workload_id w, char *buf,
		       size_t len)
{
	snprintf(buf, len, "proactive-%s-%s",
		 b->layout == HTTPD_HYBRID ? "v1" : "v2", workloads[w].name);
}

/* The known hot set of w's first arm that ran (every arm measures its
 * own baseline; they differ by a few pages). */
static double hot_set_mib(const struct bench *b, enum workload_id w)
{
	unsigned a;

	for (a = 0; a < NARMS; a++)
		if (b->results[w][a].ran)
			return b->results[w][a].hot_mib;
	return NAN;
}

static void emit(const struct bench *b, enum workload_id w)
{
	const struct result *none = &b->results[w][0];
	char bench[64], name[128], base[128];
	unsigned a, m;

	bench_name(b, w, bench, sizeof(bench));
	bench_emit(bench, "known hot set",
		   hot_set_mib(b, w), "MiB", NULL, 0, NULL);
	for (a = 0; a < NARMS; a++) {
		const struct result *r = &b->results[w][a];

		if (!r->ran)
			continue;
		for (m = 0; m < NMEASURES; m++) {
			if (arms[a].kind == A_NONE && m == M_CTL_CPU)
				continue;
			snprintf(name, sizeof(name), "%s: %s", arms[a].name,
				 measures[m].name);
			snprintf(base, sizeof(base), "%s: %s", arms[0].name,
				 measures[m].name);
			if (arms[a].kind == A_NONE || !none->ran ||
			    m == M_CTL_CPU)
				bench_emit(bench, name, r->v[m],
					   measures[m].unit, NULL, 0, NULL);
			else
				bench_emit_ci(bench, name, r->v[m],
					      measures[m].unit, base,
					      none->v[m], measures[m].unit,
					      r->v[m] / none->v[m], NAN, NAN);
		}
	}
}

static void print_value(unsigned m, double v, unsigned duration_s)
{
	if (m == M_HOT_S && isnan(v))
		fprintf(stderr, " > %u |", duration_s);
	else if (isnan(v))
		fputs(" - |", stderr);
	else if (m == M_OOM)
		fprintf(stderr, " %.0f |", v);
	else
		fprintf(stderr, " %.2f |", v);
}

/* The tables of docs/PERFORMANCE.md, on stderr. */
static void print_tables(const struct bench *b, enum workload_id w)
{
	const struct result *none = &b->results[w][0];
	char bench[64];
	unsigned a, m;

	bench_name(b, w, bench, sizeof(bench));
	fprintf(stderr, "\n%s: one run, a hot phase of %u s; known hot set "
		"%.1f MiB\n\n| arm |", bench, b->o.duration_s,
		hot_set_mib(b, w));
	for (m = 0; m < NMEASURES; m++)
		fprintf(stderr, " %s |", measures[m].column);
	fputs("\n|---|", stderr);
	for (m = 0; m < NMEASURES; m++)
		fputs("---:|", stderr);
	for (a = 0; a < NARMS; a++) {
		const struct result *r = &b->results[w][a];

		if (!r->ran)
			continue;
		fprintf(stderr, "\n| %s |", arms[a].name);
		for (m = 0; m < NMEASURES; m++)
			print_value(m, r->v[m], b->o.duration_s);
	}
	if (!none->ran) {
		fputs("\n\n", stderr);
		return;
	}
	fprintf(stderr, "\n\n%s: ratio to no controller\n\n| arm |", bench);
	for (m = 0; m < M_OOM; m++)
		if (m != M_HOT_S)
			fprintf(stderr, " %s |", measures[m].column);
	fputs("\n|---|", stderr);
	for (m = 0; m < M_OOM; m++)
		if (m != M_HOT_S)
			fputs("---:|", stderr);
	for (a = 1; a < NARMS; a++) {
		const struct result *r = &b->results[w][a];

		if (!r->ran)
			continue;
		fprintf(stderr, "\n| %s |", arms[a].name);
		for (m = 0; m < M_OOM; m++) {
			double q = r->v[m] / none->v[m];

			if (m == M_HOT_S)
				continue;
			if (isfinite(q))
				fprintf(stderr, " %.3f |", q);
			else
				fputs(" - |", stderr);
		}
	}
	fputs("\n\n", stderr);
}

/* ------------------------------------------------------------ main */

static void cleanup(struct bench *b)
{
	parent_remove(b);
	scratch_remove(b->tmp);
	b->tmp[0] = '\0';
}

static int run_all(struct bench *b)
{
	bool server = false;
	unsigned w, a;

	for (w = 0; w < NWORKLOADS; w++)
		for (a = 0; a < NARMS; a++) {
			if (!b->o.workload[w] || !b->o.arm[a])
				continue;
			if (b->skip[w][a])
				fprintf(stderr, PROG ": %s %s skipped: %s\n",
					workloads[w].name, arms[a].slug,
					b->skip[w][a]);
			else if (w == W_HTTPD)
				server = true;
		}
	if (server && httpd_server_prepare())
		return -1;
	if (make_files(b) || parent_create(b))
		return -1;
	for (w = 0; w < NWORKLOADS && !stop_signal; w++) {
		bool any = false;

		for (a = 0; a < NARMS; a++) {
			if (!b->o.workload[w] || !b->o.arm[a] ||
			    b->skip[w][a])
				continue;
			if ((!any && run_arm(b, w, 0, true)) ||
			    run_arm(b, w, a, false))
				return -1;
			any = true;
		}
		if (any) {
			emit(b, w);
			print_tables(b, w);
		}
	}
	return stop_signal ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static struct bench b;
	int e;

	if (parse_options(argc, argv, &b.o))
		return 2;
	if (b.o.list) {
		plan(&b, false);
		print_list(&b);
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, PROG ": needs root (memory cgroups, Apache); "
			"skipped\n");
		return 77;
	}
	if (httpd_group_probe(&b.layout))
		return 77;
	plan(&b, true);
	if (scratch_mkdirs(b.o.logs))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	e = run_all(&b);
	cleanup(&b);
	httpd_server_restore_distro();
	if (e && stop_signal)
		fprintf(stderr, PROG ": stopped by signal %d\n",
			(int)stop_signal);
	return e ? 1 : 0;
}
