/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd — keeps memory cgroups' usage a margin below their limits
 * with libmemreclaim's margin worker (one context, one worker), and
 * reports what the worker did. memreclaimd(8) is its manual,
 * memreclaimd.conf(5) that of its configuration.
 *
 *   memreclaimd [--config PATH] [DAEMON OPTION]...      every group of a
 *                                                       configuration
 *   memreclaimd --check-config [--config PATH]
 *   memreclaimd --cgroup PATH|--self [--margin auto|sized|SIZE
 *               [--hysteresis SIZE]]
 *               [--batch SIZE|auto]
 *               [--proactive|--proactive-dry-run
 *                [--pressure-target DUR/DUR] [--min-size SIZE]]
 *               [DAEMON OPTION]...                      one group
 *   memreclaimd --help | --version
 *
 * The daemon options (--backend, --sched, --stats-interval, --json,
 * --metrics-file, --metrics-interval, --metrics-port, --hybrid-psi) are
 * the [daemon]
 * keys of the configuration, and win over them. --duration and --verbose
 * are the command line's alone.
 *
 * With a configuration (memreclaimd-config.h), the groups its [group]
 * sections match are found and watched (memreclaimd-groups.h); a group
 * removed is logged and dropped; SIGHUP reloads the files (a
 * configuration with a mistake is refused, and the one in force stays).
 * With --cgroup or --self, memreclaimd keeps that group alone, exits with
 * status 3 once it is removed, and SIGHUP has nothing to reload.
 *
 * Statistics go to stdout (memreclaimd-stats.h); metrics to a file and/or
 * 127.0.0.1 (memreclaimd-metrics.h); the log to stderr
 * (memreclaimd-log.h). Under systemd (Type=notify) memreclaimd says
 * READY=1 once its groups are kept, RELOADING=1 and READY=1 around a
 * reload, STOPPING=1 when it stops, and WATCHDOG=1 at half of
 * WatchdogSec=.
 *
 * Exit status: 0 after a clean stop (duration reached, SIGTERM, SIGINT or
 * SIGQUIT), 1 when the library fails, 2 on a bad option or configuration
 * (nothing was changed), 3 when the group of --cgroup or --self was
 * removed. SIGPIPE is ignored: a reader of the statistics that went away
 * does not kill the daemon in the middle of a step.
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
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "memreclaimd-config.h"
#include "memreclaimd-groups.h"
#include "memreclaimd-log.h"
#include "memreclaimd-metrics.h"
#include "memreclaimd-runtime.h"
#include "memreclaimd-stats.h"
#include "policyopt.h"

#define EXIT_LIBRARY 1
#define EXIT_CONFIG 2
#define EXIT_GROUP_GONE 3
#define FINAL_TRIES 4
#define SEC_NS 1000000000ULL
/* How often the single group, or the containers' groups, are looked at:
 * gone or not. */
#define GONE_CHECK_NS SEC_NS

#ifndef MRD_DEFAULT_CONFIG
#define MRD_DEFAULT_CONFIG "/etc/memreclaim/memreclaimd.conf"
#endif

/* A daemon setting given on the command line: a [daemon] key. */
struct cli_setting {
	const char *key;
	const char *value;
};

