/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmap, munmap and mremap. Anonymous mappings that hold memory (not
 * PROT_NONE reservations, not MAP_HUGETLB, whose pages the memory
 * controller does not charge) are charged at their page-rounded length
 * before they are made, so that a refused one is never mapped, and are
 * kept in a table of charged ranges: munmap() uncharges exactly the
 * charged part of what it unmaps, however it cuts a mapping, and a
 * mapping made while the group could not be charged (the library's own,
 * those before the group was open) is never uncharged. File mappings are
 * not charged here: their page cache is charged by the kernel at fault
 * and is reclaimable. Nor are the mappings the real allocator makes while
 * it serves a malloc-family call (hook_in_allocator()): the blocks it
 * carves from them are charged by malloc.c, and charging their mapping
 * too counted them twice. Such mappings are never in the table, so
 * munmap() and mremap() of them uncharge and charge nothing.
 *
 * Private anonymous mappings of at least a huge page get the library's
 * THP advice (mr_group_thp_advise()) as madvise(MADV_HUGEPAGE) or
 * madvise(MADV_NOHUGEPAGE).
 *
 * The table is a sorted array of disjoint ranges under a mutex, in
 * static memory (it must not allocate). A mapping that finds it full is
 * uncharged at once and counted (untracked_maps in the statistics).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hook.h"

#define MAP_TABLE_RANGES 16384
#define PAGE_MASK_BYTES 4095UL

struct range {
	uintptr_t start, end;
};

static struct range ranges[MAP_TABLE_RANGES];
static size_t nranges;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

void hook_maps_lock(void)
{
	pthread_mutex_lock(&maps_lock);
}

void hook_maps_unlock(void)
{
	pthread_mutex_unlock(&maps_lock);
}

