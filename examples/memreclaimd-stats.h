/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What memreclaimd reads of a group for its statistics records and its
 * metrics, in one snapshot, and the records it prints on stdout: one line
 * per group and event ("start" once the group is kept, "stats" every
 * interval, "final" when it is let go), as text or, with JSON, one flat
 * object per line with the wall-clock time ("time", RFC 3339 in UTC with
 * milliseconds).
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_STATS_H
#define MR_EXAMPLES_MEMRECLAIMD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <memreclaim.h>

#include "memreclaimd-groups.h"

/* The reasons of enum mr_reason, with their names. */
#define MRD_REASONS 4
extern const char *const mrd_reason_names[MRD_REASONS];

struct mrd_snapshot {
	struct mr_limits lim;
	struct mr_margin_stats ms;
	struct mr_proactive_stats ps;
	struct mr_reclaim_stats rs[MRD_REASONS];
	struct mr_pressure psi;
	bool psi_ok;             /* the group reports pressure */
};

/* Reads g into *s. Returns 0 or the negative errno of a read (-EBUSY:
 * another manager is in the middle of a reclaim step on the group, and
 * its transient limit is no statistic; -ENOENT: removed). PSI that the
 * group does not have leaves psi_ok false, and is no error. */
int mrd_snapshot_read(mr_group_t *g, struct mrd_snapshot *s);

/* The daemon's CPU time so far, user and system, in ns. */
void mrd_self_cpu_ns(uint64_t *user_ns, uint64_t *sys_ns);

/* Prints grp's record for event ("start", "stats", "final"), as JSON or
 * text. Returns 0, or the negative errno of mrd_snapshot_read() (logged;
 * nothing printed). */
int mrd_stats_print(const struct mrd_group *grp, const char *event,
		    bool json);

#endif /* MR_EXAMPLES_MEMRECLAIMD_STATS_H */
