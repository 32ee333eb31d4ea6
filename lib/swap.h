/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Swap as reclaim sees it: the host's free swap, the swappiness, and the
 * anonymous memory a limit reclaim of a group can swap out. The kernel
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
#ifndef MR_SWAP_H
#define MR_SWAP_H

#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

/* Test-only: the files read for the host's free swap and vm.swappiness
 * (default "/proc/meminfo", "/proc/sys/vm/swappiness"). */
extern const char *mri_swap_meminfo;
extern const char *mri_swap_vm_swappiness;

/* The host's free swap: SwapFree of /proc/meminfo, in bytes (0: no swap
 * device, or all of it used). Returns 0 or a negative errno (-EIO: no
 * SwapFree line). Reads through the file-access table. */
int mri_swap_host_free(uint64_t *bytes);

/* vm.swappiness (0 .. 200). Returns 0 or a negative errno. */
int mri_swap_vm(uint32_t *swappiness);

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

#endif /* MR_SWAP_H */
