/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd — keeps a memory cgroup's usage a margin below its limit with
 * libmemreclaim's margin worker, and reports what the worker did.
 *
 *   memreclaimd --cgroup PATH|--self [--margin auto|SIZE [--hysteresis SIZE]]
 *               [--batch SIZE|auto] [--backend auto|cgroup1|cgroup2]
 *               [--sched idle|nice:N] [--duration SECONDS]
 *               [--stats-interval SECONDS] [--json]
 *   memreclaimd --help | --version
 *
 * SIZE is a number of bytes with an optional K, M or G suffix (powers of
 * 1024), or N% of the group's limit (up to four decimals); a margin in
 * bytes is at least 4096 (MR_MARGIN_MIN_BYTES). --hysteresis defaults to
 * the margin. Without --margin, or with --margin auto, the margin is
 * adaptive (mr_group_set_margin_adaptive() with its defaults): sized from
 * the group's charge rate and the worker's reaction time, and kept only
 * while the waits it removes outweigh its CPU and refaults. --verbose
 * logs the library's debug messages (each change of the adaptive
 * margin's strength among them). MEMRECLAIM_STATE_DIR, when set, must be
 * an absolute path.
 *
 * Statistics are printed once the worker runs (event "start"), every
 * interval ("stats") and at exit ("final"): one line each, with --json one
 * flat JSON object per line. limit_hits is memory.failcnt (charges that met
 * the limit since the group was created, or since someone last reset the
 * counter); limit_hits_since_start is its growth since memreclaimd opened
 * the group.
 *
 * Exit status: 0 after a clean stop (duration reached, or SIGTERM, SIGINT,
 * SIGHUP or SIGQUIT), 1 when the library fails, 2 on a bad option,
 * including one this group cannot take (a margin not below its limit, a %
 * of a group with no limit): nothing was changed.
 * SIGTERM, SIGINT, SIGHUP (the terminal or session went away) and SIGQUIT
 * are taken with a signalfd: the worker is stopped, the final statistics
 * printed and the group closed (a lowered limit restored). SIGPIPE is
 * ignored: a reader of the statistics that went away does not kill the
 * daemon in the middle of a step. A statistics read that another manager
 * holds up (-EBUSY: it is in the middle of a reclaim step on the group) is
 * skipped with a note and retried at the next interval.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "json.h"
#include "policyopt.h"

#define PROG "memreclaimd"
#define DEFAULT_STATS_INTERVAL_S 10
#define MAX_SECONDS (365ULL * 24 * 3600)
#define EXIT_FAILURE_LIB 1
#define EXIT_BAD_OPTION 2
#define FINAL_TRIES 4

struct options {
	const char *cgroup;          /* NULL with --self until opened */
	bool self;                   /* --self: the group memreclaimd runs in */
	struct policy_opts policy;   /* --margin, --hysteresis, --batch */
	const char *backend;
	uint64_t duration_s;         /* 0: until a signal */
	uint64_t stats_interval_s;   /* 0: at start and exit only */
	bool json;
	bool verbose;                /* --verbose: debug messages too */
	bool sched_set;
	int sched;
	int nice;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --cgroup PATH|--self [--margin auto|SIZE] [OPTION]...\n"
		"Keeps a memory cgroup's usage a margin below its limit with libmemreclaim's\n"
		"margin worker, so that the group's own charges rarely meet the limit.\n"
		"\n"
		"  --cgroup PATH           the group's directory, an absolute path\n"
		"  --self                  instead of --cgroup (not with it): the memory cgroup memreclaimd itself runs in\n"
		"  --margin auto|SIZE      keep usage this far below the group's limit: auto (the default) sizes it from the\n"
		"                          charge rate and the worker's reaction, and drops it where it costs more than it\n"
		"                          saves; SIZE is a fixed margin (at least 4K, below the limit)\n"
		"  --hysteresis SIZE       with a fixed margin: each wake-up reclaims this much further below limit - margin\n"
		"                          (default: the margin, at most half of limit - margin)\n"
		"  --batch SIZE|auto       per reclaim call: SIZE (4K multiple; default 128K) or auto (excess/4, <= 64M, <= limit/8)\n"
		"  --backend auto|cgroup1|cgroup2  auto picks from the path's filesystem; default: MEMRECLAIM_BACKEND, else auto\n"
		"  --sched idle|nice:N     idle = SCHED_IDLE, nice:N = SCHED_OTHER at nice N; default nice:0 (a starved idle worker misses the margin on busy machines: docs/PERFORMANCE.md)\n"
		"  --duration SECONDS      stop after SECONDS; 0 (default) runs until SIGTERM, SIGINT, SIGHUP or SIGQUIT\n"
		"  --stats-interval SECONDS  print statistics every SECONDS (default %d); 0: at start and exit only\n"
		"  --json                  print statistics as one flat JSON object per line\n"
		"  --verbose               log the library's debug messages too (the adaptive margin's changes of strength,\n"
		"                          its probes, refused settings)\n"
		"  --version               print the version and exit\n"
		"  --help                  print this help and exit\n"
		"\n"
		"SIZE: bytes with an optional K, M or G suffix (powers of 1024), or N%% of the\n"
		"group's limit (at most 4 decimals); margin + hysteresis may not exceed the limit.\n"
		"Statistics: usage, limit, limit hits (memory.failcnt) since the group's creation\n"
		"and since memreclaimd started, what the worker did, and memreclaimd's CPU time.\n"
		"Environment: MEMRECLAIM_BACKEND (auto, cgroup1 or cgroup2) when --backend is not\n"
		"given; MEMRECLAIM_STATE_DIR, the absolute path of the directory the limit\n"
		"journal lives in (default /run/memreclaim; owned by this user, not writable by\n"
		"others).\n"
		"Exit status: 0 after a clean stop, 1 when the library fails, 2 on a bad option\n"
		"(each option may be given once); after a bad option nothing has changed.\n",
		DEFAULT_STATS_INTERVAL_S);
}

