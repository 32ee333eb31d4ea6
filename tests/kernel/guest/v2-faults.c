/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults met in the field, on a real kernel, through the public API
 * (libmemreclaim linked statically; docs/design.md, "Faults met in the
 * field"):
 *  - a reclaim of 64 MiB of sync'ed page cache with a batch of 64 MiB is
 *    written to memory.reclaim in requests of at most 16 MiB (6.1
 *    overshoots each, so three may do), and frees at least most of what
 *    was asked; on a kernel without the proactive
 *    pair in memory.stat (before 6.15), pgsteal_direct grows by at least
 *    the library's reclaim: the kernel counts it as direct reclaim;
 *  - stuck at memory.high: a child keeps 64 MiB of anonymous memory hot
 *    under a memory.high of 32 MiB the caller set, with memory.swap.max
 *    0; the worker's safety round (mr_ctx_worker_dispatch() with
 *    MR_DISPATCH_ALL, once a second) reports MR_CONDITION_STUCK_HIGH
 *    through the conditions fd, with no max or oom event, and leaves the
 *    caller's high as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memreclaim.h>

#include "guest.h"

#define CACHE_GROUP "mr-v2-faults-cache"
#define STUCK_GROUP "mr-v2-faults-stuck"
#define CACHE_SIZE (96 * MiB)
#define ANON_SIZE (64 * MiB)
#define STUCK_WAIT_S 20

static void cg_full(const char *group, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", CG_ROOT, group);
}

static void chunked_reclaim(mr_ctx_t *ctx)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_memstat a = { .size = sizeof(a) }, b = { .size = sizeof(b) };
	char path[PATH_MAX], dir[PATH_MAX];
	uint64_t freed = 0, direct;
	mr_group_t *g;
	int r;

	snprintf(path, sizeof(path), "%s/mr-v2-faults.data", scratch_dir());
	cg_remove(CACHE_GROUP);
	if (cg_create(CACHE_GROUP) < 0 || cg_enter(CACHE_GROUP) < 0)
		bail("cannot create and enter " CACHE_GROUP);
	r = file_fill(path, CACHE_SIZE);
	if (cg_enter("") < 0)
		bail("cannot leave the group");
	if (r < 0)
		bail("cannot write %s: %s", path, strerror(-r));
	sync();
	cg_full(CACHE_GROUP, dir, sizeof(dir));
	r = mr_group_open(ctx, dir, "cgroup2", &g);
	if (!ok(r == 0, "open %s (%s)", dir, mr_strerror(r)))
		bail("no group");
	if (mr_group_set_batch_fixed(g, 64 * MiB) < 0)
		bail("batch");
	if (mr_group_read_memstat(g, &a) < 0)
		bail("memory.stat");
	r = mr_group_reclaim(g, 64 * MiB, 30ULL * 1000000000, &freed);
	if (mr_group_read_memstat(g, &b) < 0 ||
	    mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED, &st) < 0)
		bail("memory.stat, statistics");
	diag("64 MiB asked with a 64 MiB batch: %" PRIu64 " writes asking "
	     "%" PRIu64 " bytes, %" PRIu64 " freed, %" PRIu64 " offloaded",
	     st.calls, st.asked_bytes, st.freed_bytes, st.offloaded_bytes);
	ok(r == 0 && freed >= 48 * MiB, "reclaim freed %" PRIu64 " bytes (%s)",
	   freed, mr_strerror(r));
	/* 6.1 overshoots each write: fewer than 4 may do. */
	ok(st.calls >= 2 && st.asked_bytes <= st.calls * 16 * MiB,
	   "each write asked at most 16 MiB (%" PRIu64 " writes)", st.calls);
	ok(st.offloaded_bytes == 0, "page cache is dropped, not offloaded");
	direct = b.pgsteal_direct_bytes - a.pgsteal_direct_bytes;
	diag("pgsteal grew %" PRIu64 ", pgsteal_direct %" PRIu64 ", "
	     "pgsteal_proactive %s", b.pgsteal_bytes - a.pgsteal_bytes, direct,
	     (b.present & (1ULL << MR_MEMSTAT_PGSTEAL_PROACTIVE)) ?
	     "present" : "absent");
	if (b.present & (1ULL << MR_MEMSTAT_PGSTEAL_PROACTIVE))
		ok(b.pgsteal_proactive_bytes - a.pgsteal_proactive_bytes >=
		   freed / 2, "memory.reclaim counted as proactive");
	else
		ok((b.present & (1ULL << MR_MEMSTAT_PGSTEAL_DIRECT)) &&
		   direct >= freed / 2,
		   "no proactive pair: memory.reclaim counted as direct "
		   "(%" PRIu64 " of %" PRIu64 ")", direct, freed);
	ok(b.pgsteal_bytes - a.pgsteal_bytes >= freed / 2,
	   "pgsteal holds it too");
	mr_group_close(g);
	cg_remove(CACHE_GROUP);
	unlink(path);
}