struct options {
	const char *config;          /* --config, or the default */
	bool check_config;
	const char *cgroup;          /* NULL with --self until opened */
	bool self;
	struct policy_opts policy;   /* --margin, --hysteresis, --batch */
	struct cli_setting settings[10];
	size_t nsettings;
	uint64_t duration_s;         /* 0: until a signal */
	bool verbose;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " MRD_PROG " [--config PATH] [OPTION]...\n"
		"       " MRD_PROG " --check-config [--config PATH]\n"
		"       " MRD_PROG " --cgroup PATH|--self [--margin auto|sized|SIZE] [OPTION]...\n"
		"Keeps memory cgroups' usage a margin below their limits with libmemreclaim's\n"
		"margin worker, so that the groups' own charges rarely meet the limit: the groups\n"
		"a configuration's [group] sections match (found as they are created), or one.\n"
		"\n"
		"  --config PATH           the configuration (default " MRD_DEFAULT_CONFIG "),\n"
		"                          with its drop-ins PATH.d/*.conf; memreclaimd.conf(5)\n"
		"  --check-config          load the configuration, say what it holds or what is wrong, and exit\n"
		"  --cgroup PATH           keep one group instead, its directory an absolute path\n"
		"  --self                  instead of --cgroup (not with it): the memory cgroup memreclaimd itself runs in\n"
		"  --margin auto|sized|SIZE (one group) keep usage this far below the group's limit: auto (the default)\n"
		"                          sizes it from the charge rate and the worker's reaction, and drops it where it\n"
		"                          costs more than it saves; sized keeps that size whatever it costs; SIZE is a\n"
		"                          fixed margin (at least 4K, below the limit)\n"
		"  --hysteresis SIZE       (one group) with a fixed margin: each wake-up reclaims this much further below\n"
		"                          limit - margin (default: the margin, at most half of limit - margin)\n"
		"  --batch SIZE|auto       (one group) per reclaim call: SIZE (4K multiple; default 128K) or auto\n"
		"                          (excess/4, <= 64M, <= limit/8)\n"
		"  --proactive             (one group) shrink the group to what it uses while its memory pressure (PSI)\n"
		"                          stays under the target, below any limit; without --margin, no margin is kept;\n"
		"                          needs memory PSI: cgroup v2, or cgroup v1 with --hybrid-psi and a cgroup2 twin\n"
		"  --proactive-dry-run     (one group) instead of --proactive: report the size it would take the group\n"
		"                          to, reclaiming nothing\n"
		"  --pressure-target DUR/DUR  with --proactive: at most this much PSI some stall per window\n"
		"                          (default 10ms/6s; DUR: a whole number with us, ms or s)\n"
		"  --min-size SIZE         with --proactive: never take the group below SIZE (bytes, K, M or G, below\n"
		"                          the group's limit; default 0)\n"
		"  --backend auto|cgroup1|cgroup2  auto picks from the path's filesystem; default: MEMRECLAIM_BACKEND, else auto\n"
		"  --sched idle|nice:N     the worker: idle = SCHED_IDLE, nice:N = SCHED_OTHER at nice N; default nice:0\n"
		"                          (a starved idle worker misses the margin on busy machines)\n"
		"  --duration SECONDS      stop after SECONDS; 0 (default) runs until SIGTERM, SIGINT or SIGQUIT\n"
		"  --stats-interval SECONDS  print statistics every SECONDS (default %d); 0: at start and end only\n"
		"  --json                  print statistics as one flat JSON object per line, with the time\n"
		"  --metrics-file PATH     write Prometheus metrics to PATH (through a temporary file and a rename)\n"
		"  --metrics-interval SECONDS  how often the metrics file is written (default %d)\n"
		"  --metrics-port PORT     serve the metrics on http://127.0.0.1:PORT/metrics\n"
		"  --hybrid-psi            cgroup v1 groups read pressure (PSI) from their cgroup2 twins, on hybrid hosts\n"
		"  --runtime-dir PATH      where container runtimes' hooks name groups for the [group] sections with\n"
		"                          runtime = yes (default " MRD_DEFAULT_RUNTIME_DIR ")\n"
		"  --verbose               log the library's debug messages too (the adaptive margin's changes of strength,\n"
		"                          its probes, refused settings)\n"
		"  --version               print the version and exit\n"
		"  --help                  print this help and exit\n"
		"\n"
		"SIZE: bytes with an optional K, M or G suffix (powers of 1024), or N%% of the\n"
		"group's limit (at most 4 decimals); margin + hysteresis may not exceed the limit.\n"
		"Signals: SIGHUP reloads the configuration (a bad one is refused and the one in\n"
		"force stays); SIGTERM, SIGINT and SIGQUIT stop, restoring every group.\n"
		"Environment: MEMRECLAIM_BACKEND (auto, cgroup1 or cgroup2) when no backend is\n"
		"given; MEMRECLAIM_STATE_DIR, the absolute path of the directory the limit\n"
		"journal lives in (default /run/memreclaim; owned by this user, not writable by\n"
		"others); JOURNAL_STREAM, set by systemd: log lines then carry <N> priorities.\n"
		"Exit status: 0 after a clean stop, 1 when the library fails, 2 on a bad option\n"
		"or configuration (each option may be given once; nothing has changed), 3 when\n"
		"the group of --cgroup or --self was removed.\n",
		MRD_DEFAULT_STATS_INTERVAL_S, MRD_DEFAULT_METRICS_INTERVAL_S);
}

