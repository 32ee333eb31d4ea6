/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-mrsim: `mrsim --trace` on traces of many groups, the figures of
 * both runs (a margin on every group, then the baseline) collected and
 * printed as JSON. It writes a trace of N groups (N = 1000, 10000 and
 * 16383, the most a trace may declare), each with a 64 MiB limit and one
 * task that reads 64 KiB of a shared file in a request, on a 2 GiB
 * machine, and runs `examples/mrsim --trace FILE --json --margin 4M`
 * (relative to the build directory, or $MEMRECLAIM_BENCH_MRSIM) once per
 * N, its output thrown away. Figures per N: the wall time and the
 * process's maximum resident set (getrusage() of the child), with the
 * 1000-group run scaled by N / 1000 as the baseline: linear growth
 * keeps the ratio near 1, quadratic growth multiplies it by N / 1000.
 *
 * The protected case: the same N groups as one protected parent /p
 * (`low 2G`, a max 4 MiB above what its children hold) with N - 2
 * children of `low 64K` that each read 16 KiB of a file, and a child
 * /p/sink that then reads 16 MiB of another in 64 KiB reads: every limit
 * reclaim of /p walks past all the protected children, computing each
 * one's effective low, to take the sink's pages. Its figures are named
 * wall_protected_N_groups and max_rss_protected_N_groups.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define BENCH "mrsim-trace"

static const unsigned sizes[] = { 1000, 10000, 16383 };

/* The protected case's trace of n groups. */
static void print_protected(FILE *f, unsigned n)
{
	unsigned i, kids = n - 2;

	fprintf(f, "machine ram 2G cpus 4 swap none\n");
	fprintf(f, "group /p max %uK low 2G\n", kids * 16 + 4096);
	for (i = 0; i < kids; i++)
		fprintf(f, "group /p/c%u max 64M low 64K\n", i);
	fprintf(f, "group /p/sink max 64M\nfile f %uK\nfile s 16M\n",
		kids * 16);
	for (i = 0; i < kids; i++)
		fprintf(f, "task t%u /p/c%u 0s\n  req r\n    read f %u 16K\n"
			"  end\nend\n", i, i, i * 16384);
	fprintf(f, "task sink /p/sink 1s\n  req r\n");
	for (i = 0; i < 256; i++)
		fprintf(f, "    read s %u 64K\n", i * 65536);
	fprintf(f, "  end\nend\n");
}

/* The trace of n groups, each with a limit and a task of its own. */
static void print_flat(FILE *f, unsigned n)
{
	unsigned i;

	fprintf(f, "machine ram 2G cpus 4 swap none\n");
	for (i = 0; i < n; i++)
		fprintf(f, "group /g%u max 64M\n", i);
	fprintf(f, "file f 1M\n");
	for (i = 0; i < n; i++)
		fprintf(f, "task t%u /g%u 0s\n  req r\n    read f 0 64K\n"
			"  end\nend\n", i, i);
}

/* Writes the trace of n groups (protected: the protected case) to a new
 * file; its name into path. */
static int write_trace(unsigned n, bool protected, char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(path, len, "%s/bench-mrsim-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	if (protected)
		print_protected(f, n);
	else
		print_flat(f, n);
	if (fclose(f) != 0) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* Runs mrsim on the trace; its wall time and maximum RSS. */
static int run_mrsim(const char *trace, double *wall_s, double *rss_mib)
{
	const char *mrsim = getenv("MEMRECLAIM_BENCH_MRSIM");
	struct rusage ru;
	uint64_t t0;
	int status, null;
	pid_t pid;

	if (!mrsim || !*mrsim)
		mrsim = "examples/mrsim";
	t0 = bench_now_ns();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
			_exit(127);
		execl(mrsim, mrsim, "--trace", trace, "--json", "--margin",
		      "4M", (char *)NULL);
		fprintf(stderr, "bench-mrsim: running %s: %s\n", mrsim,
			strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-mrsim: %s --trace %s failed\n", mrsim,
			trace);
		return -1;
	}
	*wall_s = (double)(bench_now_ns() - t0) / 1e9;
	*rss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
	return 0;
}

/* One case: its runs and figures; -1 when one fails. */
static int run_case(bool protected)
{
	const char *kind = protected ? "protected_" : "";
	double wall[3], rss[3], scale;
	char path[4096], figure[64];
	size_t i;
	int r;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (write_trace(sizes[i], protected, path, sizeof(path)) < 0) {
			fprintf(stderr, "bench-mrsim: writing a trace: %s\n",
				strerror(errno));
			return -1;
		}
		r = run_mrsim(path, &wall[i], &rss[i]);
		unlink(path);
		if (r < 0)
			return -1;
		scale = (double)sizes[i] / sizes[0];
		snprintf(figure, sizeof(figure), "wall_%s%u_groups", kind,
			 sizes[i]);
		bench_emit(BENCH, figure, wall[i], "s",
			   i ? "1000_groups_times_n_over_1000" : NULL,
			   wall[0] * scale, "s");
		snprintf(figure, sizeof(figure), "max_rss_%s%u_groups", kind,
			 sizes[i]);
		bench_emit(BENCH, figure, rss[i], "MiB",
			   i ? "1000_groups_times_n_over_1000" : NULL,
			   rss[0] * scale, "MiB");
	}
	return 0;
}

int main(void)
{
	return run_case(false) < 0 || run_case(true) < 0 ? 1 : 0;
}
