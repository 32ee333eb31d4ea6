/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mrsim — runs the reference experiments of libmemreclaim's simulator
 * (docs/simulator.md) and says whether each lands inside the band of its
 * published result.
 *
 *   mrsim --list [--json]
 *   mrsim --scenario NAME|all [--seed N] [--costs 2011|today] [--json]
 *   mrsim --help | --version
 *
 * Each scenario prints its table in the reference's form followed by its
 * band check; with --json, one JSON object per line and scenario:
 *   {"scenario": "S4", "costs": "2011",
 *    "policies": {"<policy>": {"<figure>_<unit>": <number>, ...}, ...}}
 * Whole numbers print as integers, others in the fewest digits that read
 * back as the same double.
 *
 * Exit status: 0 when every scenario run is inside its band (or its
 * reference says nothing for these costs), 1 when the library fails,
 * 2 on a bad option, 3 when a scenario is outside its band. With "all",
 * every scenario runs; a failure (1) outranks a scenario outside (3).
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

#define PROG "mrsim"
#define DEFAULT_SEED 1
#define EXIT_FAILURE_LIB 1
#define EXIT_BAD_OPTION 2
#define EXIT_OUTSIDE 3

struct options {
	bool list;
	const char *scenario;        /* a name, or "all" */
	uint64_t seed;
	bool seed_set;
	const char *costs;           /* NULL: each scenario's own */
	bool json;
};

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
		"Runs the reference experiments of libmemreclaim's simulator on simulated\n"
		"machines in virtual time, prints each one's table in the form of its published\n"
		"result, and checks the band the reference gives.\n"
		"\n"
		"  --list                  name, title and default cost set of each scenario\n"
		"  --scenario NAME|all     run one scenario, or every one in order\n"
		"  --seed N                the simulators' seed, 0..2^64-1 (default %d): the same\n"
		"                          seed gives the same output, byte for byte\n"
		"  --costs 2011|today      the cost parameter set (default: each scenario's own,\n"
		"                          the one its reference was measured with)\n"
		"  --json                  one JSON object per line: a scenario's figures\n"
		"                          {\"scenario\": ..., \"costs\": ..., \"policies\": {POLICY:\n"
		"                          {FIGURE_UNIT: NUMBER, ...}, ...}}, or with --list its\n"
		"                          {\"scenario\": ..., \"title\": ..., \"costs\": ...}\n"
		"  --version               print the version and exit\n"
		"  --help                  print this help and exit\n"
		"\n"
		"Exit status: 0 when every scenario run is inside its band (or its reference\n"
		"says nothing for these costs), 1 when the library fails, 2 on a bad option\n"
		"(each option may be given once), 3 when a scenario is outside its band. With\n"
		"all, every scenario runs, and 1 outranks 3.\n",
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

/* Checks what was given together. */
static int check_options(const struct options *o)
{
	if (o->list == !!o->scenario) {
		fprintf(stderr, PROG ": give either --list or --scenario\n");
		return -EINVAL;
	}
	if (o->list && (o->costs || o->seed_set)) {
		fprintf(stderr,
			PROG ": --seed and --costs go with --scenario\n");
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
	       OPT_VERSION };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "scenario", required_argument, NULL, OPT_SCENARIO },
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
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		/* Every option counts once: a second --scenario or --seed
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
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_SCENARIO:
			o->scenario = optarg;
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
	if (r < 0)
		fprintf(stderr, "Try '" PROG " --help'.\n");
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

int main(int argc, char **argv)
{
	struct options o;
	const char *name;
	bool failed = false, outside = false;
	int verdict;
	unsigned i;

	if (parse_options(argc, argv, &o) < 0)
		return EXIT_BAD_OPTION;
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
