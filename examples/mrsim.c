/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mrsim — runs the reference experiments of libmemreclaim's simulator
 * (docs/simulator.md) and says whether each lands inside the band of its
 * published result; or replays a workload of the user's, written as a
 * trace (docs/trace-format.md), without and with a reclaim policy given
 * as memreclaimd's options, and compares the two runs.
 *
 *   mrsim --list [--json]
 *   mrsim --scenario NAME|all [--seed N] [--costs 2011|today] [--json]
 *   mrsim --trace FILE [--seed N] [--costs 2011|today] [--json]
 *         [--margin SIZE [--hysteresis SIZE] [--batch SIZE|auto]]
 *         [--soft-limit SIZE] [--group PATH]...
 *   mrsim --help | --version
 *
 * Each scenario prints its table in the reference's form followed by its
 * band check; with --json, one JSON object per line and scenario:
 *   {"scenario": "S4", "costs": "2011",
 *    "policies": {"<policy>": {"<figure>_<unit>": <number>, ...}, ...}}
 * Whole numbers print as integers, others in the fewest digits that read
 * back as the same double.
 *
 * A trace runs twice on fresh simulated machines with the same seed (cost
 * set "today" unless --costs says otherwise): first with the policy, then
 * without any (the baseline); with no policy option, only the baseline.
 * The policy options are memreclaimd's, parsed and applied by the same
 * code (policyopt.c): SIZE is bytes, K, M, G, or N% of each group's
 * limit; the hysteresis defaults to the margin, at most half of limit -
 * margin. They apply to every group that has a max of its own, or, with
 * --group (repeatable), to the groups named; a group without a limit gets no margin (and no % soft limit),
 * and is said so. mrsim prints the policy each group got, in bytes, and a
 * table of the figures of interest, a row per group and figure, columns
 * "without" and "with policy"; with --json one line:
 *   {"trace": FILE, "costs": "today", "seed": N,
 *    "policies": {"without": {"<group>/<figure>": n, ...},
 *                 "with": {...}},
 *    "applied": {"<group>": {"limit_bytes": n, "margin_bytes": n, ...}}}
 * where <group> is "machine" for the whole machine's figures, or a
 * group's path ("/web/failcnt_count"): the figure is what follows the
 * last '/'.
 *
 * Exit status: 0 when every scenario run is inside its band (or its
 * reference says nothing for these costs) or the trace ran, 1 when the
 * library fails, 2 on a bad option (for a trace also: a trace that does
 * not parse, or a policy that no group, or not a named group, can take),
 * 3 when a scenario is outside its band. With "all", every scenario runs;
 * a failure (1) outranks a scenario outside (3).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <memreclaim.h>

#include "experiments.h"
#include "policyopt.h"
#include "tracefigs.h"

#define PROG "mrsim"
#define DEFAULT_SEED 1
#define EXIT_FAILURE_LIB 1
#define EXIT_BAD_OPTION 2
#define EXIT_OUTSIDE 3

struct options {
	bool list;
	const char *scenario;        /* a name, or "all" */
	const char *trace;           /* a trace file */
	uint64_t seed;
	bool seed_set;
	const char *costs;           /* NULL: each scenario's own, "today"
				      * for a trace */
	bool json;
	struct policy_opts policy;   /* memreclaimd's options, for a trace */
	char **groups;               /* --group paths, in normal form */
	size_t ngroups;
};

/* Whether a policy option was given. */
static bool has_policy(const struct options *o)
{
	return o->policy.margin.set || o->policy.soft_limit.set;
}

