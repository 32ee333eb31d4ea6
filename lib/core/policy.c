/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy math: pure functions of their arguments, with no state, no
 * allocation and no system call, so the allocator fast path and signal
 * handlers may call them. All products and sums are computed in 128 bits
 * and saturate or stay exact, so no 64-bit input overflows.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>

#include "memreclaim.h"
#include "policy.h"

typedef unsigned __int128 u128;

#define PPM 1000000ULL
/* MEMCG_CHARGE_BATCH (include/linux/memcontrol.h): the charge the kernel's
 * delay is defined for. */
#define CHARGE_BATCH_BYTES (64 * MRI_PAGE_BYTES)
/* MEMCG_DELAY_PRECISION_SHIFT and MEMCG_DELAY_SCALING_SHIFT
 * (mm/memcontrol.c). */
#define DELAY_PRECISION_SHIFT 20
#define DELAY_SCALING_SHIFT 14
/* Overage beyond 2^20 times high (in 2^-20 units) gives the same,
 * saturated, answer for every curve; capping there keeps squares in range. */
#define OVERAGE_CAP ((u128)1 << 40)
/* Per-64-page delays are capped here before scaling by the charge. */
#define DELAY_CAP ((u128)1 << 63)

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static u128 min_u128(u128 a, u128 b)
{
	return a < b ? a : b;
}

MR_EXPORT uint64_t mr_batch_proportional_bytes(uint64_t excess_bytes,
					       uint64_t limit_bytes,
					       uint32_t share_ppm,
					       uint64_t max_bytes,
					       uint32_t max_ppm)
{
	uint64_t max, batch;

	if (excess_bytes == 0)
		return 0;
	if (share_ppm == 0)
		share_ppm = 1;
	if (share_ppm > PPM)
		share_ppm = PPM;
	if (max_ppm > PPM)
		max_ppm = PPM;

	max = max_bytes;
	if (max_ppm && limit_bytes != MR_UNLIMITED)
		max = min_u64(max, (uint64_t)((u128)limit_bytes * max_ppm / PPM));
	if (max < MR_SWAP_CLUSTER_MAX_BYTES)
		max = MR_SWAP_CLUSTER_MAX_BYTES;

	batch = (uint64_t)((u128)excess_bytes * share_ppm / PPM);
	if (batch < MR_SWAP_CLUSTER_MAX_BYTES)
		batch = MR_SWAP_CLUSTER_MAX_BYTES;
	if (batch > max)
		batch = max;
	batch = min_u64(batch, excess_bytes);
	if (batch >= MRI_PAGE_BYTES)
		batch &= ~(MRI_PAGE_BYTES - 1);
	return batch;
}

