/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mr-demo — the workload harness behind scripts/demo.
 *
 * It creates its own memory cgroup beneath $MEMRECLAIM_TEST_PARENT (default:
 * the root of the cgroup v1 memory mount) with a limit (256 MiB), writes a
 * data file at least 4x the limit on a real filesystem, and runs one
 * workload three times in the group, in this order: without memreclaimd;
 * with it and a fixed margin (--margin, 32 MiB unless given, memreclaimd's
 * default hysteresis unless --hysteresis is given, proportional batch);
 * and with it and an adaptive margin (memreclaimd --margin auto,
 * proportional batch: mr_group_set_margin_adaptive() with its defaults).
 * The workload is two processes that move themselves
 * into the group: a toucher that maps, touches and unmaps a fresh 16 MiB
 * anonymous buffer per round, timing each of a fixed number of rounds
 * (--rounds), and a reader streaming the file with read() in 1 MiB chunks,
 * from the start again after each pass, until the toucher is done. Before
 * each pass the reader drops the file from the page cache
 * (posix_fadvise DONTNEED), so its reads keep charging the group.
 *
 * It prints one table (or, with --json, one JSON object): per run, the
 * growth of the group's limit hits (charges that met the limit: cgroup
 * v1's memory.failcnt, v2's memory.events max, the table and the JSON
 * name which), the reader's
 * MiB/s while the toucher ran, the touch rounds' p50/p99/max, and
 * memreclaimd's reclaim calls, bytes freed and CPU time (user + system),
 * the margin in force at its end and, for the adaptive margin, its last
 * strength and how many times it was sized, which it takes from the
 * daemon's final JSON line (printed once its worker has stopped);
 * --json adds the user and system CPU
 * time of the reader and of the toucher (getrusage() in each, at its
 * end), where the direct reclaim the workload's own charges run is
 * counted, as system time, and, on hybrid hosts (a cgroup2 mount without
 * the memory controller beside the v1 one), the growth of the memory
 * stall time (PSI some and full) of the group's cgroup2 twin
 * (mr_ctx_set_hybrid_psi()), which counts the time the workload's tasks
 * spent in direct reclaim at the limit (try_charge_memcg() runs it
 * between psi_memstall_enter() and psi_memstall_leave()). It removes the group and the file when
 * done, also on SIGINT and SIGTERM.
 *
 * Where no writable memory cgroup exists (no cgroup v1 memory controller,
 * or no permission to create a group beneath it), and whenever
 * MEMRECLAIM_BACKEND=sim, it says so and runs the same workload on the
 * library's simulator instead: the workload as a trace (--print-trace
 * prints it), replayed with mr_sim_trace_run() without a policy and with
 * each of memreclaimd's two (policyopt_apply(), as memreclaimd applies
 * them, kept by the library's margin worker as a simulated task), in
 * virtual time, with the cost set "today" and seed 1; the margin and
 * strength come from mr_group_read_margin_stats() at the run's end.
 * There the rounds default to 3000, not 200: a simulated round takes
 * 3-4 ms of virtual time, so 200 of them end inside the adaptive
 * margin's first interval (MR_WORKER_SAFETY_NS, 1 s), which holds the
 * margin at its floor to measure, and 3000 last about 10 s, long enough
 * for it to settle (SETTLED_INTERVALS). The
 * table is the same, under a line saying it ran on the simulator.
 *
 * Exit status: 0 when all three runs completed, 1 otherwise, 2 on a bad
 * option.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "experiments.h"
#include "json.h"
#include "policyopt.h"

#define PROG "mr-demo"
#define MIB ((uint64_t)1 << 20)
#define CHUNK_BYTES MIB
#define TOUCH_BYTES (16 * MIB)
#define DEFAULT_LIMIT_BYTES (256 * MIB)
#define DEFAULT_MARGIN_BYTES (32 * MIB)
#define DEFAULT_ROUNDS 200
#define SIM_DEFAULT_ROUNDS 3000
/* An adaptive margin's first interval holds it at its floor; then it
 * probes at full strength, which halves or doubles once an interval (a
 * probe that does not pay goes to 0 at once), and one at 0 probes again
 * after 8 intervals: a run with fewer shows its start, not where it
 * settles (mr_group_set_margin_adaptive()). */
#define SETTLED_INTERVALS 8
#define MAX_ROUNDS 100000
#define FILE_FACTOR 4
#define WORKLOAD_TIMEOUT_MS (10 * 60 * 1000)
#define CHILD_TIMEOUT_MS (30 * 1000)
/* One line of memreclaimd's --json output, its adaptive figures included. */
#define DAEMON_LINE_MAX 4096
/* The simulated runs: one seed and today's costs, so that every run of
 * the demo prints the same table. */
#define SIM_SEED 1
#define SIM_COSTS "today"
#define SIM_GROUP "/demo"
/* What the simulated runs' limit hits are: the trace figure of the
 * simulated group's charges that met its max. */
#define SIM_HITS_COUNTER "simulated failcnt_count"

/* CPU time of a workload child, its own (getrusage RUSAGE_SELF at its
 * end): the system time holds the direct reclaim of its charges. */
struct child_cpu {
	uint64_t user_ns, sys_ns;
};

/* What a child sends back through its pipe (one write, < PIPE_BUF). */
struct reader_result {
	int err;                /* 0 or a negative errno */
	uint64_t bytes;
	uint64_t passes;        /* passes begun */
	uint64_t ns;
	struct child_cpu cpu;
};

struct toucher_result {
	int err;
	uint64_t rounds;
	uint64_t p50_ns, p99_ns, max_ns;
	struct child_cpu cpu;
};

/* The runs, in the order they are made. */
enum run_kind {
	RUN_WITHOUT,              /* no memreclaimd */
	RUN_FIXED,                /* memreclaimd --margin SIZE */
	RUN_ADAPTIVE,             /* memreclaimd --margin auto */
	NR_RUNS,
};

/* memreclaimd's final statistics. */
struct daemon_stats {
	uint64_t calls, freed_bytes, cpu_ns;
	uint64_t margin_bytes;    /* in force at the end */
	uint32_t strength_ppm;    /* RUN_ADAPTIVE: the last strength */
	uint64_t intervals;       /* RUN_ADAPTIVE: times it was sized */
};

struct run_result {
	enum run_kind kind;
	uint64_t limit_hits_growth;
	bool has_stall;           /* the group has a cgroup2 twin */
	uint64_t stall_some_us, stall_full_us;
	struct reader_result reader;
	struct toucher_result toucher;
	struct daemon_stats daemon;
};

struct options {
	uint64_t limit_bytes;
	/* memreclaimd's policy for RUN_FIXED: --margin, --hysteresis
	 * (unset: memreclaimd's default), batch auto; and what it comes to
	 * for the limit. */
	struct policy_opts policy;
	uint64_t margin_bytes;
	uint64_t hysteresis_bytes;
	/* memreclaimd's policy for RUN_ADAPTIVE: --margin auto --batch
	 * auto. */
	struct policy_opts adaptive;
	uint64_t file_bytes;      /* 0: FILE_FACTOR x limit */
	unsigned int rounds;          /* touch rounds per run */
	bool rounds_set;              /* --rounds given */
	const char *dir;
	const char *memreclaimd;
	const char *sched;            /* memreclaimd --sched, or NULL */
	bool json;
	bool print_trace;             /* print the simulator's trace, exit */
};

