/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reclaim policy options of the example programs, spelled as
 * memreclaimd spells them, parsed and applied to a group in one place:
 * memreclaimd applies them to the cgroup it keeps, mrsim --trace to the
 * groups of a simulated trace, mr-demo's simulated run as memreclaimd
 * would. One copy, so that what a user tries on the simulator is what the
 * daemon does.
 *
 *   --margin SIZE|auto|sized  keep usage this far below the limit;
 *                         auto: the adaptive margin with its defaults;
 *                         sized: the adaptive margin kept whole, its
 *                         cost gate off (min_strength_ppm 1000000)
 *   --hysteresis SIZE     reclaim this much further (default: the margin,
 *                         cut so that margin + hysteresis fit the limit)
 *   --batch SIZE|auto     per reclaim call: fixed, or the library's
 *                         proportional defaults (MR_BATCH_DEFAULT_*)
 *   --soft-limit SIZE     mr_group_set_soft_limit() (mrsim only)
 *   --proactive on|off|dry-run  the proactive controller
 *                         (mr_group_set_proactive()); memreclaimd spells
 *                         on as --proactive, dry-run as
 *                         --proactive-dry-run
 *   --pressure-target DUR/DUR  its target: PSI some stall per window
 *                         (default 10ms/6s); DUR is a number with a unit,
 *                         us, ms or s
 *   --min-size SIZE       the least size it takes the group to (bytes;
 *                         below the group's limit, if it has one)
 *
 * SIZE is a number of bytes with an optional K, M or G suffix (powers of
 * 1024), or N% of the group's limit (up to four decimals).
 *
 * Messages go to stderr as "PREFIX: ...", PREFIX being the caller's name
 * ("memreclaimd"), or its name and the group's ("mrsim: /web") where
 * several groups take the options. They name an option as the command
 * line spells it ("--margin"), or, for options a configuration file gave
 * (policyopt_parse_as()), as its key with the file and line that gave it
 * ("memreclaimd.conf:7: margin").
 */
#ifndef MR_EXAMPLES_POLICYOPT_H
#define MR_EXAMPLES_POLICYOPT_H

#include <stdbool.h>
#include <stdint.h>

#include <memreclaim.h>

#define POLICYOPT_PAGE_BYTES 4096ULL
#define POLICYOPT_MAX_BATCH_BYTES (1ULL << 40)

/* A size option: bytes, or a share of the limit in ppm. */
struct size_opt {
	bool set;
	bool is_ppm;
	uint64_t bytes;
	uint32_t ppm;
};

/* The options, as indexes of struct policy_opts.where[]. */
enum policyopt_id {
	POLICYOPT_MARGIN,
	POLICYOPT_HYSTERESIS,
	POLICYOPT_BATCH,
	POLICYOPT_SOFT_LIMIT,
	POLICYOPT_PROACTIVE,
	POLICYOPT_PRESSURE_TARGET,
	POLICYOPT_MIN_SIZE,
	POLICYOPT_COUNT
};

/* The policy options as given. Zero-initialized: no option. */
struct policy_opts {
	const char *margin_arg;      /* --margin as given, for messages */
	struct size_opt margin;
	bool margin_auto;            /* --margin auto or sized: adaptive */
	bool margin_sized;           /* --margin sized: its gate off */
	struct size_opt hysteresis;
	struct size_opt batch;
	bool batch_auto;
	struct size_opt soft_limit;
	/* The proactive controller: POLICYOPT_PROACTIVE_*. */
	int proactive;
	bool pressure_target_set;
	uint64_t stall_ns, window_ns;  /* --pressure-target */
	struct size_opt min_size;      /* --min-size, bytes */
	/* How messages name the options: false, as the command line's
	 * ("--margin"); true, as a configuration file's keys ("margin"),
	 * each after the "FILE:LINE" that gave it (where[id]; NULL: not
	 * given, a default). Set by policyopt_parse_as(). */
	bool keys;
	const char *where[POLICYOPT_COUNT];
};

#define POLICYOPT_PROACTIVE_UNSET 0  /* not given: off */
#define POLICYOPT_PROACTIVE_OFF 1
#define POLICYOPT_PROACTIVE_ON 2
#define POLICYOPT_PROACTIVE_DRY_RUN 3

/* What the options come to for one group's limit, in bytes: every
 * setting of the group's policy, as policyopt_apply() makes it. */
struct policy_bytes {
	bool margin_set;             /* false: no margin */
	bool margin_adaptive;        /* sized by the library: margin 0 */
	uint32_t margin_min_strength_ppm; /* adaptive: its cost gate's
					     floor (sized: 1000000) */
	uint64_t margin;
	uint32_t margin_ppm;         /* given in % of the limit: set as
					such (margin: its bytes at this
					limit); 0: in bytes */
	uint64_t hysteresis;
	bool batch_auto;             /* the proportional defaults */
	uint64_t batch;              /* fixed batch; 0: the library's */
	uint64_t batch_min, batch_max; /* batch_auto: one call's bounds */
	uint64_t soft_limit;         /* MR_UNLIMITED: none set */
	bool proactive;              /* the controller on (a dry run too) */
	struct mr_proactive pro;     /* proactive: its settings */
};

/* Parses SIZE for the option opt ("--margin") into *out. allow_percent:
 * whether N% is taken. Returns 0, or -EINVAL after saying why. */
int policyopt_parse_size(const char *prefix, const char *opt, const char *s,
			 bool allow_percent, struct size_opt *out);

/* Parses the option --NAME: "margin", "hysteresis", "batch" (SIZE or
 * auto), "soft-limit", "proactive" (on, off or dry-run),
 * "pressure-target" (DUR/DUR) or "min-size" (SIZE) into *p.
 * Returns 0, or -EINVAL after saying why. */
int policyopt_parse(const char *prefix, const char *name, const char *arg,
		    struct policy_opts *p);

/* The same for the key NAME of a configuration file, given at where
 * ("FILE:LINE", kept by pointer in p->where[]: it must live as long as
 * *p), so that this and every later message names it as the file does
 * ("FILE:LINE: margin '4x': ..."). where NULL: the command line's
 * option, as policyopt_parse(). */
int policyopt_parse_as(const char *prefix, const char *name, const char *where,
		       const char *arg, struct policy_opts *p);

/* Checks the options that were given, without a group: a margin above 0
 * and below 100%, and in bytes at least MR_MARGIN_MIN_BYTES (what
 * mr_group_set_margin() takes), a hysteresis below 100%, a batch above 0%
 * or a multiple of 4K from 4K to 1024G, --pressure-target and --min-size
 * only with the proactive controller on (or a dry run), a window of 1 s to
 * 600 s and a stall of 1 us to the window. Returns 0, or -EINVAL after
 * saying why. */
int policyopt_check(const char *prefix, const struct policy_opts *p);

/* A share of the limit in bytes. */
uint64_t policyopt_ppm_of(uint64_t limit_bytes, uint32_t ppm);

/* What the options come to for a group called name whose limit is
 * limit_bytes (MR_UNLIMITED: none), stored in *out; nothing is applied.
 * Returns 0, or -ERANGE after saying why the options do not suit this
 * group: a % option needs a limit; a min-size (with the proactive
 * controller) at or above the limit could never let it shrink the group
 * (a group without a limit takes any). */
int policyopt_compute(const char *prefix, const char *name,
		      const struct policy_opts *p, uint64_t limit_bytes,
		      struct policy_bytes *out);

/* Applies the options to the group g, shown as name in messages, whose
 * limits were just read into *lim, over the policy *old the group has
 * (what an earlier call stored in *out; NULL: a group just opened, with
 * the library's defaults). Each setting the options name, or, over an
 * old policy, each they no longer name (back to the library's default:
 * the batch to MR_SWAP_CLUSTER_MAX_BYTES, no margin, no soft limit, no
 * proactive controller), is made where it differs from *old: the batch,
 * the soft limit, the proactive controller, then the margin with its
 * hysteresis (last: turning it on claims the group). A setting that does
 * not change is not made again, so an adaptive margin keeps its
 * measurements and the proactive controller its intervals.
 *
 * All or nothing: everything is computed before the first setter, and
 * when a setter fails the settings already made are put back to *old,
 * last first (a proactive controller put back starts measuring afresh;
 * the margin, last, is never made when another setting failed), each
 * said on stderr; one that cannot be put back either (the group was
 * removed meanwhile) is said too. Stores in *out (may be NULL) the
 * policy in force after the call: the one applied on success; on failure
 * *old (the library's defaults for NULL), but for a setting that could
 * not be put back, which is the new one.
 * Returns 0, or a negative errno after reporting it: -ERANGE when an
 * option does not suit this group (a margin not below its limit, a % of
 * a group with no limit, a min-size not below its limit: a bad option
 * for it), another when the library failed (-EBUSY: another manager
 * keeps a margin on it; -EOPNOTSUPP: the group has no PSI for the
 * proactive controller, said with the reason). */
int policyopt_apply(const char *prefix, mr_group_t *g, const char *name,
		    const struct policy_opts *p, const struct mr_limits *lim,
		    const struct policy_bytes *old, struct policy_bytes *out);

#endif /* MR_EXAMPLES_POLICYOPT_H */
