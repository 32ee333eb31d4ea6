/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pages and the objects that hold them: files (page cache, with clean,
 * dirty and writeback states) and anonymous regions (swapped out when
 * there is swap). Faults charge pages to the running task's group;
 * evictions leave shadow entries so a refault can tell whether the page
 * was part of the working set (mm/workingset.c); the flusher writes dirty
 * pages back (mm/page-writeback.c); kswapd keeps the machine's free pages
 * above its watermarks.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Shadow entries: the group id above 23 bits of eviction age (the id
 * needs 14 bits for SIM_MAX_GROUPS; bit 63 is SLOT_SWAPPED). */
#define SHADOW_AGE_BITS 23
#define SHADOW_AGE_MASK ((1u << SHADOW_AGE_BITS) - 1)

/* mm/page-writeback.c defaults: dirty_background_ratio 10,
 * dirty_ratio 20, dirty_expire_centisecs 3000,
 * dirty_writeback_centisecs 500. */
#define DIRTY_BACKGROUND_PPM 100000ULL
#define DIRTY_PPM 200000ULL
#define DIRTY_EXPIRE_NS 30000000000ULL
#define WRITEBACK_INTERVAL_NS 5000000000ULL

/* ---------------------------------------------------------------- LRU */

void sim_lru_add(struct sim_machine *m, uint32_t pfn, int lru)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];

	p->lru = (uint8_t)lru;
	p->prev = SIM_NOPAGE;
	p->next = g->lru_head[lru];
	if (p->next != SIM_NOPAGE)
		m->pages[p->next].prev = pfn;
	else
		g->lru_tail[lru] = pfn;
	g->lru_head[lru] = pfn;
	g->lru_size[lru]++;
}

void sim_lru_del(struct sim_machine *m, uint32_t pfn)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];
	int lru = p->lru;

	if (p->prev != SIM_NOPAGE)
		m->pages[p->prev].next = p->next;
	else
		g->lru_head[lru] = p->next;
	if (p->next != SIM_NOPAGE)
		m->pages[p->next].prev = p->prev;
	else
		g->lru_tail[lru] = p->prev;
	g->lru_size[lru]--;
	p->lru = 0xff;
}

/* mark_page_accessed(): a second touch on the inactive list activates. */
static void mark_accessed(struct sim_machine *m, uint32_t pfn)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];

	if ((p->lru == SIM_LRU_INACTIVE_FILE ||
	     p->lru == SIM_LRU_INACTIVE_ANON) && (p->flags & PG_REFERENCED)) {
		sim_lru_del(m, pfn);
		p->flags &= ~PG_REFERENCED;
		sim_lru_add(m, pfn, p->flags & PG_ANON ? SIM_LRU_ACTIVE_ANON :
							 SIM_LRU_ACTIVE_FILE);
		sim_memcg_count(g, SIM_PGACTIVATE, 1);
		g->nonresident_age++;
	} else {
		p->flags |= PG_REFERENCED;
	}
}

/* A dirty page of file id was cleaned or freed: the file leaves the
 * dirty list with its last one. */
static void obj_undirty(struct sim_machine *m, uint32_t id)
{
	struct sim_object *o = &m->objs[id];

	if (--o->dirty)
		return;
	if (o->dirty_prev != SIM_NOPAGE)
		m->objs[o->dirty_prev].dirty_next = o->dirty_next;
	else
		m->dirty_head = o->dirty_next;
	if (o->dirty_next != SIM_NOPAGE)
		m->objs[o->dirty_next].dirty_prev = o->dirty_prev;
	else
		m->dirty_tail = o->dirty_prev;
}

/* ---------------------------------------------------------------- pages */

uint32_t sim_page_alloc(struct sim_machine *m)
{
	uint32_t pfn = m->free_head;

	if (pfn == SIM_NOPAGE)
		return pfn;
	m->free_head = m->pages[pfn].next;
	m->nr_free--;
	memset(&m->pages[pfn], 0, sizeof(m->pages[pfn]));
	m->pages[pfn].lru = 0xff;
	m->pages[pfn].prev = m->pages[pfn].next = SIM_NOPAGE;
	return pfn;
}

void sim_page_release(struct sim_machine *m, uint32_t pfn)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];

	if (p->flags & PG_DIRTY) {
		g->dirty--;
		m->dirty--;
		obj_undirty(m, p->obj);
	}
	if (p->flags & PG_WRITEBACK) {
		g->writeback--;
		m->writeback--;
	}
	sim_memcg_uncharge(g, 1);
	p->flags = 0;
	p->lru = 0xff;
	p->next = m->free_head;
	m->free_head = pfn;
	m->nr_free++;
}

uint64_t sim_free_pages(const struct sim_machine *m)
{
	return m->nr_free;
}

static uint64_t make_shadow(struct sim_memcg *g)
{
	return ((uint64_t)g->id << SHADOW_AGE_BITS |
		(uint64_t)(g->nonresident_age & SHADOW_AGE_MASK)) + 1;
}

