/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * examples/alloc-hook's bootstrap, without any cgroup: the hook's objects
 * are linked into this program, whose malloc they then are, and dlsym is
 * wrapped (-Wl,--wrap=dlsym) by one that allocates before it looks up, as
 * dlsym implementations that allocate do (glibc's allocates its error
 * state with calloc in some versions; 2.36's lookups here do not): those
 * allocations must come from the hook's static arena, since the real
 * calloc is what is being looked up. The first allocation of the process
 * happens before the hook's constructor (ld.so and libc allocate at start,
 * and a constructor of higher priority below allocates too), and the hook
 * is pointed at a group that does not exist, so it runs without one:
 * every call passes through, and a program that mixes the calls (aligned
 * variants freed by free(), realloc of every kind) works as without it.
 * Bad option values make it exit 2 with a message before anything else.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook.h"

#define MiB (1024UL * 1024)
#define LOOKUP_BLOCKS 2

void *__real_dlsym(void *handle, const char *name);
void *__wrap_dlsym(void *handle, const char *name);

/* What the wrapped dlsym allocated, and the block a constructor
 * allocated before the hook's. */
static void *lookup_block[LOOKUP_BLOCKS];
static int lookups;
static char *early_block;

void *__wrap_dlsym(void *handle, const char *name)
{
	char *p = calloc(1, 48), *q = malloc(200);

	if (p && q && lookups + 2 <= LOOKUP_BLOCKS) {
		memset(q, 'q', 200);
		q = realloc(q, 300); /* an arena block moved within the arena */
		lookup_block[lookups++] = p;
		lookup_block[lookups++] = q;
	} else {
		free(p); /* arena blocks: ignored */
		free(q);
	}
	return __real_dlsym(handle, name);
}

/* Before the hook's constructor (default priority): no group is open
 * yet, and the hook is told there is none to open. */
__attribute__((constructor(101)))
static void early(void)
{
	setenv("MEMRECLAIM_HOOK_GROUP",
	       "/sys/fs/cgroup/memory/memreclaim-test-no-such-group", 1);
	unsetenv("MEMRECLAIM_HOOK_VERBOSE");
	early_block = malloc(64);
	if (early_block)
		strcpy(early_block, "allocated before the hook started");
}

START_TEST(lookups_served_from_the_arena)
{
	char *moved, *q;

	ck_assert_int_eq(lookups, 2);
	ck_assert_uint_gt(hook_arena_used(), 0);
	ck_assert(hook_arena_owns(lookup_block[0]));
	ck_assert(hook_arena_owns(lookup_block[1]));
	ck_assert_uint_eq(malloc_usable_size(lookup_block[0]), 48);
	ck_assert_uint_eq(malloc_usable_size(lookup_block[1]), 300);
	ck_assert_mem_eq(lookup_block[0],
			 "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	q = lookup_block[1];
	ck_assert_int_eq(q[0], 'q');
	ck_assert_int_eq(q[199], 'q');
	/* free() leaves an arena block alone; realloc() moves it to the real
	 * allocator with its contents. */
	free(q);
	ck_assert_int_eq(q[199], 'q');
	moved = realloc(q, 4000);
	ck_assert_ptr_nonnull(moved);
	ck_assert(!hook_arena_owns(moved));
	ck_assert_int_eq(moved[0], 'q');
	ck_assert_int_eq(moved[199], 'q');
	free(moved);
	ck_assert_ptr_nonnull(early_block);
	ck_assert_str_eq(early_block, "allocated before the hook started");
	free(early_block);
}
END_TEST

START_TEST(calls_pass_through_without_a_group)
{
	void *pm = NULL, *a, *m, *v, *pv, *r, *map, *moved;
	volatile size_t n = SIZE_MAX / 2; /* opaque to the compiler */
	char *s;

	ck_assert(!hook_active());
	ck_assert_int_eq(posix_memalign(&pm, 4096, 10000), 0);
	ck_assert_uint_eq((uintptr_t)pm % 4096, 0);
	a = aligned_alloc(64, 640);
	m = memalign(1024, 3 * MiB);
	v = valloc(100);
	pv = pvalloc(100);
	ck_assert(a && m && v && pv);
	ck_assert_uint_eq((uintptr_t)a % 64, 0);
	ck_assert_uint_eq((uintptr_t)m % 1024, 0);
	ck_assert_uint_eq((uintptr_t)v % 4096, 0);
	ck_assert_uint_ge(malloc_usable_size(pv), 4096);
	free(pm);
	free(a);
	free(m);
	free(v);
	free(pv);
	s = calloc(1000, 10);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s[9999], 0);
	strcpy(s, "kept");
	s = realloc(s, 8 * MiB);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "kept");
	s = realloc(s, 10);
	ck_assert_str_eq(s, "kept");
	errno = 0;
	ck_assert_ptr_null(realloc(s, 0)); /* frees s */
	errno = 0;
	ck_assert_ptr_null(calloc(n, 4));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(reallocarray(NULL, n, 4));
	ck_assert_int_eq(errno, ENOMEM);
	r = reallocarray(NULL, 10, 10);
	ck_assert_ptr_nonnull(r);
	free(r);
	map = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(map != MAP_FAILED);
	memset(map, 1, 4 * MiB);
	ck_assert_int_eq(munmap((char *)map + MiB, MiB), 0);
	moved = mremap(map, MiB, 2 * MiB, MREMAP_MAYMOVE);
	ck_assert(moved != MAP_FAILED);
	ck_assert_int_eq(((char *)moved)[MiB - 1], 1);
	ck_assert_int_eq(munmap(moved, 2 * MiB), 0);
	ck_assert_int_eq(munmap((char *)map + 2 * MiB, 2 * MiB), 0);
}
END_TEST