/* Prints the registered scenarios' names as "S1|S2|..." */
static void print_names(FILE *f)
{
	const char *name;
	unsigned i;

	for (i = 0; (name = mr_sim_scenario_name(i)); i++)
		fprintf(f, "%s%s", i ? "|" : "", name);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " --list [--json]\n"
		"       " PROG " --scenario ");
	print_names(f);
	fprintf(f, "|all [--seed N] [--costs 2011|today] [--json]\n"
		"       " PROG " --trace FILE [--seed N] [--costs 2011|today] [--json]\n"
		"             [--margin SIZE [--hysteresis SIZE] [--batch SIZE|auto]]\n"
		"             [--soft-limit SIZE] [--group PATH]...\n"
		"Runs the reference experiments of libmemreclaim's simulator on simulated\n"
		"machines in virtual time, prints each one's table in the form of its published\n"
		"result, and checks the band the reference gives. Or replays a workload written\n"
		"as a trace (docs/trace-format.md) without and with a reclaim policy, given as\n"
		"memreclaimd's options, and prints the two runs' figures side by side.\n"
		"\n"
		"  --list                  name, title and default cost set of each scenario\n"
		"  --scenario NAME|all     run one scenario, or every one in order\n"
		"  --trace FILE            run the trace in FILE twice, with the same seed: with\n"
		"                          the policy below, then without any (with no policy\n"
		"                          option: only without)\n"
		"  --seed N                the simulators' seed, 0..2^64-1 (default %d): the same\n"
		"                          seed gives the same output, byte for byte\n"
		"  --costs 2011|today      the cost parameter set (default: each scenario's own,\n"
		"                          the one its reference was measured with; for a\n"
		"                          trace, today)\n"
		"  --json                  one JSON object per line: a scenario's figures\n"
		"                          {\"scenario\": ..., \"costs\": ..., \"policies\": {POLICY:\n"
		"                          {FIGURE_UNIT: NUMBER, ...}, ...}}, or with --list its\n"
		"                          {\"scenario\": ..., \"title\": ..., \"costs\": ...}, or a\n"
		"                          trace's {\"trace\": FILE, \"costs\": ..., \"seed\": N,\n"
		"                          \"policies\": {\"without\": {KEY: NUMBER, ...},\n"
		"                          \"with\": {...}}, \"applied\": {GROUP: {\"limit_bytes\":\n"
		"                          ..., ...} or null, ...}}, where KEY is\n"
		"                          GROUP/FIGURE_UNIT and GROUP \"machine\" (the whole\n"
		"                          machine) or a group's path: \"/web/failcnt_count\"\n"
		"  --version               print the version and exit\n"
		"  --help                  print this help and exit\n"
		"\n"
		"The policy, as memreclaimd takes it (with --trace only):\n"
		"  --margin SIZE           keep usage this far below the group's limit\n"
		"  --hysteresis SIZE       each wake-up reclaims this much further below limit -\n"
		"                          margin (default: the margin, at most half of limit - margin)\n"
		"  --batch SIZE|auto       per reclaim call: SIZE (4K multiple; default 128K) or\n"
		"                          auto (excess/4, <= 64M, <= limit/8)\n"
		"  --soft-limit SIZE       the library's soft limit (mr_group_set_soft_limit()),\n"
		"                          which only mr_ctx_reclaim() acts on: a trace calls it\n"
		"                          nowhere, so it changes no figure; the kernel's soft\n"
		"                          limit is the trace's 'soft' on a group line\n"
		"  --group PATH            apply the policy to this group of the trace only\n"
		"                          (repeatable); default: every group with a max of its\n"
		"                          own\n"
		"SIZE: bytes with an optional K, M or G suffix (powers of 1024), or N%% of the\n"
		"group's limit (at most 4 decimals); margin + hysteresis may not exceed it.\n"
		"The limit is the one that binds the group: the lower of its max and its\n"
		"ancestors'. By default the policy goes to the groups with a max of their own;\n"
		"one named with --group needs a limit, its own or an ancestor's. mrsim says\n"
		"which groups get no margin (nor a soft limit in %%) for want of a limit. Before\n"
		"the table, a line per group gives the policy it got, in bytes.\n"
		"\n"
		"Exit status: 0 when every scenario run is inside its band (or its reference\n"
		"says nothing for these costs) or the trace ran, 1 when the library fails, 2 on\n"
		"a bad option (each option but --group may be given once; for a trace also: a\n"
		"trace that does not parse, its line named, or a policy that no group can take),\n"
		"3 when a scenario is outside its band. With all, every scenario runs, and 1\n"
		"outranks 3.\n",
		DEFAULT_SEED);
}

/* Reports a bad option value; the caller exits 2. */
static int bad_value(const char *opt, const char *value, const char *why)
{
	fprintf(stderr, PROG ": %s '%s': %s\n", opt, value, why);
	return -EINVAL;
}

static int parse_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return bad_value("--seed", s, "not a whole number");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad_value("--seed", s,
				 errno == ERANGE ? "above 2^64-1" :
						   "not a whole number");
	*out = v;
	return 0;
}

/* --group PATH: an absolute path, stored in normal form (repeated and
 * trailing slashes removed), as mr_group_path() gives it. */
