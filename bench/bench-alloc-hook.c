/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What examples/alloc-hook costs a program: ns per malloc/free pair
 * (blocks of 64 B, 4 KiB and 1 MiB, 64 live at a time, the first byte of
 * each written) and ms per process start (/bin/true), each with the hook
 * preloaded and charging a cgroup v1 group this program creates under
 * /sys/fs/cgroup/memory (1 GiB limit: nothing is refused or delayed)
 * and removes, against the same without the hook in the same group.
 * The loops run in a child that re-executes this program
 * (bench-alloc-hook --loop SIZE PAIRS), moved into the group before exec.
 *
 * Exits 77 without root or a cgroup v1 memory controller at
 * /sys/fs/cgroup/memory. Each figure is the median of BENCH_REPS runs,
 * hooked and plain runs alternating.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "memreclaim.h"

#define V1_ROOT "/sys/fs/cgroup/memory"
#define BENCH_REPS 5
#define LIVE_BLOCKS 64
#define STARTS 100

static char group[128];
static char hook[PATH_MAX];
static mr_ctx_t *ctx;

/* In the child: ns per malloc/free pair. */
static int loop(size_t size, unsigned long pairs)
{
	void *p[LIVE_BLOCKS];
	unsigned long i, rounds = pairs / LIVE_BLOCKS;
	uint64_t t;
	int j;

	t = bench_now_ns();
	for (i = 0; i < rounds; i++) {
		for (j = 0; j < LIVE_BLOCKS; j++) {
			p[j] = malloc(size);
			if (!p[j])
				return 1;
			*(volatile char *)p[j] = 1;
		}
		for (j = 0; j < LIVE_BLOCKS; j++)
			free(p[j]);
	}
	t = bench_now_ns() - t;
	printf("%.3f\n", (double)t / (double)(rounds * LIVE_BLOCKS));
	return 0;
}

/* Runs argv in the group, with the hook when hooked; returns what it
 * printed as a number, or -1. */
static double run(bool hooked, char *const argv[])
{
	char preload[PATH_MAX + 16], hgroup[160], out[64] = "";
	int go[2], res[2], status;
	ssize_t n = 0;
	pid_t pid;
	char c;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
		return -1;
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", hook);
	snprintf(hgroup, sizeof(hgroup), "MEMRECLAIM_HOOK_GROUP=%s", group);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1 ||
		    dup2(res[1], STDOUT_FILENO) < 0)
			_exit(120);
		if (hooked && (putenv(preload) || putenv(hgroup)))
			_exit(121);
		execv(argv[0], argv);
		_exit(122);
	}
	close(go[0]);
	close(res[1]);
	if (mr_cgroup_attach(ctx, group, pid) < 0 ||
	    write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	n = read(res[0], out, sizeof(out) - 1);
	close(res[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || n <= 0)
		return -1;
	out[n] = '\0';
	return strtod(out, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Medians of BENCH_REPS alternating plain and hooked runs. */
static int measure(char *const argv[], double *plain, double *hooked)
{
	double p[BENCH_REPS], h[BENCH_REPS];
	int i;

	for (i = 0; i < BENCH_REPS; i++) {
		p[i] = run(false, argv);
		h[i] = run(true, argv);
		if (p[i] < 0 || h[i] < 0)
			return -1;
	}
	qsort(p, BENCH_REPS, sizeof(*p), cmp_double);
	qsort(h, BENCH_REPS, sizeof(*h), cmp_double);
	*plain = p[BENCH_REPS / 2];
	*hooked = h[BENCH_REPS / 2];
	return 0;
}

/* In the child: ms per start of /bin/true, run STARTS times (each child
 * inherits LD_PRELOAD, so each start under the hook opens the group). */
static int starts(void)
{
	uint64_t t = bench_now_ns();
	int i, status;
	pid_t pid;

	for (i = 0; i < STARTS; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || status)
			return 1;
	}
	printf("%.3f\n", (double)(bench_now_ns() - t) / STARTS / 1e6);
	return 0;
}

/* The children's page cache stays charged to the group: drop it, so that
 * the group can be removed. */
static void force_empty(void)
{
	char path[192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.force_empty", group);
	f = fopen(path, "we");
	if (f && (fputs("0", f) < 0 || fclose(f) != 0))
		fprintf(stderr, "bench-alloc-hook: %s failed\n", path);
	else if (!f)
		fprintf(stderr, "bench-alloc-hook: %s: %s\n", path,
			strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct { size_t size; unsigned long pairs;
			      const char *figure; } sizes[] = {
		{ 64, 20000000, "malloc_free_pair_64B" },
		{ 4096, 200000, "malloc_free_pair_4KiB" },
		{ 1 << 20, 5000, "malloc_free_pair_1MiB" },
	};
	char self[PATH_MAX], size_arg[32], pairs_arg[32];
	double plain, hooked;
	size_t i;
	ssize_t n;
	int status = 0;

	if (argc == 4 && strcmp(argv[1], "--loop") == 0)
		return loop(strtoul(argv[2], NULL, 10),
			    strtoul(argv[3], NULL, 10));
	if (argc == 2 && strcmp(argv[1], "--starts") == 0)
		return starts();
	if (geteuid() != 0 || access(V1_ROOT "/memory.usage_in_bytes", R_OK)) {
		fprintf(stderr, "bench-alloc-hook: needs root and a cgroup v1 "
			"memory controller at " V1_ROOT "\n");
		return 77;
	}
	snprintf(hook, sizeof(hook), "%s/examples/.libs/alloc-hook.so",
		 getenv("top_builddir") ? getenv("top_builddir") : ".");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || access(hook, R_OK) < 0) {
		fprintf(stderr, "bench-alloc-hook: no %s\n", hook);
		return 1;
	}
	self[n] = '\0';
	snprintf(group, sizeof(group), V1_ROOT "/bench-alloc-hook-%d",
		 (int)getpid());
	if (mr_ctx_new(&ctx) < 0 || mr_cgroup_create(ctx, group, 1ULL << 30)) {
		fprintf(stderr, "bench-alloc-hook: cannot create %s\n", group);
		return 1;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(*sizes) && !status; i++) {
		char *args[] = { self, (char *)"--loop", size_arg, pairs_arg,
				 NULL };

		snprintf(size_arg, sizeof(size_arg), "%zu", sizes[i].size);
		snprintf(pairs_arg, sizeof(pairs_arg), "%lu", sizes[i].pairs);
		if (measure(args, &plain, &hooked) < 0) {
			status = 1;
			break;
		}
		bench_emit("alloc-hook", sizes[i].figure, hooked, "ns",
			   "without the hook", plain, "ns");
	}
	if (!status) {
		char *args[] = { self, (char *)"--starts", NULL };

		if (measure(args, &plain, &hooked) < 0)
			status = 1;
		else
			bench_emit("alloc-hook", "process_start", hooked, "ms",
				   "without the hook", plain, "ms");
	}
	if (status)
		fprintf(stderr, "bench-alloc-hook: a run failed\n");
	force_empty();
	if (mr_cgroup_remove(ctx, group) < 0)
		fprintf(stderr, "bench-alloc-hook: %s left behind\n", group);
	mr_ctx_free(ctx);
	return status;
}
