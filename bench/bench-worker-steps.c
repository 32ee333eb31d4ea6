/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-worker-steps: the margin worker's v1 steps under a streaming
 * reader, on a real cgroup v1 group.
 *
 * It creates its own group beneath $MEMRECLAIM_TEST_PARENT (default
 * /sys/fs/cgroup/memory) with a 256 MiB limit, writes a data file of
 * 1 GiB in $MEMRECLAIM_BENCH_DIR (default /var/tmp; a disk filesystem,
 * not tmpfs) and starts a child in the group that reads it whole in
 * 1 MiB reads, again and again, dropping it from the page cache before
 * each pass (the reader of bench-margin and scripts/demo, without the
 * toucher). The process keeps a 32 MiB margin with a 32 MiB hysteresis
 * on the group with the library's default batch (fixed, SWAP_CLUSTER_MAX
 * pages) and its worker thread at nice 0, for DURATION_S seconds, then
 * prints, from mr_group_read_reclaim_stats(MR_REASON_MARGIN): the steps
 * (backend reclaim calls) per second, the time per step, the bytes freed
 * per step and per second, freed against asked, and the worker's CPU time
 * (the process's: the reader is a child) and the group's memory.failcnt
 * growth. The group and the file are removed at the end, also on SIGINT,
 * SIGTERM and SIGHUP. Exit 77 (skipped) without root or a writable cgroup
 * v1 memory controller.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memreclaim.h>

#include "bench.h"

#define BENCH "worker-steps-cgroup1"
#define DURATION_S 20
#define LIMIT_BYTES (256ULL << 20)
#define MARGIN_BYTES (32ULL << 20)
#define FILE_BYTES (1ULL << 30)
#define CHUNK_BYTES (1 << 20)

static char group[PATH_MAX], file[PATH_MAX];
static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

static int put(const char *name, const char *value)
{
	char p[PATH_MAX + 64];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", group, name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static uint64_t get(const char *name)
{
	char p[PATH_MAX + 64], buf[64] = "";
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", group, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strtoull(buf, NULL, 10);
}

static int write_file(void)
{
	static char buf[CHUNK_BYTES];
	uint64_t done;
	int fd;

	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	memset(buf, 'x', sizeof(buf));
	for (done = 0; done < FILE_BYTES; done += sizeof(buf)) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -EIO;
		}
	}
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
}

/* The child: into the group, then read the file until killed. */
static void reader(void)
{
	static char buf[CHUNK_BYTES];
	char pid[24];
	int fd;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (put("tasks", pid) < 0)
		_exit(1);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(1);
	for (;;) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		lseek(fd, 0, SEEK_SET);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
	}
}

int main(void)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	const char *parent = getenv("MEMRECLAIM_TEST_PARENT");
	const char *dir = getenv("MEMRECLAIM_BENCH_DIR");
	uint64_t failcnt0, cpu0, t0, cpu, wall;
	struct sigaction sa = { .sa_handler = on_signal };
	mr_group_t *g = NULL;
	mr_ctx_t *ctx = NULL;
	int r, status, i;
	double calls;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: needs root\n", BENCH);
		return 77;
	}
	snprintf(group, sizeof(group), "%s/mr-bench-steps-%d",
		 parent ? parent : "/sys/fs/cgroup/memory", (int)getpid());
	snprintf(file, sizeof(file), "%s/mr-bench-steps-%d.data",
		 dir ? dir : "/var/tmp", (int)getpid());
	if (mkdir(group, 0755) < 0) {
		fprintf(stderr, "%s: %s: %s\n", BENCH, group, strerror(errno));
		return 77;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	r = put("memory.limit_in_bytes", "268435456");
	if (r == 0)
		r = write_file();
	if (r < 0) {
		fprintf(stderr, "%s: setup: %s\n", BENCH, strerror(-r));
		goto out;
	}
	r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_group_open(ctx, group, "cgroup1", &g);
	if (r == 0)
		r = mr_group_set_margin(g, MARGIN_BYTES, 0, MARGIN_BYTES);
	if (r < 0) {
		fprintf(stderr, "%s: open: %s\n", BENCH, mr_strerror(r));
		goto out;
	}
	pid = fork();
	if (pid == 0)
		reader();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	failcnt0 = get("memory.failcnt");
	t0 = bench_now_ns();
	cpu0 = bench_cpu_ns();
	r = mr_ctx_worker_start(ctx);
	for (i = 0; r == 0 && i < DURATION_S && !stopped; i++)
		sleep(1);
	if (r == 0)
		mr_ctx_worker_stop(ctx);
	wall = bench_now_ns() - t0;
	cpu = bench_cpu_ns() - cpu0;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (r == 0)
		r = mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st);
	if (r < 0 || st.calls == 0) {
		fprintf(stderr, "%s: worker: %s, %" PRIu64 " steps\n", BENCH,
			mr_strerror(r), st.calls);
		r = r < 0 ? r : -EAGAIN;
		goto out;
	}
	calls = (double)st.calls;
	bench_emit(BENCH, "steps_per_s", calls * 1e9 / (double)wall, "1/s",
		   NULL, 0, NULL);
	bench_emit(BENCH, "time_per_step", (double)st.elapsed_ns / calls /
		   1e3, "us", NULL, 0, NULL);
	bench_emit(BENCH, "freed_per_step", (double)st.freed_bytes / calls /
		   1024, "KiB", NULL, 0, NULL);
	bench_emit(BENCH, "freed_per_s", (double)st.freed_bytes * 1e9 /
		   (double)wall / (1 << 20), "MiB/s", NULL, 0, NULL);
	bench_emit(BENCH, "freed_over_asked", (double)st.freed_bytes /
		   (double)st.asked_bytes, "x", NULL, 0, NULL);
	bench_emit(BENCH, "worker_cpu", (double)cpu / 1e6, "ms", NULL, 0,
		   NULL);
	bench_emit(BENCH, "failcnt_growth",
		   (double)(get("memory.failcnt") - failcnt0), "hits", NULL, 0,
		   NULL);
out:
	mr_group_close(g);
	mr_ctx_free(ctx);
	unlink(file);
	for (i = 0; i < 100 && rmdir(group) < 0 && errno == EBUSY; i++)
		usleep(10000);
	return r < 0 ? 1 : 0;
}