/* Applies the command line's daemon settings over d. */
static int apply_settings(const struct options *o, struct mrd_daemon *d)
{
	char where[64];
	size_t i;
	int r;

	for (i = 0; i < o->nsettings; i++) {
		snprintf(where, sizeof(where), "--%s",
			 strcmp(o->settings[i].key, "worker-sched") == 0 ?
			 "sched" :
			 strcmp(o->settings[i].key, "stats-format") == 0 ?
			 "json" : o->settings[i].key);
		r = mrd_daemon_set(d, o->settings[i].key, o->settings[i].value,
				   where);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Checks what can be checked without a group or a configuration. */
static int check_options(const struct options *o)
{
	struct mrd_daemon d;
	bool backend_given;
	const char *env;
	int r;

	if (o->cgroup && o->self) {
		mrd_log(MR_LOG_ERR, "--cgroup and --self are mutually exclusive "
			"(--self manages the group memreclaimd runs in)");
		return -EINVAL;
	}
	if ((o->cgroup || o->self) && (o->config || o->check_config)) {
		mrd_log(MR_LOG_ERR, "--%s keeps one group from the command line; "
			"--config and --check-config are for a configuration "
			"file's groups",
			o->self ? "self" : "cgroup");
		return -EINVAL;
	}
	if (!o->cgroup && !o->self && o->policy.margin_arg) {
		mrd_log(MR_LOG_ERR, "--margin, --hysteresis and --batch go with "
			"--cgroup or --self; a configuration gives them in its "
			"[group] sections");
		return -EINVAL;
	}
	if (!o->cgroup && !o->self &&
	    (o->policy.proactive || o->policy.pressure_target_set ||
	     o->policy.min_size.set)) {
		mrd_log(MR_LOG_ERR, "--proactive, --proactive-dry-run, "
			"--pressure-target and --min-size go with --cgroup or "
			"--self; a configuration gives them in its [group] "
			"sections");
		return -EINVAL;
	}
	if (!o->cgroup && !o->self &&
	    (o->policy.hysteresis.set || o->policy.batch.set ||
	     o->policy.batch_auto)) {
		mrd_log(MR_LOG_ERR, "--hysteresis and --batch go with --cgroup "
			"or --self; a configuration gives them in its [group] "
			"sections");
		return -EINVAL;
	}
	if (o->cgroup && o->cgroup[0] != '/') {
		mrd_log(MR_LOG_ERR, "--cgroup '%s': not an absolute path",
			o->cgroup);
		return -EINVAL;
	}
	mrd_daemon_defaults(&d);
	r = apply_settings(o, &d);
	if (r == 0 && o->self && d.backend.text &&
	    strcmp(d.backend.text, "auto") != 0) {
		mrd_log(MR_LOG_ERR, "--backend does not apply to --self: the "
			"backend follows from where the group is mounted");
		r = -EINVAL;
	}
	backend_given = d.backend.text != NULL;
	mrd_daemon_free(&d);
	if (r < 0)
		return r;
	if (o->cgroup || o->self) {
		char prefix[64];

		r = policyopt_check(mrd_log_prefix(prefix, sizeof(prefix),
						   NULL), &o->policy);
		if (r < 0)
			return r;
	}
	/* mr_ctx_new()'s own check of the state directory, named here:
	 * the library can only answer -EINVAL. */
	env = secure_getenv("MEMRECLAIM_STATE_DIR");
	if (env && *env && env[0] != '/') {
		mrd_log(MR_LOG_ERR, "MEMRECLAIM_STATE_DIR='%s': the state "
			"directory must be an absolute path", env);
		return -EINVAL;
	}
	if (env && strlen(env) >= PATH_MAX - 64) {
		mrd_log(MR_LOG_ERR, "MEMRECLAIM_STATE_DIR: the state directory's "
			"path must be shorter than %d bytes", PATH_MAX - 64);
		return -EINVAL;
	}
	/* Without a backend the library takes MEMRECLAIM_BACKEND: the same
	 * names, and never the simulator. */
	env = getenv("MEMRECLAIM_BACKEND");
	if (!backend_given && env && *env && strcmp(env, "auto") != 0 &&
	    strcmp(env, "cgroup1") != 0 && strcmp(env, "cgroup2") != 0) {
		mrd_log(MR_LOG_ERR, "MEMRECLAIM_BACKEND='%s': expected auto, "
			"cgroup1 or cgroup2 (memreclaimd manages real groups; "
			"the simulator is for mrsim and mr-demo)", env);
		return -EINVAL;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_HYST = 256, OPT_BATCH, OPT_BACKEND, OPT_DURATION,
	       OPT_INTERVAL, OPT_JSON, OPT_SCHED, OPT_VERSION, OPT_SELF,
	       OPT_VERBOSE, OPT_CONFIG, OPT_CHECK, OPT_MFILE, OPT_MINTERVAL,
	       OPT_MPORT, OPT_HYBRID, OPT_RUNTIME_DIR, OPT_PROACTIVE,
	       OPT_DRY_RUN, OPT_PRESSURE, OPT_MIN_SIZE };
	static const struct option longopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "self", no_argument, NULL, OPT_SELF },
		{ "margin", required_argument, NULL, 'm' },
		{ "hysteresis", required_argument, NULL, OPT_HYST },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "proactive", no_argument, NULL, OPT_PROACTIVE },
		{ "proactive-dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "pressure-target", required_argument, NULL, OPT_PRESSURE },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "stats-interval", required_argument, NULL, OPT_INTERVAL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "sched", required_argument, NULL, OPT_SCHED },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "metrics-file", required_argument, NULL, OPT_MFILE },
		{ "metrics-interval", required_argument, NULL, OPT_MINTERVAL },
		{ "metrics-port", required_argument, NULL, OPT_MPORT },
		{ "hybrid-psi", no_argument, NULL, OPT_HYBRID },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int seen = 0; /* bit i: longopts[i] was given */
	char prefix[64];
	int c, i, r = 0;

	*o = (struct options){ 0 };
	mrd_log_prefix(prefix, sizeof(prefix), NULL);
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "c:m:h", longopts, NULL)) != -1) {
		/* Every option counts once: a second --cgroup or --margin
		 * is more likely a mistake than an intended override. */
		for (i = 0; longopts[i].name && longopts[i].val != c; i++)
			;
		if (longopts[i].name) {
			if (seen & (1u << i)) {
				mrd_log(MR_LOG_ERR, "--%s given more than once",
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
		case 'm': case OPT_HYST: case OPT_BATCH: case OPT_PRESSURE:
		case OPT_MIN_SIZE:
			r = policyopt_parse(prefix, longopts[i].name, optarg,
					    &o->policy);
			break;
		case OPT_PROACTIVE: case OPT_DRY_RUN:
			if (o->policy.proactive) {
				mrd_log(MR_LOG_ERR, "--proactive and "
					"--proactive-dry-run are mutually "
					"exclusive");
				r = -EINVAL;
				break;
			}
			r = policyopt_parse(prefix, "proactive",
					    c == OPT_PROACTIVE ? "on" :
					    "dry-run", &o->policy);
			break;
		case OPT_BACKEND:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "backend", optarg };
			break;
		case OPT_SCHED:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "worker-sched", optarg };
			break;
		case OPT_INTERVAL:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "stats-interval", optarg };
			break;
		case OPT_JSON:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "stats-format", "json" };
			break;
		case OPT_MFILE:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "metrics-file", optarg };
			break;
		case OPT_MINTERVAL:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "metrics-interval", optarg };
			break;
		case OPT_MPORT:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "metrics-port", optarg };
			break;
		case OPT_HYBRID:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "hybrid-psi", "yes" };
			break;
		case OPT_RUNTIME_DIR:
			o->settings[o->nsettings++] =
				(struct cli_setting){ "runtime-dir", optarg };
			break;
		case OPT_DURATION:
			r = mrd_parse_seconds("--duration", "duration", optarg, 0,
					      &o->duration_s);
			break;
		case OPT_VERBOSE:
			o->verbose = true;
			break;
		case OPT_CONFIG:
			o->config = optarg;
			break;
		case OPT_CHECK:
			o->check_config = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf(MRD_PROG " %s (libmemreclaim %s)\n",
			       PACKAGE_VERSION, mr_version());
			exit(0);
		default:
			/* getopt_long has said what was wrong. */
			r = -EINVAL;
			break;
		}
	}
	if (r == 0 && optind < argc) {
		mrd_log(MR_LOG_ERR, "unexpected argument '%s'", argv[optind]);
		r = -EINVAL;
	}
	/* The adaptive margin is the default, but for the proactive
	 * controller alone. */
	if (r == 0 && (o->cgroup || o->self) && !o->policy.margin.set &&
	    !o->policy.proactive)
		r = policyopt_parse(prefix, "margin", "auto", &o->policy);
	if (r == 0)
		r = check_options(o);
	if (r < 0)
		fprintf(stderr, "Try '" MRD_PROG " --help'.\n");
	if (!o->config)
		o->config = MRD_DEFAULT_CONFIG;
	return r;
}

