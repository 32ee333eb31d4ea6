/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller (mr_group_set_proactive()) on a real cgroup v2
 * kernel, through the public API (libmemreclaim linked statically), run
 * from the caller's own loop (mr_ctx_worker_dispatch() with
 * MR_DISPATCH_ALL every second, as its documentation asks): a task in a
 * child group reads 200 MiB of files on the scratch disk once (cold page
 * cache), then re-reads a hot 20 MiB file every 100 ms. With its defaults
 * the controller reclaims through memory.reclaim, and the group must
 * shrink below 64 MiB within 40 of its intervals (counts, not times),
 * with the hot file resident 10 intervals later (mincore(): the best of
 * five looks after re-reads at least 95%) and less than half of it
 * refaulted in those intervals; the group's memory PSI is its own here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "guest.h"

#define GROUP "mr-v2-proactive"
#define COLD_BYTES (200 * MiB)
#define HOT_BYTES (20 * MiB)
#define GOAL_BYTES (64 * MiB)
#define MAX_INTERVALS 40
#define RESIDENT_AFTER 10

static char cold_path[PATH_MAX], hot_path[PATH_MAX];

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A file written, synced and dropped from the page cache, so that the
 * workload's reads charge its group. */
static void make_file(const char *path, uint64_t bytes)
{
	int fd;

	if (file_fill(path, bytes) < 0)
		bail("writing %s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		bail("dropping %s from the cache", path);
	close(fd);
}

static void read_whole(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		_exit(3);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* The workload, in the group: the cold file, a byte on done, then the
 * hot file every 100 ms until killed. */
static pid_t start_workload(void)
{
	int done[2];
	pid_t pid;
	char c;

	if (pipe2(done, O_CLOEXEC) < 0)
		bail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(done[0]);
		if (cg_enter(GROUP) < 0)
			_exit(2);
		read_whole(cold_path);
		if (write(done[1], "c", 1) != 1)
			_exit(2);
		for (;;) {
			read_whole(hot_path);
			sleep_ms(100);
		}
	}
	close(done[1]);
	if (read(done[0], &c, 1) != 1)
		bail("the workload did not read its cold file");
	close(done[0]);
	return pid;
}

/* The share of the hot file in the page cache, in ppm (mincore()). */
static uint64_t hot_resident_ppm(void)
{
	static unsigned char vec[HOT_BYTES / 4096];
	size_t i, in = 0;
	int fd = open(hot_path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		bail("open %s", hot_path);
	p = mmap(NULL, HOT_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || mincore(p, HOT_BYTES, vec) < 0)
		bail("mincore: %s", strerror(errno));
	for (i = 0; i < sizeof(vec); i++)
		in += vec[i] & 1;
	munmap(p, HOT_BYTES);
	close(fd);
	return in * 1000000 / sizeof(vec);
}

/* The caller's loop: a dispatch of every group each second until the
 * controller's next interval. */
static void next_interval(mr_ctx_t *ctx, mr_group_t *g,
			  struct mr_proactive_stats *st)
{
	uint64_t was = st->intervals;
	int i, r;

	for (i = 0; i < 30; i++) {
		sleep_ms(1000);
		r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
		if (r < 0)
			bail("dispatch: %s", mr_strerror(r));
		if (mr_group_read_proactive_stats(g, st, sizeof(*st)) < 0)
			bail("reading the proactive statistics");
		if (st->intervals > was)
			return;
	}
	bail("no interval of the controller in 30 dispatches");
}

static void print(const struct mr_proactive_stats *st, uint64_t usage)
{
	diag("interval %" PRIu64 ": usage %.1f MiB, target %.1f MiB, floor "
	     "%.1f MiB, step %.1f MiB, stall %.3f/%.3f ms, io %.3f ms, "
	     "refaults %.2f MiB (%u ppm), reclaimed %.1f MiB, pauses "
	     "%" PRIu64 "/%" PRIu64 "/%" PRIu64, st->intervals,
	     usage / (double)MiB, st->target_bytes / (double)MiB,
	     st->floor_bytes / (double)MiB, st->step_bytes / (double)MiB,
	     st->stall_ns / 1e6, st->target_stall_ns / 1e6,
	     st->io_stall_ns / 1e6, st->refault_bytes / (double)MiB,
	     st->refault_ratio_ppm, st->reclaimed_bytes / (double)MiB,
	     st->pauses_pressure, st->pauses_refaults, st->pauses_io);
}

int main(void)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	struct mr_proactive_stats st = { .size = sizeof(st) };
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };
	uint64_t usage = 0, reached = 0, resident = 0, refaults = 0;
	mr_ctx_t *ctx;
	mr_group_t *g;
	pid_t pid;
	int i, r, status;

	snprintf(cold_path, sizeof(cold_path), "%s/proactive.cold",
		 scratch_dir());
	snprintf(hot_path, sizeof(hot_path), "%s/proactive.hot",
		 scratch_dir());
	make_file(cold_path, COLD_BYTES);
	make_file(hot_path, HOT_BYTES);
	if (cg_create(GROUP) < 0)
		bail("creating %s", GROUP);
	if (mr_ctx_new(&ctx) < 0)
		bail("mr_ctx_new");
	r = mr_group_open(ctx, CG_ROOT "/" GROUP, "cgroup2", &g);
	if (r < 0)
		bail("opening the group: %s", mr_strerror(r));
	pid = start_workload();
	mr_group_read_usage(g, &usage);
	diag("after the cold read: %.1f MiB", usage / (double)MiB);
	ok(usage >= COLD_BYTES / 2, "the cold read is charged to the group "
	   "(%.1f MiB)", usage / (double)MiB);
	r = mr_group_set_proactive(g, &pro, sizeof(pro));
	ok(r == 0, "mr_group_set_proactive (%s)", mr_strerror(r));
	while (!reached && st.intervals < MAX_INTERVALS) {
		next_interval(ctx, g, &st);
		mr_group_read_usage(g, &usage);
		print(&st, usage);
		if (usage < GOAL_BYTES)
			reached = st.intervals;
	}
	ok(reached > 0, "below %llu MiB within %d intervals (at %" PRIu64
	   ")", GOAL_BYTES / MiB, MAX_INTERVALS, reached);
	while (reached && st.intervals < reached + RESIDENT_AFTER) {
		next_interval(ctx, g, &st);
		mr_group_read_usage(g, &usage);
		print(&st, usage);
		refaults += st.refault_bytes;
	}
	for (i = 0; i < 5; i++) {
		sleep_ms(200);
		if (hot_resident_ppm() > resident)
			resident = hot_resident_ppm();
	}
	ok(usage < GOAL_BYTES, "still below %llu MiB %d intervals later "
	   "(%.1f MiB)", GOAL_BYTES / MiB, RESIDENT_AFTER,
	   usage / (double)MiB);
	ok(resident >= 950000, "the hot file resident (%.1f%%)",
	   resident / 1e4);
	ok(refaults < HOT_BYTES / 2, "less than half of it refaulted in "
	   "those intervals (%.2f MiB)", refaults / (double)MiB);
	r = mr_group_read_reclaim_stats(g, MR_REASON_PROACTIVE, &rs);
	ok(r == 0 && rs.calls > 0 && rs.freed_bytes >= COLD_BYTES / 2,
	   "memory.reclaim calls counted under MR_REASON_PROACTIVE: %" PRIu64
	   " calls, %.1f MiB freed", rs.calls, rs.freed_bytes / (double)MiB);
	ok(st.io_gate == MR_PROACTIVE_IO_GATE_ON, "the I/O gate reads "
	   "io.pressure");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	mr_group_close(g);
	mr_ctx_free(ctx);
	if (cg_remove(GROUP) < 0)
		diag("could not remove %s", GROUP);
	unlink(cold_path);
	unlink(hot_path);
	return done_testing();
}