void hook_maps_reset_lock(void)
{
	maps_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

static uintptr_t page_up(uintptr_t v)
{
	return (v + PAGE_MASK_BYTES) & ~PAGE_MASK_BYTES;
}

/* The first range that ends after addr. Caller holds maps_lock. */
static size_t first_after(uintptr_t addr)
{
	size_t lo = 0, hi = nranges, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ranges[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Removes [start, end) from the table and returns the bytes it held.
 * A range cut in the middle keeps both ends; with no room for the second,
 * its bytes are returned too (the caller uncharges them) and counted as
 * untracked. Caller holds maps_lock. */
static uint64_t untrack_locked(uintptr_t start, uintptr_t end)
{
	uint64_t removed = 0;
	size_t i = first_after(start);
	struct range *r;

	while (i < nranges && ranges[i].start < end) {
		r = &ranges[i];
		if (r->start < start && r->end > end) {
			removed += end - start;
			if (nranges == MAP_TABLE_RANGES) {
				removed += r->end - end;
				hook_count_untracked();
				r->end = start;
				break;
			}
			memmove(r + 2, r + 1,
				(nranges - i - 1) * sizeof(*r));
			r[1].start = end;
			r[1].end = r->end;
			r->end = start;
			nranges++;
			break;
		}
		if (r->start < start) {
			removed += r->end - start;
			r->end = start;
			i++;
		} else if (r->end > end) {
			removed += end - r->start;
			r->start = end;
			break;
		} else {
			removed += r->end - r->start;
			memmove(r, r + 1, (nranges - i - 1) * sizeof(*r));
			nranges--;
		}
	}
	return removed;
}

/* Adds [start, end), which overlaps no range. Returns false when full.
 * Caller holds maps_lock. */
static bool track_locked(uintptr_t start, uintptr_t end)
{
	size_t i;

	if (nranges == MAP_TABLE_RANGES)
		return false;
	i = first_after(start);
	memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
	ranges[i].start = start;
	ranges[i].end = end;
	nranges++;
	return true;
}

/* The bytes of [start, end) the table holds. Caller holds maps_lock. */
static uint64_t tracked_locked(uintptr_t start, uintptr_t end)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = first_after(start); i < nranges && ranges[i].start < end;
	     i++)
		bytes += (ranges[i].end < end ? ranges[i].end : end) -
			 (ranges[i].start > start ? ranges[i].start : start);
	return bytes;
}

static uint64_t untrack(uintptr_t start, uintptr_t end)
{
	uint64_t bytes;

	pthread_mutex_lock(&maps_lock);
	bytes = untrack_locked(start, end);
	pthread_mutex_unlock(&maps_lock);
	return bytes;
}

/* A charged mapping [start, start + bytes) now exists where other
 * mappings may have been (MAP_FIXED, MREMAP_FIXED replace them): the old
 * charged part is uncharged, the new one kept, or uncharged at once when
 * the table is full. */
static void replace(uintptr_t start, uint64_t bytes, bool charged)
{
	uint64_t old;
	bool kept = false;

	pthread_mutex_lock(&maps_lock);
	old = untrack_locked(start, start + bytes);
	if (charged)
		kept = track_locked(start, start + bytes);
	pthread_mutex_unlock(&maps_lock);
	if (charged && !kept) {
		hook_count_untracked();
		old += bytes;
	}
	if (old)
		hook_uncharge(old);
}

/* Whether a mapping of these arguments is charged. */
static bool charges(int prot, int flags)
{
	return (flags & MAP_ANONYMOUS) && !(flags & MAP_HUGETLB) &&
	       prot != PROT_NONE;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uint64_t bytes = page_up(len);
	int advice = -1;
	bool charged;
	void *p;

	if (!hook_resolve())
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	charged = len && bytes >= len && charges(prot, flags) &&
		  !hook_in_allocator() && hook_active();
	if (!charged) {
		p = hook_real.mmap(addr, len, prot, flags, fd, off);
		/* Whatever it replaced is no longer charged memory. */
		if (p != MAP_FAILED && (flags & (MAP_FIXED |
						 MAP_FIXED_NOREPLACE)))
			replace((uintptr_t)p, bytes, false);
		return p;
	}
	if ((flags & MAP_TYPE) == MAP_PRIVATE)
		advice = hook_thp_prepare(len);
	if (hook_charge(bytes) < 0) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = hook_real.mmap(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		int e = errno;

		hook_uncharge(bytes);
		errno = e;
		return p;
	}
	replace((uintptr_t)p, bytes, true);
	hook_thp_apply(p, len, advice);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

int munmap(void *addr, size_t len)
{
	uint64_t bytes;
	int r;

	if (!hook_resolve())
		return (int)syscall(SYS_munmap, addr, len);
	r = hook_real.munmap(addr, len);
	if (r == 0 && len) {
		bytes = untrack((uintptr_t)addr, page_up((uintptr_t)addr + len));
		if (bytes)
			hook_uncharge(bytes);
	}
	return r;
}

/* A charged mapping moves with its charge; growth is charged first (a
 * refused one fails with ENOMEM, the mapping untouched), shrinking is
 * uncharged after. With MREMAP_DONTUNMAP the old range stays mapped and
 * charged and the new one is not charged. A mapping only partly charged
 * (cut by a full table) is uncharged when it moves. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	uintptr_t o = (uintptr_t)old;
	uint64_t old_bytes = page_up(old_len), new_bytes = page_up(new_len);
	uint64_t grow = 0, held;
	void *new_addr = NULL, *p;
	bool whole;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!hook_resolve())
		return (void *)syscall(SYS_mremap, old, old_len, new_len,
				       flags, new_addr);
	pthread_mutex_lock(&maps_lock);
	held = tracked_locked(o, o + old_bytes);
	pthread_mutex_unlock(&maps_lock);
	whole = held && held == old_bytes && !(flags & MREMAP_DONTUNMAP);
	if (whole && new_bytes > old_bytes) {
		grow = new_bytes - old_bytes;
		if (hook_charge(grow) < 0) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
	}
	p = hook_real.mremap(old, old_len, new_len, flags, new_addr);
	if (p == MAP_FAILED) {
		int e = errno;

		if (grow)
			hook_uncharge(grow);
		errno = e;
		return p;
	}
	if (flags & MREMAP_DONTUNMAP) {
		replace((uintptr_t)p, new_bytes, false);
		return p;
	}
	held = untrack(o, o + old_bytes);
	if (!whole) {
		if (held)
			hook_uncharge(held);
		replace((uintptr_t)p, new_bytes, false);
		return p;
	}
	if (old_bytes > new_bytes)
		hook_uncharge(old_bytes - new_bytes);
	replace((uintptr_t)p, new_bytes, true);
	return p;
}