/* Reports a bad option value; the caller exits 2. */
static int bad_value(const char *opt, const char *value, const char *why)
{
	fprintf(stderr, PROG ": %s '%s': %s\n", opt, value, why);
	return -EINVAL;
}

static int parse_seconds(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return bad_value(opt, s, "not a whole number of seconds");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad_value(opt, s, "not a whole number of seconds");
	if (v > MAX_SECONDS)
		return bad_value(opt, s, "more than a year");
	*out = v;
	return 0;
}

static int parse_sched(const char *s, struct options *o)
{
	char *end;
	long n;

	if (strcmp(s, "idle") == 0) {
		o->sched = MR_SCHED_IDLE;
		o->nice = 0;
	} else if (strncmp(s, "nice:", 5) == 0) {
		errno = 0;
		n = strtol(s + 5, &end, 10);
		if (errno || end == s + 5 || *end || n < -20 || n > 19)
			return bad_value("--sched", s,
					 "nice level must be -20..19");
		o->sched = MR_SCHED_NICE;
		o->nice = (int)n;
	} else {
		return bad_value("--sched", s, "expected idle or nice:N");
	}
	o->sched_set = true;
	return 0;
}

/* Checks what can be checked without the group. */
/* The backends memreclaimd takes by name: real cgroups only. */
static bool real_backend(const char *name)
{
	return strcmp(name, "auto") == 0 || strcmp(name, "cgroup1") == 0 ||
	       strcmp(name, "cgroup2") == 0;
}