static int check_curve(const struct mr_throttle_curve *c)
{
	size_t i;

	/* One version so far: a size it does not know (a larger struct
	 * carries fields this library cannot read) is refused rather than
	 * its fields ignored; later versions accept this one's size. */
	if (c->size != sizeof(*c))
		return -EINVAL;
	switch (c->kind) {
	case MR_THROTTLE_NONE:
	case MR_THROTTLE_LINEAR:
	case MR_THROTTLE_KERNEL:
		return 0;
	case MR_THROTTLE_EXPONENTIAL:
		return c->doubling_ppm >= 1 && c->doubling_ppm <= PPM * PPM ?
			0 : -EINVAL;
	case MR_THROTTLE_TABLE:
		if (!c->points || c->npoints < 1 ||
		    c->npoints > MR_THROTTLE_MAX_POINTS)
			return -EINVAL;
		for (i = 1; i < c->npoints; i++) {
			if (c->points[i].overage_ppm <= c->points[i - 1].overage_ppm ||
			    c->points[i].delay_ns < c->points[i - 1].delay_ns)
				return -EINVAL;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/* (usage - high) / high in 2^-20 units, capped at OVERAGE_CAP; mirrors
 * calculate_overage() in mm/memcontrol.c, with a high of 0 taken as one
 * page (the kernel takes it as one page too: its units are pages). */
static u128 overage_fp(uint64_t usage, uint64_t high)
{
	u128 ov;
	uint64_t h = high < MRI_PAGE_BYTES ? MRI_PAGE_BYTES : high;

	ov = ((u128)(usage - high) << DELAY_PRECISION_SHIFT) / h;
	return min_u128(ov, OVERAGE_CAP);
}

/* Delay for a 64-page charge at overage ov (2^-20 units), before the
 * charge scaling and the clamp; at most DELAY_CAP. */
static u128 batch_delay(const struct mr_throttle_curve *c, u128 ov)
{
	u128 d = 0;

	switch (c->kind) {
	case MR_THROTTLE_LINEAR:
		d = ((u128)c->scale_ns * ov) >> DELAY_PRECISION_SHIFT;
		break;
	case MR_THROTTLE_KERNEL:
		/* penalty_jiffies = ov^2 * HZ >> (20 + 14): 64 s * r^2 */
		d = (ov * ov * 1000000000ULL) >>
		    (DELAY_PRECISION_SHIFT + DELAY_SCALING_SHIFT);
		break;
	case MR_THROTTLE_EXPONENTIAL: {
		/* scale * (2^(ov / doubling) - 1), with 2^x interpolated
		 * linearly between integer powers: continuous, monotone. */
		u128 dbl = ((u128)c->doubling_ppm << DELAY_PRECISION_SHIFT) / PPM;
		u128 n, rem, a;

		if (dbl == 0)
			dbl = 1;
		n = ov / dbl;
		rem = ov % dbl;
		if (n >= 62)
			return DELAY_CAP;
		a = (u128)c->scale_ns << n;
		d = a - c->scale_ns + (a / dbl) * rem + (a % dbl) * rem / dbl;
		break;
	}
	case MR_THROTTLE_TABLE: {
		u128 x = (ov * PPM) >> DELAY_PRECISION_SHIFT;
		uint64_t x0 = 0, d0 = 0;
		size_t i;

		for (i = 0; i < c->npoints; i++) {
			const struct mr_throttle_point *p = &c->points[i];

			if (x <= p->overage_ppm) {
				if (p->overage_ppm == x0)
					return p->delay_ns;
				d = d0 + (u128)(p->delay_ns - d0) * (x - x0) /
				    (p->overage_ppm - x0);
				return min_u128(d, DELAY_CAP);
			}
			x0 = p->overage_ppm;
			d0 = p->delay_ns;
		}
		d = d0;
		break;
	}
	default:
		d = 0;
		break;
	}
	return min_u128(d, DELAY_CAP);
}

MR_EXPORT int mr_throttle_delay_ns(const struct mr_throttle_curve *curve,
				   uint64_t usage_bytes, uint64_t high_bytes,
				   uint64_t charge_bytes, uint64_t *delay_ns)
{
	u128 d;
	int r;

	if (!curve || !delay_ns)
		return -EINVAL;
	r = check_curve(curve);
	if (r < 0)
		return r;
	if (usage_bytes <= high_bytes || curve->kind == MR_THROTTLE_NONE) {
		*delay_ns = 0;
		return 0;
	}
	/* calculate_high_delay(): the task's own share of the overage,
	 * "four N-sized allocations are throttled approximately the same as
	 * one 4N-sized allocation". */
	d = batch_delay(curve, overage_fp(usage_bytes, high_bytes));
	d = d * charge_bytes / CHARGE_BATCH_BYTES;
	*delay_ns = (uint64_t)min_u128(d, curve->max_delay_ns);
	return 0;
}

uint64_t mri_shortfall_bytes(uint64_t usage_bytes, uint64_t charge_bytes,
			     uint64_t limit_bytes, uint64_t margin_bytes)
{
	uint64_t room = limit_bytes > margin_bytes ?
			limit_bytes - margin_bytes : 0;
	u128 after = (u128)usage_bytes + charge_bytes;

	return after > room ? (uint64_t)min_u128(after - room, UINT64_MAX) :
	       0;
}

MR_EXPORT int mr_thp_decide(int policy, uint64_t huge_bytes,
			    uint64_t usage_bytes, uint64_t limit_bytes,
			    uint64_t margin_bytes, uint64_t clean_cache_bytes,
			    uint64_t budget_bytes, int *advice)
{
	uint64_t room, shortfall;

	if (!advice || huge_bytes == 0 || policy < MR_THP_RECLAIM_FULL ||
	    policy > MR_THP_BUDGET)
		return -EINVAL;
	if (limit_bytes == MR_UNLIMITED) {
		*advice = MR_THP_ADVICE_HUGE;
		return 0;
	}
	room = limit_bytes > margin_bytes ? limit_bytes - margin_bytes : 0;
	if (huge_bytes > room) {
		*advice = MR_THP_ADVICE_SMALL;
		return 0;
	}
	shortfall = mri_shortfall_bytes(usage_bytes, huge_bytes, limit_bytes,
					margin_bytes);
	if (!shortfall) {
		*advice = MR_THP_ADVICE_HUGE;
		return 0;
	}
	switch (policy) {
	case MR_THP_RECLAIM_FULL:
		*advice = MR_THP_ADVICE_RECLAIM_THEN_HUGE;
		break;
	case MR_THP_CLEAN_CACHE:
		*advice = clean_cache_bytes >= shortfall ?
			MR_THP_ADVICE_RECLAIM_THEN_HUGE : MR_THP_ADVICE_SMALL;
		break;
	case MR_THP_BUDGET:
		*advice = budget_bytes >= shortfall ?
			MR_THP_ADVICE_RECLAIM_THEN_HUGE : MR_THP_ADVICE_SMALL;
		break;
	default:
		*advice = MR_THP_ADVICE_SMALL;
		break;
	}
	return 0;
}

/* Group i's weight in a pass of the soft-limit plan: its excess over its
 * soft limit in the first pass, what is left of its usage once that is
 * taken in the second. */
static uint64_t plan_weight(const uint64_t *usage, const uint64_t *soft,
			    size_t i, bool excess)
{
	uint64_t e = usage[i] > soft[i] ? usage[i] - soft[i] : 0;

	return excess ? e : usage[i] - e;
}

/* Groups whose remainder goal * weight mod total is at least t. */
static uint64_t remainders_at_least(size_t n, const uint64_t *usage,
				    const uint64_t *soft, bool excess,
				    uint64_t goal, u128 total, u128 t)
{
	uint64_t count = 0;
	size_t i;

	for (i = 0; i < n; i++)
		count += (u128)goal * plan_weight(usage, soft, i, excess) %
			 total >= t;
	return count;
}

/* Adds to each share[i] its part of goal (0 < goal <= total, the sum of
 * the weights) in proportion to its weight, by the largest remainder
 * method: floor(goal * w / total) each, then the bytes left over one each
 * to the largest remainders goal * w mod total, ties to the lowest index.
 * A part never exceeds its weight: a remainder is non-zero only where the
 * exact part is not an integer, so it is below the weight. Fewer bytes
 * are left over than there are non-zero remainders, so the cut t (the
 * largest value that at least `left` remainders reach) is at least 1; it
 * is found by bisection over [1, total), at most 128 scans, not by
 * sorting, which would need memory. */
static void apportion(size_t n, const uint64_t *usage, const uint64_t *soft,
		      bool excess, uint64_t goal, u128 total, uint64_t *share)
{
	uint64_t q, given = 0, left;
	u128 lo = 1, hi = total - 1, mid, rem;
	size_t i, pass;

	for (i = 0; i < n; i++) {
		q = (uint64_t)((u128)goal * plan_weight(usage, soft, i, excess) /
			       total);
		share[i] += q;
		given += q;
	}
	left = goal - given;
	if (!left)
		return;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (remainders_at_least(n, usage, soft, excess, goal, total,
					mid) >= left)
			lo = mid;
		else
			hi = mid - 1;
	}
	/* Fewer than `left` remainders are above the cut: all of them get
	 * a byte, then those at the cut, from the lowest index. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n && left; i++) {
			rem = (u128)goal * plan_weight(usage, soft, i, excess) %
			      total;
			if (pass ? rem == lo : rem > lo) {
				share[i]++;
				left--;
			}
		}
	}
}

MR_EXPORT int mr_soft_limit_plan(size_t n, const uint64_t *usage_bytes,
				 const uint64_t *soft_limit_bytes,
				 uint64_t goal_bytes, uint64_t *share_bytes)
{
	u128 excess = 0, rest = 0;
	uint64_t first, second;
	size_t i;

	if (n && (!usage_bytes || !soft_limit_bytes || !share_bytes))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		share_bytes[i] = 0;
		excess += plan_weight(usage_bytes, soft_limit_bytes, i, true);
		rest += plan_weight(usage_bytes, soft_limit_bytes, i, false);
	}
	/* Groups over their soft limit first, in proportion to their
	 * excess; then, for what the excess does not cover, all groups in
	 * proportion to what they have left. */
	first = (uint64_t)min_u128(goal_bytes, excess);
	if (first)
		apportion(n, usage_bytes, soft_limit_bytes, true, first, excess,
			  share_bytes);
	second = (uint64_t)min_u128(goal_bytes - first, rest);
	if (second)
		apportion(n, usage_bytes, soft_limit_bytes, false, second, rest,
			  share_bytes);
	return 0;
}

/* ------------------------------------------------------------ policy */

const struct mri_policy mri_default_policy = {
	.batch_proportional = false,
	.batch_bytes = MR_SWAP_CLUSTER_MAX_BYTES,
	.soft_limit_bytes = MR_UNLIMITED,
	.throttle_kind = MR_THROTTLE_NONE,
	.throttle_high_bytes = MR_HIGH_FROM_BACKEND,
	.thp_policy = MR_THP_RECLAIM_FULL,
};

uint64_t mri_margin_limit(const struct mr_limits *l)
{
	if ((l->present & MR_LIMITS_HAS_HIGH) && l->high_bytes < l->limit_bytes)
		return l->high_bytes;
	return l->limit_bytes;
}

uint64_t mri_margin_bytes(const struct mri_policy *p, uint64_t limit_bytes)
{
	if (p->margin_bytes)
		return p->margin_bytes;
	return (uint64_t)((unsigned __int128)limit_bytes * p->margin_ppm /
			  1000000);
}

int mri_margin_marks(const struct mri_policy *p, uint64_t limit_bytes,
		     uint64_t *high_mark, uint64_t *low_mark)
{
	uint64_t margin = mri_margin_bytes(p, limit_bytes), cap;

	if (limit_bytes == MR_UNLIMITED || margin >= limit_bytes)
		return -ERANGE;
	*high_mark = limit_bytes - margin;
	/* A limit lowered since the margin was set may leave less room than
	 * the hysteresis: then never reclaim more than half of what is
	 * left. At or above the limit the setter checked, the hysteresis it
	 * accepted (at most high_mark) is the caller's to have. */
	cap = limit_bytes < p->margin_limit_bytes ? *high_mark / 2 : *high_mark;
	*low_mark = *high_mark - (p->hysteresis_bytes < cap ?
				  p->hysteresis_bytes : cap);
	return 0;
}

/* ------------------------------------------------------- reclaimable */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void mri_reclaimable(const struct mr_memstat *ms, const struct mr_limits *l,
		     int reclaim_swappiness, struct mri_reclaimable *out)
{
	const uint64_t lru = (1ULL << MR_MEMSTAT_INACTIVE_FILE) |
			     (1ULL << MR_MEMSTAT_ACTIVE_FILE);

	out->file_bytes = (ms->present & lru) == lru ?
			  sat_add(ms->inactive_file_bytes,
				  ms->active_file_bytes) :
			  ms->file_bytes;
	out->clean_bytes = sat_sub(out->file_bytes,
				   sat_add(ms->file_dirty_bytes,
					   ms->file_writeback_bytes));
	out->clean_unmapped_bytes = sat_sub(out->clean_bytes,
					    ms->file_mapped_bytes);
	out->swappable_bytes = l ? mri_swap_anon_reclaimable(l, ms,
							     reclaim_swappiness) :
			       0;
}

bool mri_swap_swappiness_zero(const struct mr_limits *l,
			      int reclaim_swappiness)
{
	return reclaim_swappiness < 0 ? l->swappiness == 0 :
	       reclaim_swappiness == 0;
}

uint64_t mri_swap_anon_reclaimable(const struct mr_limits *l,
				   const struct mr_memstat *m,
				   int reclaim_swappiness)
{
	const uint64_t lru = (1ULL << MR_MEMSTAT_INACTIVE_ANON) |
			     (1ULL << MR_MEMSTAT_ACTIVE_ANON);
	uint64_t anon;

	if (!(l->present & MR_LIMITS_HAS_SWAP_FREE) ||
	    mri_swap_swappiness_zero(l, reclaim_swappiness))
		return 0;
	if ((m->present & lru) == lru)
		anon = m->inactive_anon_bytes + m->active_anon_bytes;
	else if (m->present & (1ULL << MR_MEMSTAT_ANON))
		anon = m->anon_bytes;
	else
		return 0;
	return anon < l->swap_free_bytes ? anon : l->swap_free_bytes;
}