static int add_group(struct options *o, const char *path)
{
	char *norm, *w;
	const char *s;

	if (path[0] != '/')
		return bad_value("--group", path, "not an absolute path");
	norm = malloc(strlen(path) + 1);
	if (!norm) {
		fprintf(stderr, PROG ": %s\n", mr_strerror(-ENOMEM));
		return -ENOMEM;
	}
	for (s = path, w = norm; *s; s++) {
		if (*s != '/' || s[1] != '/')
			*w++ = *s;
	}
	if (w > norm + 1 && w[-1] == '/')
		w--;
	*w = '\0';
	if (strcmp(norm, "/") == 0) {
		free(norm);
		return bad_value("--group", path,
				 "the root is the machine, not a group");
	}
	o->groups[o->ngroups++] = norm;
	return 0;
}

static void free_options(struct options *o)
{
	size_t i;

	for (i = 0; i < o->ngroups; i++)
		free(o->groups[i]);
	free(o->groups);
	o->groups = NULL;
	o->ngroups = 0;
}

/* Checks what was given together. */
static int check_options(const struct options *o)
{
	if (!!o->list + !!o->scenario + !!o->trace != 1) {
		fprintf(stderr,
			PROG ": give one of --list, --scenario or --trace\n");
		return -EINVAL;
	}
	if (o->list && (o->costs || o->seed_set)) {
		fprintf(stderr,
			PROG ": --seed and --costs go with --scenario or --trace\n");
		return -EINVAL;
	}
	if (!o->trace && (has_policy(o) || o->policy.hysteresis.set ||
			  o->policy.batch.set || o->policy.batch_auto ||
			  o->ngroups)) {
		fprintf(stderr, PROG ": --margin, --hysteresis, --batch, "
			"--soft-limit and --group go with --trace\n");
		return -EINVAL;
	}
	if (policyopt_check(PROG, &o->policy) < 0)
		return -EINVAL;
	if (o->ngroups && !has_policy(o)) {
		fprintf(stderr,
			PROG ": --group goes with --margin or --soft-limit\n");
		return -EINVAL;
	}
	if (o->scenario && strcmp(o->scenario, "all") != 0 &&
	    !mr_sim_scenario_title(o->scenario)) {
		fprintf(stderr, PROG ": --scenario '%s': expected ",
			o->scenario);
		print_names(stderr);
		fprintf(stderr, " or all\n");
		return -EINVAL;
	}
	if (o->costs && strcmp(o->costs, "2011") != 0 &&
	    strcmp(o->costs, "today") != 0)
		return bad_value("--costs", o->costs, "expected 2011 or today");
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_LIST = 256, OPT_SCENARIO, OPT_SEED, OPT_COSTS, OPT_JSON,
	       OPT_VERSION, OPT_TRACE, OPT_MARGIN, OPT_HYST, OPT_BATCH,
	       OPT_SOFT, OPT_GROUP };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "margin", required_argument, NULL, OPT_MARGIN },
		{ "hysteresis", required_argument, NULL, OPT_HYST },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "soft-limit", required_argument, NULL, OPT_SOFT },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "costs", required_argument, NULL, OPT_COSTS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int seen = 0; /* bit i: longopts[i] was given */
	int c, i, r = 0;

	*o = (struct options){ .seed = DEFAULT_SEED };
	/* At most one --group per argument. */
	o->groups = calloc((size_t)argc, sizeof(*o->groups));
	if (!o->groups) {
		fprintf(stderr, PROG ": %s\n", mr_strerror(-ENOMEM));
		return -ENOMEM;
	}
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		/* Every option counts once: a second --scenario or --seed
		 * is more likely a mistake than an intended override.
		 * --group names one group at a time. */
		for (i = 0; longopts[i].name && longopts[i].val != c; i++)
			;
		if (longopts[i].name && c != OPT_GROUP) {
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
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_SCENARIO:
			o->scenario = optarg;
			break;
		case OPT_TRACE:
			o->trace = optarg;
			break;
		case OPT_MARGIN: case OPT_HYST: case OPT_BATCH: case OPT_SOFT:
			r = policyopt_parse(PROG, longopts[i].name, optarg,
					    &o->policy);
			break;
		case OPT_GROUP:
			r = add_group(o, optarg);
			break;
		case OPT_SEED:
			r = parse_seed(optarg, &o->seed);
			o->seed_set = true;
			break;
		case OPT_COSTS:
			o->costs = optarg;
			break;
		case OPT_JSON:
			o->json = true;
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
	if (r == 0)
		r = check_options(o);
	if (r < 0) {
		if (r != -ENOMEM)
			fprintf(stderr, "Try '" PROG " --help'.\n");
		free_options(o);
	}
	return r;
}

/* Prints one JSON object on its own line and frees it. -ENOMEM. */
static int print_json(struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj,
				JSON_C_TO_STRING_PLAIN |
				JSON_C_TO_STRING_NOSLASHESCAPE);
	int r = s ? 0 : -ENOMEM;

	if (s)
		puts(s);
	json_object_put(obj);
	return r;
}