static int check_options(const struct options *o)
{
	const char *env;
	int r;

	if (o->cgroup && o->self) {
		fprintf(stderr, PROG ": --cgroup and --self are mutually "
			"exclusive (--self manages the group memreclaimd runs "
			"in)\n");
		return -EINVAL;
	}
	if (!o->cgroup && !o->self) {
		fprintf(stderr, PROG ": one of --cgroup and --self is required\n");
		return -EINVAL;
	}
	if (o->self && o->backend && strcmp(o->backend, "auto") != 0) {
		fprintf(stderr, PROG ": --backend does not apply to --self: the "
			"backend follows from where the group is mounted\n");
		return -EINVAL;
	}
	if (o->cgroup && o->cgroup[0] != '/') {
		fprintf(stderr, PROG ": --cgroup '%s': not an absolute path\n",
			o->cgroup);
		return -EINVAL;
	}
	r = policyopt_check(PROG, &o->policy);
	if (r < 0)
		return r;
	if (o->backend && !real_backend(o->backend)) {
		fprintf(stderr, PROG ": --backend '%s': expected auto, cgroup1 "
			"or cgroup2\n",
			o->backend);
		return -EINVAL;
	}
	/* mr_ctx_new()'s own check of the state directory, named here:
	 * the library can only answer -EINVAL. */
	env = secure_getenv("MEMRECLAIM_STATE_DIR");
	if (env && *env && env[0] != '/') {
		fprintf(stderr, PROG ": MEMRECLAIM_STATE_DIR='%s': the state "
			"directory must be an absolute path\n", env);
		return -EINVAL;
	}
	if (env && strlen(env) >= PATH_MAX - 64) {
		fprintf(stderr, PROG ": MEMRECLAIM_STATE_DIR: the state "
			"directory's path must be shorter than %d bytes\n",
			PATH_MAX - 64);
		return -EINVAL;
	}
	/* Without --backend the library takes MEMRECLAIM_BACKEND: the same
	 * names, and never the simulator (a regression from a fresh user's
	 * trial: `auto` was passed, and the variable silently ignored). */
	env = getenv("MEMRECLAIM_BACKEND");
	if (!o->backend && env && *env && !real_backend(env)) {
		fprintf(stderr, PROG ": MEMRECLAIM_BACKEND='%s': expected auto, "
			"cgroup1 or cgroup2 (memreclaimd manages real groups; "
			"the simulator is for mrsim and mr-demo)\n", env);
		return -EINVAL;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_HYST = 256, OPT_BATCH, OPT_BACKEND, OPT_DURATION,
	       OPT_INTERVAL, OPT_JSON, OPT_SCHED, OPT_VERSION, OPT_SELF,
	       OPT_VERBOSE };
	static const struct option longopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "self", no_argument, NULL, OPT_SELF },
		{ "margin", required_argument, NULL, 'm' },
		{ "hysteresis", required_argument, NULL, OPT_HYST },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "stats-interval", required_argument, NULL, OPT_INTERVAL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "sched", required_argument, NULL, OPT_SCHED },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int seen = 0; /* bit i: longopts[i] was given */
	int c, i, r = 0;

	*o = (struct options){
		.backend = NULL, /* --backend not given: MEMRECLAIM_BACKEND */
		.stats_interval_s = DEFAULT_STATS_INTERVAL_S,
	};
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "c:m:h", longopts, NULL)) != -1) {
		/* Every option counts once: a second --cgroup or --margin
		 * is more likely a mistake than an intended override. */
		for (i = 0; longopts[i].name && longopts[i].val != c; i++)
			;
		if (longopts[i].name) {
			if (seen & (1u << i)) {
				fprintf(stderr,
					PROG ": --%s given more than once\n",
					longopts[i].name);
				r = -EINVAL;
				break;
			}
			seen |= 1u << i;
		}
		switch (c) {
		case 'c':
			o->cgroup = optarg;
			break;
		case OPT_SELF:
			o->self = true;
			break;
		case 'm': case OPT_HYST: case OPT_BATCH:
			r = policyopt_parse(PROG, longopts[i].name, optarg,
					    &o->policy);
			break;
		case OPT_BACKEND:
			o->backend = optarg;
			break;
		case OPT_DURATION:
			r = parse_seconds("--duration", optarg, &o->duration_s);
			break;
		case OPT_INTERVAL:
			r = parse_seconds("--stats-interval", optarg,
					  &o->stats_interval_s);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_VERBOSE:
			o->verbose = true;
			break;
		case OPT_SCHED:
			r = parse_sched(optarg, o);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf(PROG " (libmemreclaim %s)\n", mr_version());
			exit(0);
		default:
			/* getopt_long has said what was wrong. */
			r = -EINVAL;
			break;
		}
	}
	if (r == 0 && optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		r = -EINVAL;
	}
	/* The adaptive margin is the default. */
	if (r == 0 && !o->policy.margin.set)
		r = policyopt_parse(PROG, "margin", "auto", &o->policy);
	if (r == 0)
		r = check_options(o);
	if (r < 0)
		fprintf(stderr, "Try '" PROG " --help'.\n");
	return r;
}

static void log_to_stderr(int level, const char *msg, void *userdata)
{
	static const char *const names[] = {
		[MR_LOG_ERR] = "error", [MR_LOG_WARNING] = "warning",
		[MR_LOG_NOTICE] = "notice", [MR_LOG_INFO] = "info",
		[MR_LOG_DEBUG] = "debug",
	};
	const char *name = level >= MR_LOG_ERR && level <= MR_LOG_DEBUG ?
			   names[level] : "log";

	fprintf(stderr, PROG ": %s: %s\n", name, msg);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}


