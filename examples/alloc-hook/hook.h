/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * examples/alloc-hook: a preloadable shared object (LD_PRELOAD) that wraps
 * the malloc family and mmap/munmap/mremap, charges what they hand out to
 * a memory cgroup through the library's allocator fast path
 * (mr_group_charge() and friends), sleeps for the delays it is given,
 * reclaims when it is told to, refuses what cannot fit, and applies the
 * library's THP advice to large anonymous regions with madvise().
 *
 *   real.c     the real allocator, found with dlsym(RTLD_NEXT), and the
 *              static arena that serves calloc/malloc while dlsym runs
 *   account.c  the group: options, opening, fork, charge and uncharge
 *              with their slow paths, THP advice, statistics at exit
 *   malloc.c   malloc, free, calloc, realloc and the aligned variants
 *   mmap.c     mmap, munmap, mremap and the table of charged mappings
 *
 * The README ("alloc-hook") says how to run a program under it.
 */
#ifndef MR_EXAMPLES_ALLOC_HOOK_H
#define MR_EXAMPLES_ALLOC_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Thread-local data of a preloaded object: initial-exec, so that reaching
 * it never calls __tls_get_addr (which may allocate). */
#define HOOK_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---------------------------------------------------------------- real.c */

/* The next definitions of the wrapped functions in lookup order: the C
 * library's, or those of another allocator loaded after this object. */
struct hook_real {
	void *(*malloc)(size_t size);
	void (*free)(void *p);
	void *(*calloc)(size_t n, size_t size);
	void *(*realloc)(void *p, size_t size);
	int (*posix_memalign)(void **p, size_t align, size_t size);
	void *(*aligned_alloc)(size_t align, size_t size);
	void *(*memalign)(size_t align, size_t size);
	void *(*valloc)(size_t size);
	void *(*pvalloc)(size_t size);
	size_t (*malloc_usable_size)(void *p);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
	void *(*mremap)(void *old, size_t old_len, size_t new_len, int flags,
			...);
};

extern struct hook_real hook_real;

/* Makes hook_real usable: true once it is, false in the thread that is
 * resolving it (dlsym() may call calloc or malloc before it returns: serve
 * those from the arena). */
bool hook_resolve(void);

/* Writes line to hook_say_fd with write(2): no stdio, no allocation.
 * hook_say_fd is stderr, or a copy of it taken at start (a program may
 * close its stderr before the statistics are printed at exit: coreutils'
 * close_stdout() does). */
void hook_say(const char *line);
extern int hook_say_fd;

/* The bootstrap arena: a static buffer served by bumping a pointer, never
 * given back. Blocks are zeroed (static memory, never reused). Returns
 * NULL when full or align is not a power of two up to 4096. */
void *hook_arena_alloc(size_t size, size_t align);
bool hook_arena_owns(const void *p);
/* The size asked for an arena block. */
size_t hook_arena_size(const void *p);
/* Bytes of the arena handed out (headers and alignment included). */
size_t hook_arena_used(void);

/* ------------------------------------------------------------- account.c */

/* Charges `bytes`, which the caller has allocated (malloc family) or is
 * about to map (mmap), to the group: sleeps on DELAY, reclaims and asks
 * again on RECLAIM, and on REFUSE returns -ENOMEM (the caller gives the
 * memory back) unless MEMRECLAIM_HOOK_REFUSE=allow. Where the group
 * cannot be called now (before it is opened, inside a library call, in a
 * forked child until it is opened again) the bytes are kept in the
 * thread's deferred balance and charged with its next charge. Returns 0
 * or -ENOMEM. */
int hook_charge(uint64_t bytes);

/* Takes `bytes` into account with no decision: memory already handed out
 * (the rounding of a realloc that grew). Kept in the deferred balance. */
void hook_charge_settled(uint64_t bytes);

/* Gives back `bytes` charged by hook_charge() or hook_charge_settled():
 * first from the thread's deferred balance, the rest to the group. */
void hook_uncharge(uint64_t bytes);

/* Whether the group can be charged from this thread now: mappings are
 * charged and tracked only then (an untracked mapping is never
 * uncharged, so none is deferred). */
bool hook_active(void);

/* The smallest region that gets THP advice: the PMD size
 * (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size), 0 when the
 * kernel has no THP. */
extern size_t hook_huge_bytes;

/* Asks the library how to back a region of len bytes about to be charged
 * (mr_group_thp_advise_reclaim()); for RECLAIM_THEN_HUGE reclaims the
 * advice's shortfall first (mr_group_reclaim()). Returns the enum
 * mr_thp_advice, or -1 for no advice (region too small, no THP, group not
 * callable). */
int hook_thp_prepare(size_t len);

/* Applies the advice of hook_thp_prepare() to [addr, addr + len) with
 * madvise(), and counts it. */
void hook_thp_apply(void *addr, size_t len, int advice);

/* Counts a mapping that was charged but could not be tracked (the table
 * is full): it is uncharged at once. */
void hook_count_untracked(void);

/* -------------------------------------------------------------- malloc.c */

/* Whether this thread is inside a call to the real allocator (its malloc,
 * free, realloc...): a mapping made now is the allocator's own, whose
 * blocks the malloc wrappers charge, and mmap() must not charge it. */
bool hook_in_allocator(void);

/* ---------------------------------------------------------------- mmap.c */

/* Lock and reset the mapping table around fork() (account.c's handlers
 * call these). */
void hook_maps_lock(void);
void hook_maps_unlock(void);
void hook_maps_reset_lock(void);

#endif /* MR_EXAMPLES_ALLOC_HOOK_H */