void sim_memcg_swap_uncharge(struct sim_machine *m, uint64_t shadow)
{
	uint64_t id = ((shadow & ~SLOT_SWAPPED) - 1) >> SHADOW_AGE_BITS;

	m->swap_used--;
	m->memcg[id]->swap_self--;
}

void sim_page_evict(struct sim_machine *m, uint32_t pfn)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];
	struct sim_slot *s = &m->objs[p->obj].slots[p->index];

	sim_lru_del(m, pfn);
	g->nonresident_age++;
	s->pfn = SIM_NOPAGE;
	s->shadow = make_shadow(g);
	if (p->flags & PG_ANON) {
		s->shadow |= SLOT_SWAPPED;
		m->swap_used++;
		g->swap_self++;
	}
	m->objs[p->obj].resident--;
	sim_page_release(m, pfn);
}

/* A refault (mm/workingset.c workingset_refault()): the page comes back
 * active when its refault distance fits in the working set. Returns the
 * list to put it on. */
static int refault(struct sim_machine *m, struct sim_memcg *g,
		   uint64_t shadow, bool anon)
{
	uint64_t v = (shadow & ~SLOT_SWAPPED) - 1;
	struct sim_memcg *e = m->memcg[v >> SHADOW_AGE_BITS];
	uint64_t distance, workingset;

	sim_memcg_count(g, anon ? SIM_REFAULT_ANON : SIM_REFAULT_FILE, 1);
	if (!e)
		e = g;
	distance = (e->nonresident_age - (v & SHADOW_AGE_MASK)) &
		   SHADOW_AGE_MASK;
	workingset = e->lru_size[SIM_LRU_ACTIVE_FILE] +
		     e->lru_size[SIM_LRU_ACTIVE_ANON];
	if (distance > workingset)
		return anon ? SIM_LRU_INACTIVE_ANON : SIM_LRU_INACTIVE_FILE;
	sim_memcg_count(g, anon ? SIM_ACTIVATE_ANON : SIM_ACTIVATE_FILE, 1);
	return anon ? SIM_LRU_ACTIVE_ANON : SIM_LRU_ACTIVE_FILE;
}

/* ---------------------------------------------------------------- objects */

static sim_obj obj_new(struct sim_machine *m, uint64_t pages, bool anon)
{
	struct sim_object *objs, *o;
	uint32_t i;
	uint64_t k;

	for (i = m->objs_free; i < m->nobjs && m->objs[i].used; i++)
		;
	m->objs_free = i + 1;
	if (i == m->nobjs) {
		if (m->nobjs == m->objs_cap) {
			objs = realloc(m->objs, (m->objs_cap * 2 + 16) *
						sizeof(*objs));
			if (!objs)
				return SIM_NOPAGE;
			m->objs = objs;
			m->objs_cap = m->objs_cap * 2 + 16;
		}
		memset(&m->objs[m->nobjs], 0, sizeof(m->objs[0]));
		m->nobjs++;
	}
	o = &m->objs[i];
	free(o->slots);
	o->slots = malloc((pages ? pages : 1) * sizeof(*o->slots));
	if (!o->slots)
		return SIM_NOPAGE;
	for (k = 0; k < pages; k++) {
		o->slots[k].pfn = SIM_NOPAGE;
		o->slots[k].shadow = SLOT_EMPTY;
	}
	o->used = true;
	o->anon = anon;
	o->pages = pages;
	o->resident = 0;
	o->dirty = 0;
	o->dirty_from = pages;
	return i;
}

sim_obj sim_file_new(struct sim_machine *m, uint64_t pages)
{
	return obj_new(m, pages, false);
}

sim_obj sim_anon_new(struct sim_machine *m, uint64_t pages)
{
	return obj_new(m, pages, true);
}

void sim_obj_truncate(struct sim_machine *m, sim_obj id)
{
	struct sim_object *o = &m->objs[id];
	struct sim_slot *s;
	uint64_t k;

	for (k = 0; k < o->pages; k++) {
		s = &o->slots[k];
		if (s->pfn != SIM_NOPAGE) {
			sim_lru_del(m, s->pfn);
			sim_page_release(m, s->pfn);
		} else if (s->shadow & SLOT_SWAPPED) {
			sim_memcg_swap_uncharge(m, s->shadow);
		}
		s->pfn = SIM_NOPAGE;
		s->shadow = SLOT_EMPTY;
	}
	o->resident = 0;
}

void sim_obj_free(struct sim_machine *m, sim_obj id)
{
	struct sim_object *o = &m->objs[id];

	sim_obj_truncate(m, id);
	free(o->slots);
	o->slots = NULL;
	o->used = false;
	o->pages = 0;
	if (id < m->objs_free)
		m->objs_free = id;
}

uint64_t sim_obj_pages(const struct sim_machine *m, sim_obj o)
{
	return m->objs[o].pages;
}

