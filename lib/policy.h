/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A group's policy, and the math on it (lib/policy.c): pure functions,
 * shared by the public ones, the worker, the reclaim loop and the
 * allocator fast path. The setters that make a policy are lib/knobs.c. */
#ifndef MR_POLICY_H
#define MR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

/* Every knob of a group, the master copy the setters edit (lib/knobs.c):
 * immutable once published, replaced whole under RCU; its fast-path part
 * is published to the allocator fast path's latch too (lib/chargestate.h,
 * struct mri_charge_policy), from the same copy. */
struct mri_policy {
	/* mr_group_set_margin() */
	uint64_t margin_bytes;     /* 0 with margin_ppm 0: no margin */
	uint32_t margin_ppm;
	uint64_t hysteresis_bytes;
	/* The margin limit (mri_margin_limit()) the setter checked margin
	 * and hysteresis against, MR_UNLIMITED when the group had none:
	 * only below it is the hysteresis capped (mri_margin_marks()). */
	uint64_t margin_limit_bytes;
	/* mr_group_set_batch_fixed(), mr_group_set_batch_proportional() */
	bool batch_proportional;
	uint64_t batch_bytes;      /* fixed mode */
	uint32_t share_ppm;        /* proportional mode */
	uint64_t max_bytes;
	uint32_t max_ppm;
	/* mr_group_set_soft_limit() */
	uint64_t soft_limit_bytes; /* MR_UNLIMITED: none */
	/* mr_group_set_throttle(): the curve, its table's points copied */
	int throttle_kind;         /* enum mr_throttle_kind */
	uint64_t throttle_max_delay_ns;
	uint64_t throttle_scale_ns;
	uint64_t throttle_doubling_ppm;
	uint32_t throttle_npoints;
	struct mr_throttle_point throttle_points[MR_THROTTLE_MAX_POINTS];
	/* mr_group_set_throttle_high(): MR_HIGH_FROM_BACKEND, or kept */
	uint64_t throttle_high_bytes;
	/* mr_group_set_thp_policy() */
	int thp_policy;            /* enum mr_thp_policy */
	uint64_t thp_budget_ns;
};

/* The policy of a newly opened group: no margin, SWAP_CLUSTER_MAX
 * batches, no soft limit, no throttle, the backend's high, and the THP
 * charge the kernel makes (MR_THP_RECLAIM_FULL). */
extern const struct mri_policy mri_default_policy;

/* The limit the margin is kept below: the lower of limit_bytes and, where
 * the backend reports one, high_bytes (cgroup v2 memory.high). */
uint64_t mri_margin_limit(const struct mr_limits *l);

/* The margin in bytes for a given limit (margin_bytes, or margin_ppm of
 * the limit). */
uint64_t mri_margin_bytes(const struct mri_policy *p, uint64_t limit_bytes);

/* The worker's marks for a limit: it reclaims when usage is above
 * *high_mark = limit - margin, down to *low_mark = high_mark - hysteresis.
 * Once the limit has fallen below p->margin_limit_bytes (the one the
 * setter checked the hysteresis against), the hysteresis is capped at
 * half of high_mark; before that it is whole (the setter kept it at or
 * below high_mark). -ERANGE when there is no limit or the margin is not
 * below it. */
int mri_margin_marks(const struct mri_policy *p, uint64_t limit_bytes,
		     uint64_t *high_mark, uint64_t *low_mark);

/* What a group at usage_bytes, after charge_bytes more, would stand above
 * limit_bytes - margin_bytes by (0 when at or below; a margin at or above
 * the limit leaves no room): the bytes to reclaim so that the charge fits
 * and usage ends at limit - margin. The sum saturates, no input
 * overflows. limit_bytes must not be MR_UNLIMITED. MT-safe,
 * async-signal-safe. */
uint64_t mri_shortfall_bytes(uint64_t usage_bytes, uint64_t charge_bytes,
			     uint64_t limit_bytes, uint64_t margin_bytes);

#endif /* MR_POLICY_H */