/* ---------------------------------------------------------------- state */

struct daemon {
	struct options *o;
	mr_ctx_t *ctx;
	struct mrd_groups gs;
	struct mrd_config cfg;       /* in force (config mode) */
	struct mrd_daemon settings;  /* in force (both modes) */
	bool config_mode;
	struct mrd_counters counters;
	struct mrd_http *http;
	unsigned http_port;
	struct mrd_runtime rt;       /* the hooks' drop-ins (config mode) */
};

static void on_opened(struct mrd_groups *gs, struct mrd_group *grp)
{
	struct daemon *d = gs->userdata;

	mrd_stats_print(grp, "start", d->settings.json);
}

static void on_closing(struct mrd_groups *gs, struct mrd_group *grp,
		       const char *why)
{
	struct daemon *d = gs->userdata;
	int r, i;

	if (strcmp(why, "removed") == 0)
		return; /* nothing left to read */
	r = mrd_stats_print(grp, "final", d->settings.json);
	/* A step of another manager lasts well under a second: a few more
	 * tries, then go without the final record. */
	for (i = 0; r == -EBUSY && i < FINAL_TRIES; i++) {
		nanosleep(&(struct timespec){ 0, 250 * 1000 * 1000 }, NULL);
		r = mrd_stats_print(grp, "final", d->settings.json);
	}
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t groups_kept(const struct mrd_groups *gs)
{
	size_t i, n = 0;

	for (i = 0; i < gs->n; i++)
		n += gs->v[i]->g != NULL;
	return n;
}

static void notify_status(const struct daemon *d, const char *state)
{
	sd_notifyf(0, "%sSTATUS=keeping the margin of %zu group%s", state,
		   groups_kept(&d->gs), groups_kept(&d->gs) == 1 ? "" : "s");
}

/* Starts, moves or stops the metrics endpoint as the settings say. A
 * move binds the new port first: where it cannot be bound, the endpoint
 * stays where it was, and says so. */
static void metrics_endpoint(struct daemon *d)
{
	unsigned port = d->settings.metrics_port_n;
	struct mrd_http *h = NULL;

	if (port == d->http_port)
		return;
	if (port && mrd_http_start(&d->gs, &d->counters, port, &h) < 0) {
		if (d->http)
			mrd_log(MR_LOG_ERR, "metrics-port %u: not bound; the "
				"metrics are still served on 127.0.0.1:%u",
				port, d->http_port);
		return;
	}
	mrd_http_stop(d->http);
	d->http = h;
	d->http_port = port;
}

/* Whether the worker's class differs between two settings. */
static bool sched_differs(const struct mrd_daemon *a,
			  const struct mrd_daemon *b)
{
	return a->sched != b->sched || a->nice != b->nice;
}

/* Per-group PSI of cgroup v1 groups from their cgroup2 twins, as the
 * settings say. Returns 0, or the exit status after saying why. */
static int set_hybrid_psi(mr_ctx_t *ctx, const struct mrd_daemon *s)
{
	int r = mr_ctx_set_hybrid_psi(ctx, s->hybrid_psi_on);

	const char *where = s->hybrid_psi.where;

	if (r == -ENODEV) {
		if (where && where[0] != '-')
			mrd_log(MR_LOG_ERR, "%s: hybrid-psi = yes: not a "
				"hybrid host (the cgroup v1 memory controller "
				"beside a cgroup2 mount without it)", where);
		else
			mrd_log(MR_LOG_ERR, "--hybrid-psi: not a hybrid host "
				"(the cgroup v1 memory controller beside a "
				"cgroup2 mount without it)");
		return EXIT_CONFIG;
	}
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "hybrid-psi: %s", mr_strerror(r));
		return EXIT_LIBRARY;
	}
	return 0;
}

