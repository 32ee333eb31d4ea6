/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read side of a group's knobs. Every setter is in lib/core/knobs.c, which
 * edits one master copy (struct mri_policy, lib/core/policy.h) and publishes it
 * twice from there: under RCU for the worker, the reclaim loop and soft-
 * limit reclaim, and to the fast path's latch (lib/core/chargestate.h).
 */
#ifndef MR_KNOBS_H
#define MR_KNOBS_H

#include <urcu-bp.h>

#include "group.h"
#include "policy.h"

/* Copies the group's current policy: a liburcu-bp read-side section, no
 * lock. Inline, so that its readers depend on the published pointer, not
 * on the setters' file. */
static inline void mri_group_policy(struct mr_group *g,
				    struct mri_policy *out)
{
	urcu_bp_read_lock();
	*out = *rcu_dereference(g->policy);
	urcu_bp_read_unlock();
}

#endif /* MR_KNOBS_H */