/* Everything cleanup must undo; one instance, owned by main(). */
struct demo {
	struct options opt;
	int sfd;                  /* signalfd of SIGINT/SIGTERM */
	bool interrupted;
	sigset_t old_mask;
	mr_ctx_t *ctx;
	mr_group_t *group;
	char cgroup[PATH_MAX];
	bool cgroup_created;
	bool psi;                 /* the group has a cgroup2 twin for PSI */
	bool simulated;           /* the runs were on the simulator */
	const char *hits_counter; /* what limit hits count: hits_counter() */
	char file[PATH_MAX];
	bool file_created;
	pid_t reader, toucher, daemon;
	int stop_w;               /* write end of the reader's stop pipe */
	int daemon_out;           /* read end of memreclaimd's stdout */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void log_to_stderr(int level, const char *msg, void *userdata)
{
	fprintf(stderr, PROG ": library (%d): %s\n", level, msg);
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--memreclaimd PATH] [--limit SIZE] [--margin SIZE]\n"
		"       [--hysteresis SIZE] [--dir DIR] [--file-size SIZE]\n"
		"       [--rounds N] [--sched idle|nice:N] [--json] [--print-trace]\n"
		"SIZE: bytes with an optional K, M or G suffix (powers of 1024).\n"
		"Three runs: without memreclaimd, with its fixed --margin, with\n"
		"--margin auto (adaptive; --margin and --hysteresis are the\n"
		"fixed run's). Defaults: memreclaimd from PATH, --limit 256M,\n"
		"--margin 32M, --hysteresis: memreclaimd's own (the margin),\n"
		"--dir /var/tmp, --file-size 4x the limit, --rounds %d (%d on\n"
		"the simulator; 16 MiB touch rounds per run; the reader streams\n"
		"the file until they are done).\n"
		"--sched is passed to memreclaimd.\n"
		"The cgroup is created beneath $MEMRECLAIM_TEST_PARENT (default:\n"
		"the cgroup v1 memory mount). Where none can be created, and with\n"
		"MEMRECLAIM_BACKEND=sim, the workload runs on the simulator\n"
		"(--memreclaimd, --dir and --sched do not apply there);\n"
		"--print-trace prints it as a simulator trace and exits.\n",
		DEFAULT_ROUNDS, SIM_DEFAULT_ROUNDS);
}

/* SIZE in bytes (no N%: the sizes here are not shares of the limit). */
static int parse_size(const char *opt, const char *s, uint64_t *out)
{
	struct size_opt v = { .set = false };
	int r = policyopt_parse_size(PROG, opt, s, false, &v);

	if (r == 0)
		*out = v.bytes;
	return r;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "memreclaimd", required_argument, NULL, 'd' },
		{ "limit", required_argument, NULL, 'l' },
		{ "margin", required_argument, NULL, 'm' },
		{ "hysteresis", required_argument, NULL, 'y' },
		{ "dir", required_argument, NULL, 'D' },
		{ "file-size", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "sched", required_argument, NULL, 's' },
		{ "print-trace", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long rounds;
	char *end;
	int c, r = 0;

	*o = (struct options){
		.limit_bytes = DEFAULT_LIMIT_BYTES,
		.policy = {
			.margin = { .set = true, .bytes = DEFAULT_MARGIN_BYTES },
			.batch_auto = true,
		},
		.rounds = DEFAULT_ROUNDS,
		.dir = "/var/tmp",
		.memreclaimd = "memreclaimd",
	};
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->memreclaimd = optarg;
			break;
		case 'l':
			r = parse_size("--limit", optarg, &o->limit_bytes);
			break;
		case 'm':
			r = policyopt_parse_size(PROG, "--margin", optarg,
						 false, &o->policy.margin);
			break;
		case 'y':
			r = policyopt_parse_size(PROG, "--hysteresis", optarg,
						 false, &o->policy.hysteresis);
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'f':
			r = parse_size("--file-size", optarg, &o->file_bytes);
			break;
		case 'r':
			errno = 0;
			rounds = strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] < '0' ||
			    optarg[0] > '9' || rounds < 1 ||
			    rounds > MAX_ROUNDS) {
				fprintf(stderr, PROG ": --rounds '%s': 1..%d\n",
					optarg, MAX_ROUNDS);
				r = -EINVAL;
			}
			o->rounds = (unsigned int)rounds;
			o->rounds_set = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 's':
			o->sched = optarg; /* memreclaimd validates it */
			break;
		case 'p':
			o->print_trace = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			r = -EINVAL;
			break;
		}
	}
	if (r == 0 && optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		r = -EINVAL;
	}
	if (r == 0 && (o->limit_bytes < 64 * MIB ||
		       o->limit_bytes > (1ULL << 40))) {
		fprintf(stderr, PROG ": --limit must be 64M .. 1024G\n");
		r = -EINVAL;
	}
	/* As memreclaimd computes them (its default hysteresis: the
	 * margin). */
	if (r == 0) {
		struct policy_bytes b;

		r = policyopt_compute(PROG, "the group", &o->policy,
				      o->limit_bytes, &b);
		o->margin_bytes = b.margin;
		o->hysteresis_bytes = b.hysteresis;
	}
	if (r == 0 && (o->margin_bytes == 0 ||
		       o->margin_bytes >= o->limit_bytes / 2 ||
		       o->hysteresis_bytes >= o->limit_bytes / 2 ||
		       o->margin_bytes + o->hysteresis_bytes >=
		       o->limit_bytes / 2)) {
		fprintf(stderr, PROG ": --margin must be above 0, and margin + hysteresis below half the limit%s\n",
			o->policy.hysteresis.set ? "" :
			" (the hysteresis defaults to the margin)");
		r = -EINVAL;
	}
	/* Spelled as memreclaimd is given them. */
	if (r == 0)
		r = policyopt_parse(PROG, "margin", "auto", &o->adaptive);
	if (r == 0)
		r = policyopt_parse(PROG, "batch", "auto", &o->adaptive);
	if (r == 0 && o->file_bytes == 0)
		o->file_bytes = FILE_FACTOR * o->limit_bytes;
	if (r == 0 && o->file_bytes < FILE_FACTOR * o->limit_bytes) {
		fprintf(stderr, PROG ": --file-size must be at least %d x the limit\n",
			FILE_FACTOR);
		r = -EINVAL;
	}
	if (r < 0)
		fprintf(stderr, "Try '" PROG " --help'.\n");
	return r;
}

/* ---------------------------------------------------- signals, waiting */

/* True once SIGINT or SIGTERM has arrived (checked without blocking). */
static bool interrupted(struct demo *d)
{
	struct signalfd_siginfo si;
	struct pollfd pfd = { .fd = d->sfd, .events = POLLIN };

	if (!d->interrupted && poll(&pfd, 1, 0) > 0 &&
	    read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		fprintf(stderr, PROG ": %s, cleaning up\n",
			strsignal((int)si.ssi_signo));
		d->interrupted = true;
	}
	return d->interrupted;
}

/* Waits until fd is readable (or hung up). Returns 0, -EINTR on SIGINT or
 * SIGTERM, -ETIMEDOUT. */
