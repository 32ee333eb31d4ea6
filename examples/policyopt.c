/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reclaim policy options of the example programs (policyopt.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "policyopt.h"

#define PAGE_BYTES POLICYOPT_PAGE_BYTES
#define MAX_BATCH_BYTES POLICYOPT_MAX_BATCH_BYTES

/* Reports a bad option value; the caller exits 2. */
static int bad_value(const char *prefix, const char *opt, const char *value,
		     const char *why)
{
	fprintf(stderr, "%s: %s '%s': %s\n", prefix, opt, value, why);
	return -EINVAL;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* "12.5%" -> 125000 ppm. 0..1000000. */
static int parse_percent(const char *s, size_t len, uint32_t *ppm)
{
	uint64_t v = 0;
	size_t i = 0;
	int decimals = -1;

	if (len == 0)
		return -EINVAL;
	for (; i < len; i++) {
		if (s[i] == '.' && decimals < 0 && i > 0) {
			decimals = 0;
			continue;
		}
		if (s[i] < '0' || s[i] > '9' || decimals == 4 || v > 1000000)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (decimals >= 0)
			decimals++;
	}
	if (decimals == 0)
		return -EINVAL;
	for (decimals = decimals < 0 ? 0 : decimals; decimals < 4; decimals++)
		v *= 10;
	if (v > 1000000)
		return -ERANGE;
	*ppm = (uint32_t)v;
	return 0;
}

int policyopt_parse_size(const char *prefix, const char *opt, const char *s,
			 bool allow_percent, struct size_opt *out)
{
	const char *not_size = allow_percent ?
			       "not a size (bytes, K, M, G or N%)" :
			       "not a size (bytes, K, M or G)";
	size_t len = strlen(s);
	uint64_t v = 0, mult = 1;
	size_t i;

	if (allow_percent && len > 0 && s[len - 1] == '%') {
		if (parse_percent(s, len - 1, &out->ppm) < 0)
			return bad_value(prefix, opt, s,
					 "not a percentage between 0% and 100% (at most 4 decimals)");
		out->is_ppm = true;
		out->set = true;
		return 0;
	}
	if (len > 0) {
		switch (s[len - 1]) {
		case 'k': case 'K':
			mult = 1ULL << 10;
			len--;
			break;
		case 'm': case 'M':
			mult = 1ULL << 20;
			len--;
			break;
		case 'g': case 'G':
			mult = 1ULL << 30;
			len--;
			break;
		default:
			break;
		}
	}
	if (len == 0)
		return bad_value(prefix, opt, s, not_size);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return bad_value(prefix, opt, s, not_size);
		if (v > (UINT64_MAX - 9) / 10)
			return bad_value(prefix, opt, s, "too large");
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT64_MAX / mult)
		return bad_value(prefix, opt, s, "too large");
	out->bytes = v * mult;
	out->is_ppm = false;
	out->set = true;
	return 0;
}

/* "10ms" -> 10000000. A whole number with a unit: us, ms or s. */
static int parse_duration_ns(const char *s, size_t len, uint64_t *ns)
{
	uint64_t v = 0, mult;
	size_t i, digits;

	for (digits = 0; digits < len && s[digits] >= '0' && s[digits] <= '9';
	     digits++)
		;
	if (!digits)
		return -EINVAL;
	if (len - digits == 2 && !strncmp(s + digits, "us", 2))
		mult = 1000ULL;
	else if (len - digits == 2 && !strncmp(s + digits, "ms", 2))
		mult = 1000000ULL;
	else if (len - digits == 1 && s[digits] == 's')
		mult = 1000000000ULL;
	else
		return -EINVAL;
	for (i = 0; i < digits; i++) {
		if (v > (UINT64_MAX / mult - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*ns = v * mult;
	return 0;
}

/* STALL/WINDOW, as "10ms/6s". */
static int parse_pressure_target(const char *prefix, const char *opt,
				 const char *arg, struct policy_opts *p)
{
	const char *slash = strchr(arg, '/');

	if (!slash ||
	    parse_duration_ns(arg, (size_t)(slash - arg), &p->stall_ns) < 0 ||
	    parse_duration_ns(slash + 1, strlen(slash + 1), &p->window_ns) < 0)
		return bad_value(prefix, opt, arg,
				 "not STALL/WINDOW, each a whole number with "
				 "us, ms or s (10ms/6s)");
	p->pressure_target_set = true;
	return 0;
}

int policyopt_parse(const char *prefix, const char *name, const char *arg,
		    struct policy_opts *p)
{
	return policyopt_parse_as(prefix, name, NULL, arg, p);
}

static const char *const opt_names[POLICYOPT_COUNT] = {
	[POLICYOPT_MARGIN] = "margin",
	[POLICYOPT_HYSTERESIS] = "hysteresis",
	[POLICYOPT_BATCH] = "batch",
	[POLICYOPT_SOFT_LIMIT] = "soft-limit",
	[POLICYOPT_PROACTIVE] = "proactive",
	[POLICYOPT_PRESSURE_TARGET] = "pressure-target",
	[POLICYOPT_MIN_SIZE] = "min-size",
};

/* The option id as a message names it (policyopt.h): "--margin"; a
 * file's "margin", after the "FILE:LINE: " that gave it when at is true.
 * Into buf (a POLICYOPT_LABEL_BYTES array), which it returns. */
#define POLICYOPT_LABEL_BYTES (PATH_MAX + 64)
static const char *label(const struct policy_opts *p, int id, bool at,
			 char *buf)
{
	if (!p->keys)
		snprintf(buf, POLICYOPT_LABEL_BYTES, "--%s", opt_names[id]);
	else if (at && p->where[id])
		snprintf(buf, POLICYOPT_LABEL_BYTES, "%s: %s", p->where[id],
			 opt_names[id]);
	else
		snprintf(buf, POLICYOPT_LABEL_BYTES, "%s", opt_names[id]);
	return buf;
}

int policyopt_parse_as(const char *prefix, const char *name, const char *where,
		       const char *arg, struct policy_opts *p)
{
	char opt[POLICYOPT_LABEL_BYTES];
	int id;

	for (id = 0; id < POLICYOPT_COUNT && strcmp(name, opt_names[id]); id++)
		;
	if (id == POLICYOPT_COUNT) {
		fprintf(stderr, "%s: %s%s%s: not a policy option\n", prefix,
			where ? where : "--", where ? ": " : "", name);
		return -EINVAL;
	}
	if (where) {
		p->keys = true;
		p->where[id] = where;
	}
	label(p, id, true, opt);
	switch (id) {
	case POLICYOPT_MARGIN:
		p->margin_arg = arg;
		p->margin_sized = strcmp(arg, "sized") == 0;
		p->margin_auto = p->margin_sized || strcmp(arg, "auto") == 0;
		if (p->margin_auto) {
			p->margin.set = true;
			p->margin.is_ppm = false;
			return 0;
		}
		return policyopt_parse_size(prefix, opt, arg, true, &p->margin);
	case POLICYOPT_HYSTERESIS:
		return policyopt_parse_size(prefix, opt, arg, true,
					    &p->hysteresis);
	case POLICYOPT_BATCH:
		if (strcmp(arg, "auto") == 0) {
			p->batch_auto = true;
			p->batch.set = false;
			return 0;
		}
		p->batch_auto = false;
		return policyopt_parse_size(prefix, opt, arg, true, &p->batch);
	case POLICYOPT_SOFT_LIMIT:
		return policyopt_parse_size(prefix, opt, arg, true,
					    &p->soft_limit);
	case POLICYOPT_PROACTIVE:
		if (strcmp(arg, "on") == 0)
			p->proactive = POLICYOPT_PROACTIVE_ON;
		else if (strcmp(arg, "off") == 0)
			p->proactive = POLICYOPT_PROACTIVE_OFF;
		else if (strcmp(arg, "dry-run") == 0)
			p->proactive = POLICYOPT_PROACTIVE_DRY_RUN;
		else
			return bad_value(prefix, opt, arg,
					 "expected on, off or dry-run");
		return 0;
	case POLICYOPT_PRESSURE_TARGET:
		return parse_pressure_target(prefix, opt, arg, p);
	default: /* POLICYOPT_MIN_SIZE */
		return policyopt_parse_size(prefix, opt, arg, false,
					    &p->min_size);
	}
}

int policyopt_check(const char *prefix, const struct policy_opts *p)
{
	const struct size_opt *b = &p->batch;
	char l1[POLICYOPT_LABEL_BYTES], l2[POLICYOPT_LABEL_BYTES];
	int id;

	if (!p->margin.set && (p->hysteresis.set || b->set || p->batch_auto)) {
		id = p->hysteresis.set ? POLICYOPT_HYSTERESIS : POLICYOPT_BATCH;
		fprintf(stderr, "%s: %s goes with %s\n", prefix,
			label(p, id, true, l1),
			label(p, POLICYOPT_MARGIN, false, l2));
		return -EINVAL;
	}
	if (p->margin_auto && p->hysteresis.set) {
		fprintf(stderr, "%s: %s goes with a fixed %s: %s (the default) "
			"sizes its own\n", prefix,
			label(p, POLICYOPT_HYSTERESIS, true, l1),
			label(p, POLICYOPT_MARGIN, false, l2),
			p->keys ? "margin = auto" : "--margin auto");
		return -EINVAL;
	}
	if (p->margin.set && !p->margin_auto &&
	    ((p->margin.is_ppm && (p->margin.ppm == 0 ||
				   p->margin.ppm >= 1000000)) ||
	     (!p->margin.is_ppm && p->margin.bytes == 0))) {
		fprintf(stderr, "%s: %s '%s': must be above 0 (and below "
			"100%%)\n", prefix,
			label(p, POLICYOPT_MARGIN, true, l1), p->margin_arg);
		return -EINVAL;
	}
	/* mr_group_set_margin()'s own bound, so that the group is never
	 * opened for a margin it would refuse. */
	if (p->margin.set && !p->margin_auto && !p->margin.is_ppm &&
	    p->margin.bytes < MR_MARGIN_MIN_BYTES) {
		fprintf(stderr,
			"%s: %s '%s': a margin in bytes must be at least %llu (4 KiB, the smallest page size Linux has: the kernel counts usage in whole pages)\n",
			prefix, label(p, POLICYOPT_MARGIN, true, l1),
			p->margin_arg, (unsigned long long)MR_MARGIN_MIN_BYTES);
		return -EINVAL;
	}
	if (p->hysteresis.is_ppm && p->hysteresis.ppm >= 1000000) {
		fprintf(stderr, "%s: %s must be below 100%%\n", prefix,
			label(p, POLICYOPT_HYSTERESIS, true, l1));
		return -EINVAL;
	}
	if (b->set && b->is_ppm && b->ppm == 0) {
		fprintf(stderr, "%s: %s must be above 0%%\n", prefix,
			label(p, POLICYOPT_BATCH, true, l1));
		return -EINVAL;
	}
	if (b->set && !b->is_ppm &&
	    (b->bytes < PAGE_BYTES || b->bytes > MAX_BATCH_BYTES ||
	     b->bytes % PAGE_BYTES)) {
		fprintf(stderr,
			"%s: %s must be a multiple of 4K from 4K to 1024G\n",
			prefix, label(p, POLICYOPT_BATCH, true, l1));
		return -EINVAL;
	}
	if ((p->pressure_target_set || p->min_size.set) &&
	    p->proactive != POLICYOPT_PROACTIVE_ON &&
	    p->proactive != POLICYOPT_PROACTIVE_DRY_RUN) {
		id = p->pressure_target_set ? POLICYOPT_PRESSURE_TARGET :
		     POLICYOPT_MIN_SIZE;
		fprintf(stderr, "%s: %s goes with the proactive controller "
			"(%s)\n", prefix, label(p, id, true, l1),
			p->keys ? "proactive = on or dry-run" :
			"--proactive or --proactive-dry-run");
		return -EINVAL;
	}
	/* mr_group_set_proactive()'s own bounds. */
	if (p->pressure_target_set &&
	    (p->window_ns < 1000000000ULL || p->window_ns > 600000000000ULL ||
	     p->stall_ns < 1000 || p->stall_ns > p->window_ns)) {
		fprintf(stderr, "%s: %s: the window must be 1s to 600s and the "
			"stall 1us to the window\n", prefix,
			label(p, POLICYOPT_PRESSURE_TARGET, true, l1));
		return -EINVAL;
	}
	return 0;
}

uint64_t policyopt_ppm_of(uint64_t limit_bytes, uint32_t ppm)
{
	return (uint64_t)((unsigned __int128)limit_bytes * ppm / 1000000);
}

/* Says why the group refused the margin (-ERANGE), with the numbers. */
static void explain_range(const char *prefix, mr_group_t *g,
			  const struct policy_opts *p, uint64_t hyst)
{
	struct mr_limits lim = { .size = sizeof(lim) };
	char l1[POLICYOPT_LABEL_BYTES], l2[POLICYOPT_LABEL_BYTES];
	uint64_t margin;

	label(p, POLICYOPT_MARGIN, true, l1);
	if (mr_group_read_limits(g, &lim) < 0 ||
	    lim.limit_bytes == MR_UNLIMITED) {
		/* The limit changed under us; say what the library said. */
		fprintf(stderr, "%s: %s '%s': %s\n", prefix, l1,
			p->margin_arg, mr_strerror(-ERANGE));
		return;
	}
	margin = p->margin.is_ppm ?
		 policyopt_ppm_of(lim.limit_bytes, p->margin.ppm) :
		 p->margin.bytes;
	if (margin >= lim.limit_bytes)
		fprintf(stderr,
			"%s: %s %.1f MiB is not below the group's limit (%.1f MiB)\n",
			prefix, l1, mib(margin), mib(lim.limit_bytes));
	else
		fprintf(stderr,
			"%s: %s %.1f MiB + %s %.1f MiB exceed the group's limit (%.1f MiB)\n",
			prefix, l1, mib(margin),
			label(p, POLICYOPT_HYSTERESIS, false, l2), mib(hyst),
			mib(lim.limit_bytes));
}

/* The hysteresis for the limit. Default: the margin itself, so each
 * wake-up frees a margin's worth in large batches. With 0 the worker
 * frees only the excess, 128 KiB at a time, and a reader charging at
 * GB/s outruns it (measured with scripts/demo). The default is cut to
 * half of what lies below limit - margin (whole 4 KiB pages): the
 * library keeps a hysteresis it accepted whole, so a default that
 * reached down to 0 (a 40 MiB margin in a 64 MiB group) would empty the
 * group at every wake-up. */
static uint64_t hysteresis_for(const struct policy_opts *p, uint64_t limit)
{
	bool unlimited = limit == MR_UNLIMITED;
	uint64_t margin, cap;

	if (p->hysteresis.set)
		return p->hysteresis.is_ppm ?
		       policyopt_ppm_of(limit, p->hysteresis.ppm) :
		       p->hysteresis.bytes;
	margin = p->margin.bytes;
	if (p->margin.is_ppm && !unlimited)
		margin = policyopt_ppm_of(limit, p->margin.ppm);
	if (unlimited || margin >= limit)
		return margin;
	cap = (limit - margin) / 2 / 4096 * 4096;
	return margin < cap ? margin : cap;
}

/* A batch given in % of the limit: whole pages, 4K .. 1024G. */
static uint64_t batch_for(const struct policy_opts *p, uint64_t limit)
{
	uint64_t batch;

	if (!p->batch.is_ppm)
		return p->batch.bytes;
	batch = policyopt_ppm_of(limit, p->batch.ppm);
	batch -= batch % PAGE_BYTES;
	if (batch < PAGE_BYTES)
		batch = PAGE_BYTES;
	if (batch > MAX_BATCH_BYTES)
		batch = MAX_BATCH_BYTES;
	return batch;
}

int policyopt_compute(const char *prefix, const char *name,
		      const struct policy_opts *p, uint64_t limit,
		      struct policy_bytes *out)
{
	struct policy_bytes b = { .soft_limit = MR_UNLIMITED };
	bool proactive = p->proactive == POLICYOPT_PROACTIVE_ON ||
			 p->proactive == POLICYOPT_PROACTIVE_DRY_RUN;
	char l1[POLICYOPT_LABEL_BYTES];
	int pct = -1;

	if (limit == MR_UNLIMITED) {
		if (p->hysteresis.set && p->hysteresis.is_ppm)
			pct = POLICYOPT_HYSTERESIS;
		else if (p->batch.set && p->batch.is_ppm)
			pct = POLICYOPT_BATCH;
		else if (p->soft_limit.set && p->soft_limit.is_ppm)
			pct = POLICYOPT_SOFT_LIMIT;
	}
	if (pct >= 0) {
		fprintf(stderr, "%s: %s in %% needs a limit, and %s has none\n",
			prefix, label(p, pct, true, l1), name);
		return -ERANGE;
	}
	/* The controller never takes a group below min-size, nor can usage
	 * rise above the limit: with min-size at or above the limit it
	 * could never do anything. */
	if (proactive && p->min_size.set && limit != MR_UNLIMITED &&
	    p->min_size.bytes >= limit) {
		fprintf(stderr, "%s: %s %llu bytes (%.1f MiB) is not below the "
			"limit of %s (%llu bytes, %.1f MiB): the proactive "
			"controller could never shrink it\n", prefix,
			label(p, POLICYOPT_MIN_SIZE, true, l1),
			(unsigned long long)p->min_size.bytes,
			mib(p->min_size.bytes), name,
			(unsigned long long)limit, mib(limit));
		return -ERANGE;
	}
	if (p->margin.set) {
		b.margin_set = true;
		b.margin_adaptive = p->margin_auto;
		b.margin_min_strength_ppm = p->margin_sized ? 1000000 : 0;
		b.margin_ppm = !p->margin_auto && p->margin.is_ppm ?
			       p->margin.ppm : 0;
		b.margin = p->margin_auto ? 0 :
			   !p->margin.is_ppm ? p->margin.bytes :
			   limit == MR_UNLIMITED ? 0 :
			   policyopt_ppm_of(limit, p->margin.ppm);
		b.hysteresis = p->margin_auto ? 0 : hysteresis_for(p, limit);
		b.batch_auto = p->batch_auto;
		if (p->batch.set)
			b.batch = batch_for(p, limit);
		if (p->batch_auto) {
			b.batch_min = MR_SWAP_CLUSTER_MAX_BYTES;
			b.batch_max = mr_batch_proportional_bytes(limit, limit,
					MR_BATCH_DEFAULT_SHARE_PPM,
					MR_BATCH_DEFAULT_MAX_BYTES,
					MR_BATCH_DEFAULT_MAX_PPM);
		}
	}
	if (p->soft_limit.set)
		b.soft_limit = p->soft_limit.is_ppm ?
			       policyopt_ppm_of(limit, p->soft_limit.ppm) :
			       p->soft_limit.bytes;
	if (proactive) {
		b.proactive = true;
		b.pro = (struct mr_proactive){
			.size = sizeof(b.pro),
			.stall_ns = p->stall_ns,
			.window_ns = p->window_ns,
			.min_bytes = p->min_size.bytes,
			.flags = p->proactive == POLICYOPT_PROACTIVE_DRY_RUN ?
				 MR_PROACTIVE_DRY_RUN : 0,
		};
	}
	*out = b;
	return 0;
}

/* The settings policyopt_apply() makes, in the order it makes them. The
 * margin comes last: turning it on claims the group among all its
 * managers (the keeper lock) and, on cgroup v1, takes an fd, so a setting
 * refused before it leaves no claim to give back. */
enum { STEP_BATCH, STEP_SOFT_LIMIT, STEP_PROACTIVE, STEP_MARGIN, STEPS };

static const char *const step_names[STEPS] = {
	[STEP_BATCH] = "batch",
	[STEP_SOFT_LIMIT] = "soft limit",
	[STEP_PROACTIVE] = "proactive controller",
	[STEP_MARGIN] = "margin",
};

/* A group just opened: the library's defaults. */
static const struct policy_bytes library_defaults = {
	.soft_limit = MR_UNLIMITED,
};

/* The settings b makes differently from a, as bits (1 << STEP_*). */
static unsigned steps_changed(const struct policy_bytes *a,
			      const struct policy_bytes *b)
{
	unsigned changed = 0;

	if (a->batch_auto != b->batch_auto ||
	    (!a->batch_auto && a->batch != b->batch))
		changed |= 1u << STEP_BATCH;
	if (a->soft_limit != b->soft_limit)
		changed |= 1u << STEP_SOFT_LIMIT;
	if (a->proactive != b->proactive ||
	    (a->proactive && (a->pro.stall_ns != b->pro.stall_ns ||
			      a->pro.window_ns != b->pro.window_ns ||
			      a->pro.min_bytes != b->pro.min_bytes ||
			      a->pro.flags != b->pro.flags)))
		changed |= 1u << STEP_PROACTIVE;
	if (a->margin_set != b->margin_set ||
	    (a->margin_set &&
	     (a->margin_adaptive != b->margin_adaptive ||
	      (a->margin_adaptive ?
	       a->margin_min_strength_ppm != b->margin_min_strength_ppm :
	       a->margin_ppm != b->margin_ppm ||
	       (!a->margin_ppm && a->margin != b->margin) ||
	       a->hysteresis != b->hysteresis))))
		changed |= 1u << STEP_MARGIN;
	return changed;
}

/* Makes the setting `step` of b on g. Returns the setter's result. */
static int step_set(int step, mr_group_t *g, const struct policy_bytes *b)
{
	struct mr_margin_adaptive a = {
		.size = sizeof(a),
		.min_strength_ppm = b->margin_min_strength_ppm,
	};

	switch (step) {
	case STEP_BATCH:
		if (b->batch_auto)
			return mr_group_set_batch_proportional(g,
					MR_BATCH_DEFAULT_SHARE_PPM,
					MR_BATCH_DEFAULT_MAX_BYTES,
					MR_BATCH_DEFAULT_MAX_PPM);
		return mr_group_set_batch_fixed(g, b->batch ? b->batch :
						MR_SWAP_CLUSTER_MAX_BYTES);
	case STEP_SOFT_LIMIT:
		return mr_group_set_soft_limit(g, b->soft_limit);
	case STEP_PROACTIVE:
		return mr_group_set_proactive(g, b->proactive ? &b->pro : NULL,
					      b->proactive ? sizeof(b->pro) : 0);
	default:
		if (!b->margin_set)
			return mr_group_set_margin(g, 0, 0, 0);
		if (b->margin_adaptive)
			/* The library's defaults: rate x reaction x 3, at
			 * most a tenth of the limit, gated by what it costs
			 * (sized: kept whole, whatever it costs). */
			return mr_group_set_margin_adaptive(g, &a);
		return mr_group_set_margin(g, b->margin_ppm ? 0 : b->margin,
					   b->margin_ppm, b->hysteresis);
	}
}

/* Copies the setting `step` of from into to. */
static void step_copy(int step, struct policy_bytes *to,
		      const struct policy_bytes *from)
{
	switch (step) {
	case STEP_BATCH:
		to->batch_auto = from->batch_auto;
		to->batch = from->batch;
		to->batch_min = from->batch_min;
		to->batch_max = from->batch_max;
		break;
	case STEP_SOFT_LIMIT:
		to->soft_limit = from->soft_limit;
		break;
	default: /* STEP_PROACTIVE; the margin, last, is never put back */
		to->proactive = from->proactive;
		to->pro = from->pro;
		break;
	}
}

/* Says why the setting `step` of b was refused (r). */
static void report(const char *prefix, mr_group_t *g, const char *name,
		   const struct policy_opts *p, const struct policy_bytes *b,
		   int step, int r)
{
	char l1[POLICYOPT_LABEL_BYTES];

	if (step == STEP_MARGIN && r == -ERANGE)
		explain_range(prefix, g, p, b->hysteresis);
	else if (step == STEP_MARGIN && r == -EBUSY)
		fprintf(stderr,
			"%s: another manager, in this or another process, already keeps a margin on %s (only one may)\n",
			prefix, name);
	else if (step == STEP_PROACTIVE && r == -EOPNOTSUPP)
		/* Said for --proactive and the proactive key alike: each
		 * way to hybrid PSI is named. */
		fprintf(stderr, "%s: %s: %s has no memory pressure "
			"(PSI) to keep it under: a kernel without CONFIG_PSI or "
			"booted with psi=0, or cgroup v1 without hybrid PSI "
			"(--hybrid-psi, or hybrid-psi = yes in [daemon]) or "
			"with neither a cgroup2 twin (the same path beneath the "
			"cgroup2 mount) nor a cgroup2 group holding its tasks "
			"alone\n", prefix,
			label(p, POLICYOPT_PROACTIVE, true, l1), name);
	else
		fprintf(stderr, "%s: setting the %s: %s\n", prefix,
			step_names[step], mr_strerror(r));
}

int policyopt_apply(const char *prefix, mr_group_t *g, const char *name,
		    const struct policy_opts *p, const struct mr_limits *lim,
		    const struct policy_bytes *old, struct policy_bytes *out)
{
	const struct policy_bytes *from = old ? old : &library_defaults;
	struct policy_bytes b, now;
	unsigned changed, done = 0;
	int r, step, undo;

	r = policyopt_compute(prefix, name, p, lim->limit_bytes, &b);
	if (r < 0) {
		if (out)
			*out = *from;
		return r;
	}
	changed = steps_changed(from, &b);
	for (step = 0; step < STEPS; step++) {
		if (!(changed & (1u << step)))
			continue;
		r = step_set(step, g, &b);
		if (r < 0)
			break;
		done |= 1u << step;
	}
	if (r == 0) {
		if (out)
			*out = b;
		return 0;
	}
	report(prefix, g, name, p, &b, step, r);
	/* All or nothing: what was set goes back, last first. */
	now = *from;
	for (undo = step - 1; undo >= 0; undo--) {
		int u;

		if (!(done & (1u << undo)))
			continue;
		u = step_set(undo, g, from);
		if (u == 0) {
			fprintf(stderr, "%s: the former %s put back\n",
				prefix, step_names[undo]);
			continue;
		}
		fprintf(stderr, "%s: putting back the former %s: %s; the new "
			"one stays\n", prefix, step_names[undo],
			mr_strerror(u));
		step_copy(undo, &now, &b);
	}
	if (out)
		*out = now;
	return r;
}
