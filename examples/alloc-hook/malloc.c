/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The malloc family. Each block is charged at its usable size
 * (malloc_usable_size() of the real allocator), after the real allocator
 * has handed it out and before the caller touches it, and uncharged at the
 * same size when it is freed: the size of a block never changes between
 * the two, so no header is needed and the alignment of every variant is
 * the real allocator's. A refused block is freed and the call fails with
 * ENOMEM, as an allocator under a hard cap fails.
 *
 * Blocks of the bootstrap arena (real.c) are recognised by address: free()
 * ignores them, realloc() moves them to the real allocator.
 *
 * Every call that hands out or takes back a block of the real allocator
 * runs inside forward() (malloc_usable_size() maps nothing): the mappings
 * an allocator makes while it serves the call (jemalloc's extents,
 * mimalloc's segments, made through the mmap() the hook wraps) are then
 * not charged again by mmap.c, since the blocks carved from them are
 * charged here. glibc's malloc maps through its internal __mmap, which no
 * preloaded object sees: for it nothing changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook.h"

/* The depth of this thread's calls into the real allocator. */
static HOOK_TLS unsigned forwarding;

bool hook_in_allocator(void)
{
	return forwarding != 0;
}

/* Evaluates `call`, a call to the real allocator, with forwarding raised. */
#define forward(call) ({ \
	__typeof__(call) forward_r_; \
	forwarding++; \
	forward_r_ = (call); \
	forwarding--; \
	forward_r_; \
})

/* The same for the real free(), which returns nothing. */
static void forward_free(void *p)
{
	forwarding++;
	hook_real.free(p);
	forwarding--;
}

/* The part of a block aligned to huge pages, where THP advice applies:
 * *start and its length (0 when the block holds no whole huge page). */
static size_t huge_interior(void *p, size_t usable, uintptr_t *start)
{
	uintptr_t mask = (uintptr_t)hook_huge_bytes - 1, end;

	if (!hook_huge_bytes || usable < hook_huge_bytes)
		return 0;
	*start = ((uintptr_t)p + mask) & ~mask;
	end = ((uintptr_t)p + usable) & ~mask;
	return end > *start ? end - *start : 0;
}

/* Charges a block the real allocator has just handed out, with THP advice
 * for its huge-page interior (asked before the charge, so that the
 * block is not counted twice). Returns p, or NULL with errno ENOMEM after
 * freeing it when the charge is refused. */
static void *admit(void *p)
{
	uintptr_t start = 0;
	size_t usable, huge;
	int advice = -1;

	if (!p)
		return NULL;
	usable = hook_real.malloc_usable_size(p);
	huge = huge_interior(p, usable, &start);
	if (huge)
		advice = hook_thp_prepare(huge);
	if (hook_charge(usable) < 0) {
		forward_free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (huge)
		hook_thp_apply((void *)start, huge, advice);
	return p;
}

void *malloc(size_t size)
{
	if (!hook_resolve())
		return hook_arena_alloc(size, 16);
	return admit(forward(hook_real.malloc(size)));
}

void free(void *p)
{
	size_t usable;

	if (!p || hook_arena_owns(p))
		return;
	usable = hook_real.malloc_usable_size(p);
	forward_free(p);
	if (usable)
		hook_uncharge(usable);
}

void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!hook_resolve())
		return hook_arena_alloc(bytes, 16);
	return admit(forward(hook_real.calloc(n, size)));
}

/* Growth is charged before the real realloc, so that a refused one fails
 * with the old block intact (realloc's contract); the rounding of the new
 * block is settled after. realloc(p, 0) frees p and returns NULL, as
 * glibc's does. */
void *realloc(void *p, size_t size)
{
	size_t old, grow, now, huge;
	uintptr_t start = 0;
	int advice = -1;
	void *q;

	if (!p)
		return malloc(size);
	if (hook_arena_owns(p)) {
		q = malloc(size);
		if (q) {
			old = hook_arena_size(p);
			memcpy(q, p, old < size ? old : size);
		}
		return q;
	}
	if (size == 0) {
		free(p);
		return NULL;
	}
	old = hook_real.malloc_usable_size(p);
	grow = size > old ? size - old : 0;
	if (grow) {
		if (hook_huge_bytes && size >= 2 * hook_huge_bytes)
			advice = hook_thp_prepare(size - hook_huge_bytes);
		if (hook_charge(grow) < 0) {
			errno = ENOMEM;
			return NULL;
		}
	}
	q = forward(hook_real.realloc(p, size));
	if (!q) {
		if (grow)
			hook_uncharge(grow);
		return NULL;
	}
	now = hook_real.malloc_usable_size(q);
	if (now > old + grow)
		hook_charge_settled(now - old - grow);
	else if (now < old + grow)
		hook_uncharge(old + grow - now);
	huge = advice >= 0 ? huge_interior(q, now, &start) : 0;
	if (huge)
		hook_thp_apply((void *)start, huge, advice);
	return q;
}

void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

int posix_memalign(void **memptr, size_t align, size_t size)
{
	void *p;
	int r;

	if (!hook_resolve()) {
		p = hook_arena_alloc(size, align);
		if (!p)
			return ENOMEM;
		*memptr = p;
		return 0;
	}
	r = forward(hook_real.posix_memalign(&p, align, size));
	if (r)
		return r;
	p = admit(p);
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	if (!hook_resolve())
		return hook_arena_alloc(size, align);
	return admit(forward(hook_real.aligned_alloc(align, size)));
}

void *memalign(size_t align, size_t size)
{
	if (!hook_resolve())
		return hook_arena_alloc(size, align);
	return admit(forward(hook_real.memalign(align, size)));
}

void *valloc(size_t size)
{
	if (!hook_resolve())
		return hook_arena_alloc(size, 4096);
	return admit(forward(hook_real.valloc(size)));
}

void *pvalloc(size_t size)
{
	if (!hook_resolve())
		return hook_arena_alloc((size + 4095) & ~(size_t)4095, 4096);
	return admit(forward(hook_real.pvalloc(size)));
}

size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (hook_arena_owns(p))
		return hook_arena_size(p);
	return hook_real.malloc_usable_size(p);
}