/* Adds key: value to obj, taking value (NULL: null); false on failure,
 * which frees value. Failing calls chain: once one failed, the next
 * ones free their value and fail too. */
static bool add(struct json_object *obj, const char *key,
		struct json_object *value, bool ok)
{
	if (ok && obj && json_object_object_add(obj, key, value) == 0)
		return true;
	json_object_put(value);
	return false;
}

/* Adds key: the string s. */
static bool add_string(struct json_object *obj, const char *key,
		       const char *s, bool ok)
{
	struct json_object *v = json_object_new_string(s);

	return add(obj, key, v, ok && v);
}

static int list(const struct options *o)
{
	struct json_object *obj;
	const char *name, *title, *costs;
	unsigned i;
	bool ok;

	for (i = 0; (name = mr_sim_scenario_name(i)); i++) {
		title = mr_sim_scenario_title(name);
		costs = mr_sim_scenario_costs(name);
		if (!o->json) {
			printf("%-4s %-6s %s\n", name, costs, title);
			continue;
		}
		obj = json_object_new_object();
		ok = add_string(obj, "scenario", name, true);
		ok = add_string(obj, "title", title, ok);
		ok = add_string(obj, "costs", costs, ok);
		if (!ok) {
			json_object_put(obj);
			return -ENOMEM;
		}
		if (print_json(obj) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A figure as a JSON number: whole values as integers, others in the
 * fewest significant digits that read back as the same double. JSON has
 * no NaN or infinity: null. */
static struct json_object *json_number(double v)
{
	char buf[40];
	int prec;

	if (!isfinite(v))
		return NULL;
	if (v == trunc(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, v);
	return json_object_new_double_s(v, buf);
}

/* The figures of one run, by policy in the order they came. */
struct figures {
	struct json_object *policies;
	int err;
};

static void add_figure(const char *policy, const char *figure, double value,
		       void *userdata)
{
	struct figures *f = userdata;
	struct json_object *p, *num;

	if (f->err)
		return;
	if (!json_object_object_get_ex(f->policies, policy, &p)) {
		p = json_object_new_object();
		if (!add(f->policies, policy, p, p)) {
			f->err = -ENOMEM;
			return;
		}
	}
	num = json_number(value);
	if (!add(p, figure, num, num || !isfinite(value)))
		f->err = -ENOMEM;
}

static int print_figures(const char *name, const char *costs,
			 struct json_object *policies)
{
	struct json_object *obj = json_object_new_object();
	bool ok;

	ok = add_string(obj, "scenario", name, true);
	ok = add_string(obj, "costs", costs, ok);
	ok = add(obj, "policies", json_object_get(policies), ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return print_json(obj);
}

/* Runs one scenario and prints it. Returns 0 with *verdict set, or the
 * library's error (reported). */
static int run_one(const char *name, const struct options *o, int *verdict)
{
	static const char *const verdicts[] = {
		[MR_SIM_OUTSIDE] = "OUTSIDE its band",
		[MR_SIM_INSIDE] = "inside its band",
		[MR_SIM_NO_REFERENCE] = "no reference for these costs",
	};
	const char *costs = o->costs ? o->costs : mr_sim_scenario_costs(name);
	struct figures f = { .policies = NULL };
	char *table = NULL;
	int r;

	if (o->json) {
		f.policies = json_object_new_object();
		if (!f.policies) {
			fprintf(stderr, PROG ": %s: %s\n", name,
				mr_strerror(-ENOMEM));
			return -ENOMEM;
		}
	}
	r = mr_sim_run_scenario(name, o->seed, costs,
				o->json ? add_figure : NULL, &f,
				o->json ? NULL : &table, verdict);
	if (r == 0)
		r = f.err;
	if (r == 0 && o->json)
		r = print_figures(name, costs, f.policies);
	if (r == 0 && !o->json) {
		printf("== %s: %s (costs %s, seed %" PRIu64 ")\n\n%s\n"
		       "%s: %s\n\n", name, mr_sim_scenario_title(name),
		       costs, o->seed, table, name,
		       *verdict >= MR_SIM_OUTSIDE &&
		       *verdict <= MR_SIM_NO_REFERENCE ?
		       verdicts[*verdict] : "unknown verdict");
	}
	fflush(stdout);
	if (r < 0)
		fprintf(stderr, PROG ": %s: %s\n", name, mr_strerror(r));
	free(table);
	json_object_put(f.policies);
	return r;
}

/* ------------------------------------------------------------ traces */

/* Reads the whole file into a malloc()ed *text. Returns 0 or -errno. */
static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, *p;
	size_t cap = 0, n = 0, got;
	int r = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(buf, cap);
			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		errno = 0;
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				r = errno ? -errno : -EIO;
			break;
		}
	}
	fclose(f);
	if (r < 0) {
		free(buf);
		return r;
	}
	*text = buf;
	*len = n;
	return 0;
}

/* What one group of the trace got. */
struct trace_group {
	char *path;
	uint64_t limit;              /* the binding one; MR_UNLIMITED: none */
	bool named;                  /* taken by the policy (--group, or
				      * every group without it) */
	bool no_limit;               /* none of its own (none at all with
				      * --group): no margin there */
	bool applied;                /* something was set */
	struct policy_bytes b;       /* what, when applied */
};

/* The policy run's setup: the options, what each group got, and the
 * exit status a refused policy asks for. */
struct trace_policy {
	const struct options *o;
	struct trace_group *g;
	size_t n;
	int status;                  /* 0, or EXIT_BAD_OPTION */
	bool reported;               /* a failure was reported */
};

static bool named(const struct options *o, const char *path)
{
	size_t k;

	if (!o->ngroups)
		return true;
	for (k = 0; k < o->ngroups; k++) {
		if (strcmp(o->groups[k], path) == 0)
			return true;
	}
	return false;
}

/* Every --group must be a group of the trace. */
static int check_named(struct trace_policy *tp, mr_group_t *const *groups,
		       size_t ngroups)
{
	const struct options *o = tp->o;
	size_t i, k;

	for (k = 0; k < o->ngroups; k++) {
		for (i = 0; i < ngroups; i++) {
			if (strcmp(mr_group_path(groups[i]), o->groups[k]) == 0)
				break;
		}
		if (i < ngroups)
			continue;
		fprintf(stderr, PROG ": --group '%s': no such group in %s "
			"(its groups:", o->groups[k], o->trace);
		for (i = 0; i < ngroups; i++)
			fprintf(stderr, " %s", mr_group_path(groups[i]));
		fprintf(stderr, "%s)\n", ngroups ? "" : " none");
		tp->status = EXIT_BAD_OPTION;
		tp->reported = true;
		return -EINVAL;
	}
	return 0;
}

/* Applies the policy to one group, or says why it has none. */
static int setup_group(struct trace_policy *tp, mr_group_t *g,
		       struct trace_group *a)
{
	const struct options *o = tp->o;
	struct mr_limits lim = { .size = sizeof(lim) };
	struct policy_opts q = o->policy;
	char *prefix;
	int r;

	r = mr_group_read_limits(g, &lim);
	if (r < 0) {
		fprintf(stderr, PROG ": %s: reading its limits: %s\n",
			a->path, mr_strerror(r));
		tp->reported = true;
		return r;
	}
	a->limit = lim.limit_bytes;
	a->named = named(o, a->path);
	if (!a->named)
		return 0;
	/* By default, the groups with a max of their own; a group named
	 * with --group as memreclaimd takes it: the limit that binds it. */
	a->no_limit = o->ngroups ? lim.limit_bytes == MR_UNLIMITED :
				   lim.own_limit_bytes == MR_UNLIMITED;
	if (a->no_limit) {
		bool pct = q.soft_limit.set && q.soft_limit.is_ppm;

		if (q.margin.set || pct)
			fprintf(stderr, PROG ": %s: %s, so no %s there%s\n",
				a->path, lim.limit_bytes == MR_UNLIMITED ?
				"no limit" : "no max of its own",
				!pct ? "margin" : !q.margin.set ?
				"soft limit in %" :
				"margin and no soft limit in %",
				lim.limit_bytes == MR_UNLIMITED ? "" :
				" (name it with --group for one against "
				"the limit above it)");
		q.margin.set = false;
		q.hysteresis.set = false;
		q.batch.set = false;
		q.batch_auto = false;
		if (q.soft_limit.is_ppm)
			q.soft_limit.set = false;
		if (!q.soft_limit.set)
			return 0;
	}
	/* Messages name the group: "mrsim: /web: --margin ...". */
	prefix = malloc(strlen(PROG ": ") + strlen(a->path) + 1);
	if (!prefix)
		return -ENOMEM;
	sprintf(prefix, PROG ": %s", a->path);
	r = policyopt_apply(prefix, g, a->path, &q, &lim, NULL, &a->b);
	free(prefix);
	if (r < 0) {
		tp->status = r == -ERANGE ? EXIT_BAD_OPTION : 0;
		tp->reported = true;
		return r;
	}
	a->applied = true;
	return 0;
}

/* The setup of the policy run (mr_sim_setup_fn). */
static int setup_policy(mr_ctx_t *ctx, mr_group_t *const *groups,
			size_t ngroups, void *userdata)
{
	struct trace_policy *tp = userdata;
	size_t i, applied = 0;
	int r;

	(void)ctx;
	r = check_named(tp, groups, ngroups);
	if (r < 0)
		return r;
	tp->g = calloc(ngroups ? ngroups : 1, sizeof(*tp->g));
	if (!tp->g)
		return -ENOMEM;
	for (i = 0; i < ngroups; i++) {
		tp->g[i].path = strdup(mr_group_path(groups[i]));
		if (!tp->g[i].path)
			return -ENOMEM;
		tp->n++;
		r = setup_group(tp, groups[i], &tp->g[i]);
		if (r < 0)
			return r;
		applied += tp->g[i].applied;
	}
	if (!applied) {
		fprintf(stderr, PROG ": %s: no group takes the policy: "
			"nothing to compare\n", tp->o->trace);
		tp->status = EXIT_BAD_OPTION;
		tp->reported = true;
		return -EINVAL;
	}
	return 0;
}

static void free_policy(struct trace_policy *tp)
{
	size_t i;

	for (i = 0; i < tp->n; i++)
		free(tp->g[i].path);
	free(tp->g);
}

/* The rows of the table: the figures of interest. */
static bool of_interest(const char *name)
{
	static const char *const plain[] = {
		"elapsed_s", "failcnt_count", "limit_reclaim_s",
		"margin_calls_count", "margin_freed_bytes", "margin_reclaim_s",
		"pgscan_pages", "pgsteal_pages", "refault_file_pages",
		"psi_some_s", "psi_full_s", "oom_count",
	};
	static const char *const req[] = {
		"_count", "_mean_ms", "_p50_ms", "_p99_ms", "_max_ms",
	};
	size_t i, n = strlen(name), k;

	if (strncmp(name, "req_", 4) == 0) {
		for (i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
			k = strlen(req[i]);
			if (n > 4 + k && strcmp(name + n - k, req[i]) == 0)
				return true;
		}
		return false;
	}
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strcmp(name, plain[i]) == 0)
			return true;
	}
	return false;
}

