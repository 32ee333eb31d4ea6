/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Swap on zram (the guest's /init has loaded zsmalloc and zram): size
 * /dev/zram0, mkswap, swapon; then a group's anonymous memory is swapped
 * out by memory.reclaim, shows in memory.swap.current and zram, and reads
 * back intact. Swap is turned off and zram reset at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define GROUP "mr-zram"
#define ZRAM "/sys/block/zram0"
#define ANON (64 * MiB)
#define PAGE 4096

extern char **environ;

/* Each page: its index, then a few pseudo-random words, then zeros, so
 * zram has something to compress and every page differs. */
static uint64_t word(size_t page, size_t i)
{
	uint64_t x = page * 0x9e3779b97f4a7c15ULL + i + 1;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

static void fill(uint64_t *p, size_t pages)
{
	size_t pg, i;

	for (pg = 0; pg < pages; pg++)
		for (i = 0; i < 64; i++)
			p[pg * (PAGE / 8) + i] = word(pg, i);
}

static int intact(const uint64_t *p, size_t pages)
{
	size_t pg, i;

	for (pg = 0; pg < pages; pg++) {
		for (i = 0; i < 64; i++)
			if (p[pg * (PAGE / 8) + i] != word(pg, i))
				return 0;
		for (; i < PAGE / 8; i++)
			if (p[pg * (PAGE / 8) + i] != 0)
				return 0;
	}
	return 1;
}

/*
 * The child: joins the group, fills its anonymous memory, says so on
 * `ready`, waits for a byte on `go`, then checks every page (swapping
 * them back in). Exit 0: intact.
 */
static void __attribute__((noreturn)) child(int ready, int go)
{
	uint64_t *p;
	char c = 0;

	if (cg_enter(GROUP) < 0)
		_exit(2);
	p = mmap(NULL, ANON, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	fill(p, ANON / PAGE);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(4);
	_exit(intact(p, ANON / PAGE) ? 0 : 1);
}

static int run(char *const argv[])
{
	pid_t pid;
	int status, r;

	r = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (r)
		return -r;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static uint64_t zram_stored(void)
{
	char buf[256];
	uint64_t orig = 0;

	/* mm_stat: orig_data_size compr_data_size mem_used_total ... */
	if (file_read_str(ZRAM "/mm_stat", buf, sizeof(buf)) > 0)
		orig = strtoull(buf, NULL, 10);
	return orig;
}

static void swap_off(void)
{
	swapoff("/dev/zram0");
	file_write_str(ZRAM "/reset", "1");
}

int main(void)
{
	char mkswap_arg0[] = "mkswap", mkswap_arg1[] = "/dev/zram0";
	char *mkswap[] = { mkswap_arg0, mkswap_arg1, NULL };
	char swaps[1024], c = 0;
	uint64_t before, after, swap0 = 0, swap1 = 0, anon0 = 0, anon1 = 0;
	int ready[2], go[2], r, status;
	pid_t pid;

	if (!ok(access(ZRAM, F_OK) == 0, "zram is loaded (" ZRAM ")"))
		bail("no zram device");
	swap_off();
	r = file_write_str(ZRAM "/disksize", "256M");
	if (!ok(r == 0, "zram0 disksize = 256M (%s)", strerror(-r)))
		bail("zram not usable");
	r = run(mkswap);
	if (!ok(r == 0, "mkswap /dev/zram0 (status %d)", r))
		bail("no swap area");
	r = swapon("/dev/zram0", 0);
	if (!ok(r == 0, "swapon /dev/zram0 (%s)", r ? strerror(errno) : "ok"))
		bail("no swap");
	ok(file_read_str("/proc/swaps", swaps, sizeof(swaps)) > 0 &&
		   strstr(swaps, "/dev/zram0"),
	   "/proc/swaps lists /dev/zram0");

	cg_remove(GROUP);
	r = cg_create(GROUP);
	if (!ok(r == 0, "create the group (%s)", strerror(-r)))
		bail("no group");
	ok(cg_write(GROUP, "memory.swap.max", "max") == 0,
	   "memory.swap.max = max");
	if (pipe(ready) < 0 || pipe(go) < 0)
		bail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (pid == 0)
		child(ready[1], go[0]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		bail("the child failed before filling its memory");
	}

	cg_read_u64(GROUP, "memory.current", &before);
	cg_read_u64(GROUP, "memory.swap.current", &swap0);
	cg_read_key(GROUP, "memory.stat", "anon", &anon0);
	ok(anon0 >= ANON * 9 / 10, "the group holds the child's %llu MiB of "
	   "anonymous memory (%" PRIu64 ")", ANON / MiB, anon0);
	r = cg_write(GROUP, "memory.reclaim", "32M");
	cg_read_u64(GROUP, "memory.current", &after);
	cg_read_u64(GROUP, "memory.swap.current", &swap1);
	cg_read_key(GROUP, "memory.stat", "anon", &anon1);
	diag("memory.reclaim \"32M\": %s; memory.current %" PRIu64 " -> %" PRIu64
	     ", swap.current %" PRIu64 " -> %" PRIu64 ", anon %" PRIu64
	     " -> %" PRIu64 ", zram holds %" PRIu64,
	     r == 0 ? "success" : strerror(-r), before, after, swap0, swap1,
	     anon0, anon1, zram_stored());
	ok(r == 0 || r == -EAGAIN, "memory.reclaim 32M succeeds or is short (%s)",
	   strerror(-r));
	ok(before > after && before - after >= 16 * MiB,
	   "memory.current fell by at least 16 MiB");
	ok(swap1 >= swap0 + 16 * MiB,
	   "memory.swap.current grew by at least 16 MiB");
	ok(anon1 + 16 * MiB <= anon0, "memory.stat anon fell by at least 16 MiB");
	ok(zram_stored() >= 16 * MiB, "zram stores the swapped pages");

	r = write(go[1], &c, 1) == 1 && waitpid(pid, &status, 0) == pid;
	ok(r && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the child reads its memory back intact from swap");

	r = cg_remove(GROUP);
	ok(r == 0, "remove the group (%s)", strerror(-r));
	swap_off();
	return done_testing();
}