static int wait_readable(struct demo *d, int fd, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = d->sfd, .events = POLLIN },
	};
	int r;

	for (;;) {
		r = poll(pfd, 2, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		if (pfd[1].revents && interrupted(d))
			return -EINTR;
		if (pfd[0].revents)
			return 0;
	}
}

/* Reads one result struct from a child's pipe. */
static int read_result(struct demo *d, int fd, void *buf, size_t len,
		       int timeout_ms)
{
	ssize_t n;
	int r;

	r = wait_readable(d, fd, timeout_ms);
	if (r < 0)
		return r;
	n = read(fd, buf, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EPIPE;
}

/* Reaps a child, killing it first when `sig` is not 0; waits at most
 * about timeout_ms, then kills it with SIGKILL. Returns its wait status. */
static int reap(pid_t *pid, int sig, int timeout_ms)
{
	int status = 0, waited = 0;
	pid_t r;

	if (*pid <= 0)
		return 0;
	if (sig)
		kill(*pid, sig);
	for (;;) {
		r = waitpid(*pid, &status, WNOHANG);
		if (r == *pid || (r < 0 && errno != EINTR))
			break;
		if (waited >= timeout_ms) {
			kill(*pid, SIGKILL);
			waitpid(*pid, &status, 0);
			break;
		}
		usleep(10000);
		waited += 10;
	}
	*pid = 0;
	return status;
}

/* ------------------------------------------------------------ setup */

/* Decodes the octal escapes (\040 ...) of a mountinfo field in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* True if the comma-separated list has the token `tok`. */
static bool has_token(const char *list, const char *tok)
{
	size_t len = strlen(tok);

	while (list && *list) {
		if (strncmp(list, tok, len) == 0 &&
		    (list[len] == ',' || list[len] == '\0'))
			return true;
		list = strchr(list, ',');
		if (list)
			list++;
	}
	return false;
}

/* The mount point of the cgroup v1 memory controller, from
 * /proc/self/mountinfo: "id parent maj:min root mountpoint opts
 * [optional...] - fstype source superopts". */
static int find_memory_mount(char *out, size_t len)
{
	char line[4096], *f[16], *save, *tok;
	int n, dash, r = -ENODEV;
	FILE *fp;

	fp = fopen("/proc/self/mountinfo", "re");
	if (!fp)
		return -errno;
	while (r == -ENODEV && fgets(line, sizeof(line), fp)) {
		n = 0;
		dash = -1;
		for (tok = strtok_r(line, " \n", &save); tok && n < 16;
		     tok = strtok_r(NULL, " \n", &save)) {
			if (dash < 0 && strcmp(tok, "-") == 0)
				dash = n;
			f[n++] = tok;
		}
		if (dash < 5 || n < dash + 4 || strcmp(f[dash + 1], "cgroup") ||
		    !has_token(f[dash + 3], "memory"))
			continue;
		unescape(f[4]);
		if (strlen(f[4]) >= len) {
			r = -ENAMETOOLONG;
			break;
		}
		strcpy(out, f[4]);
		r = 0;
	}
	fclose(fp);
	return r;
}

/* What struct mr_limits' limit_hits counts on the backend of a group
 * opened on a real path: cgroup1 or cgroup2, never the simulator, which
 * is chosen only by name (mr-demo runs it itself, SIM_HITS_COUNTER). On
 * cgroup v2 the library reads memory.events.local (memory.events before
 * Linux 5.2): the same count for the demo's group, which has no children. */
static const char *hits_counter(const char *backend)
{
	return strcmp(backend, "cgroup2") == 0 ? "memory.events max"
					       : "memory.failcnt";
}

/* Whether path is on a cgroup v1 hierarchy (statfs: CGROUP_SUPER_MAGIC;
 * cgroup2 is CGROUP2_SUPER_MAGIC). */
static bool on_cgroup_v1(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == CGROUP_SUPER_MAGIC;
}

static int create_cgroup(struct demo *d)
{
	const char *parent = getenv("MEMRECLAIM_TEST_PARENT");
	char mount[PATH_MAX];
	int r;

	if (!parent || !*parent) {
		r = find_memory_mount(mount, sizeof(mount));
		if (r < 0) {
			fprintf(stderr, PROG ": no cgroup v1 memory controller is mounted (%s); "
				"this demo needs a writable memory cgroup\n",
				mr_strerror(r));
			return -ENODEV;
		}
		parent = mount;
	}
	if ((size_t)snprintf(d->cgroup, sizeof(d->cgroup),
			     "%s/memreclaim-demo-%ld", parent,
			     (long)getpid()) >= sizeof(d->cgroup))
		return -ENAMETOOLONG;
	/* With a cgroup2 twin for the memory stall time where the parent is
	 * on cgroup v1 and the host is hybrid; without, if the twin cannot
	 * be made. Hybrid PSI is cgroup v1's alone: asked for on cgroup v2,
	 * it would log that no v1 memory controller is mounted. */
	d->psi = on_cgroup_v1(parent) &&
		 mr_ctx_set_hybrid_psi(d->ctx, 1) == 0;
	r = mr_cgroup_create(d->ctx, d->cgroup, d->opt.limit_bytes);
	if (r < 0 && d->psi) {
		d->psi = false;
		mr_ctx_set_hybrid_psi(d->ctx, 0);
		r = mr_cgroup_create(d->ctx, d->cgroup, d->opt.limit_bytes);
	}
	if (r == -ENODEV || r == -EACCES || r == -EPERM || r == -EROFS) {
		fprintf(stderr, PROG ": no writable memory cgroup beneath %s: %s\n",
			parent, mr_strerror(r));
		return -ENODEV;
	}
	if (r < 0) {
		fprintf(stderr, PROG ": creating %s: %s\n", d->cgroup,
			mr_strerror(r));
		return r;
	}
	d->cgroup_created = true;
	r = mr_group_open(d->ctx, d->cgroup, NULL, &d->group);
	if (r < 0) {
		fprintf(stderr, PROG ": opening %s: %s\n", d->cgroup,
			mr_strerror(r));
		return r;
	}
	d->hits_counter = hits_counter(mr_group_backend(d->group));
	return 0;
}

/* Writes the data file once; its pages are clean and synced after. */
static int create_file(struct demo *d)
{
	struct statfs sfs;
	uint64_t written = 0;
	char *buf;
	int fd, r = 0;
	size_t i;

	if (statfs(d->opt.dir, &sfs) < 0) {
		r = -errno;
		fprintf(stderr, PROG ": %s: %s\n", d->opt.dir, strerror(-r));
		return r;
	}
	if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC) {
		fprintf(stderr, PROG ": %s is on tmpfs/ramfs, whose pages are not "
			"reclaimable page cache; pass --dir on a disk filesystem\n",
			d->opt.dir);
		return -EINVAL;
	}
	if ((uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize <
	    d->opt.file_bytes + 256 * MIB) {
		fprintf(stderr, PROG ": %s has less than %" PRIu64 " MiB free\n",
			d->opt.dir, d->opt.file_bytes / MIB + 256);
		return -ENOSPC;
	}
	if ((size_t)snprintf(d->file, sizeof(d->file),
			     "%s/memreclaim-demo-%ld.data", d->opt.dir,
			     (long)getpid()) >= sizeof(d->file))
		return -ENAMETOOLONG;
	fd = open(d->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		fprintf(stderr, PROG ": creating %s: %s\n", d->file,
			strerror(-r));
		return r;
	}
	d->file_created = true;
	buf = malloc(CHUNK_BYTES);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (i = 0; i < CHUNK_BYTES; i++)
		buf[i] = (char)(i * 7 + 1);
	while (r == 0 && written < d->opt.file_bytes) {
		size_t len = d->opt.file_bytes - written < CHUNK_BYTES ?
			     (size_t)(d->opt.file_bytes - written) : CHUNK_BYTES;
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			r = -errno;
		else
			written += (uint64_t)n;
		if (r == 0 && written % (64 * MIB) == 0 && interrupted(d))
			r = -EINTR;
	}
	free(buf);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r < 0 && r != -EINTR)
		fprintf(stderr, PROG ": writing %s: %s\n", d->file,
			strerror(-r));
	return r;
}