/* A figure for the table: times with 3 decimals, the rest whole. */
static void format_figure(char *buf, size_t len, const struct trace_fig *f,
			  int run)
{
	size_t n = strlen(f->name);
	bool time = (n > 2 && strcmp(f->name + n - 2, "_s") == 0) ||
		    (n > 3 && strcmp(f->name + n - 3, "_ms") == 0);

	if (!f->has[run] || !isfinite(f->v[run]))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, time ? "%.3f" : "%.0f", f->v[run]);
}

/* A line per group: the policy it got, in bytes. */
static void print_applied(const struct trace_policy *tp)
{
	const struct trace_group *a;
	const struct policy_bytes *b;
	size_t i;

	for (i = 0; i < tp->n; i++) {
		a = &tp->g[i];
		b = &a->b;
		printf("policy %s ", a->path);
		if (a->limit == MR_UNLIMITED)
			printf("(no limit): ");
		else
			printf("(limit %" PRIu64 "): ", a->limit);
		if (!a->named) {
			printf("none (not named by --group)\n");
			continue;
		}
		if (!a->applied) {
			printf("none (%s)\n", a->limit == MR_UNLIMITED ?
			       "no limit for a margin" :
			       "no max of its own");
			continue;
		}
		if (b->margin_set) {
			printf("margin %" PRIu64, b->margin);
			if (tp->o->policy.margin.is_ppm)
				printf(" (%s)", tp->o->policy.margin_arg);
			printf(", hysteresis %" PRIu64 ", ", b->hysteresis);
			if (b->batch_auto)
				printf("batch auto (excess/4, %" PRIu64 " .. %"
				       PRIu64 ")", b->batch_min, b->batch_max);
			else if (b->batch)
				printf("batch %" PRIu64, b->batch);
			else
				printf("batch %llu (the library's default)",
				       MR_SWAP_CLUSTER_MAX_BYTES);
		} else {
			printf("no margin (%s)", a->no_limit ?
			       "no limit for it" : "none asked");
		}
		if (b->soft_limit != MR_UNLIMITED)
			printf(", soft limit %" PRIu64, b->soft_limit);
		printf("\n");
	}
}