uint64_t sim_obj_resident(const struct sim_machine *m, sim_obj o)
{
	return m->objs[o].resident;
}

/* Charges n pages to the running task's group and gets them from the
 * machine. -ENOMEM: OOM. */
static int charge(struct sim_machine *m, struct sim_memcg *g, uint64_t n,
		  bool huge)
{
	int r = sim_make_room(m, n);

	if (r < 0)
		return r;
	r = sim_memcg_try_charge(m, g, n, huge);
	if (r < 0)
		return r;
	/* The charge may have slept in reclaim while other tasks took the
	 * free pages: make room again. sim_make_room() does not sleep after
	 * it has seen enough free pages, so they are still there for the
	 * caller's install(). */
	while (m->nr_free < n) {
		r = sim_make_room(m, n);
		if (r < 0) {
			sim_memcg_uncharge(g, n);
			return r;
		}
	}
	return 0;
}

/* Puts a new page for slot `index` of object o on g's list `lru`. */
static void install(struct sim_machine *m, struct sim_memcg *g, sim_obj o,
		    uint64_t index, int lru, uint8_t flags)
{
	uint32_t pfn = sim_page_alloc(m);
	struct sim_page *p = sim_page(m, pfn);

	/* sim_make_room() made sure there is one. */
	p->obj = o;
	p->index = (uint32_t)index;
	p->memcg = g->id;
	p->flags = flags;
	m->objs[o].slots[index].pfn = pfn;
	m->objs[o].slots[index].shadow = SLOT_EMPTY;
	m->objs[o].resident++;
	sim_lru_add(m, pfn, lru);
	g->counter[SIM_PGALLOC]++;
}

/* A page of file id became dirty: the file joins the end of the dirty
 * list with its first one. */
static void obj_dirty(struct sim_machine *m, uint32_t id)
{
	struct sim_object *o = &m->objs[id];

	if (o->dirty++)
		return;
	o->dirty_next = SIM_NOPAGE;
	o->dirty_prev = m->dirty_tail;
	if (m->dirty_tail != SIM_NOPAGE)
		m->objs[m->dirty_tail].dirty_next = id;
	else
		m->dirty_head = id;
	m->dirty_tail = id;
}

static void set_dirty(struct sim_machine *m, uint32_t pfn)
{
	struct sim_page *p = sim_page(m, pfn);

	if (p->flags & PG_DIRTY)
		return;
	/* A write waits for a read in flight (lock_page()); the model
	 * lets it through, the page read. */
	p->flags &= ~PG_LOCKED;
	p->flags |= PG_DIRTY;
	/* Dirtied at, until written back. A page redirtied while its
	 * write is in flight stays under writeback until that completes
	 * (PG_writeback and PG_dirty together, as in the kernel): its
	 * completion time is kept, and taken as when it was dirtied. */
	if (!(p->flags & PG_WRITEBACK))
		p->wb_done_ns = m->now;
	m->memcg[p->memcg]->dirty++;
	m->dirty++;
	obj_dirty(m, p->obj);
	if (p->index < m->objs[p->obj].dirty_from)
		m->objs[p->obj].dirty_from = p->index;
}

/* Charges and installs the missing pages of [off, off + n): a page at a
 * time in 2011's add_to_page_cache_locked(), a folio today, and the
 * folios of a readahead window are at most SWAP_CLUSTER_MAX pages, so a
 * charge that meets the limit reclaims one batch, not the whole read.
 * The charge may sleep in reclaim, and meanwhile reclaim may evict pages
 * of the range or another task may read them in: what is installed is
 * counted again after each charge, and a surplus charge given back. With
 * `locked`, the pages are installed locked until their read is submitted
 * (add_to_page_cache_lru() locks a page before the bio is built), so
 * reclaim cannot take them and readers wait for them; their indexes go
 * to idx[] (n entries). Returns 0 or -ENOMEM, the pages installed in
 * *total, the first in *first, whether any was a refault in *refaults. */
static int fault_range(struct sim_machine *m, sim_obj o, uint64_t off,
		       uint64_t n, uint32_t *idx, uint64_t *total,
		       uint64_t *first, bool *refaults)
{
	struct sim_memcg *g = sim_charge_target(m);
	struct sim_object *obj = &m->objs[o];
	uint64_t k, missing, batch, installed;
	uint32_t pfn;
	int lru, r;

	*total = 0;
	*first = off + n;
	*refaults = false;
	for (;;) {
		obj = &m->objs[o];
		missing = 0;
		for (k = off; k < off + n; k++)
			missing += obj->slots[k].pfn == SIM_NOPAGE;
		if (!missing)
			return 0;
		batch = missing < SIM_SWAP_CLUSTER_MAX ?
			missing : SIM_SWAP_CLUSTER_MAX;
		r = charge(m, g, batch, false);
		if (r < 0)
			return r;
		obj = &m->objs[o]; /* other tasks may have grown the table */
		installed = 0;
		for (k = off; k < off + n && installed < batch; k++) {
			if (obj->slots[k].pfn != SIM_NOPAGE)
				continue;
			lru = SIM_LRU_INACTIVE_FILE;
			if (obj->slots[k].shadow != SLOT_EMPTY) {
				lru = refault(m, g, obj->slots[k].shadow,
					      false);
				*refaults = true;
			}
			install(m, g, o, k, lru, idx ? PG_LOCKED : 0);
			if (idx) {
				pfn = obj->slots[k].pfn;
				m->pages[pfn].wb_done_ns = UINT64_MAX;
				idx[*total + installed] = (uint32_t)k;
			}
			installed++;
			if (k < *first)
				*first = k;
		}
		if (installed < batch)
			sim_memcg_uncharge(g, batch - installed);
		*total += installed;
	}
}