/* Drops the data file from the page cache, so the next reads charge the
 * reader's group. */
static int drop_file_cache(struct demo *d)
{
	int fd, r = 0;

	fd = open(d->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	if (r == 0)
		r = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	if (r < 0)
		fprintf(stderr, PROG ": dropping %s from the cache: %s\n",
			d->file, strerror(-r));
	return r;
}

/* ------------------------------------------------------------ children */

/* Common start of a workload child: default signals, into the group. */
static int child_enter(struct demo *d)
{
	sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
	close(d->sfd);
	if (d->stop_w >= 0)
		close(d->stop_w);
	return mr_cgroup_attach(d->ctx, d->cgroup, getpid());
}

static uint64_t timeval_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL +
	       (uint64_t)tv->tv_usec * 1000ULL;
}

/* The calling child's CPU time so far. */
static void child_cpu(struct child_cpu *cpu)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return;
	cpu->user_ns = timeval_ns(&ru.ru_utime);
	cpu->sys_ns = timeval_ns(&ru.ru_stime);
}

static void child_send(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	_exit(n == (ssize_t)len ? 0 : 1);
}

/* Streams the file until `stop` becomes readable or hangs up (the parent
 * closes its write end when the toucher is done): pass after pass from the
 * start, each after dropping the file from the page cache, so the reads
 * keep charging the group. */
static void reader_main(struct demo *d, int stop, int out)
{
	struct reader_result res = { 0 };
	struct pollfd pfd = { .fd = stop, .events = POLLIN };
	uint64_t t0;
	char *buf;
	ssize_t n = 0;
	int fd;

	res.err = child_enter(d);
	if (res.err < 0)
		child_send(out, &res, sizeof(res));
	buf = malloc(CHUNK_BYTES);
	fd = open(d->file, O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		res.err = buf ? -errno : -ENOMEM;
		child_send(out, &res, sizeof(res));
	}
	t0 = now_ns();
	while (res.err == 0 && poll(&pfd, 1, 0) == 0) {
		if (n == 0) { /* start of the file: a new pass */
			res.err = -posix_fadvise(fd, 0, 0,
						 POSIX_FADV_DONTNEED);
			if (res.err == 0 && lseek(fd, 0, SEEK_SET) < 0)
				res.err = -errno;
			res.passes++;
		}
		if (res.err == 0)
			n = read(fd, buf, CHUNK_BYTES);
		if (n < 0)
			res.err = -errno;
		else
			res.bytes += (uint64_t)n;
	}
	res.ns = now_ns() - t0;
	child_cpu(&res.cpu);
	child_send(out, &res, sizeof(res));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank = (n * pct + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

/* Maps, touches and unmaps a fresh TOUCH_BYTES buffer per round, for
 * d->opt.rounds rounds, timing each. */
static void toucher_main(struct demo *d, int out)
{
	struct toucher_result res = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	size_t n = 0, i;
	uint64_t *ns, t0;
	volatile char *p;
	void *map;

	res.err = child_enter(d);
	if (res.err < 0)
		child_send(out, &res, sizeof(res));
	ns = malloc(d->opt.rounds * sizeof(*ns));
	if (!ns) {
		res.err = -ENOMEM;
		child_send(out, &res, sizeof(res));
	}
	while (n < d->opt.rounds) {
		t0 = now_ns();
		map = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			res.err = -errno;
			break;
		}
		p = map;
		for (i = 0; i < TOUCH_BYTES; i += (size_t)page)
			p[i] = (char)i;
		munmap(map, TOUCH_BYTES);
		ns[n++] = now_ns() - t0;
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	res.rounds = n;
	res.p50_ns = percentile(ns, n, 50);
	res.p99_ns = percentile(ns, n, 99);
	res.max_ns = n ? ns[n - 1] : 0;
	child_cpu(&res.cpu);
	child_send(out, &res, sizeof(res));
}

static int open_pipe(int *rd, int *wr)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	*rd = p[0];
	*wr = p[1];
	return 0;
}

/* Forks a workload child; fn never returns. */
static int spawn(struct demo *d, pid_t *pid, int *result_fd, int stop_fd,
		 void (*fn)(struct demo *, int, int))
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (*pid == 0) {
		close(p[0]);
		fn(d, stop_fd, p[1]);
		_exit(1);
	}
	close(p[1]);
	*result_fd = p[0];
	return 0;
}

static void reader_entry(struct demo *d, int stop_fd, int out)
{
	reader_main(d, stop_fd, out);
}

static void toucher_entry(struct demo *d, int stop_fd, int out)
{
	toucher_main(d, out);
}

/* ------------------------------------------------------------ memreclaimd */

/* Reads one line of the daemon's stdout into line (NUL-terminated).
 * Returns 0, -EPIPE at end of file, -EINTR, -ETIMEDOUT. */