static int print_trace_table(const struct options *o, const char *costs,
			     const struct trace_figs *t,
			     const struct trace_policy *tp, bool with)
{
	char a[40], b[40];
	int gw = (int)strlen("group"), fw = (int)strlen("figure");
	size_t i;

	for (i = trace_figs_next(t, TRACE_FIGS_END); i != TRACE_FIGS_END;
	     i = trace_figs_next(t, i)) {
		if (!of_interest(t->f[i].name))
			continue;
		if (t->f[i].policy_len > gw)
			gw = t->f[i].policy_len;
		if ((int)strlen(t->f[i].name) > fw)
			fw = (int)strlen(t->f[i].name);
	}
	printf("== %s (costs %s, seed %" PRIu64 ")\n\n", o->trace, costs,
	       o->seed);
	if (with) {
		print_applied(tp);
		printf("\n");
	}
	printf("%-*s  %-*s  %14s", gw, "group", fw, "figure", "without");
	printf(with ? "  %14s\n" : "\n", "with policy");
	for (i = trace_figs_next(t, TRACE_FIGS_END); i != TRACE_FIGS_END;
	     i = trace_figs_next(t, i)) {
		if (!of_interest(t->f[i].name))
			continue;
		format_figure(a, sizeof(a), &t->f[i], RUN_WITHOUT);
		printf("%-*.*s  %-*s  %14s", gw, t->f[i].policy_len,
		       t->f[i].key, fw, t->f[i].name, a);
		if (with) {
			format_figure(b, sizeof(b), &t->f[i], RUN_WITH);
			printf("  %14s", b);
		}
		printf("\n");
	}
	return fflush(stdout) == 0 ? 0 : -EIO;
}