static int set_sched(mr_ctx_t *ctx, const struct mrd_daemon *s)
{
	int r = mr_ctx_set_worker_sched(ctx, s->sched, s->nice);

	if (r < 0)
		mrd_log(MR_LOG_ERR, "setting the worker's scheduling: %s",
			mr_strerror(r));
	return r;
}

/* Loads the configuration with the command line's settings over it. */
static int load(const struct options *o, struct mrd_config *cfg)
{
	int r = mrd_config_load(o->config, cfg);

	if (r < 0)
		return r;
	r = apply_settings(o, &cfg->daemon);
	if (r < 0)
		mrd_config_free(cfg);
	return r;
}

/* SIGHUP with a configuration. */
static void reload(struct daemon *d)
{
	struct mrd_config next, old;
	const char *ob, *nb;
	bool hybrid;
	int r;

	sd_notify(0, "RELOADING=1");
	mrd_log(MR_LOG_NOTICE, "reloading %s", d->o->config);
	r = load(d->o, &next);
	if (r == 0) {
		ob = d->settings.backend.text;
		nb = next.daemon.backend.text;
		if ((ob || nb) && (!ob || !nb || strcmp(ob, nb) != 0)) {
			mrd_log(MR_LOG_ERR, "%s: backend = %s: the backend "
				"cannot change on reload (was %s); restart "
				"memreclaimd for it", nb ? next.daemon.backend.where :
				d->o->config, nb ? nb : "(none)", ob ? ob : "(none)");
			mrd_config_free(&next);
			r = -EINVAL;
		}
	}
	hybrid = r == 0 &&
		 next.daemon.hybrid_psi_on != d->settings.hybrid_psi_on;
	if (hybrid && set_hybrid_psi(d->ctx, &next.daemon) != 0) {
		mrd_config_free(&next);
		r = -EINVAL;
	}
	if (r == 0) {
		/* In its place first: the groups' table keeps a pointer. */
		old = d->cfg;
		d->cfg = next;
		r = mrd_groups_apply(&d->gs, &d->cfg);
		if (r < 0) {
			/* No group changed: inotify could not be had. */
			mrd_config_free(&d->cfg);
			d->cfg = old;
			if (hybrid)
				set_hybrid_psi(d->ctx, &d->settings);
		}
	}
	if (r == 0 && sched_differs(&d->settings, &d->cfg.daemon)) {
		/* The class is taken when the worker starts; the values
		 * were checked as the configuration was loaded. */
		mr_ctx_worker_stop(d->ctx);
		set_sched(d->ctx, &d->cfg.daemon);
		if (mr_ctx_worker_start(d->ctx) < 0)
			mrd_log(MR_LOG_ERR, "restarting the worker failed");
	}
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "reload refused: %s has the mistakes "
			"above; the configuration in force stays", d->o->config);
		pthread_mutex_lock(&d->gs.lock);
		d->counters.reloads_failed++;
		pthread_mutex_unlock(&d->gs.lock);
		notify_status(d, "READY=1\n");
		return;
	}
	d->settings = d->cfg.daemon;
	mrd_config_free(&old);
	mrd_runtime_apply(&d->rt, &d->gs, &d->cfg);
	pthread_mutex_lock(&d->gs.lock);
	d->counters.reloads_ok++;
	d->counters.last_reload_ok_s = wall_s();
	pthread_mutex_unlock(&d->gs.lock);
	metrics_endpoint(d);
	mrd_log(MR_LOG_NOTICE, "reloaded %s: %zu [group] section%s, %zu "
		"group%s kept", d->o->config, d->cfg.nsections,
		d->cfg.nsections == 1 ? "" : "s", groups_kept(&d->gs),
		groups_kept(&d->gs) == 1 ? "" : "s");
	notify_status(d, "READY=1\n");
}

