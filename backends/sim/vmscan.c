/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim, after mm/vmscan.c: priority from DEF_PRIORITY down, each group
 * of the subtree scanned by its list sizes >> priority in chunks of
 * SWAP_CLUSTER_MAX, the inactive lists shrunk from their old end, the
 * active ones deactivated while the inactive list is low, a stop at the
 * target. Under machine pressure the soft-limit designs of S2 choose the
 * groups. What it costs (costs.c) is slept by the task that reclaims.
 */
#include "config.h"

#include <stdlib.h>

#include "model.h"

/* mm/memcontrol.c MEM_CGROUP_MAX_RECLAIM_LOOPS (old soft reclaim). */
#define SOFT_MAX_LOOPS 100

struct scan_control {
	uint64_t nr_to_reclaim;
	int why;
	int priority;
	bool may_swap;
	bool clean_only;
	bool cgroup;              /* cgroup_reclaim(): a group's, not the
				     machine's */
	int swappiness;
	bool ignore_low;
	bool skipped_low;
	uint64_t scanned, reclaimed, moved, swapped, dirty_seen;
	uint64_t calls;
};

static bool direct(int why)
{
	return why == SIM_RECLAIM_LIMIT || why == SIM_RECLAIM_GLOBAL ||
	       why == SIM_RECLAIM_HIGH;
}

static bool can_swap(const struct sim_machine *m,
		     const struct scan_control *sc)
{
	return sc->may_swap && !sc->clean_only &&
	       m->cfg.swap_kind != SIM_SWAP_NONE &&
	       m->swap_used < m->cfg.swap_pages;
}

/* Moves pfn to the most recent end of list lru. */
static void move(struct sim_machine *m, uint32_t pfn, int lru)
{
	sim_lru_del(m, pfn);
	sim_lru_add(m, pfn, lru);
}

/* shrink_active_list(): pages leave the active list for the inactive one
 * (referenced or not, as since 2.6.28 for anon and unmapped file). An
 * anonymous page's referenced bit stands for its page table's accessed
 * bits, which page_referenced() tests and clears on the way. A file
 * page's PG_referenced, set by mark_page_accessed() on a read while the
 * page was active, is left alone (page_referenced() looked at it only for
 * the pages of mapped files before 2.6.34, and not at all since
 * 645747462435, which moved it to page_check_references()): a page
 * deactivated while still in use goes back to the active list at its
 * next read, as recently deactivated but used pages are meant to be
 * "quickly recovered" (page_check_references()). */
static void shrink_active(struct sim_machine *m, struct sim_memcg *g,
			  bool file, uint64_t nr, struct scan_control *sc)
{
	int from = file ? SIM_LRU_ACTIVE_FILE : SIM_LRU_ACTIVE_ANON;
	uint32_t pfn;

	while (nr-- && (pfn = g->lru_tail[from]) != SIM_NOPAGE) {
		if (!file)
			m->pages[pfn].flags &= ~PG_REFERENCED;
		move(m, pfn, from - 1);
		sim_memcg_count(g, SIM_PGDEACTIVATE, 1);
		sc->moved++;
	}
}

/* shrink_inactive_list() and shrink_page_list(): nr pages off the old end
 * of an inactive list. */