/* Creates the missing pages of [off, off + n) for a write. */
static int write_fault(struct sim_machine *m, sim_obj o, uint64_t off,
		       uint64_t n)
{
	uint64_t total, first;
	bool refaults;
	int r;

	r = fault_range(m, o, off, n, NULL, &total, &first, &refaults);
	if (r < 0 || !total)
		return r;
	sim_memcg_count(sim_charge_target(m), SIM_PGFAULT, total);
	sim_kernel_cpu(m, total * m->costs.minor_fault_ns);
	return 0;
}

/* ra_submit() (mm/readahead.c): reads the missing pages of [off, off + n)
 * in one disk request, without waiting for it; the pages stay locked
 * until it completes. *requests counts the requests. *stall_ns: when the read completes, if it brought
 * back pages of the working set (a memory stall for PSI while waited
 * for). */
static int ra_submit(struct sim_machine *m, sim_obj o, uint64_t off,
		     uint64_t n, uint64_t *stall_ns, uint64_t *requests)
{
	struct sim_memcg *g = sim_charge_target(m);
	uint64_t total, first, done, k;
	uint32_t *idx, pfn;
	bool refaults;
	int r;

	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	r = fault_range(m, o, off, n, idx, &total, &first, &refaults);
	/* The pages' allocation and charge, then the bio. */
	if (r == 0 && total)
		sim_kernel_cpu(m, total * m->costs.minor_fault_ns);
	done = m->now;
	if (total) {
		sim_memcg_count(g, SIM_PGFAULT, total);
		(*requests)++;
		done = sim_disk_submit(m, o, first, total);
		if (refaults && done > *stall_ns)
			*stall_ns = done;
	}
	/* Unlocked when the read completes (at once if the charge
	 * failed). */
	for (k = 0; k < total; k++) {
		pfn = m->objs[o].slots[idx[k]].pfn;
		if (pfn != SIM_NOPAGE)
			m->pages[pfn].wb_done_ns = done;
	}
	free(idx);
	if (total)
		sim_wake_all(m, &m->pagelock_wq);
	return r;
}

/* get_init_ra_size() and get_next_ra_size() of 2.6.39's mm/readahead.c. */
static uint64_t init_ra_size(uint64_t req, uint64_t max)
{
	uint64_t size = 1;

	while (size < req)
		size <<= 1;
	if (size <= max / 32)
		size *= 4;
	else if (size <= max / 4)
		size *= 2;
	else
		size = max;
	return size;
}

static uint64_t next_ra_size(uint64_t cur, uint64_t max)
{
	uint64_t size = cur < max / 16 ? 4 * cur : 2 * cur;

	return size < max ? size : max;
}

/* do_generic_file_read() (mm/filemap.c, 2011) with ondemand_readahead():
 * page by page, a missing page starts a synchronous readahead from it
 * (the first window and, as ondemand_readahead() merges the window its
 * own marker would start, the next one), the first page of the async
 * window (PG_readahead) starts the next window before the page is
 * waited for, a page still being read is waited for (lock_page()), then
 * copied (mark_page_accessed()). The windows are at most readahead_pages
 * (VM_MAX_READAHEAD); a page read ahead and evicted before the reader
 * copied it (the reader sleeping in the charge of the next window, say)
 * is read again from that page on. Readahead past the end of the read
 * is not modelled. Without a readahead limit the read's misses are one
 * request. */