static int daemon_line(struct demo *d, char *line, size_t len, int timeout_ms)
{
	size_t n = 0;
	ssize_t r;
	int w;

	while (n + 1 < len) {
		w = wait_readable(d, d->daemon_out, timeout_ms);
		if (w < 0)
			return w;
		r = read(d->daemon_out, line + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	return 0;
}

/* Starts memreclaimd on the group with the run's margin: the fixed one,
 * or auto. */
static int start_daemon(struct demo *d, enum run_kind kind)
{
	char margin[32], hysteresis[32], line[DAEMON_LINE_MAX];
	const char *argv[16] = {
		d->opt.memreclaimd, "--cgroup", d->cgroup, "--margin", margin,
		"--batch", "auto", "--json", "--stats-interval", "0",
	};
	int p[2], r, argc = 10;

	/* Only what the user chose: memreclaimd has its own defaults. An
	 * adaptive margin sizes its own hysteresis. */
	if (kind == RUN_FIXED && d->opt.policy.hysteresis.set) {
		argv[argc++] = "--hysteresis";
		argv[argc++] = hysteresis;
	}
	if (d->opt.sched) {
		argv[argc++] = "--sched";
		argv[argc++] = d->opt.sched;
	}

	if (kind == RUN_ADAPTIVE)
		snprintf(margin, sizeof(margin), "auto");
	else
		snprintf(margin, sizeof(margin), "%" PRIu64,
			 d->opt.margin_bytes);
	snprintf(hysteresis, sizeof(hysteresis), "%" PRIu64,
		 d->opt.hysteresis_bytes);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	d->daemon = fork();
	if (d->daemon < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (d->daemon == 0) {
		sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, PROG ": running %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	d->daemon_out = p[0];
	/* The daemon prints its "start" line once the worker runs. */
	r = daemon_line(d, line, sizeof(line), CHILD_TIMEOUT_MS);
	if (r == 0 && !strstr(line, "\"event\":\"start\""))
		r = -EPROTO;
	if (r < 0 && r != -EINTR)
		fprintf(stderr, PROG ": memreclaimd (%s) did not start\n",
			d->opt.memreclaimd);
	return r;
}

/* The number after "key": in a flat JSON line. */
static int json_u64(const char *line, const char *key, uint64_t *out)
{
	char pat[64];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return -ENOENT;
	p += strlen(pat);
	errno = 0;
	*out = strtoull(p, &end, 10);
	return errno || end == p ? -EIO : 0;
}

/* SIGTERMs the daemon and takes its statistics from its final line,
 * checking that its margin was the run's kind. */
static int stop_daemon(struct demo *d, enum run_kind kind,
		       struct daemon_stats *st)
{
	char line[DAEMON_LINE_MAX], last[DAEMON_LINE_MAX] = "";
	const char *adaptive = kind == RUN_ADAPTIVE ?
			       "\"margin_adaptive\":true" :
			       "\"margin_adaptive\":false";
	uint64_t strength = 0;
	int r, status;

	kill(d->daemon, SIGTERM);
	while ((r = daemon_line(d, line, sizeof(line), CHILD_TIMEOUT_MS)) == 0)
		if (strstr(line, "\"event\":\"final\""))
			strcpy(last, line);
	close(d->daemon_out);
	d->daemon_out = -1;
	status = reap(&d->daemon, 0, CHILD_TIMEOUT_MS);
	if (r == -EINTR)
		return r;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, PROG ": memreclaimd did not exit cleanly (status 0x%x)\n",
			status);
		return -EIO;
	}
	if (json_u64(last, "worker_calls", &st->calls) < 0 ||
	    json_u64(last, "worker_freed_bytes", &st->freed_bytes) < 0 ||
	    json_u64(last, "cpu_ns", &st->cpu_ns) < 0 ||
	    json_u64(last, "margin_bytes", &st->margin_bytes) < 0 ||
	    (kind == RUN_ADAPTIVE &&
	     (json_u64(last, "margin_strength_ppm", &strength) < 0 ||
	      json_u64(last, "margin_intervals", &st->intervals) < 0))) {
		fprintf(stderr, PROG ": no final statistics from memreclaimd\n");
		return -EIO;
	}
	if (!strstr(last, adaptive) || strength > 1000000) {
		fprintf(stderr, PROG ": memreclaimd did not keep the margin it was given (%s)\n",
			kind == RUN_ADAPTIVE ? "auto" : "fixed");
		return -EPROTO;
	}
	st->strength_ppm = (uint32_t)strength;
	return 0;
}

/* ------------------------------------------------------------ runs */

static int read_limit_hits(struct demo *d, uint64_t *limit_hits)
{
	struct mr_limits lim = { .size = sizeof(lim) };
	int r = mr_group_read_limits(d->group, &lim);

	if (r < 0) {
		fprintf(stderr, PROG ": reading %s: %s\n", d->cgroup,
			mr_strerror(r));
		return r;
	}
	*limit_hits = lim.limit_hits;
	return 0;
}

/* The twin's memory stall totals, when there is a twin. */
static int read_stall(struct demo *d, struct mr_pressure *p)
{
	int r;

	if (!d->psi)
		return 0;
	r = mr_group_read_pressure(d->group, p);
	if (r < 0)
		fprintf(stderr, PROG ": reading the pressure of %s: %s\n",
			d->cgroup, mr_strerror(r));
	return r;
}

/* The run's name in messages and in the table. */
static const char *run_name(enum run_kind kind)
{
	switch (kind) {
	case RUN_FIXED:
		return "memreclaimd fixed";
	case RUN_ADAPTIVE:
		return "memreclaimd auto";
	default:
		return "without memreclaimd";
	}
}

static int run_once(struct demo *d, enum run_kind kind, struct run_result *res)
{
	bool with_daemon = kind != RUN_WITHOUT;
	int reader_fd = -1, toucher_fd = -1, stop_r = -1;
	struct mr_pressure p0 = { .size = sizeof(p0) };
	struct mr_pressure p1 = { .size = sizeof(p1) };
	uint64_t hits0, hits1;
	int r;

	*res = (struct run_result){ .kind = kind };
	if (!d->opt.json)
		fprintf(stderr, PROG ": run %s ...\n", run_name(kind));
	r = drop_file_cache(d);
	if (r == 0 && with_daemon)
		r = start_daemon(d, kind);
	if (r == 0)
		r = read_limit_hits(d, &hits0);
	if (r == 0)
		r = read_stall(d, &p0);
	if (r == 0)
		r = open_pipe(&stop_r, &d->stop_w);
	/* The reader first, so the group is under pressure when the
	 * toucher's rounds begin; it reads until the toucher is done. */
	if (r == 0)
		r = spawn(d, &d->reader, &reader_fd, stop_r, reader_entry);
	if (r == 0)
		r = spawn(d, &d->toucher, &toucher_fd, -1, toucher_entry);
	if (r == 0)
		r = read_result(d, toucher_fd, &res->toucher,
				sizeof(res->toucher), WORKLOAD_TIMEOUT_MS);
	if (d->stop_w >= 0) {
		close(d->stop_w);
		d->stop_w = -1;
	}
	if (r == 0)
		r = read_result(d, reader_fd, &res->reader,
				sizeof(res->reader), CHILD_TIMEOUT_MS);
	reap(&d->reader, r < 0 ? SIGKILL : 0, CHILD_TIMEOUT_MS);
	reap(&d->toucher, r < 0 ? SIGKILL : 0, CHILD_TIMEOUT_MS);
	if (r == 0)
		r = read_limit_hits(d, &hits1);
	if (r == 0)
		r = read_stall(d, &p1);
	if (r == 0 && with_daemon)
		r = stop_daemon(d, kind, &res->daemon);
	if (r == 0 && (res->reader.err < 0 || res->toucher.err < 0)) {
		fprintf(stderr, PROG ": workload failed: reader: %s, toucher: %s\n",
			mr_strerror(res->reader.err),
			mr_strerror(res->toucher.err));
		r = -EIO;
	}
	if (r == 0)
		res->limit_hits_growth = hits1 - hits0;
	if (r == 0 && d->psi) {
		res->has_stall = true;
		res->stall_some_us = p1.some.total_us - p0.some.total_us;
		res->stall_full_us = p1.full.total_us - p0.full.total_us;
	}
	if (r == -ETIMEDOUT)
		fprintf(stderr, PROG ": a workload process did not answer in time\n");
	if (stop_r >= 0)
		close(stop_r);
	if (reader_fd >= 0)
		close(reader_fd);
	if (toucher_fd >= 0)
		close(toucher_fd);
	return r;
}

/* ------------------------------------------------------------ report */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double reader_mib_s(const struct reader_result *r)
{
	return r->ns ? (double)r->bytes / (double)MIB / ((double)r->ns / 1e9) : 0;
}

/* The limit hits without memreclaimd over those with it, for the run of
 * the given kind. */
static void print_ratio(const struct demo *d, const struct run_result *runs,
			enum run_kind kind)
{
	const struct run_result *w = &runs[RUN_WITHOUT], *m = &runs[kind];
	const char *margin = kind == RUN_ADAPTIVE ? "adaptive" : "fixed";

	if (m->limit_hits_growth)
		/* The ratio, and in words which way it goes: 0.6x reads as
		 * a cut at a glance where it is 1.6 times as many. */
		printf("limit hits (%s) without / with memreclaimd's %s margin: %" PRIu64
		       " / %" PRIu64 " = %.2fx (%.1f times %s with it)\n",
		       d->hits_counter, margin, w->limit_hits_growth,
		       m->limit_hits_growth,
		       (double)w->limit_hits_growth /
		       (double)m->limit_hits_growth,
		       w->limit_hits_growth >= m->limit_hits_growth ?
		       (double)w->limit_hits_growth /
		       (double)m->limit_hits_growth :
		       (double)m->limit_hits_growth /
		       (double)w->limit_hits_growth,
		       w->limit_hits_growth >= m->limit_hits_growth ?
		       "fewer" : "more");
	else
		printf("limit hits (%s) without / with memreclaimd's %s margin: %" PRIu64
		       " / 0 (no charge met the limit with it)\n",
		       d->hits_counter, margin, w->limit_hits_growth);
}

static void print_table(const struct demo *d, const struct run_result *runs)
{
	int i;

	if (d->simulated)
		printf("Ran on the simulator, not on this machine's kernel "
		       "(cost set " SIM_COSTS ", seed %d; virtual time; "
		       "mr-demo --print-trace prints the workload)\n",
		       SIM_SEED);
	printf("%scgroup %s: limit %" PRIu64 " MiB; data file %" PRIu64
	       " MiB, streamed while the toucher runs %u rounds; memreclaimd fixed: margin %" PRIu64
	       " MiB, hysteresis %" PRIu64 " MiB%s; memreclaimd auto: --margin auto (adaptive, the library's defaults); batch auto in both\n\n",
	       d->simulated ? "simulated " : "",
	       d->cgroup, d->opt.limit_bytes / MIB, d->opt.file_bytes / MIB,
	       d->opt.rounds, d->opt.margin_bytes / MIB,
	       d->opt.hysteresis_bytes / MIB,
	       d->opt.policy.hysteresis.set ? "" :
	       " (its default)");
	printf("%-20s %14s %12s %8s %8s %8s %8s %12s %12s %12s %10s %8s\n",
	       "run", "limit hits", "reader MiB/s", "rounds", "p50 ms",
	       "p99 ms", "max ms", "worker calls", "worker MiB",
	       "worker CPU s", "margin MiB", "strength");
	for (i = 0; i < NR_RUNS; i++) {
		const struct run_result *r = &runs[i];

		printf("%-20s %14" PRIu64 " %12.1f %8" PRIu64 " %8.2f %8.2f %8.2f",
		       run_name(r->kind), r->limit_hits_growth,
		       reader_mib_s(&r->reader), r->toucher.rounds,
		       ms(r->toucher.p50_ns), ms(r->toucher.p99_ns),
		       ms(r->toucher.max_ns));
		if (r->kind == RUN_WITHOUT) {
			printf(" %12s %12s %12s %10s %8s\n", "-", "-", "-",
			       "-", "-");
			continue;
		}
		printf(" %12" PRIu64 " %12.1f %12.3f %10.2f", r->daemon.calls,
		       (double)r->daemon.freed_bytes / (double)MIB,
		       (double)r->daemon.cpu_ns / 1e9,
		       (double)r->daemon.margin_bytes / (double)MIB);
		if (r->kind == RUN_ADAPTIVE)
			printf(" %8.3f\n", r->daemon.strength_ppm / 1e6);
		else
			printf(" %8s\n", "-");
	}
	printf("\n(rounds: 16 MiB touch rounds; reader MiB/s: while the rounds ran; worker MiB: freed by memreclaimd's margin worker%s; "
	       "margin MiB: the margin in force at the end; strength: the adaptive margin's last, 0 to 1)\n",
	       d->simulated ? "" : "; worker CPU s: memreclaimd's CPU time, user + system");
	if (d->simulated)
		printf("On the simulator, memreclaimd's margin worker is the library's, run as a simulated task with memreclaimd's margin, "
		       "hysteresis and batch; worker CPU s is the virtual time of its reclaim calls.\n");
	printf("limit hits: the growth of %s, charges that met the limit, each of which ran reclaim in the workload's own thread. "
	       "Latency columns are reported, not judged: on today's kernels reclaim of clean cache is cheap, "
	       "and a margin takes cache away from the workload.\n", d->hits_counter);
	printf("memreclaimd auto sizes the margin every second (the first at 0, to measure) as charge rate x the worker's reaction time x 3 "
	       "(its safety factor), doubled on limit hits, and keeps it whole while the waits its reclaim takes off the workload's path "
	       "exceed its CPU and the refaults it causes, else drops it and probes again later (mr_group_set_margin_adaptive()).\n");
	printf("memreclaimd auto sized its margin %" PRIu64 " time%s in its run%s.\n",
	       runs[RUN_ADAPTIVE].daemon.intervals,
	       runs[RUN_ADAPTIVE].daemon.intervals == 1 ? "" : "s",
	       runs[RUN_ADAPTIVE].daemon.intervals < SETTLED_INTERVALS ?
	       ": too few for it to settle (a longer run: --rounds)" : "");
	print_ratio(d, runs, RUN_FIXED);
	print_ratio(d, runs, RUN_ADAPTIVE);
}

/* A run's ratio of limit hits, without over with, in JSON: null when no
 * charge met the limit with it. */
static void json_ratio(const char *key, const struct run_result *runs,
		       enum run_kind kind)
{
	if (runs[kind].limit_hits_growth)
		printf(",\"%s\":%.2f", key,
		       (double)runs[RUN_WITHOUT].limit_hits_growth /
		       (double)runs[kind].limit_hits_growth);
	else
		printf(",\"%s\":null", key);
}

static void print_json(const struct demo *d, const struct run_result *runs)
{
	static const char *const margin[] = {
		[RUN_WITHOUT] = "null",
		[RUN_FIXED] = "false",
		[RUN_ADAPTIVE] = "true",
	};
	int i;

	printf("{\"cgroup\":");
	json_string(d->cgroup);
	if (d->simulated)
		printf(",\"simulator\":true,\"costs\":\"" SIM_COSTS
		       "\",\"seed\":%d", SIM_SEED);
	else
		printf(",\"simulator\":false");
	printf(",\"limit_bytes\":%" PRIu64
	       ",\"file_bytes\":%" PRIu64 ",\"touch_rounds_per_run\":%u,\"margin_bytes\":%" PRIu64
	       ",\"hysteresis_bytes\":%" PRIu64 ",\"limit_hits_counter\":",
	       d->opt.limit_bytes, d->opt.file_bytes, d->opt.rounds,
	       d->opt.margin_bytes, d->opt.hysteresis_bytes);
	json_string(d->hits_counter);
	printf(",\"runs\":[");
	for (i = 0; i < NR_RUNS; i++) {
		const struct run_result *r = &runs[i];

		printf("%s{\"memreclaimd\":%s,\"margin_adaptive\":%s"
		       ",\"limit_hits_growth\":%" PRIu64
		       ",\"reader_bytes\":%" PRIu64 ",\"reader_ns\":%" PRIu64
		       ",\"reader_passes\":%" PRIu64
		       ",\"reader_mib_s\":%.1f,\"touch_rounds\":%" PRIu64
		       ",\"touch_p50_ns\":%" PRIu64 ",\"touch_p99_ns\":%" PRIu64
		       ",\"touch_max_ns\":%" PRIu64,
		       i ? "," : "",
		       r->kind != RUN_WITHOUT ? "true" : "false",
		       margin[r->kind],
		       r->limit_hits_growth, r->reader.bytes, r->reader.ns,
		       r->reader.passes, reader_mib_s(&r->reader),
		       r->toucher.rounds,
		       r->toucher.p50_ns, r->toucher.p99_ns, r->toucher.max_ns);
		/* The simulator has no CPU accounting of the tasks. */
		if (d->simulated)
			printf(",\"reader_user_ns\":null,\"reader_sys_ns\":null"
			       ",\"touch_user_ns\":null,\"touch_sys_ns\":null");
		else
			printf(",\"reader_user_ns\":%" PRIu64
			       ",\"reader_sys_ns\":%" PRIu64
			       ",\"touch_user_ns\":%" PRIu64
			       ",\"touch_sys_ns\":%" PRIu64,
			       r->reader.cpu.user_ns, r->reader.cpu.sys_ns,
			       r->toucher.cpu.user_ns, r->toucher.cpu.sys_ns);
		if (r->has_stall)
			printf(",\"memory_stall_some_us\":%" PRIu64
			       ",\"memory_stall_full_us\":%" PRIu64,
			       r->stall_some_us, r->stall_full_us);
		else
			printf(",\"memory_stall_some_us\":null"
			       ",\"memory_stall_full_us\":null");
		if (r->kind == RUN_WITHOUT)
			printf(",\"worker_calls\":null,\"worker_freed_bytes\":null"
			       ",\"worker_cpu_ns\":null,\"margin_bytes\":null");
		else
			printf(",\"worker_calls\":%" PRIu64
			       ",\"worker_freed_bytes\":%" PRIu64
			       ",\"worker_cpu_ns\":%" PRIu64
			       ",\"margin_bytes\":%" PRIu64,
			       r->daemon.calls, r->daemon.freed_bytes,
			       r->daemon.cpu_ns, r->daemon.margin_bytes);
		if (r->kind == RUN_ADAPTIVE)
			printf(",\"margin_strength_ppm\":%" PRIu32
			       ",\"margin_intervals\":%" PRIu64 "}",
			       r->daemon.strength_ppm, r->daemon.intervals);
		else
			printf(",\"margin_strength_ppm\":null"
			       ",\"margin_intervals\":null}");
	}
	printf("]");
	json_ratio("limit_hits_ratio", runs, RUN_FIXED);
	json_ratio("limit_hits_ratio_adaptive", runs, RUN_ADAPTIVE);
	printf("}\n");
}

/* ------------------------------------------------------------ simulator */

/* The workload as a simulator trace (docs/trace-format.md): the reader
 * first, as the real runs start it, streaming the file in chunks from a
 * cold cache, pass after pass, until the toucher's rounds are done; the
 * file is taken in whole chunks. The machine has room beyond the group,
 * so only the group's limit binds, and no swap, so reclaim takes page
 * cache only. Returns a malloc()ed string, or NULL. */
static char *demo_trace(const struct options *o)
{
	uint64_t chunks = (o->file_bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f,
		"# mr-demo's workload (mr-demo --print-trace): a toucher maps,\n"
		"# touches and unmaps 16 MiB per round; a reader streams the\n"
		"# data file in 1 MiB chunks, dropping it from the page cache\n"
		"# before each pass, until the toucher is done.\n"
		"machine ram %" PRIu64 "M cpus 2 swap none\n"
		"group " SIM_GROUP " max %" PRIu64 "K\n"
		"file data %" PRIu64 "M\n"
		"region buffer %" PRIu64 "M\n"
		"\n"
		"task reader " SIM_GROUP " 0s background\n"
		"  repeat forever\n"
		"    drop data\n"
		"    repeat %" PRIu64 "\n"
		"      req chunk\n"
		"        read data next %" PRIu64 "M\n"
		"      end\n"
		"    end\n"
		"  end\n"
		"end\n"
		"\n"
		"task toucher " SIM_GROUP " 0s\n"
		"  repeat %u\n"
		"    req round\n"
		"      anon buffer 0 %" PRIu64 "M\n"
		"      free buffer\n"
		"    end\n"
		"  end\n"
		"end\n",
		(o->limit_bytes + 1024 * MIB) / MIB, o->limit_bytes / 1024,
		chunks * CHUNK_BYTES / MIB, TOUCH_BYTES / MIB, chunks,
		CHUNK_BYTES / MIB, o->rounds, TOUCH_BYTES / MIB);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The figures of the demo's group that the table shows. */
struct sim_figures {
	double failcnt, elapsed_s, chunks, rounds, p50_ms, p99_ms, max_ms;
	double calls, freed_bytes, reclaim_s;
};

/* One simulated run: memreclaimd's policy (NULL: without it), the demo's
 * group as the setup was handed it, and what the run gives back. */
struct sim_run {
	const struct policy_opts *policy;
	mr_group_t *group;
	struct sim_figures f;
	struct mr_margin_stats margin;
	int margin_err;           /* mr_group_read_margin_stats() */
	bool margin_read;
};

static void sim_figure(const char *policy, const char *name, double value,
		       void *userdata)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
		{ "failcnt_count", offsetof(struct sim_figures, failcnt) },
		{ "elapsed_s", offsetof(struct sim_figures, elapsed_s) },
		{ "req_chunk_count", offsetof(struct sim_figures, chunks) },
		{ "req_round_count", offsetof(struct sim_figures, rounds) },
		{ "req_round_p50_ms", offsetof(struct sim_figures, p50_ms) },
		{ "req_round_p99_ms", offsetof(struct sim_figures, p99_ms) },
		{ "req_round_max_ms", offsetof(struct sim_figures, max_ms) },
		{ "margin_calls_count", offsetof(struct sim_figures, calls) },
		{ "margin_freed_bytes",
		  offsetof(struct sim_figures, freed_bytes) },
		{ "margin_reclaim_s", offsetof(struct sim_figures, reclaim_s) },
	};
	struct sim_run *run = userdata;
	size_t i;

	if (strcmp(policy, SIM_GROUP) != 0)
		return;
	/* The run is over and its worker stopped, the group still open:
	 * its margin as memreclaimd's final statistics give it. */
	if (run->group && !run->margin_read) {
		run->margin = (struct mr_margin_stats){
			.size = sizeof(run->margin),
		};
		run->margin_err = mr_group_read_margin_stats(run->group,
							     &run->margin);
		run->margin_read = true;
	}
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(name, map[i].name) == 0)
			*(double *)((char *)&run->f + map[i].off) = value;
	}
}