static void shrink_inactive(struct sim_machine *m, struct sim_memcg *g,
			    bool file, uint64_t nr, struct scan_control *sc)
{
	int lru = file ? SIM_LRU_INACTIVE_FILE : SIM_LRU_INACTIVE_ANON;
	uint64_t scanned = 0, stolen = 0;
	struct sim_page *p;
	uint32_t pfn;

	while (nr-- && (pfn = g->lru_tail[lru]) != SIM_NOPAGE) {
		p = &m->pages[pfn];
		scanned++;
		if (sim_page_locked(m, p)) {
			/* Being read: trylock_page() fails, the page is
			 * kept (put back at the list's head). */
			move(m, pfn, lru);
		} else if (p->flags & PG_WRITEBACK) {
			sc->dirty_seen++;
			move(m, pfn, lru);
		} else if (p->flags & PG_DIRTY) {
			/* pageout(): written back, rotated; freed once
			 * clean, on a later pass. */
			sc->dirty_seen++;
			if (!sc->clean_only)
				sim_writeback_start(m, pfn,
						    sim_disk_submit(m, p->obj,
								    p->index, 1));
			move(m, pfn, lru);
		} else if (!file && (p->flags & PG_REFERENCED)) {
			/* A referenced anon page is mapped and used:
			 * activated (page_check_references()). */
			p->flags &= ~PG_REFERENCED;
			move(m, pfn, SIM_LRU_ACTIVE_ANON);
			sim_memcg_count(g, SIM_PGACTIVATE, 1);
			sc->moved++;
		} else {
			/* Unmapped clean cache goes even when referenced
			 * (PAGEREF_RECLAIM_CLEAN); anon goes to swap. */
			if (!file)
				sc->swapped++;
			if (!file)
				sim_memcg_count(g, SIM_PSWPOUT, 1);
			sim_page_evict(m, pfn);
			stolen++;
		}
	}
	sc->scanned += scanned;
	sc->reclaimed += stolen;
	sim_memcg_count(g, SIM_PGSCAN, scanned);
	sim_memcg_count(g, SIM_PGSTEAL, stolen);
	if (direct(sc->why)) {
		sim_memcg_count(g, SIM_PGSCAN_DIRECT, scanned);
		sim_memcg_count(g, SIM_PGSTEAL_DIRECT, stolen);
	}
}

/* inactive_list_is_low(): the inactive list should hold at least
 * 1/sqrt(10 * size in GiB) of the pages. */
static bool inactive_is_low(const struct sim_memcg *g, bool file)
{
	uint64_t inactive = g->lru_size[file ? SIM_LRU_INACTIVE_FILE :
						SIM_LRU_INACTIVE_ANON];
	uint64_t active = g->lru_size[file ? SIM_LRU_ACTIVE_FILE :
					      SIM_LRU_ACTIVE_ANON];
	uint64_t gb = (inactive + active) >> 18, ratio = 1;

	while (gb && (ratio + 1) * (ratio + 1) <= 10 * gb)
		ratio++;
	return inactive * ratio < active;
}

/* shrink_lruvec(): one group at sc->priority. As get_scan_count() does,
 * each list gets a window of its own size >> priority, so a short
 * inactive list makes reclaim go deeper into the priorities; an active
 * list is only scanned (deactivated) while its inactive list is low. */
static void shrink_lruvec(struct sim_machine *m, struct sim_memcg *g,
			  struct scan_control *sc)
{
	uint64_t nr[SIM_NR_LRU], chunk;
	bool file;
	int lru;