/* ---------------------------------------------------------------- loop */

struct clock_due {
	uint64_t stats, metrics, watchdog, gone, end;
};

static uint64_t earliest(const struct clock_due *c)
{
	uint64_t t = UINT64_MAX;

	if (c->stats && c->stats < t)
		t = c->stats;
	if (c->metrics && c->metrics < t)
		t = c->metrics;
	if (c->watchdog && c->watchdog < t)
		t = c->watchdog;
	if (c->gone && c->gone < t)
		t = c->gone;
	if (c->end && c->end < t)
		t = c->end;
	return t;
}

/* poll()'s timeout until t (ns), from now: -1 for never, and at most a
 * minute, which an int of milliseconds always holds (a --duration of
 * 30 days overflowed it to a negative wait, that is, forever). */
static int poll_ms(uint64_t t, uint64_t now)
{
	uint64_t ms;

	if (t == UINT64_MAX)
		return -1;
	if (t <= now)
		return 0;
	ms = (t - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

/* Runs until a stop. Returns 0, or EXIT_GROUP_GONE, or EXIT_LIBRARY. */
static int run(struct daemon *d, int sfd)
{
	const struct options *o = d->o;
	struct signalfd_siginfo si;
	struct pollfd p[3];
	struct clock_due due = { 0 };
	uint64_t now = mrd_now_ns(), wd_usec = 0, wd_ns = 0, t;
	size_t i;
	int r;

	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec)
		wd_ns = wd_usec * 1000 / 2;
	if (o->duration_s)
		due.end = now + o->duration_s * SEC_NS;
	for (;;) {
		now = mrd_now_ns();
		if (due.end && now >= due.end)
			return 0;
		/* A reload that shortens an interval takes effect now, not
		 * at the end of the longer one. */
		if (!d->settings.stats_interval_s)
			due.stats = 0;
		else if (!due.stats ||
			 due.stats > now + d->settings.stats_interval_s * SEC_NS)
			due.stats = now + d->settings.stats_interval_s * SEC_NS;
		else if (now >= due.stats) {
			for (i = 0; i < d->gs.n; i++) {
				if (!d->gs.v[i]->g)
					continue;
				r = mrd_stats_print(d->gs.v[i], "stats",
						    d->settings.json);
				if (r < 0 && r != -EBUSY && r != -ENOENT &&
				    !d->config_mode)
					return EXIT_LIBRARY;
			}
			due.stats = now + d->settings.stats_interval_s * SEC_NS;
		}
		if (!d->settings.metrics_file.text)
			due.metrics = 0;
		else if (!due.metrics || now >= due.metrics ||
			 due.metrics > now + d->settings.metrics_interval_s *
					   SEC_NS) {
			mrd_metrics_write_file(&d->gs, &d->counters,
					       d->settings.metrics_file.text);
			due.metrics = now + d->settings.metrics_interval_s *
					    SEC_NS;
		}
		if (wd_ns && (!due.watchdog || now >= due.watchdog)) {
			sd_notify(0, "WATCHDOG=1");
			due.watchdog = now + wd_ns;
		}
		if (!d->config_mode && (!due.gone || now >= due.gone)) {
			uint64_t usage;
			struct mrd_group *grp = d->gs.v[0];

			if (due.gone && mr_group_read_usage(grp->g, &usage) ==
					-ENOENT) {
				mrd_log(MR_LOG_ERR, "%s: %s; exiting",
					grp->path, mr_strerror(-ENOENT));
				return EXIT_GROUP_GONE;
			}
			due.gone = now + GONE_CHECK_NS;
		}
		/* The containers' groups a poststop hook never took back
		 * (the group of one the walk keeps goes with its directory's
		 * inotify event). */
		if (d->config_mode && mrd_runtime_fd(&d->rt) >= 0 &&
		    (!due.gone || now >= due.gone)) {
			if (due.gone)
				mrd_groups_release_gone(&d->gs);
			due.gone = now + GONE_CHECK_NS;
		} else if (d->config_mode && mrd_runtime_fd(&d->rt) < 0) {
			due.gone = 0;
		}
		t = earliest(&due);
		p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = mrd_groups_fd(&d->gs),
					.events = POLLIN };
		p[2] = (struct pollfd){ .fd = mrd_runtime_fd(&d->rt),
					.events = POLLIN };
		/* poll() skips a negative fd. */
		r = poll(p, 3, poll_ms(t, now));
		if (r < 0 && errno != EINTR) {
			mrd_log(MR_LOG_ERR, "poll: %s", strerror(errno));
			return EXIT_LIBRARY;
		}
		if (r > 0 && (p[1].revents & POLLIN))
			mrd_groups_dispatch(&d->gs);
		if (r > 0 && (p[2].revents & POLLIN))
			mrd_runtime_dispatch(&d->rt, &d->gs);
		if (r > 0 && (p[0].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGHUP) {
				mrd_log(MR_LOG_NOTICE, "%s, stopping",
					strsignal((int)si.ssi_signo));
				return 0;
			}
			if (d->config_mode)
				reload(d);
			else
				mrd_log(MR_LOG_NOTICE, "SIGHUP: keeping %s from "
					"the command line; no configuration to "
					"reload", d->gs.v[0]->path);
		}
	}
}

