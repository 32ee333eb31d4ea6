/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A group's policy, and the math on it (lib/core/policy.c): pure functions,
 * shared by the public ones, the worker, the reclaim loop and the
 * allocator fast path. The setters that make a policy are lib/core/knobs.c. */
#ifndef MR_POLICY_H
#define MR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

/* The unit the kernel charges and reclaims in (a base page). */
#define MRI_PAGE_BYTES 4096ULL

/* Every knob of a group, the master copy the setters edit (lib/core/knobs.c):
 * immutable once published, replaced whole under RCU; its fast-path part
 * is published to the allocator fast path's latch too (lib/core/chargestate.h,
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
	/* mr_group_set_margin_adaptive(), instead of margin_bytes and
	 * margin_ppm: its bounds with the defaults filled in, and a
	 * generation that changes with every call, so that the worker starts
	 * its measurements afresh (lib/core/adaptive.c). */
	bool margin_adaptive;
	struct mr_margin_adaptive adaptive;
	uint64_t adaptive_gen;
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

/* Whether the policy keeps a margin, fixed or adaptive. */
static inline bool mri_margin_on(const struct mri_policy *p)
{
	return p->margin_bytes || p->margin_ppm || p->margin_adaptive;
}

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

/*
 * What a limit reclaim of a group can take: page cache first, then the
 * anonymous memory it can swap out. The kernel
 * scans a memory cgroup's anonymous pages only when it may swap: some
 * swap left for the group (mm/memcontrol.c, mem_cgroup_get_nr_swap_pages():
 * the free swap pages of the host, and on cgroup v2 the headroom under
 * memory.swap.max of the group and every ancestor) and a swappiness that
 * is not 0 (mm/vmscan.c, get_scan_count(): `cgroup_reclaim(sc) &&
 * !swappiness` and `!can_reclaim_anon_pages()` scan file pages only).
 *
 * What this does not model:
 * - the swappiness of descendants: a reclaim of the group walks every
 *   descendant's lruvec with that descendant's own swappiness
 *   (shrink_node_memcgs() -> get_scan_count(), mem_cgroup_swappiness()
 *   of each memcg), while on cgroup v1 only the group's own
 *   memory.swappiness is read, for the anon of the whole subtree;
 *   a child with 0 keeps its anon, a child above 0 under a parent with 0
 *   gives its anon;
 * - demotion: can_reclaim_anon_pages() is true without swap where the
 *   node can demote to a slower tier (can_demote()); with no swap this
 *   counts no anon although the kernel may move it off the node;
 * - MGLRU: with lru_gen on, anon is scanned only with at least
 *   MIN_LRU_BATCH (BITS_PER_LONG) pages of swap left for the group
 *   (get_swappiness() in mm/vmscan.c), where this counts any free swap.
 */

/* What reclaim can take from a group now, by one memory.stat (and the
 * limits snapshot l for swap; NULL: none counted): the one definition the
 * worker, the reclaim loop and the fast path use. file_bytes: the page
 * cache on the file LRUs (file_bytes of memory.stat where they are
 * absent); clean_bytes: of it, what is neither dirty nor under writeback
 * (dropped without I/O); clean_unmapped_bytes: of that, what no process
 * maps either (dropped without touching a program's text); swappable_bytes:
 * mri_swap_anon_reclaimable(). Saturating, pure. */
struct mri_reclaimable {
	uint64_t file_bytes;
	uint64_t clean_bytes;
	uint64_t clean_unmapped_bytes;
	uint64_t swappable_bytes;
};
void mri_reclaimable(const struct mr_memstat *ms, const struct mr_limits *l,
		     int reclaim_swappiness, struct mri_reclaimable *out);

/* Whether the swappiness in force is 0 (no anonymous memory is
 * reclaimed): reclaim_swappiness when the library's reclaim passes one
 * (>= 0), else the kernel's (l->swappiness). Pure. */
bool mri_swap_swappiness_zero(const struct mr_limits *l,
			      int reclaim_swappiness);

/* The anonymous memory a limit reclaim of the group can swap out now:
 * its anonymous LRU pages (inactive_anon + active_anon, which count
 * shmem; anon_bytes where they are absent), at most the swap the group
 * may still use (l->swap_free_bytes), and 0 when the snapshot has no
 * swap information (MR_LIMITS_HAS_SWAP_FREE clear) or the swappiness is
 * 0. reclaim_swappiness: the swappiness the library's own reclaim calls
 * pass (mr_group_set_reclaim_swappiness()), -1 for the kernel's
 * (l->swappiness). Pure. */
uint64_t mri_swap_anon_reclaimable(const struct mr_limits *l,
				   const struct mr_memstat *m,
				   int reclaim_swappiness);

#endif /* MR_POLICY_H */