	for (lru = 0; lru < SIM_NR_LRU; lru++)
		nr[lru] = g->lru_size[lru] >> sc->priority;
	if (!can_swap(m, sc) || (sc->cgroup && !sc->swappiness)) {
		/* get_scan_count(): no swap, or a group's reclaim at
		 * swappiness 0: page cache only (SCAN_FILE). */
		nr[SIM_LRU_INACTIVE_ANON] = nr[SIM_LRU_ACTIVE_ANON] = 0;
	} else if (!sc->priority) {
		/* At priority 0 the system is close to OOM, so no
		 * balancing: every list whole (SCAN_EQUAL since 3.9;
		 * before, the fractions were skipped at priority 0
		 * alike). */
	} else if (nr[SIM_LRU_INACTIVE_FILE] && !inactive_is_low(g, true)) {
		/* Plenty of inactive cache: it is trimmed alone. */
		nr[SIM_LRU_INACTIVE_ANON] = nr[SIM_LRU_ACTIVE_ANON] = 0;
	} else {
		/* SCAN_FRACT, with the costs of both kinds taken as
		 * equal: anon gets swappiness / 200 of its window. */
		for (lru = 0; lru < SIM_NR_LRU; lru++)
			nr[lru] = nr[lru] * (uint64_t)(lru <
						       SIM_LRU_INACTIVE_FILE ?
						       sc->swappiness :
						       200 - sc->swappiness) /
				  200;
	}
	while ((nr[SIM_LRU_INACTIVE_ANON] || nr[SIM_LRU_ACTIVE_ANON] ||
		nr[SIM_LRU_INACTIVE_FILE] || nr[SIM_LRU_ACTIVE_FILE]) &&
	       sc->reclaimed < sc->nr_to_reclaim) {
		for (lru = 0; lru < SIM_NR_LRU; lru++) {
			if (!nr[lru])
				continue;
			chunk = nr[lru] < SIM_SWAP_CLUSTER_MAX ?
				nr[lru] : SIM_SWAP_CLUSTER_MAX;
			nr[lru] -= chunk;
			file = lru >= SIM_LRU_INACTIVE_FILE;
			if (lru == SIM_LRU_ACTIVE_ANON ||
			    lru == SIM_LRU_ACTIVE_FILE) {
				if (inactive_is_low(g, file))
					shrink_active(m, g, file, chunk, sc);
			} else {
				shrink_inactive(m, g, file, chunk, sc);
			}
		}
	}
}

/* mem_cgroup_below_min() and mem_cgroup_below_low() of c in a reclaim
 * rooted at root: its effective protection covers its usage. */
static bool protected(const struct sim_memcg *root, const struct sim_memcg *c,
		      const struct scan_control *sc)
{
	uint64_t elow, emin;

	sim_memcg_protection(root, c, &elow, &emin);
	if (c->usage <= emin)
		return true;
	return !sc->ignore_low && c->usage <= elow;
}

static bool over_soft(const struct sim_memcg *c)
{
	return c->knob[SIM_KNOB_SOFT] != SIM_UNLIMITED &&
	       c->usage > c->knob[SIM_KNOB_SOFT];
}

/* The rework's mem_cgroup_soft_reclaim_eligible(): c is above its soft
 * limit, or an ancestor of it up to the reclaim root is (the ancestor's
 * excess is its children's too). */
static bool soft_eligible(const struct sim_memcg *c,
			  const struct sim_memcg *root)
{
	for (; c; c = c->parent) {
		if (over_soft(c))
			return true;
		if (c == root)
			break;
	}
	return false;
}

/* shrink_node_memcgs(): the groups of g's subtree at sc->priority,
 * starting after the one the previous walk of g stopped at so that a
 * reclaim that stops at its target does not always hit the same child.
 * Each group is visited once per walk: the walk's order is fixed at its
 * start, while the cursor follows it. soft: only the groups eligible for
 * soft reclaim (the 2013 rework's first pass). Returns the pages
 * scanned. */
static uint64_t shrink_subtree(struct sim_machine *m, struct sim_memcg *g,
			       struct scan_control *sc, bool soft)
{
	uint64_t before = sc->scanned;
	unsigned i, k, n = m->nmemcg, start = g->reclaim_cursor + 1;
	struct sim_memcg *c;

	for (k = 0; k < n && sc->reclaimed < sc->nr_to_reclaim; k++) {
		i = (start + k) % n;
		c = m->memcg[i];
		if (!sim_memcg_is_ancestor(g, c) || !c->self_usage)
			continue;
		if (soft && !soft_eligible(c, g))
			continue;
		if (protected(g, c, sc)) {
			sc->skipped_low = true;
			continue;
		}
		shrink_lruvec(m, c, sc);
		g->reclaim_cursor = i;
	}
	return sc->scanned - before;
}

static uint64_t soft_excess(const struct sim_memcg *c)
{
	return over_soft(c) ? c->usage - c->knob[SIM_KNOB_SOFT] : 0;
}

