/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's group patterns: an absolute path whose components are
 * matched one by one, each as fnmatch(3) matches a file name (`*`, `?`,
 * `[...]`; a `*` never crosses a `/`), and a component that is exactly
 * `**` matches one or more components (kubepods nests pod and container
 * levels). A pattern without wildcards names one group.
 *
 * Matching walks down from `/`: the state of a directory is the set of
 * pattern positions reached there (bit i: components 0..i-1 matched), and
 * mrd_pattern_step() gives a child's state from its parent's. A directory
 * whose state holds a position below the pattern's length is one the
 * pattern can descend into (memreclaimd watches it); bit `n` set means
 * the directory matches. Pure functions, no I/O: MT-safe.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_PATTERN_H
#define MR_EXAMPLES_MEMRECLAIMD_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many components (the state is a 64-bit set). */
#define MRD_PATTERN_MAX_COMPONENTS 63

struct mrd_pattern {
	char *text;        /* normal form: "/a/b", no repeated or trailing / */
	char **comp;       /* its components */
	size_t n;
	bool wild;         /* some component holds a wildcard */
};

/* Parses text into *out. Refused, with *why saying why (a static string):
 * not absolute, a "." or ".." component, `**` inside a component, more
 * than MRD_PATTERN_MAX_COMPONENTS components, the root alone, an
 * unterminated `[`. Returns 0, -EINVAL or -ENOMEM. */
int mrd_pattern_parse(const char *text, struct mrd_pattern *out,
		      const char **why);

void mrd_pattern_free(struct mrd_pattern *p);

/* The state of `/`. */
#define MRD_STATE_ROOT ((uint64_t)1)

/* The state of the child `name` of a directory in state `state`. */
uint64_t mrd_pattern_step(const struct mrd_pattern *p, uint64_t state,
			  const char *name);

/* The state of the absolute path `path` (normal form), from `/`. */
uint64_t mrd_pattern_state(const struct mrd_pattern *p, const char *path);

/* Whether `state` matches (the whole pattern consumed). */
static inline bool mrd_pattern_matched(const struct mrd_pattern *p,
				       uint64_t state)
{
	return (state >> p->n) & 1;
}

/* Whether the pattern may match below a directory in `state`. */
static inline bool mrd_pattern_descends(const struct mrd_pattern *p,
					uint64_t state)
{
	return (state & ((UINT64_C(1) << p->n) - 1)) != 0;
}

/* Whether every position in `state` below the end is a literal component
 * (the children worth looking at can be named without listing the
 * directory); then mrd_pattern_literal() names them. */
bool mrd_pattern_literal_only(const struct mrd_pattern *p, uint64_t state);

/* The literal component at position i (i < n). */
static inline const char *mrd_pattern_component(const struct mrd_pattern *p,
						size_t i)
{
	return p->comp[i];
}

/* Whether path matches the pattern. */
bool mrd_pattern_match(const struct mrd_pattern *p, const char *path);

#endif /* MR_EXAMPLES_MEMRECLAIMD_PATTERN_H */
