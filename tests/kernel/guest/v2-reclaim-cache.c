/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page cache on the ext4 scratch disk, charged to a child group, is freed
 * by writing to memory.reclaim. The bytes freed are memory.current before
 * minus after. The cache is written back first (sync): reclaim of dirty
 * cache may answer EAGAIN with nothing freed. Kernel 6.1 overshoots a
 * request, and answers EAGAIN when it freed less than asked (often most
 * of what could be freed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"

#define GROUP "mr-reclaim-cache"
#define FILE_SIZE (64 * MiB)

static uint64_t current(void)
{
	uint64_t v = 0;

	if (cg_read_u64(GROUP, "memory.current", &v) < 0)
		bail("cannot read memory.current");
	return v;
}

static uint64_t stat_key(const char *key)
{
	uint64_t v = 0;

	if (cg_read_key(GROUP, "memory.stat", key, &v) < 0)
		bail("memory.stat has no %s", key);
	return v;
}

/* Asks memory.reclaim for `ask`; returns the kernel's answer and the bytes
 * freed (memory.current before minus after, clamped at zero). */
static int reclaim(const char *ask, uint64_t *freed)
{
	uint64_t before = current(), after;
	double t = now_s();
	int r = cg_write(GROUP, "memory.reclaim", ask);

	after = current();
	*freed = before > after ? before - after : 0;
	diag("memory.reclaim \"%s\": %s, %" PRIu64 " -> %" PRIu64
	     " bytes, freed %" PRIu64 " in %.3f s",
	     ask, r == 0 ? "success" : strerror(-r), before, after, *freed,
	     now_s() - t);
	return r;
}

int main(void)
{
	char path[PATH_MAX];
	uint64_t freed, file, steal, usage, dirty;
	int r;

	snprintf(path, sizeof(path), "%s/mr-reclaim-cache.data", scratch_dir());
	cg_remove(GROUP);
	r = cg_create(GROUP);
	if (!ok(r == 0, "create the group (%s)", strerror(-r)))
		bail("no group");

	/* The writer's group is charged for the cache it creates. */
	if (cg_enter(GROUP) < 0)
		bail("cannot enter the group");
	r = file_fill(path, FILE_SIZE);
	if (cg_enter("") < 0)
		bail("cannot leave the group");
	if (!ok(r == 0, "write and fsync %llu MiB on ext4 (%s)",
		FILE_SIZE / MiB, strerror(-r)))
		bail("no file");
	sync();

	file = stat_key("file");
	usage = current();
	ok(usage >= FILE_SIZE * 9 / 10,
	   "memory.current holds the cache (%" PRIu64 ")", usage);
	ok(file >= FILE_SIZE * 9 / 10, "memory.stat file holds it (%" PRIu64 ")",
	   file);
	/* memory.stat is flushed lazily (per-CPU batches, and every 2 s):
	 * right after sync it may still count some pages dirty. */
	dirty = stat_key("file_dirty");
	ok(dirty < 4 * MiB, "next to nothing is dirty after sync (%" PRIu64 ")",
	   dirty);
	steal = stat_key("pgsteal");

	r = reclaim("16M", &freed);
	ok(r == 0 || r == -EAGAIN, "memory.reclaim 16M succeeds or is short (%s)",
	   strerror(-r));
	if (r == 0)
		ok(freed >= 16 * MiB * 9 / 10,
		   "a successful reclaim freed at least what was asked "
		   "(%" PRIu64 " of %llu)", freed, 16 * MiB);
	else
		ok(freed > 0, "a short reclaim still freed something");
	ok(stat_key("pgsteal") > steal, "memory.stat pgsteal grew");

	r = reclaim("1G", &freed);
	ok(r == -EAGAIN, "memory.reclaim 1G, more than there is: EAGAIN (%s)",
	   strerror(-r));
	ok(freed > 0, "and it freed what it could (%" PRIu64 ")", freed);
	file = stat_key("file");
	ok(file < 4 * MiB, "the group's cache is nearly gone (%" PRIu64 " left)",
	   file);

	unlink(path);
	r = cg_remove(GROUP);
	ok(r == 0, "remove the group (%s)", strerror(-r));
	return done_testing();
}