/* memreclaimd's policy, as mr-demo starts it (--margin SIZE and
 * --hysteresis, or --margin auto; --batch auto), applied as memreclaimd
 * applies it. */
static int sim_keeper(mr_ctx_t *ctx, mr_group_t *const *groups,
		      size_t ngroups, void *userdata)
{
	struct sim_run *run = userdata;
	struct mr_limits lim = { .size = sizeof(lim) };
	int r;

	run->group = groups[0];
	r = mr_group_read_limits(groups[0], &lim);
	if (r == 0)
		r = policyopt_apply(PROG, groups[0], SIM_GROUP, run->policy,
				    &lim, NULL, NULL);
	return r;
}

static uint64_t ns_of(double s)
{
	return (uint64_t)(s * 1e9 + 0.5);
}

/* One simulated run, its figures in the form of a real one's. */
static int sim_run_once(const struct options *o, const mr_sim_trace_t *t,
			enum run_kind kind, struct run_result *res)
{
	uint64_t per_pass = (o->file_bytes + CHUNK_BYTES - 1) / CHUNK_BYTES;
	struct sim_run run = {
		.policy = kind == RUN_FIXED ? &o->policy :
			  kind == RUN_ADAPTIVE ? &o->adaptive : NULL,
	};
	const struct sim_figures *f = &run.f;
	int r;