static int file_read_pages(struct sim_machine *m, sim_obj o, uint64_t off,
			   uint64_t n)
{
	uint64_t max = m->costs.readahead_pages ? m->costs.readahead_pages :
						  n;
	uint64_t end = off + n, k, size, async, start, stop;
	uint64_t ra_start = 0, ra_size = 0, marker = UINT64_MAX;
	uint64_t stall_ns = 0, requests = 0;
	struct sim_page *p;
	uint32_t pfn;
	bool stall;
	int r;

	for (k = off; k < end; k++) {
		pfn = m->objs[o].slots[k].pfn;
		if (pfn == SIM_NOPAGE) {
			/* page_cache_sync_readahead(): an initial window
			 * at k. */
			size = init_ra_size(end - k, max);
			async = size > end - k ? size - (end - k) : size;
			if (async == size) {
				async = next_ra_size(size, max);
				size += async;
			}
			ra_start = k;
			ra_size = size;
			marker = k + size - async;
			stop = k + size < end ? k + size : end;
			r = ra_submit(m, o, k, stop - k, &stall_ns,
				      &requests);
			if (r < 0)
				return r;
		} else if (k == marker) {
			/* page_cache_async_readahead(): the next window. */
			start = ra_start + ra_size;
			size = next_ra_size(ra_size, max);
			ra_start = start;
			ra_size = size;
			marker = start;
			if (start < end) {
				stop = start + size < end ? start + size : end;
				r = ra_submit(m, o, start, stop - start,
					      &stall_ns, &requests);
				if (r < 0)
					return r;
			}
		}
		/* lock_page_killable(): wait for the read. */
		for (;;) {
			pfn = m->objs[o].slots[k].pfn;
			if (pfn == SIM_NOPAGE)
				break;
			p = sim_page(m, pfn);
			if (!sim_page_locked(m, p))
				break;
			if (p->wb_done_ns == UINT64_MAX) {
				sim_wait(m, &m->pagelock_wq, SIM_UNLIMITED);
				continue;
			}
			stall = p->wb_done_ns <= stall_ns;
			if (stall)
				sim_stall_begin(m);
			sim_sleep(m, p->wb_done_ns - m->now);
			if (stall)
				sim_stall_end(m);
		}
		if (pfn == SIM_NOPAGE) {
			/* Evicted after its read, before the copy: read
			 * again from here (ondemand_readahead() sees a
			 * miss, not its window). */
			marker = UINT64_MAX;
			k--;
			continue;
		}
		mark_accessed(m, pfn);
	}
	/* A read that went to the disk is one major fault, however many
	 * requests it took. */
	if (requests)
		sim_memcg_count(sim_charge_target(m), SIM_PGMAJFAULT, 1);
	return 0;
}

int sim_file_read(struct sim_machine *m, sim_obj o, uint64_t off,
		  uint64_t n)
{
	struct sim_object *obj = &m->objs[o];
	int r;

	if (off > obj->pages || n > obj->pages - off)
		return -EINVAL;
	r = file_read_pages(m, o, off, n);
	/* The return to user space. */
	sim_memcg_handle_high(m);
	return r;
}

/* Writes back up to n dirty pages, the files in the order they were
 * first dirtied and each in page order, as the flusher does
 * (writeback_sb_inodes() on b_io, filled from b_dirty oldest first),
 * only those dirtied before older_than (SIM_UNLIMITED: any), only object
 * `obj` if obj >= 0. Contiguous pages merge into one disk request.
 * Returns the pages submitted. */
static uint64_t writeback(struct sim_machine *m, uint64_t n,
			  uint64_t older_than, int obj)
{
	uint64_t done = 0, k, left, first;
	struct sim_object *o;
	struct sim_page *p;
	uint32_t i, next, pfn;

	for (i = obj >= 0 ? (uint32_t)obj : m->dirty_head;
	     i != SIM_NOPAGE && done < n; i = next) {
		o = &m->objs[i];
		/* Taken first: the file leaves the list once clean. */
		next = obj >= 0 ? SIM_NOPAGE : o->dirty_next;
		left = o->dirty;
		first = o->pages; /* the first page that stays dirty */
		for (k = o->dirty_from; k < o->pages && left && done < n;
		     k++) {
			pfn = o->slots[k].pfn;
			if (pfn == SIM_NOPAGE)
				continue;
			p = &m->pages[pfn];
			if (!(p->flags & PG_DIRTY))
				continue;
			left--;
			/* write_cache_pages() skips a page whose previous
			 * write is still in flight (WB_SYNC_NONE): it stays
			 * dirty for the next pass. */
			if (!(p->flags & PG_WRITEBACK) &&
			    (older_than == SIM_UNLIMITED ||
			     p->wb_done_ns <= older_than)) {
				sim_writeback_start(m, pfn,
						    sim_disk_submit(m, i, k, 1));
				done++;
			} else if (k < first) {
				first = k;
			}
		}
		o->dirty_from = k < first ? k : first;
	}
	return done;
}

void sim_writeback_start(struct sim_machine *m, uint32_t pfn,
			 uint64_t done_ns)
{
	struct sim_page *p = sim_page(m, pfn);
	struct sim_memcg *g = m->memcg[p->memcg];
	struct sim_wb *q;
	uint64_t i, cap;

	if (m->wb_tail - m->wb_head == m->wb_cap) {
		cap = m->wb_cap ? m->wb_cap * 2 : 4096;
		q = malloc(cap * sizeof(*q));
		if (!q)
			return; /* stays dirty: the next writeback takes it */
		for (i = m->wb_head; i < m->wb_tail; i++)
			q[i - m->wb_head] = m->wb_queue[i % m->wb_cap];
		free(m->wb_queue);
		m->wb_queue = q;
		m->wb_tail -= m->wb_head;
		m->wb_head = 0;
		m->wb_cap = cap;
	}
	p->flags &= ~PG_DIRTY;
	g->dirty--;
	m->dirty--;
	obj_undirty(m, p->obj);
	p->flags |= PG_WRITEBACK;
	p->wb_done_ns = done_ns;
	g->writeback++;
	m->writeback++;
	m->wb_queue[m->wb_tail % m->wb_cap] =
		(struct sim_wb){ .pfn = pfn, .done_ns = done_ns };
	m->wb_tail++;
}

