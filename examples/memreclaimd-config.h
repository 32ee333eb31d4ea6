/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's configuration: a main file (default
 * SYSCONFDIR/memreclaim/memreclaimd.conf) and the drop-ins of the
 * directory beside it named after it plus ".d" (memreclaimd.conf.d, its
 * files ending in .conf), read in lexical order after the main file,
 * parsed with libinih. A key given again, in a later file or the same
 * one, replaces the earlier value; a section given again adds its keys to
 * the first, so a drop-in can change one key of a section. Comments are
 * whole lines starting with '#' or ';'. memreclaimd.conf(5) documents
 * every key; memreclaimd_config_keys[] lists them for the man-page test.
 *
 *   [daemon]               one context, one worker: the daemon's settings
 *   backend = auto|cgroup1|cgroup2
 *   worker-sched = idle|nice:N
 *   stats-interval = SECONDS
 *   stats-format = text|json
 *   metrics-file = PATH
 *   metrics-interval = SECONDS
 *   metrics-port = PORT
 *   hybrid-psi = yes|no
 *   runtime-dir = PATH     the drop-ins of container runtimes' hooks
 *
 *   [group NAME]           NAME: a label (letters, digits, '-', '_', '.')
 *   path = PATTERN         the groups it keeps (memreclaimd-pattern.h)
 *   margin = auto|SIZE
 *   hysteresis = SIZE
 *   batch = auto|SIZE
 *   runtime = yes|no       yes: the groups are those a runtime's hook
 *                          names with policy NAME, beneath path
 *                          (memreclaimd-runtime.h); the walk skips it
 *   proactive = on|off|dry-run
 *   pressure-target = DUR/DUR
 *   min-size = SIZE
 *
 * (The pattern is a key, not part of the header: libinih cuts section
 * names at 49 bytes.) Loading reports every mistake on stderr, as
 * "FILE:LINE: KEY ...", the key as the file spells it (never the command
 * line's option), and changes nothing it was given when it fails.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_CONFIG_H
#define MR_EXAMPLES_MEMRECLAIMD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaimd-pattern.h"
#include "policyopt.h"

/* A value as given, with where it was given. */
struct mrd_value {
	char *text;          /* NULL: not given */
	char *where;         /* "FILE:LINE" */
};

/* The daemon-wide settings; a field not given keeps its default. */
struct mrd_daemon {
	struct mrd_value backend;          /* NULL: MEMRECLAIM_BACKEND */
	struct mrd_value worker_sched;
	int sched, nice;                   /* enum mr_sched; -20..19 */
	struct mrd_value stats_interval;
	uint64_t stats_interval_s;         /* 0: at start and end only */
	struct mrd_value stats_format;
	bool json;
	struct mrd_value metrics_file;     /* absolute path; NULL: none */
	struct mrd_value metrics_interval;
	uint64_t metrics_interval_s;       /* 1 .. a year */
	struct mrd_value metrics_port;
	unsigned metrics_port_n;           /* 0: no HTTP endpoint */
	struct mrd_value hybrid_psi;
	bool hybrid_psi_on;                /* mr_ctx_set_hybrid_psi() */
	struct mrd_value runtime_dir;      /* NULL: MRD_DEFAULT_RUNTIME_DIR */
};

/* One [group NAME] section. */
struct mrd_section {
	char *name;
	char *where;                       /* its first header: "FILE:LINE" */
	struct mrd_value path, margin, hysteresis, batch, runtime;
	struct mrd_value proactive, pressure_target, min_size;
	bool runtime_on;                   /* runtime = yes */
	struct mrd_pattern pattern;        /* parsed from path */
	struct policy_opts policy;         /* parsed from the values */
	char *policy_key;                  /* the path and policy values in
					      one string: a group whose
					      section keeps it is left as it
					      is on reload */
};

struct mrd_config {
	char *path;                        /* the main file */
	struct mrd_daemon daemon;
	struct mrd_section *sections;      /* in order of first appearance */
	size_t nsections;
};

#define MRD_DEFAULT_STATS_INTERVAL_S 10
#define MRD_DEFAULT_METRICS_INTERVAL_S 10
#define MRD_MAX_SECONDS (365ULL * 24 * 3600)

/* A whole number of seconds, min to MRD_MAX_SECONDS, into *out. where:
 * "FILE:LINE" (the message names key) or a command-line option
 * ("--duration", which the message names alone). 0, or -EINVAL logged. */
int mrd_parse_seconds(const char *where, const char *key, const char *s,
		      uint64_t min, uint64_t *out);
#ifndef MRD_DEFAULT_RUNTIME_DIR
#define MRD_DEFAULT_RUNTIME_DIR "/run/memreclaim/groups.d"
#endif

/* The runtime directory in force: runtime-dir, or the default. */
const char *mrd_daemon_runtime_dir(const struct mrd_daemon *d);

/* Every key, as "section.key" ("group.margin"), NULL-terminated. */
extern const char *const memreclaimd_config_keys[];

/* The defaults of struct mrd_daemon, for a run without a config file. */
void mrd_daemon_defaults(struct mrd_daemon *d);

/* Frees the values of *d (not d). */
void mrd_daemon_free(struct mrd_daemon *d);

/* Parses the daemon setting `key` (a name of [daemon]) given as value at
 * where ("FILE:LINE", or the command-line option that gave it: "--sched")
 * into *d. Returns
 * 0, or -EINVAL after saying why on stderr. */
int mrd_daemon_set(struct mrd_daemon *d, const char *key, const char *value,
		   const char *where);

/* Loads path and its drop-ins into *out. Returns 0, -EINVAL after
 * reporting every mistake found (*out untouched), or -ENOMEM. A main file
 * that does not exist is an error; a drop-in directory that does not
 * exist is none. */
int mrd_config_load(const char *path, struct mrd_config *out);

void mrd_config_free(struct mrd_config *c);

/* The section [group name] with runtime = yes, or NULL. */
const struct mrd_section *mrd_config_runtime_section(const struct mrd_config *c,
						     const char *name);

/* Whether name is a [group] NAME: 1 to 49 letters, digits, '-', '_'
 * and '.'. */
bool mrd_section_name_ok(const char *name);

/* The first section of the walk (runtime = no) whose pattern matches
 * path, or NULL. */
const struct mrd_section *mrd_config_section_for(const struct mrd_config *c,
						 const char *path);

#endif /* MR_EXAMPLES_MEMRECLAIMD_CONFIG_H */