/* Adds key: n, every digit of it (json-c 0.13 has no uint64). */
static bool add_u64(struct json_object *obj, const char *key, uint64_t n,
		    bool ok)
{
	char buf[24];
	struct json_object *v;

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	v = json_object_new_double_s((double)n, buf);
	return add(obj, key, v, ok && v);
}

/* Adds key: n in bytes, or null for MR_UNLIMITED (no limit). */
static bool add_bytes(struct json_object *obj, const char *key, uint64_t n,
		      bool ok)
{
	if (n == MR_UNLIMITED)
		return add(obj, key, NULL, ok);
	return add_u64(obj, key, n, ok);
}

/* "applied": {GROUP: {...} or null (nothing applied)}. */
static struct json_object *json_applied(const struct trace_policy *tp)
{
	struct json_object *all = json_object_new_object(), *g;
	const struct trace_group *a;
	const struct policy_bytes *b;
	bool ok = all != NULL;
	size_t i;

	for (i = 0; ok && i < tp->n; i++) {
		a = &tp->g[i];
		b = &a->b;
		if (!a->applied) {
			ok = add(all, a->path, NULL, ok);
			continue;
		}
		g = json_object_new_object();
		ok = add_bytes(g, "limit_bytes", a->limit, g != NULL);
		if (b->margin_set) {
			ok = add_bytes(g, "margin_bytes", b->margin, ok);
			ok = add_bytes(g, "hysteresis_bytes", b->hysteresis, ok);
			ok = add_string(g, "batch", b->batch_auto ? "auto" :
					b->batch ? "fixed" : "default", ok);
			if (b->batch_auto) {
				ok = add_bytes(g, "batch_min_bytes",
					       b->batch_min, ok);
				ok = add_bytes(g, "batch_max_bytes",
					       b->batch_max, ok);
			} else {
				ok = add_bytes(g, "batch_bytes", b->batch ?
					       b->batch :
					       MR_SWAP_CLUSTER_MAX_BYTES, ok);
			}
		}
		if (b->soft_limit != MR_UNLIMITED)
			ok = add_bytes(g, "soft_limit_bytes", b->soft_limit,
				       ok);
		if (!ok)
			json_object_put(g);
		else
			ok = add(all, a->path, g, ok);
	}
	if (!ok) {
		json_object_put(all);
		return NULL;
	}
	return all;
}