void sim_writeback_complete(struct sim_machine *m)
{
	struct sim_wb *e;
	struct sim_page *p;
	bool any = false;

	while (m->wb_head < m->wb_tail) {
		e = &m->wb_queue[m->wb_head % m->wb_cap];
		p = &m->pages[e->pfn];
		if ((p->flags & PG_WRITEBACK) && p->wb_done_ns == e->done_ns) {
			if (e->done_ns > m->now)
				break;
			p->flags &= ~PG_WRITEBACK;
			m->memcg[p->memcg]->writeback--;
			m->writeback--;
			any = true;
		}
		m->wb_head++;
	}
	if (any && m->writeback_wq.head)
		sim_wake_all(m, &m->writeback_wq);
}

/* Sleeps until the next writeback completes (nothing is queued to wake
 * the sleeper at that time otherwise), or returns at once when nothing
 * is under writeback. */
static void wait_writeback(struct sim_machine *m)
{
	struct sim_wb *e;
	struct sim_page *p;
	uint64_t i;

	for (i = m->wb_head; i < m->wb_tail; i++) {
		e = &m->wb_queue[i % m->wb_cap];
		p = &m->pages[e->pfn];
		if (!(p->flags & PG_WRITEBACK) || p->wb_done_ns != e->done_ns)
			continue;
		sim_stall_begin(m);
		sim_wait(m, &m->writeback_wq,
			 e->done_ns > m->now ? e->done_ns - m->now : 0);
		sim_stall_end(m);
		return;
	}
}

static uint64_t dirty_limit(const struct sim_machine *m, uint64_t ppm)
{
	return m->cfg.ram_pages * ppm / 1000000;
}

/* The flusher: every 5 s, pages dirty for 30 s; at once, everything above
 * the background threshold. Sleeps without a timeout while nothing is
 * dirty, so a machine with no work ends; the first page dirtied then
 * starts its timer (wb_wakeup_delayed()). */
static void flusher(struct sim_task *t, void *arg)
{
	struct sim_machine *m = arg;
	uint64_t bg;
	bool idle;

	(void)t;
	for (;;) {
		idle = m->flusher_idle = !m->dirty;
		sim_wait(m, &m->flusher_wq,
			 idle ? SIM_UNLIMITED : WRITEBACK_INTERVAL_NS);
		m->flusher_idle = false;
		bg = dirty_limit(m, DIRTY_BACKGROUND_PPM);
		if (m->dirty > bg)
			writeback(m, m->dirty - bg, SIM_UNLIMITED, -1);
		/* wb_check_old_data_flush(): pages dirty for 30 s, at most
		 * once in 5 s, whatever woke the flusher. */
		if (m->now > DIRTY_EXPIRE_NS &&
		    m->now >= m->last_old_flush_ns + WRITEBACK_INTERVAL_NS) {
			m->last_old_flush_ns = m->now;
			writeback(m, SIM_UNLIMITED, m->now - DIRTY_EXPIRE_NS,
				  -1);
		}
	}
}

static void wake_flusher(struct sim_machine *m)
{
	if (!m->flusher)
		m->flusher = sim_task_spawn(m, "flusher", sim_root(m), m->now,
					    flusher, m);
	else if (m->flusher_wq.head)
		sim_wake_all(m, &m->flusher_wq);
}

/* balance_dirty_pages(): a writer above the dirty limit waits for
 * writeback. */
static void balance_dirty(struct sim_machine *m)
{
	uint64_t limit = dirty_limit(m, DIRTY_PPM);

	if (m->dirty > dirty_limit(m, DIRTY_BACKGROUND_PPM))
		wake_flusher(m);
	while (m->current && m->dirty + m->writeback > limit) {
		if (!m->writeback &&
		    !writeback(m, m->dirty - limit, SIM_UNLIMITED, -1))
			break;
		wait_writeback(m);
	}
}

int sim_file_write(struct sim_machine *m, sim_obj o, uint64_t off,
		   uint64_t n)
{
	struct sim_object *obj = &m->objs[o];
	uint64_t k;
	int r;

	if (off > obj->pages || n > obj->pages - off)
		return -EINVAL;
	r = write_fault(m, o, off, n);
	if (r < 0) {
		sim_memcg_handle_high(m);
		return r;
	}
	obj = &m->objs[o];
	for (k = off; k < off + n; k++) {
		if (obj->slots[k].pfn == SIM_NOPAGE)
			continue;
		mark_accessed(m, obj->slots[k].pfn);
		set_dirty(m, obj->slots[k].pfn);
	}
	/* Only an idle flusher needs a write to start its timer; above
	 * the background threshold balance_dirty() wakes it at once. */
	if (!m->flusher || m->flusher_idle)
		wake_flusher(m);
	balance_dirty(m);
	/* The return to user space. */
	sim_memcg_handle_high(m);
	return 0;
}

