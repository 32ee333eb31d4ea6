/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real allocator behind the hook, found with dlsym(RTLD_NEXT), and the
 * static arena that serves the allocations dlsym() itself makes before the
 * real calloc is known (glibc's dlsym allocates its error buffer with
 * calloc, from within the lookup).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook.h"

/* Enough for glibc's lookups (a few hundred bytes) with room to spare. */
#define ARENA_BYTES (64 * 1024)
/* Each block starts with a header holding the size asked for. */
#define ARENA_HEADER 16

struct hook_real hook_real;

static _Alignas(4096) unsigned char arena[ARENA_BYTES];
static _Atomic size_t arena_used;

static atomic_bool resolved;
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static HOOK_TLS bool resolving;

void *hook_arena_alloc(size_t size, size_t align)
{
	size_t old, start, end;

	if (align < ARENA_HEADER)
		align = ARENA_HEADER;
	if (align > 4096 || (align & (align - 1)) || size > ARENA_BYTES)
		return NULL;
	old = atomic_load(&arena_used);
	do {
		start = (old + ARENA_HEADER + align - 1) & ~(align - 1);
		end = start + size;
		if (end > ARENA_BYTES)
			return NULL;
	} while (!atomic_compare_exchange_weak(&arena_used, &old, end));
	memcpy(arena + start - ARENA_HEADER, &size, sizeof(size));
	return arena + start;
}

size_t hook_arena_used(void)
{
	return atomic_load(&arena_used);
}

bool hook_arena_owns(const void *p)
{
	const unsigned char *c = p;

	return c >= arena && c < arena + ARENA_BYTES;
}

size_t hook_arena_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - ARENA_HEADER, sizeof(size));
	return size;
}

int hook_say_fd = STDERR_FILENO;

void hook_say(const char *line)
{
	size_t len = strlen(line), done = 0;
	ssize_t n;

	while (done < len) {
		n = write(hook_say_fd, line + done, len - done);
		if (n <= 0)
			return;
		done += (size_t)n;
	}
}

/* A wrapped function without a next definition cannot be served: say so
 * and stop (no allocator is behind us). */
static void *need(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		hook_say("alloc-hook: no next definition of ");
		hook_say(name);
		hook_say("\n");
		_exit(127);
	}
	return f;
}

bool hook_resolve(void)
{
	struct hook_real r;

	if (atomic_load_explicit(&resolved, memory_order_acquire))
		return true;
	if (resolving)
		return false;
	pthread_mutex_lock(&resolve_lock);
	if (!atomic_load(&resolved)) {
		resolving = true;
		r.malloc = need("malloc");
		r.free = need("free");
		r.calloc = need("calloc");
		r.realloc = need("realloc");
		r.posix_memalign = need("posix_memalign");
		r.aligned_alloc = need("aligned_alloc");
		r.memalign = need("memalign");
		r.valloc = need("valloc");
		r.pvalloc = need("pvalloc");
		r.malloc_usable_size = need("malloc_usable_size");
		r.mmap = need("mmap");
		r.munmap = need("munmap");
		r.mremap = need("mremap");
		hook_real = r;
		resolving = false;
		atomic_store_explicit(&resolved, true, memory_order_release);
	}
	pthread_mutex_unlock(&resolve_lock);
	return true;
}