/* ---------------------------------------------------------------- main */

/* --check-config: what the configuration holds. */
static int check_config(const struct options *o)
{
	struct mrd_config cfg;
	const struct mrd_daemon *dm = &cfg.daemon;
	size_t i;

	if (load(o, &cfg) < 0) {
		mrd_log(MR_LOG_ERR, "%s: refused", o->config);
		return EXIT_CONFIG;
	}
	printf("%s: ok\n[daemon]\nbackend = %s\nworker-sched = %s\n"
	       "stats-interval = %" PRIu64 "\nstats-format = %s\n"
	       "metrics-file = %s\nmetrics-interval = %" PRIu64 "\n"
	       "metrics-port = %u\nhybrid-psi = %s\nruntime-dir = %s\n",
	       o->config,
	       dm->backend.text ? dm->backend.text : "(MEMRECLAIM_BACKEND, else auto)",
	       dm->worker_sched.text ? dm->worker_sched.text : "nice:0",
	       dm->stats_interval_s, dm->json ? "json" : "text",
	       dm->metrics_file.text ? dm->metrics_file.text : "(none)",
	       dm->metrics_interval_s, dm->metrics_port_n,
	       dm->hybrid_psi_on ? "yes" : "no", mrd_daemon_runtime_dir(dm));
	for (i = 0; i < cfg.nsections; i++) {
		const struct mrd_section *s = &cfg.sections[i];

		printf("\n# %s\n[group %s]\npath = %s\nmargin = %s\n",
		       s->where, s->name, s->pattern.text,
		       s->margin.text ? s->margin.text :
		       s->policy.margin.set ? "auto" : "(none)");
		if (s->hysteresis.text)
			printf("hysteresis = %s\n", s->hysteresis.text);
		if (s->batch.text)
			printf("batch = %s\n", s->batch.text);
		if (s->runtime_on)
			printf("runtime = yes\n");
		if (s->proactive.text)
			printf("proactive = %s\n", s->proactive.text);
		if (s->pressure_target.text)
			printf("pressure-target = %s\n",
			       s->pressure_target.text);
		if (s->min_size.text)
			printf("min-size = %s\n", s->min_size.text);
	}
	if (!cfg.nsections)
		printf("\n# no [group] sections: nothing to keep\n");
	mrd_config_free(&cfg);
	return 0;
}

/* Opens and configures the group of --cgroup or --self into *ret.
 * Returns 0 or an exit status. */