void sim_file_sync(struct sim_machine *m, sim_obj o)
{
	writeback(m, SIM_UNLIMITED, SIM_UNLIMITED, (int)o);
	while (m->current) {
		struct sim_object *obj = &m->objs[o];
		uint64_t k;
		bool busy = false;

		for (k = 0; k < obj->pages && !busy; k++)
			busy = obj->slots[k].pfn != SIM_NOPAGE &&
			       (m->pages[obj->slots[k].pfn].flags &
				PG_WRITEBACK);
		if (!busy)
			break;
		wait_writeback(m);
	}
}

void sim_file_drop(struct sim_machine *m, sim_obj o)
{
	struct sim_object *obj = &m->objs[o];
	struct sim_slot *s;
	uint64_t k;

	/* mm/fadvise.c generic_fadvise(): dirty pages are queued for
	 * writeback (WB_SYNC_NONE, not waited for), then
	 * invalidate_mapping_pages() frees what is clean and drops the
	 * shadow entries. Not reclaim: no shadow is left for a refault. */
	writeback(m, SIM_UNLIMITED, SIM_UNLIMITED, (int)o);
	for (k = 0; k < obj->pages; k++) {
		s = &obj->slots[k];
		if (s->pfn == SIM_NOPAGE) {
			s->shadow = SLOT_EMPTY;
			continue;
		}
		if (!sim_page_clean(sim_page(m, s->pfn)))
			continue;
		sim_lru_del(m, s->pfn);
		sim_page_release(m, s->pfn);
		s->pfn = SIM_NOPAGE;
		obj->resident--;
	}
}

/* ---------------------------------------------------------------- anon */

static bool range_absent(const struct sim_object *obj, uint64_t start)
{
	uint64_t k;

	for (k = start; k < start + SIM_HPAGE_NR; k++) {
		if (obj->slots[k].pfn != SIM_NOPAGE ||
		    obj->slots[k].shadow != SLOT_EMPTY)
			return false;
	}
	return true;
}

/* One huge-page fault: true when it was charged as a huge page. */
static bool huge_fault(struct sim_machine *m, struct sim_memcg *g,
		       sim_obj o, uint64_t start)
{
	uint64_t k;

	if (charge(m, g, SIM_HPAGE_NR, true) < 0) {
		sim_memcg_count(g, SIM_THP_FAULT_FALLBACK, 1);
		return false;
	}
	/* Reclaim slept: the range may have been touched meanwhile. */
	if (!range_absent(&m->objs[o], start)) {
		sim_memcg_uncharge(g, SIM_HPAGE_NR);
		return false;
	}
	for (k = start; k < start + SIM_HPAGE_NR; k++)
		install(m, g, o, k, SIM_LRU_ACTIVE_ANON, PG_ANON);
	sim_memcg_count(g, SIM_THP_FAULT_ALLOC, 1);
	sim_memcg_count(g, SIM_PGFAULT, 1);
	sim_kernel_cpu(m, m->costs.hpage_fault_ns);
	sim_memcg_handle_high(m);
	return true;
}

/* swapin_readahead() (mm/swap_state.c): a swap-in reads the aligned
 * block of 1 << page_cluster (3) swap slots around the faulting entry in
 * one request. The model has no swap slots: the region's pages around
 * the faulting one stand for them, as pages evicted together off an LRU
 * list took neighbouring slots. */
#define SWAP_READAHEAD 8u

/* Pages of [start, end) of obj out in swap. */
static uint64_t swapped_out(const struct sim_object *obj, uint64_t start,
			    uint64_t end)
{
	uint64_t i, n = 0;

	for (i = start; i < end; i++)
		n += obj->slots[i].pfn == SIM_NOPAGE &&
		     (obj->slots[i].shadow & SLOT_SWAPPED);
	return n;
}

/* Brings page k of o back from swap with up to `nr` - 1 pages of its
 * readahead block [start, end), which go to the inactive list. Returns
 * the pages read. */