static int print_trace_json(const struct options *o, const char *costs,
			    const struct trace_figs *t,
			    const struct trace_policy *tp, bool with)
{
	static const char *const runs[NR_RUNS] = {
		[RUN_WITHOUT] = "without", [RUN_WITH] = "with",
	};
	struct json_object *obj = json_object_new_object(), *policies, *p;
	struct json_object *num, *applied;
	bool ok;
	int run;
	size_t i;

	ok = add_string(obj, "trace", o->trace, obj != NULL);
	ok = add_string(obj, "costs", costs, ok);
	ok = add_u64(obj, "seed", o->seed, ok);
	policies = json_object_new_object();
	ok = add(obj, "policies", policies, ok && policies);
	for (run = 0; ok && run < NR_RUNS; run++) {
		if (run == RUN_WITH && !with)
			break;
		p = json_object_new_object();
		ok = add(policies, runs[run], p, p != NULL);
		for (i = trace_figs_next(t, TRACE_FIGS_END);
		     ok && i != TRACE_FIGS_END; i = trace_figs_next(t, i)) {
			if (!t->f[i].has[run])
				continue;
			/* GROUP/FIGURE: the figure follows the last '/'. */
			num = json_number(t->f[i].v[run]);
			ok = add(p, t->f[i].key, num,
				 num || !isfinite(t->f[i].v[run]));
		}
	}
	if (ok && with) {
		applied = json_applied(tp);
		ok = add(obj, "applied", applied, applied != NULL);
	}
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return print_json(obj);
}

/* Runs the trace without and with the policy and prints the figures.
 * Returns the exit status. */
static int run_trace(const struct options *o)
{
	const char *costs = o->costs ? o->costs : "today";
	struct trace_policy tp = { .o = o };
	struct trace_figs t = { .n = 0 };
	mr_sim_trace_t *trace = NULL;
	bool with = has_policy(o);
	char *text = NULL, err[512];
	size_t len = 0;
	int r, status;

	r = read_file(o->trace, &text, &len);
	if (r < 0) {
		fprintf(stderr, PROG ": --trace '%s': %s\n", o->trace,
			strerror(-r));
		return r == -ENOMEM ? EXIT_FAILURE_LIB : EXIT_BAD_OPTION;
	}
	err[0] = '\0';
	r = mr_sim_trace_parse(text, len, &trace, err, sizeof(err));
	free(text);
	if (r < 0) {
		/* "mrsim: web.trace: line 12: ..." */
		fprintf(stderr, PROG ": %s: %s\n", o->trace,
			r == -EINVAL && err[0] ? err : mr_strerror(r));
		return r == -EINVAL ? EXIT_BAD_OPTION : EXIT_FAILURE_LIB;
	}
	if (o->policy.soft_limit.set)
		fprintf(stderr, PROG ": --soft-limit: the library's soft limit "
			"steers mr_ctx_reclaim() only, which a trace's run does "
			"not call: it changes no figure (the kernel's soft "
			"limit is 'soft' on the trace's group line)\n");
	/* The policy first: a policy that does not suit the trace's groups
	 * is refused before the baseline has taken its time. */
	if (with) {
		trace_figs_start(&t, RUN_WITH);
		r = mr_sim_trace_run(trace, o->seed, costs, setup_policy, &tp,
				     trace_figs_collect, &t);
		if (r == 0)
			r = t.err;
	}
	if (r == 0) {
		trace_figs_start(&t, RUN_WITHOUT);
		r = mr_sim_trace_run(trace, o->seed, costs, NULL, NULL,
				     trace_figs_collect, &t);
		if (r == 0)
			r = t.err;
	}
	if (r == 0)
		r = o->json ? print_trace_json(o, costs, &t, &tp, with) :
			      print_trace_table(o, costs, &t, &tp, with);
	status = 0;
	if (r < 0) {
		if (!tp.reported)
			fprintf(stderr, PROG ": %s: %s\n", o->trace,
				mr_strerror(r));
		status = tp.status ? tp.status : EXIT_FAILURE_LIB;
	}
	free_policy(&tp);
	trace_figs_free(&t);
	mr_sim_trace_free(trace);
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	const char *name;
	bool failed = false, outside = false;
	int verdict, r;
	unsigned i;

	r = parse_options(argc, argv, &o);
	if (r < 0)
		return r == -ENOMEM ? EXIT_FAILURE_LIB : EXIT_BAD_OPTION;
	if (o.trace) {
		r = run_trace(&o);
		free_options(&o);
		return r;
	}
	free_options(&o);
	if (o.list) {
		if (list(&o) < 0) {
			fprintf(stderr, PROG ": %s\n", mr_strerror(-ENOMEM));
			return EXIT_FAILURE_LIB;
		}
		return 0;
	}
	for (i = 0; (name = mr_sim_scenario_name(i)); i++) {
		if (strcmp(o.scenario, "all") != 0 &&
		    strcmp(o.scenario, name) != 0)
			continue;
		if (run_one(name, &o, &verdict) < 0)
			failed = true;
		else if (verdict == MR_SIM_OUTSIDE)
			outside = true;
	}
	if (failed)
		return EXIT_FAILURE_LIB;
	return outside ? EXIT_OUTSIDE : 0;
}
