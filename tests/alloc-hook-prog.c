/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program for examples/alloc-hook's tests: it allocates in every way
 * the hook wraps, from several threads and a forked child, and prints to
 * stdout a checksum of what it wrote and read back, which must be the same
 * with and without the hook. What differs by design goes to stderr as
 * key=value: the AnonHugePages of its large mapping (/proc/self/smaps),
 * and whether a large allocation was refused.
 *
 *   alloc-hook-prog mix         the mix above
 *   alloc-hook-prog big SIZE_MIB  malloc SIZE_MIB once; prints big=ok or
 *                               big=enomem (nothing touched)
 *   alloc-hook-prog relimit GROUP LIMIT SIZE_MIB
 *                               big, then writes LIMIT to the v1 group's
 *                               memory.limit_in_bytes (a group the test
 *                               made, holding this program), waits 20 ms,
 *                               and big again
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
/* The reallocarray overflow below must fail with ENOMEM, as glibc's
 * does; AddressSanitizer's allocator reports it and aborts unless told
 * to return NULL. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

#define MiB (1024UL * 1024)

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ULL;
	return h;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

static void fail(const char *what)
{
	fprintf(stderr, "alloc-hook-prog: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The AnonHugePages of the smaps entry that starts at addr, in KiB. */
static long anon_huge_kb(const void *addr)
{
	char line[256], want[32];
	long kb = -1;
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' '))
			in = strncmp(line, want, strlen(want)) == 0;
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* A large private anonymous mapping, aligned to 2 MiB by over-mapping
 * and trimming (munmap of both ends: partial unmaps of one charged
 * mapping), touched, checked, then grown with mremap and cut in the
 * middle. */
static uint64_t mapping(uint64_t h)
{
	size_t len = 8 * MiB, want = 2 * MiB;
	unsigned char *raw, *p, *q;
	uintptr_t a;

	raw = mmap(NULL, len + want, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		fail("mmap");
	a = ((uintptr_t)raw + want - 1) & ~(uintptr_t)(want - 1);
	p = (unsigned char *)a;
	if (p > raw && munmap(raw, (size_t)(p - raw)) < 0)
		fail("munmap head");
	if (munmap(p + len, (size_t)(raw + len + want - (p + len))) < 0)
		fail("munmap tail");
	/* Advice, when the hook gives it, is applied to what mmap returned;
	 * the aligned part kept here still carries it. */
	fill(p, len, 7);
	h = fnv(h, p, len);
	fprintf(stderr, "map_anon_huge_kb=%ld\n", anon_huge_kb(p));
	q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		fail("mremap");
	fill(q + len, len, 9);
	h = fnv(h, q, 2 * len);
	if (munmap(q + 4 * MiB, 4 * MiB) < 0)
		fail("munmap middle");
	h = fnv(h, q, 4 * MiB);
	h = fnv(h, q + 8 * MiB, 8 * MiB);
	if (munmap(q, 2 * len) < 0)
		fail("munmap");
	return h;
}

/* Every allocation call, each block written and read back. */
static uint64_t calls(uint64_t h, unsigned seed)
{
	unsigned char *a, *b, *c, *d, *e, *f, *g;
	volatile size_t huge_count = SIZE_MAX / 2; /* opaque to the compiler */
	void *pm;
	int i;

	a = malloc(100);
	b = calloc(10, 1000);
	if (!a || !b || posix_memalign(&pm, 4096, 12345))
		fail("malloc/calloc/posix_memalign");
	if ((uintptr_t)pm % 4096)
		fail("posix_memalign alignment");
	c = aligned_alloc(64, 6400);
	d = memalign(256, 3 * MiB);
	e = valloc(5000);
	if (!c || !d || !e)
		fail("aligned variants");
	for (i = 0; i < 10000; i++)
		if (b[i])
			fail("calloc not zeroed");
	fill(a, 100, seed);
	fill(pm, 12345, seed);
	fill(c, 6400, seed);
	fill(d, 3 * MiB, seed);
	fill(e, 5000, seed);
	h = fnv(h, a, 100);
	h = fnv(h, pm, 12345);
	h = fnv(h, c, 6400);
	h = fnv(h, d, 3 * MiB);
	h = fnv(h, e, 5000);
	/* realloc: grow within the heap, grow past the mmap threshold,
	 * shrink, and reallocarray. */
	f = NULL;
	for (i = 1; i <= 24; i++) {
		f = realloc(f, (size_t)i * 256 * 1024);
		if (!f)
			fail("realloc");
		fill(f + (size_t)(i - 1) * 256 * 1024, 256 * 1024, seed + i);
	}
	h = fnv(h, f, 24 * 256 * 1024);
	f = realloc(f, 1000);
	g = reallocarray(NULL, 100, 100);
	if (!f || !g)
		fail("shrink/reallocarray");
	h = fnv(h, f, 1000);
	errno = 0;
	if (reallocarray(g, huge_count, 4) || errno != ENOMEM)
		fail("reallocarray overflow");
	if (malloc_usable_size(a) < 100)
		fail("malloc_usable_size");
	free(a);
	free(b);
	free(pm);
	free(c);
	free(d);
	free(e);
	free(f);
	free(g);
	return h;
}

static void *thread_main(void *arg)
{
	uint64_t *h = arg;

	*h = calls(*h, 3);
	return NULL;
}

static int mix(void)
{
	pthread_t t[3];
	uint64_t h = 1469598103934665603ULL, th[3];
	int i, status;
	pid_t pid;

	h = mapping(h);
	h = calls(h, 1);
	for (i = 0; i < 3; i++) {
		th[i] = (uint64_t)i;
		if (pthread_create(&t[i], NULL, thread_main, &th[i]))
			fail("pthread_create");
	}
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		h = fnv(h, &th[i], sizeof(th[i]));
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		printf("child %016" PRIx64 "\n", calls(h, 5));
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("child");
	printf("parent %016" PRIx64 "\n", h);
	return 0;
}

static int big(const char *mib)
{
	size_t n = strtoul(mib, NULL, 10) * MiB;
	void *p;

	errno = 0;
	p = malloc(n);
	fprintf(stderr, "big=%s\n", p ? "ok" : errno == ENOMEM ? "enomem" :
		"failed");
	free(p);
	return 0;
}

static int relimit(const char *group, const char *limit, const char *mib)
{
	char path[4096];
	struct timespec ts = { .tv_nsec = 20000000 };
	FILE *f;

	big(mib);
	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", group);
	f = fopen(path, "we");
	if (!f || fputs(limit, f) < 0 || fclose(f) != 0)
		fail(path);
	nanosleep(&ts, NULL);
	return big(mib);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "mix") == 0)
		return mix();
	if (argc == 3 && strcmp(argv[1], "big") == 0)
		return big(argv[2]);
	if (argc == 5 && strcmp(argv[1], "relimit") == 0)
		return relimit(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: alloc-hook-prog mix | big SIZE_MIB | "
		"relimit GROUP LIMIT SIZE_MIB\n");
	return 2;
}