/* Where the run started: the clock, and memory.failcnt when the group was
 * opened. */
struct baseline {
	uint64_t start_ns;
	uint64_t limit_hits;
};

/* Prints one statistics record: "start", "stats" or "final". */
static int print_stats(mr_group_t *g, const struct options *o,
		       const char *event, const struct baseline *base)
{
	struct mr_limits lim = { .size = sizeof(lim) };
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_margin_stats ms = { .size = sizeof(ms) };
	struct rusage ru;
	uint64_t user_ns, sys_ns, hits_since;
	int r;

	r = mr_group_read_limits(g, &lim);
	if (r == 0)
		r = mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st);
	if (r == 0)
		r = mr_group_read_margin_stats(g, &ms);
	if (r == -EBUSY) {
		/* Another manager is in the middle of a reclaim step on the
		 * group: its transient limit is no statistic. */
		fprintf(stderr, PROG ": %s record skipped: reading the "
			"statistics of %s: %s (in the middle of a reclaim "
			"step); retrying at the next interval\n", event,
			o->cgroup, mr_strerror(r));
		return r;
	}
	if (r < 0) {
		fprintf(stderr, PROG ": reading statistics of %s: %s\n",
			o->cgroup, mr_strerror(r));
		return r;
	}
	/* memory.failcnt can be reset by writing to it: then count from the
	 * reset. */
	hits_since = lim.limit_hits >= base->limit_hits ?
		     lim.limit_hits - base->limit_hits : lim.limit_hits;
	getrusage(RUSAGE_SELF, &ru);
	user_ns = timeval_ns(ru.ru_utime);
	sys_ns = timeval_ns(ru.ru_stime);

	if (o->json) {
		printf("{\"event\":\"%s\",\"uptime_ns\":%" PRIu64 ",\"cgroup\":",
		       event, now_ns() - base->start_ns);
		json_string(o->cgroup);
		printf(",\"usage_bytes\":%" PRIu64, lim.usage_bytes);
		if (lim.limit_bytes == MR_UNLIMITED)
			printf(",\"limit_bytes\":null");
		else
			printf(",\"limit_bytes\":%" PRIu64, lim.limit_bytes);
		printf(",\"limit_hits\":%" PRIu64
		       ",\"limit_hits_since_start\":%" PRIu64
		       ",\"worker_calls\":%" PRIu64
		       ",\"worker_empty_calls\":%" PRIu64
		       ",\"worker_asked_bytes\":%" PRIu64
		       ",\"worker_freed_bytes\":%" PRIu64
		       ",\"worker_elapsed_ns\":%" PRIu64
		       ",\"cpu_user_ns\":%" PRIu64 ",\"cpu_sys_ns\":%" PRIu64
		       ",\"cpu_ns\":%" PRIu64
		       ",\"margin_adaptive\":%s,\"margin_bytes\":%" PRIu64
		       ",\"hysteresis_bytes\":%" PRIu64,
		       lim.limit_hits, hits_since, st.calls, st.empty_calls,
		       st.asked_bytes, st.freed_bytes, st.elapsed_ns,
		       user_ns, sys_ns, user_ns + sys_ns,
		       ms.adaptive ? "true" : "false", ms.margin_bytes,
		       ms.hysteresis_bytes);
		if (ms.adaptive)
			printf(",\"margin_sized_bytes\":%" PRIu64
			       ",\"margin_strength_ppm\":%" PRIu32
			       ",\"charge_bytes_per_s\":%" PRIu64
			       ",\"reaction_ns\":%" PRIu64
			       ",\"benefit_ns\":%" PRIu64 ",\"cost_ns\":%" PRIu64
			       ",\"margin_intervals\":%" PRIu64
			       ",\"interval_limit_hits\":%" PRIu64
			       ",\"interval_refault_bytes\":%" PRIu64
			       ",\"worker_cpu_ns\":%" PRIu64,
			       ms.sized_bytes, ms.strength_ppm,
			       ms.charge_bytes_per_s, ms.reaction_ns,
			       ms.benefit_ns, ms.cost_ns, ms.intervals,
			       ms.limit_hits, ms.refault_bytes,
			       ms.worker_cpu_ns);
		printf("}\n");
	} else {
		printf(PROG ": %s: usage %.1f MiB, limit ", event,
		       mib(lim.usage_bytes));
		if (lim.limit_bytes == MR_UNLIMITED)
			printf("none");
		else
			printf("%.1f MiB", mib(lim.limit_bytes));
		printf("; limit hits (memory.failcnt) %" PRIu64
		       " since the group's creation, %" PRIu64
		       " since memreclaimd started; margin worker: %" PRIu64
		       " calls (%" PRIu64 " empty), asked %.1f MiB, freed %.1f MiB, %.3f s; cpu %.3f s\n",
		       lim.limit_hits, hits_since, st.calls, st.empty_calls,
		       mib(st.asked_bytes), mib(st.freed_bytes),
		       (double)st.elapsed_ns / 1e9,
		       (double)(user_ns + sys_ns) / 1e9);
		if (ms.adaptive)
			printf(PROG ": %s: adaptive margin %.2f MiB "
			       "(hysteresis %.2f MiB), strength %.3f of "
			       "%.2f MiB sized (charge rate %.1f MiB/s x "
			       "reaction %.3f ms x safety, or grown on limit "
			       "hits); last interval: benefit %.3f ms "
			       "(reclaim waits taken off the workload), cost "
			       "%.3f ms (worker CPU and refaults), %" PRIu64
			       " limit hits, %.1f MiB refaulted\n", event,
			       mib(ms.margin_bytes), mib(ms.hysteresis_bytes),
			       ms.strength_ppm / 1e6, mib(ms.sized_bytes),
			       mib(ms.charge_bytes_per_s),
			       (double)ms.reaction_ns / 1e6,
			       ms.benefit_ns / 1e6, ms.cost_ns / 1e6,
			       ms.limit_hits, mib(ms.refault_bytes));
	}
	fflush(stdout);
	return 0;
}