/* mem_cgroup_soft_reclaim(): the victim's subtree at priority 0, one
 * SWAP_CLUSTER_MAX target at a time (mem_cgroup_shrink_node_zone()),
 * until a quarter of its excess is freed, its excess is gone, nothing at
 * all was freed, or MEM_CGROUP_MAX_RECLAIM_LOOPS rounds. Returns the pages
 * freed. */
static uint64_t soft_reclaim_victim(struct sim_machine *m,
				    struct sim_memcg *victim,
				    struct scan_control *sc)
{
	uint64_t goal = soft_excess(victim) >> 2, total = 0;
	struct scan_control soft;
	unsigned loops;

	for (loops = 0; loops < SOFT_MAX_LOOPS; loops++) {
		soft = *sc;
		soft.priority = 0;
		soft.nr_to_reclaim = SIM_SWAP_CLUSTER_MAX;
		soft.reclaimed = 0;
		shrink_subtree(m, victim, &soft, false);
		sc->scanned = soft.scanned;
		sc->moved = soft.moved;
		sc->swapped = soft.swapped;
		sc->dirty_seen = soft.dirty_seen;
		total += soft.reclaimed;
		if (!total || total >= goal || !over_soft(victim))
			break;
	}
	sc->reclaimed += total;
	return total;
}

/* The design before the 2013 rework (mm/memcontrol.c
 * mem_cgroup_soft_limit_reclaim(), from 2.6.32; the rework was not
 * merged, and this pass is still cgroup v1's): before each priority of
 * global reclaim, the group furthest above its soft limit is reclaimed
 * at priority 0 (mem_cgroup_soft_reclaim()); if it gives nothing, the
 * next furthest, until one does. */
static void soft_reclaim_old(struct sim_machine *m, struct scan_control *sc)
{
	bool tried[SIM_MAX_GROUPS] = { false };
	struct sim_memcg *victim, *c;
	uint64_t excess;
	unsigned i;

	do {
		victim = NULL;
		excess = 0;
		for (i = 1; i < m->nmemcg; i++) {
			c = m->memcg[i];
			if (!tried[i] && soft_excess(c) > excess) {
				excess = soft_excess(c);
				victim = c;
			}
		}
		if (!victim)
			return;
		tried[victim->id] = true;
	} while (!soft_reclaim_victim(m, victim, sc));
}

/* Time the work done since *mark cost, with lock contention among the
 * reclaimers of one group. */
static uint64_t cost(const struct sim_machine *m, const struct sim_memcg *g,
		     const struct scan_control *sc, struct scan_control *mark)
{
	const struct sim_costs *c = &m->costs;
	uint64_t ns, per_page, contention = 1000;
	uint64_t swap_page = m->cfg.swap_kind == SIM_SWAP_ZSWAP ?
			     c->zswap_store_page_ns : c->swap_out_page_ns;

	if (g->reclaimers > 1)
		contention += c->lru_contention * (g->reclaimers - 1);
	per_page = (sc->scanned - mark->scanned) * c->scan_page_ns +
		   (sc->reclaimed - mark->reclaimed) * c->free_page_ns +
		   (sc->moved - mark->moved) * c->activate_page_ns;
	ns = (sc->calls - mark->calls) * c->reclaim_call_ns +
	     per_page * contention / 1000 +
	     (sc->swapped - mark->swapped) * swap_page;
	*mark = *sc;
	return ns;
}

void sim_reclaim(struct sim_machine *m, struct sim_memcg *g, uint64_t nr,
		 int why, bool may_swap, bool clean_only,
		 struct sim_reclaim_result *res)
{
	sim_reclaim_swappiness(m, g, nr, why, may_swap, clean_only,
			       SIM_SWAPPINESS_DEFAULT, res);
}