/* The child: 64 MiB of anonymous memory, touched over and over. */
static void toucher(void)
{
	volatile char *p;
	size_t i;

	if (cg_enter(STUCK_GROUP) < 0)
		_exit(2);
	alarm(STUCK_WAIT_S + 10);
	p = mmap(NULL, ANON_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	for (;;)
		for (i = 0; i < ANON_SIZE; i += 4096)
			p[i] = (char)(i + 1);
}

static void stuck_at_high(mr_ctx_t *ctx)
{
	struct mr_conditions c = { .size = sizeof(c) };
	struct mr_events e = { .size = sizeof(e) };
	char dir[PATH_MAX], buf[64];
	struct pollfd pfd;
	mr_group_t *g;
	double t0;
	bool seen = false;
	pid_t pid;
	int r, fd;

	cg_remove(STUCK_GROUP);
	if (cg_create(STUCK_GROUP) < 0 ||
	    cg_write(STUCK_GROUP, "memory.swap.max", "0") < 0)
		bail("cannot create " STUCK_GROUP);
	cg_full(STUCK_GROUP, dir, sizeof(dir));
	r = mr_group_open(ctx, dir, "cgroup2", &g);
	if (!ok(r == 0, "open %s (%s)", dir, mr_strerror(r)))
		bail("no group");
	r = mr_group_set_high(g, 32 * MiB, 0);
	ok(r == 0, "the caller's high of 32 MiB (%s)", mr_strerror(r));
	fd = mr_group_conditions_fd(g);
	if (!ok(fd >= 0, "conditions fd (%s)",
		fd < 0 ? mr_strerror(fd) : "made"))
		bail("no fd");
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0)
		toucher();
	t0 = now_s();
	while (!seen && now_s() - t0 < STUCK_WAIT_S) {
		if (mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL) < 0)
			bail("dispatch");
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 1000) == 1 &&
		    mr_group_read_conditions(g, &c) == 0 &&
		    (c.active & MR_CONDITION_STUCK_HIGH))
			seen = true;
	}
	diag("after %.1f s: active %u, %" PRIu64 " high events/s, full %u "
	     "ppm, %" PRIu64 " bytes reclaim cannot take, high %" PRIu64
	     ", tasks' direct reclaim %" PRIu64 " bytes/s, efficiency %u ppm",
	     now_s() - t0, c.active, c.high_events_per_s, c.full_ppm,
	     c.unreclaimable_bytes, c.high_bytes,
	     c.direct_reclaim_bytes_per_s, c.reclaim_efficiency_ppm);
	ok(seen, "stuck at memory.high reported within %d s", STUCK_WAIT_S);
	r = mr_group_read_events(g, 0, &e);
	ok(r == 0 && e.high > 0 && e.max == 0 && e.oom == 0 &&
	   e.oom_kill == 0, "memory.events: high %" PRIu64 ", max %" PRIu64
	   ", oom %" PRIu64 ", oom_kill %" PRIu64, e.high, e.max, e.oom,
	   e.oom_kill);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	r = (int)cg_read(STUCK_GROUP, "memory.high", buf, sizeof(buf));
	if (r > 0)
		buf[strcspn(buf, "\n")] = '\0';
	ok(r > 0 && strcmp(buf, "33554432") == 0,
	   "the caller's high stays as set (%s)", r > 0 ? buf : "unread");
	mr_group_close(g);
	cg_remove(STUCK_GROUP);
}

int main(void)
{
	mr_ctx_t *ctx;

	if (mr_ctx_new(&ctx) < 0)
		bail("mr_ctx_new");
	chunked_reclaim(ctx);
	stuck_at_high(ctx);
	mr_ctx_free(ctx);
	return done_testing();
}