/* Applies the policy options to the group, whose limits were just read
 * into *lim (policyopt_apply(): a refused option leaves the group as it
 * was), then the worker's scheduling. Returns 0, or the exit status after
 * reporting the failure: EXIT_BAD_OPTION when an option does not suit
 * this group. */
static int configure_group(mr_ctx_t *ctx, mr_group_t *g,
			   const struct options *o,
			   const struct mr_limits *lim)
{
	struct policy_bytes b;
	int r;

	r = policyopt_apply(PROG, g, o->cgroup, &o->policy, lim, &b);
	if (r == -ERANGE)
		return EXIT_BAD_OPTION;
	if (r < 0)
		return EXIT_FAILURE_LIB;
	/* What the options came to, so a default is never a surprise. */
	if (b.margin_adaptive)
		fprintf(stderr, PROG ": %s: adaptive margin: sized every "
			"second from the charge rate and the worker's "
			"reaction, at most 10%% of the limit, dropped where "
			"it costs more than the waits it removes\n",
			o->cgroup);
	else if (lim->limit_bytes != MR_UNLIMITED)
		fprintf(stderr, PROG ": %s: margin %.1f MiB, hysteresis %.1f MiB: "
			"each wake-up reclaims down to %.1f MiB below the "
			"limit\n", o->cgroup, mib(b.margin),
			mib(b.hysteresis), mib(b.margin + b.hysteresis));
	if (o->sched_set) {
		r = mr_ctx_set_worker_sched(ctx, o->sched, o->nice);
		if (r < 0) {
			fprintf(stderr, PROG ": setting the scheduling: %s\n",
				mr_strerror(r));
			return EXIT_FAILURE_LIB;
		}
	}
	return 0;
}

/* How often the daemon looks whether its group is still there. */
#define GONE_CHECK_NS 1000000000ULL

/* Waits for a signal, the end of the run or the next statistics; prints
 * statistics on the way, and looks every second whether the group is
 * still there. Returns 0 when it is time to stop, -ENOENT when the group
 * was removed, or the error of a statistics read (-EBUSY is not one: that
 * read is retried at the next interval). */