void sim_reclaim_swappiness(struct sim_machine *m, struct sim_memcg *g,
			    uint64_t nr, int why, bool may_swap,
			    bool clean_only, int swappiness,
			    struct sim_reclaim_result *res)
{
	struct scan_control sc = {
		.nr_to_reclaim = nr ? nr : 1,
		.why = why,
		.may_swap = may_swap,
		.clean_only = clean_only,
		.cgroup = why != SIM_RECLAIM_GLOBAL &&
			  why != SIM_RECLAIM_KSWAPD,
		.swappiness = swappiness,
	};
	struct scan_control mark = sc;
	bool global = g == sim_root(m) &&
		      (why == SIM_RECLAIM_GLOBAL || why == SIM_RECLAIM_KSWAPD);
	uint64_t t0 = m->now, work, stall, scanned, reclaimed_before;
	int prio;

	g->reclaimers++;
	if (direct(why))
		sim_stall_begin(m);
	for (;;) {
		for (prio = SIM_DEF_PRIORITY;
		     prio >= 0 && sc.reclaimed < sc.nr_to_reclaim; prio--) {
			sc.priority = prio;
			reclaimed_before = sc.reclaimed;
			/* shrink_zones() (direct) and balance_pgdat()
			 * (kswapd): soft-limit reclaim first, at each
			 * priority. */
			if (global && m->soft_mode == SIM_SOFT_OLD)
				soft_reclaim_old(m, &sc);
			scanned = 0;
			if (global && m->soft_mode == SIM_SOFT_REWORKED)
				scanned = shrink_subtree(m, g, &sc, true);
			if (!scanned)
				scanned = shrink_subtree(m, g, &sc, false);
			sc.calls++;
			/* 2011's congestion_wait(), reclaim_throttle() since
			 * 5.16: a pass that met only dirty or writeback
			 * pages waits for the disk, whoever reclaims:
			 * memory.reclaim too (shrink_node() throttles it on a
			 * congested lruvec as it does a limit's reclaim); a
			 * direct pass deep in the priorities that fell short
			 * naps (do_try_to_free_pages). */
			stall = 0;
			if (sc.reclaimed == reclaimed_before &&
			    sc.dirty_seen > mark.dirty_seen)
				stall = m->costs.dirty_stall_ns;
			if (direct(why) && scanned &&
			    prio < SIM_DEF_PRIORITY - 2 &&
			    sc.reclaimed < sc.nr_to_reclaim &&
			    m->costs.reclaim_nap_ns > stall)
				stall = m->costs.reclaim_nap_ns;
			work = cost(m, g, &sc, &mark);
			sim_account_reclaim(m, direct(why), work, stall);
			if (work + stall)
				sim_sleep(m, work + stall);
		}
		/* memory.low is ignored when nothing else could be
		 * reclaimed (mem_cgroup_protected(), memory.events low). */
		if (sc.reclaimed || !sc.skipped_low || sc.ignore_low)
			break;
		sc.ignore_low = true;
		sim_memcg_count(g, SIM_EV_LOW, 1);
	}
	if (direct(why))
		sim_stall_end(m);
	g->reclaimers--;
	res->scanned = sc.scanned;
	res->reclaimed = sc.reclaimed;
	res->swapped = sc.swapped;
	if (m->current)
		m->current->stats.swapout_pages += sc.swapped;
	res->ns = m->now - t0;
}

uint64_t sim_memcg_clean_cache(const struct sim_memcg *g)
{
	const struct sim_machine *m = g->m;
	uint64_t n = 0;
	unsigned i;
	int lru;
	uint32_t pfn;

	for (i = 0; i < m->nmemcg; i++) {
		if (!sim_memcg_is_ancestor(g, m->memcg[i]))
			continue;
		for (lru = SIM_LRU_INACTIVE_FILE; lru <= SIM_LRU_ACTIVE_FILE;
		     lru++) {
			for (pfn = m->memcg[i]->lru_head[lru];
			     pfn != SIM_NOPAGE; pfn = m->pages[pfn].next)
				n += sim_page_clean(&m->pages[pfn]);
		}
	}
	return n;
}