static int open_single(struct daemon *d, mr_group_t **ret)
{
	struct options *o = d->o;
	struct mr_limits lim = { .size = sizeof(lim) };
	struct policy_bytes b;
	char prefix[64];
	mr_group_t *g;
	int r;

	if (o->self) {
		r = mr_group_open_self(d->ctx, &g);
		if (r < 0) {
			mrd_log(MR_LOG_ERR, "opening own memory cgroup: %s",
				mr_strerror(r));
			return EXIT_LIBRARY;
		}
		o->cgroup = mr_group_path(g);
	} else {
		r = mr_group_open(d->ctx, o->cgroup, d->settings.backend.text,
				  &g);
		if (r < 0) {
			mrd_log(MR_LOG_ERR, "opening %s: %s", o->cgroup,
				mr_strerror(r));
			return EXIT_LIBRARY;
		}
	}
	r = mr_group_read_limits(g, &lim);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "reading %s: %s", o->cgroup, mr_strerror(r));
		mr_group_close(g);
		return EXIT_LIBRARY;
	}
	r = policyopt_apply(mrd_log_prefix(prefix, sizeof(prefix), NULL), g,
			    o->cgroup, &o->policy, &lim, NULL, &b);
	if (r < 0) {
		mr_group_close(g);
		return r == -ERANGE ? EXIT_CONFIG : EXIT_LIBRARY;
	}
	/* What the options came to, so a default is never a surprise. */
	if (b.margin_adaptive)
		mrd_log(MR_LOG_INFO, "%s: adaptive margin: sized every second "
			"from what the group charges past the mark before the "
			"worker sees it, the charge rate and the worker's "
			"reaction, at most 10%% of the limit, %s", o->cgroup,
			o->policy.margin_sized ? "kept whole whatever it costs "
			"(--margin sized)" : "dropped where it costs more than "
			"the waits it removes");
	else if (b.margin_set && lim.limit_bytes != MR_UNLIMITED)
		mrd_log(MR_LOG_INFO, "%s: margin %.1f MiB, hysteresis %.1f MiB: "
			"each wake-up reclaims down to %.1f MiB below the "
			"limit", o->cgroup, b.margin / 1048576.0,
			b.hysteresis / 1048576.0,
			(b.margin + b.hysteresis) / 1048576.0);
	if (b.proactive)
		mrd_log(MR_LOG_INFO, "%s: proactive controller%s: every second, "
			"a step of up to a tenth of what is reclaimable above "
			"%.1f MiB while PSI some stays under %.3f ms per %.1f s "
			"and refaults under 1%% of what it reclaims%s",
			o->cgroup, o->policy.proactive ==
			POLICYOPT_PROACTIVE_DRY_RUN ? " (dry run: nothing is "
			"reclaimed)" : "", o->policy.min_size.bytes / 1048576.0,
			(o->policy.pressure_target_set ? o->policy.stall_ns :
			 10000000ULL) / 1e6,
			(o->policy.pressure_target_set ? o->policy.window_ns :
			 6000000000ULL) / 1e9,
			b.margin_set ? ", beside the margin" : "");
	*ret = g;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mrd_groups_hooks hooks = {
		.opened = on_opened,
		.closing = on_closing,
	};
	struct options o;
	struct daemon d = { .o = &o };
	mr_group_t *single = NULL;     /* opened, not yet in the table */
	sigset_t mask;
	int sfd, r, status = EXIT_LIBRARY;

	mrd_runtime_init(&d.rt);

	mrd_log_init();
	if (parse_options(argc, argv, &o) < 0)
		return EXIT_CONFIG;
	if (o.check_config)
		return check_config(&o);
	d.config_mode = !o.cgroup && !o.self;
	if (d.config_mode) {
		if (load(&o, &d.cfg) < 0) {
			mrd_log(MR_LOG_ERR, "%s: refused", o.config);
			return EXIT_CONFIG;
		}
		d.settings = d.cfg.daemon;
		d.counters.last_reload_ok_s = wall_s();
	} else {
		mrd_daemon_defaults(&d.settings);
		if (apply_settings(&o, &d.settings) < 0) {
			mrd_daemon_free(&d.settings);
			return EXIT_CONFIG;
		}
	}

	/* Blocked before any thread exists, so the worker and the metrics
	 * endpoint inherit the mask and the signals reach only the
	 * signalfd. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	/* A closed statistics pipe: writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (r) {
		mrd_log(MR_LOG_ERR, "blocking signals: %s", strerror(r));
		return EXIT_LIBRARY;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		mrd_log(MR_LOG_ERR, "signalfd: %s", strerror(errno));
		return EXIT_LIBRARY;
	}

	r = mr_ctx_new(&d.ctx);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "%s", mr_strerror(r));
		goto out;
	}
	mr_ctx_set_log(d.ctx, mrd_log_library, NULL,
		       o.verbose ? MR_LOG_DEBUG : MR_LOG_INFO);
	mrd_groups_init(&d.gs, d.ctx, &hooks, &d);
	if (d.settings.worker_sched.text && set_sched(d.ctx, &d.settings) < 0)
		goto out;
	if (d.settings.hybrid_psi_on) {
		r = set_hybrid_psi(d.ctx, &d.settings);
		if (r) {
			status = r;
			goto out;
		}
	}
	if (!d.config_mode) {
		r = open_single(&d, &single);
		if (r) {
			status = r;
			goto out;
		}
	}
	r = mr_ctx_worker_start(d.ctx);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "starting the worker: %s", mr_strerror(r));
		goto out;
	}
	/* Its start record once the worker runs: a program that starts its
	 * workload on that line (mr-demo) has the worker from the first
	 * charge. */
	if (single) {
		r = mrd_groups_adopt(&d.gs, single, o.cgroup);
		if (r < 0) {
			mrd_log(MR_LOG_ERR, "%s: %s", o.cgroup, strerror(-r));
			goto out;
		}
		single = NULL;
	}
	if (d.config_mode) {
		if (mrd_groups_apply(&d.gs, &d.cfg) < 0)
			goto out;
		mrd_runtime_apply(&d.rt, &d.gs, &d.cfg);
		mrd_log(MR_LOG_NOTICE, "%s: %zu [group] section%s, %zu group%s "
			"kept", o.config, d.cfg.nsections,
			d.cfg.nsections == 1 ? "" : "s", groups_kept(&d.gs),
			groups_kept(&d.gs) == 1 ? "" : "s");
	}
	metrics_endpoint(&d);
	notify_status(&d, "READY=1\n");
	status = run(&d, sfd);
	sd_notify(0, "STOPPING=1");
	mr_ctx_worker_stop(d.ctx);
	/* One last metrics file, with the final counters. */
	if (d.settings.metrics_file.text)
		mrd_metrics_write_file(&d.gs, &d.counters,
				       d.settings.metrics_file.text);
out:
	mrd_http_stop(d.http);
	mrd_runtime_close(&d.rt);
	if (d.ctx) {
		if (status == EXIT_GROUP_GONE)
			d.gs.hooks.closing = NULL; /* nothing left to read */
		if (mrd_groups_free(&d.gs) < 0 && status == 0)
			status = EXIT_LIBRARY;
	}
	if (single)
		mr_group_close(single);
	mr_ctx_free(d.ctx);
	if (d.config_mode)
		mrd_config_free(&d.cfg);
	else
		mrd_daemon_free(&d.settings);
	close(sfd);
	return status;
}