static int run(int sfd, mr_group_t *g, const struct options *o,
	       const struct baseline *base)
{
	uint64_t start_ns = base->start_ns;
	uint64_t interval_ns = o->stats_interval_s * 1000000000ULL;
	uint64_t end_ns = o->duration_s ?
			  start_ns + o->duration_s * 1000000000ULL : 0;
	uint64_t next_ns = interval_ns ? start_ns + interval_ns : 0;
	struct signalfd_siginfo si;
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	uint64_t now, wake, usage;
	int timeout_ms, r;

	for (;;) {
		now = now_ns();
		if (end_ns && now >= end_ns)
			return 0;
		if (next_ns && now >= next_ns) {
			r = print_stats(g, o, "stats", base);
			if (r < 0 && r != -EBUSY)
				return r;
			while (next_ns <= now)
				next_ns += interval_ns;
		}
		wake = next_ns;
		if (end_ns && (!wake || end_ns < wake))
			wake = end_ns;
		/* At least once a second, whatever the statistics interval:
		 * a group removed under the daemon ends it (one pread). */
		if (!wake || wake > now + GONE_CHECK_NS)
			wake = now + GONE_CHECK_NS;
		timeout_ms = (int)((wake - now + 999999) / 1000000);
		r = poll(&pfd, 1, timeout_ms);
		if (r < 0 && errno != EINTR) {
			r = -errno;
			fprintf(stderr, PROG ": poll: %s\n", strerror(-r));
			return r;
		}
		if (r > 0 && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			fprintf(stderr, PROG ": %s, stopping\n",
				strsignal((int)si.ssi_signo));
			return 0;
		}
		if (mr_group_read_usage(g, &usage) == -ENOENT) {
			fprintf(stderr, PROG ": %s: %s; exiting\n",
				mr_group_path(g), mr_strerror(-ENOENT));
			return -ENOENT;
		}
	}
}

int main(int argc, char **argv)
{
	struct options o;
	mr_ctx_t *ctx = NULL;
	mr_group_t *g = NULL;
	struct mr_limits lim = { .size = sizeof(lim) };
	struct baseline base;
	sigset_t mask;
	int sfd, r, i, status = EXIT_FAILURE_LIB;

	if (parse_options(argc, argv, &o) < 0)
		return EXIT_BAD_OPTION;

	/* Blocked before any thread exists, so the worker inherits the mask
	 * and the signals reach only the signalfd. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	/* A closed statistics pipe: writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (r) {
		fprintf(stderr, PROG ": blocking signals: %s\n", strerror(r));
		return 1;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
		return 1;
	}

	r = mr_ctx_new(&ctx);
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", mr_strerror(r));
		goto out;
	}
	mr_ctx_set_log(ctx, log_to_stderr, NULL,
		       o.verbose ? MR_LOG_DEBUG : MR_LOG_INFO);
	if (o.self) {
		r = mr_group_open_self(ctx, &g);
		if (r < 0) {
			fprintf(stderr, PROG ": opening own memory cgroup: %s\n",
				mr_strerror(r));
			goto out;
		}
		o.cgroup = mr_group_path(g);
	} else {
		r = mr_group_open(ctx, o.cgroup, o.backend, &g);
		if (r < 0) {
			fprintf(stderr, PROG ": opening %s: %s\n", o.cgroup,
				mr_strerror(r));
			goto out;
		}
	}
	r = mr_group_read_limits(g, &lim);
	if (r < 0) {
		fprintf(stderr, PROG ": reading %s: %s\n", o.cgroup,
			mr_strerror(r));
		goto out;
	}
	r = configure_group(ctx, g, &o, &lim);
	if (r > 0) {
		status = r;
		goto out;
	}
	r = mr_ctx_worker_start(ctx);
	if (r < 0) {
		fprintf(stderr, PROG ": starting the worker: %s\n",
			mr_strerror(r));
		goto out;
	}
	base.start_ns = now_ns();
	base.limit_hits = lim.limit_hits;
	r = print_stats(g, &o, "start", &base);
	if (r == 0 || r == -EBUSY)
		r = run(sfd, g, &o, &base);
	mr_ctx_worker_stop(ctx);
	if (r == 0)
		r = print_stats(g, &o, "final", &base);
	/* A step of another manager lasts well under a second: a few more
	 * tries, then stop without the final record. */
	for (i = 0; r == -EBUSY && i < FINAL_TRIES; i++) {
		nanosleep(&(struct timespec){ 0, 250 * 1000 * 1000 }, NULL);
		r = print_stats(g, &o, "final", &base);
	}
	if (r == -EBUSY)
		r = 0;
	status = r < 0 ? EXIT_FAILURE_LIB : 0;
out:
	if (g) {
		r = mr_group_close(g);
		if (r < 0) {
			fprintf(stderr, PROG ": closing %s: %s\n", o.cgroup,
				mr_strerror(r));
			status = EXIT_FAILURE_LIB;
		}
	}
	mr_ctx_free(ctx);
	close(sfd);
	return status;
}