/* examples/.libs/alloc-hook.so preloaded into /bin/true with one bad
 * option: exit status 2 and the option named on stderr. */
static void bad_option(const char *assignment, const char *named)
{
	const char *top = getenv("top_builddir");
	char so[PATH_MAX], preload[PATH_MAX + 16], err[4096];
	int pipefd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	snprintf(so, sizeof(so), "%s/examples/.libs/alloc-hook.so",
		 top && *top ? top : ".");
	ck_assert_msg(access(so, R_OK) == 0, "%s: %s", so, strerror(errno));
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", so);
	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *env[] = { preload, (char *)assignment, NULL };

		if (dup2(pipefd[1], STDERR_FILENO) < 0)
			_exit(120);
		execle("/bin/true", "true", (char *)NULL, env);
		_exit(121);
	}
	close(pipefd[1]);
	while (len < sizeof(err) - 1 &&
	       (n = read(pipefd[0], err + len, sizeof(err) - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2,
		      "%s: status %#x, %s", assignment, status, err);
	ck_assert_msg(strstr(err, named), "%s: %s", assignment, err);
}

START_TEST(bad_options_exit_2)
{
	bad_option("MEMRECLAIM_HOOK_THP=huge", "MEMRECLAIM_HOOK_THP 'huge'");
	bad_option("MEMRECLAIM_HOOK_THP=budget:0", "MEMRECLAIM_HOOK_THP");
	bad_option("MEMRECLAIM_HOOK_THROTTLE=linear",
		   "MEMRECLAIM_HOOK_THROTTLE 'linear'");
	bad_option("MEMRECLAIM_HOOK_HIGH=12X", "MEMRECLAIM_HOOK_HIGH '12X'");
	bad_option("MEMRECLAIM_HOOK_REFUSE=maybe",
		   "MEMRECLAIM_HOOK_REFUSE 'maybe'");
	bad_option("MEMRECLAIM_HOOK_RECLAIM_TIMEOUT_MS=-1",
		   "MEMRECLAIM_HOOK_RECLAIM_TIMEOUT_MS '-1'");
	bad_option("MEMRECLAIM_HOOK_GROUP=memory/job",
		   "MEMRECLAIM_HOOK_GROUP 'memory/job'");
	bad_option("MEMRECLAIM_HOOK_REFRESH_MS=0",
		   "MEMRECLAIM_HOOK_REFRESH_MS '0'");
	bad_option("MEMRECLAIM_HOOK_VERBOSE=yes",
		   "MEMRECLAIM_HOOK_VERBOSE 'yes'");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("alloc-hook-bootstrap");
	TCase *tc = tcase_create("bootstrap");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, lookups_served_from_the_arena);
	tcase_add_test(tc, calls_pass_through_without_a_group);
	tcase_add_test(tc, bad_options_exit_2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