	if (!o->json)
		fprintf(stderr, PROG ": simulated run %s ...\n",
			run_name(kind));
	r = mr_sim_trace_run(t, SIM_SEED, SIM_COSTS,
			     run.policy ? sim_keeper : NULL, &run,
			     sim_figure, &run);
	if (r == 0 && run.policy && !run.margin_read)
		r = -EIO; /* no figure of the group */
	if (r == 0 && run.policy)
		r = run.margin_err;
	if (r == 0 && run.policy &&
	    run.margin.adaptive != (kind == RUN_ADAPTIVE))
		r = -EPROTO;
	if (r < 0) {
		fprintf(stderr, PROG ": the simulated run failed: %s\n",
			mr_strerror(r));
		return r;
	}
	*res = (struct run_result){
		.kind = kind,
		.limit_hits_growth = (uint64_t)f->failcnt,
		.reader = {
			.bytes = (uint64_t)f->chunks * CHUNK_BYTES,
			.passes = ((uint64_t)f->chunks + per_pass - 1) /
				  per_pass,
			.ns = ns_of(f->elapsed_s),
		},
		.toucher = {
			.rounds = (uint64_t)f->rounds,
			.p50_ns = ns_of(f->p50_ms / 1e3),
			.p99_ns = ns_of(f->p99_ms / 1e3),
			.max_ns = ns_of(f->max_ms / 1e3),
		},
		.daemon = {
			.calls = (uint64_t)f->calls,
			.freed_bytes = (uint64_t)f->freed_bytes,
			.cpu_ns = ns_of(f->reclaim_s),
			.margin_bytes = run.margin.margin_bytes,
			.strength_ppm = run.margin.strength_ppm,
			.intervals = run.margin.intervals,
		},
	};
	return 0;
}