static uint64_t swap_in(struct sim_machine *m, struct sim_memcg *g,
			sim_obj o, uint64_t k, uint64_t start, uint64_t end,
			uint64_t nr)
{
	struct sim_slot *s = m->objs[o].slots;
	uint64_t i, read = 1;

	sim_memcg_swap_uncharge(m, s[k].shadow);
	install(m, g, o, k, refault(m, g, s[k].shadow, true), PG_ANON);
	for (i = start; i < end && read < nr; i++) {
		if (s[i].pfn != SIM_NOPAGE || !(s[i].shadow & SLOT_SWAPPED))
			continue;
		sim_memcg_swap_uncharge(m, s[i].shadow);
		install(m, g, o, i, SIM_LRU_INACTIVE_ANON, PG_ANON);
		read++;
	}
	sim_memcg_count(g, SIM_PGMAJFAULT, 1);
	sim_memcg_count(g, SIM_PSWPIN, read);
	sim_stall_begin(m);
	if (m->cfg.swap_kind == SIM_SWAP_ZSWAP)
		sim_kernel_cpu(m, read * m->costs.zswap_load_page_ns);
	else
		sim_disk_io(m, read);
	sim_stall_end(m);
	return read;
}

static int small_fault(struct sim_machine *m, struct sim_memcg *g,
		       sim_obj o, uint64_t k)
{
	uint64_t start = k - k % SWAP_READAHEAD, end, nr = 1, used = 1;
	struct sim_slot *s = &m->objs[o].slots[k];
	int r;

	end = start + SWAP_READAHEAD < m->objs[o].pages ?
	      start + SWAP_READAHEAD : m->objs[o].pages;
	if (s->shadow & SLOT_SWAPPED)
		nr = swapped_out(&m->objs[o], start, end);
	r = charge(m, g, nr, false);
	if (r < 0)
		return r;
	s = &m->objs[o].slots[k]; /* the table may have moved */
	if (s->pfn != SIM_NOPAGE) {
		/* Faulted in by another task while this one reclaimed. */
		sim_memcg_uncharge(g, nr);
		return 0;
	}
	if (s->shadow & SLOT_SWAPPED)
		used = swap_in(m, g, o, k, start, end, nr);
	else
		install(m, g, o, k, SIM_LRU_ACTIVE_ANON, PG_ANON);
	if (used < nr)
		sim_memcg_uncharge(g, nr - used);
	sim_memcg_count(g, SIM_PGFAULT, 1);
	sim_kernel_cpu(m, m->costs.minor_fault_ns);
	sim_memcg_handle_high(m);
	return 0;
}

int sim_anon_touch(struct sim_machine *m, sim_obj o, uint64_t off,
		   uint64_t n, bool thp)
{
	struct sim_object *obj = &m->objs[o];
	struct sim_memcg *g = sim_charge_target(m);
	uint64_t k, start;
	int r;

	if (off > obj->pages || n > obj->pages - off)
		return -EINVAL;
	for (k = off; k < off + n; k++) {
		obj = &m->objs[o]; /* faults may sleep and the table move */
		if (obj->slots[k].pfn != SIM_NOPAGE) {
			mark_accessed(m, obj->slots[k].pfn);
			continue;
		}
		start = k - k % SIM_HPAGE_NR;
		if (thp && start + SIM_HPAGE_NR <= obj->pages &&
		    range_absent(obj, start) && huge_fault(m, g, o, start))
			continue;
		r = small_fault(m, g, o, k);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---------------------------------------------------------------- kswapd */

/* kswapd: reclaims the machine up to its high watermark when woken below
 * the low one. */
static void kswapd(struct sim_task *t, void *arg)
{
	struct sim_machine *m = arg;
	struct sim_reclaim_result res;

	(void)t;
	for (;;) {
		sim_wait(m, &m->kswapd_wq, SIM_UNLIMITED);
		while (m->nr_free < m->wmark_high) {
			sim_reclaim(m, sim_root(m), m->wmark_high - m->nr_free,
				    SIM_RECLAIM_KSWAPD, true, false, &res);
			if (!res.reclaimed)
				break;
		}
	}
}

int sim_make_room(struct sim_machine *m, uint64_t n)
{
	struct sim_reclaim_result res;
	unsigned fails = 0;

	if (!m->wmark_min) {
		/* About min_free_kbytes = sqrt(16 * RAM in KiB). */
		m->wmark_min = m->cfg.ram_pages / 256 + 32;
		m->wmark_low = m->wmark_min * 5 / 4;
		m->wmark_high = m->wmark_min * 3 / 2;
	}
	if (m->nr_free < m->wmark_low + n && m->current) {
		if (!m->kswapd)
			m->kswapd = sim_task_spawn(m, "kswapd", sim_root(m),
						   m->now, kswapd, m);
		else if (m->kswapd_wq.head)
			sim_wake_all(m, &m->kswapd_wq);
	}
	/* Direct reclaim below min (or below what is asked at all). */
	while (m->nr_free < n + (m->current ? m->wmark_min : 0)) {
		sim_reclaim(m, sim_root(m),
			    n > SIM_SWAP_CLUSTER_MAX ? n : SIM_SWAP_CLUSTER_MAX,
			    SIM_RECLAIM_GLOBAL, true, false, &res);
		if (res.reclaimed)
			continue;
		if (++fails >= 16 && m->nr_free < n)
			return -ENOMEM;
		if (fails >= 16)
			break;
	}
	return 0;
}