/* The touch rounds of a simulated run: --rounds, or the simulator's
 * default (SIM_DEFAULT_ROUNDS: see the top of this file). */
static void sim_rounds(struct options *o)
{
	if (!o->rounds_set)
		o->rounds = SIM_DEFAULT_ROUNDS;
}

/* The demo on the simulator: the three runs, then the table. */
static int run_on_sim(struct demo *d)
{
	struct run_result runs[NR_RUNS];
	mr_sim_trace_t *t = NULL;
	char *text, err[256];
	int i, r;

	sim_rounds(&d->opt);
	text = demo_trace(&d->opt);
	if (!text) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return 1;
	}
	r = mr_sim_trace_parse(text, strlen(text), &t, err, sizeof(err));
	free(text);
	if (r < 0) {
		fprintf(stderr, PROG ": the demo's trace: %s\n",
			r == -EINVAL ? err : mr_strerror(r));
		return 1;
	}
	d->simulated = true;
	d->hits_counter = SIM_HITS_COUNTER;
	snprintf(d->cgroup, sizeof(d->cgroup), SIM_GROUP);
	for (i = 0; r == 0 && i < NR_RUNS; i++)
		r = sim_run_once(&d->opt, t, (enum run_kind)i, &runs[i]);
	mr_sim_trace_free(t);
	if (r < 0)
		return 1;
	if (d->opt.json)
		print_json(d, runs);
	else
		print_table(d, runs);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int print_trace(struct options *o)
{
	char *text;

	sim_rounds(o);
	text = demo_trace(o);

	if (!text) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Whether the environment asks for the simulator, as it does of the
 * library (mr_group_open() with no backend name). */
static bool sim_asked(void)
{
	const char *b = getenv("MEMRECLAIM_BACKEND");

	return b && strcmp(b, "sim") == 0;
}

/* ------------------------------------------------------------ main */

/* Undoes everything that was set up, in reverse. */
static void cleanup(struct demo *d)
{
	int r, tries;

	reap(&d->reader, SIGKILL, CHILD_TIMEOUT_MS);
	reap(&d->toucher, SIGKILL, CHILD_TIMEOUT_MS);
	if (d->daemon > 0) {
		reap(&d->daemon, SIGTERM, CHILD_TIMEOUT_MS);
		close(d->daemon_out);
	}
	mr_group_close(d->group);
	if (d->cgroup_created) {
		/* A killed task leaves the group's task list a moment later. */
		for (tries = 0; tries < 100; tries++) {
			r = mr_cgroup_remove(d->ctx, d->cgroup);
			if (r != -EBUSY)
				break;
			usleep(20000);
		}
		if (r < 0)
			fprintf(stderr, PROG ": removing %s: %s\n", d->cgroup,
				mr_strerror(r));
	}
	if (d->file_created && unlink(d->file) < 0)
		fprintf(stderr, PROG ": removing %s: %s\n", d->file,
			strerror(errno));
	mr_ctx_free(d->ctx);
	close(d->sfd);
}

int main(int argc, char **argv)
{
	struct demo d = { .sfd = -1, .daemon_out = -1, .stop_w = -1 };
	struct run_result runs[NR_RUNS];
	sigset_t mask;
	int i, r, status = 1;

	if (parse_options(argc, argv, &d.opt) < 0)
		return 2;
	if (d.opt.print_trace)
		return print_trace(&d.opt);
	if (sim_asked()) {
		fprintf(stderr, PROG ": MEMRECLAIM_BACKEND=sim: running the workload on the simulator\n");
		return run_on_sim(&d);
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, &d.old_mask) < 0 ||
	    (d.sfd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, PROG ": signals: %s\n", strerror(errno));
		return 1;
	}
	r = mr_ctx_new(&d.ctx);
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", mr_strerror(r));
		return 1;
	}
	mr_ctx_set_log(d.ctx, log_to_stderr, NULL, MR_LOG_WARNING);

	r = create_cgroup(&d);
	if (r == -ENODEV) {
		/* Nothing was created; signals as they were, so that ^C
		 * stops the simulated runs. */
		cleanup(&d);
		sigprocmask(SIG_SETMASK, &d.old_mask, NULL);
		fprintf(stderr, PROG ": no writable memory cgroup here: running the same workload on the simulator instead\n");
		return run_on_sim(&d);
	}
	if (r == 0)
		r = create_file(&d);
	for (i = 0; r == 0 && i < NR_RUNS && !interrupted(&d); i++)
		r = run_once(&d, (enum run_kind)i, &runs[i]);
	if (r == 0 && !interrupted(&d)) {
		if (d.opt.json)
			print_json(&d, runs);
		else
			print_table(&d, runs);
		fflush(stdout);
		status = 0;
	}
	if (d.interrupted)
		status = 130;
	cleanup(&d);
	return status;
}
