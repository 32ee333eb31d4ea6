/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-reclaim: reclaim efficiency on this machine's cgroup v1 memory
 * controller (bench/reclaim.h says what is asked and how).
 *
 * It creates its own group beneath $MEMRECLAIM_TEST_PARENT (default
 * /sys/fs/cgroup/memory) with a 2 GiB limit, writes a data file of
 * 1.25 GiB in $MEMRECLAIM_BENCH_DIR (default /var/tmp; a disk filesystem,
 * not tmpfs), fsyncs it and drops it from the page cache. Each run then
 * starts from the same state: the file dropped again, read whole by a
 * child moved into the group (clean page cache in folios of the size the
 * filesystem's readahead chose, up to 2 MiB on ext4 since 6.16 and XFS),
 * the child gone, and the per-CPU charge stock drained by one limit write
 * of usage - 4 KiB and its restore, outside the timing, so that the
 * measured fall in usage is reclaim alone. Then 1 GiB is freed one way,
 * timed with CLOCK_MONOTONIC around the library call or around the two
 * limit writes, and with the process's CPU time over the same span (the
 * kernel reclaims in the writer's context, so the CPU time is the work
 * without the waits a shared machine adds).
 *
 * Each mode runs REPEATS times, the modes interleaved and their order
 * rotated per round; each figure is the median of its runs (the runs go
 * to stderr). The group and the file are removed at the end, also on
 * SIGINT, SIGTERM and SIGHUP (blocked during the runs, looked for
 * between them).
 *
 * The whole is done for two shapes of the same cache: as the file's
 * readahead leaves it (on this kernel's ext4, folios growing to 2 MiB:
 * 1 GiB is about 512 folios, and the kernel's reclaim work is small), and
 * in 4 KiB pages, read with POSIX_FADV_RANDOM, which turns readahead off
 * so every page is its own folio (262144 pages a GiB: what a filesystem
 * without large folios, or a database's random reads, leave; the kernel's
 * reclaim work is then most of the time). Exit 77 (skipped) without root or a writable cgroup v1
 * memory controller.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memreclaim.h>

#include "bench.h"
#include "reclaim.h"

#define BENCH "reclaim-cgroup1"
#define REPEATS 7
#define CHUNK_BYTES (1 << 20)
#define PAGE_BYTES 4096ULL

/* How the cache is read in, and the figures' name for it. */
struct shape {
	const char *name;
	int fadvise; /* POSIX_FADV_* given to the reader's fd */
};

static const struct shape shapes[] = {
	{ "large_folios", POSIX_FADV_NORMAL },
	{ "4k_pages", POSIX_FADV_RANDOM },
};

struct bench {
	mr_ctx_t *ctx;
	mr_group_t *group;
	char path[PATH_MAX];
	bool created;
	char file[PATH_MAX];
	bool file_created;
	int limit_fd, usage_fd, force_empty_fd;
	sigset_t stop_signals;
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "bench-reclaim: %s: %s\n", what, strerror(-err));
	return err;
}

static int open_control(struct bench *b, const char *name, int flags)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/%s", b->path, name);
	return open(p, flags | O_CLOEXEC);
}

static int read_u64(int fd, uint64_t *v)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	*v = strtoull(buf, NULL, 10);
	return 0;
}

static int write_u64(int fd, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);

	return pwrite(fd, buf, (size_t)n, 0) == n ? 0 : -errno;
}

/* A stop signal is pending (they are blocked during the runs). */
static bool stop_requested(const struct bench *b)
{
	sigset_t pending;
	int s;

	sigpending(&pending);
	for (s = 1; s < NSIG; s++)
		if (sigismember(&b->stop_signals, s) == 1 &&
		    sigismember(&pending, s) == 1)
			return true;
	return false;
}

/* The parent for the bench's group, or -ENODEV/-EACCES with the reason. */
static int find_parent(char *out, size_t len)
{
	const char *p = getenv("MEMRECLAIM_TEST_PARENT");
	char probe[PATH_MAX + 32];
	struct statfs sfs;

	if (!p || !*p)
		p = "/sys/fs/cgroup/memory";
	if (statfs(p, &sfs) < 0 || sfs.f_type != CGROUP_SUPER_MAGIC) {
		fprintf(stderr, "bench-reclaim: %s is not a cgroup v1 mount; "
			"set MEMRECLAIM_TEST_PARENT\n", p);
		return -ENODEV;
	}
	snprintf(probe, sizeof(probe), "%s/memory.limit_in_bytes", p);
	if (access(probe, F_OK) < 0) {
		fprintf(stderr, "bench-reclaim: %s has no memory controller\n",
			p);
		return -ENODEV;
	}
	if (access(p, W_OK) < 0) {
		fprintf(stderr, "bench-reclaim: cannot create groups beneath %s\n",
			p);
		return -EACCES;
	}
	snprintf(out, len, "%s", p);
	return 0;
}

/* The data file: written, synced and dropped, so its pages are clean and
 * charged to whoever reads them next. */
static int create_file(struct bench *b)
{
	const char *dir = getenv("MEMRECLAIM_BENCH_DIR");
	struct statfs sfs;
	uint64_t done;
	char *buf;
	int fd, r = 0;

	if (!dir || !*dir)
		dir = "/var/tmp";
	if (statfs(dir, &sfs) < 0)
		return fail(dir, -errno);
	if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC) {
		fprintf(stderr, "bench-reclaim: %s is tmpfs/ramfs, not page "
			"cache; set MEMRECLAIM_BENCH_DIR to a disk filesystem\n",
			dir);
		return -EINVAL;
	}
	snprintf(b->file, sizeof(b->file), "%s/memreclaim-bench-%ld.data",
		 dir, (long)getpid());
	fd = open(b->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(b->file, -errno);
	b->file_created = true;
	buf = malloc(CHUNK_BYTES);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	memset(buf, 0x5a, CHUNK_BYTES);
	for (done = 0; r == 0 && done < RECLAIM_CACHE_BYTES;
	     done += CHUNK_BYTES) {
		ssize_t n = write(fd, buf, CHUNK_BYTES);

		if (n != CHUNK_BYTES)
			r = n < 0 ? -errno : -EIO;
	}
	free(buf);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0)
		r = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return r < 0 ? fail(b->file, r) : 0;
}

/* Drops the file from the page cache (uncharging it from the group), then
 * reads it whole in a child moved into the group, with the shape's
 * advice. */
static int fill(struct bench *b, const struct shape *sh)
{
	static char buf[CHUNK_BYTES];
	int go[2], fd, status;
	uint64_t usage;
	pid_t pid;
	char c;

	fd = open(b->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(b->file, -errno);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fd = open(b->file, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || posix_fadvise(fd, 0, 0, sh->fadvise) != 0)
			_exit(3);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	if (mr_cgroup_attach(b->ctx, b->path, pid) < 0 ||
	    write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return fail("the reader", -EIO);
	if (read_u64(b->usage_fd, &usage) < 0)
		return -EIO;
	if (usage < RECLAIM_CACHE_BYTES - RECLAIM_CACHE_BYTES / 64) {
		fprintf(stderr, "bench-reclaim: the group holds %" PRIu64
			" MiB after the read, not %llu\n", usage >> 20,
			RECLAIM_CACHE_BYTES >> 20);
		return -EIO;
	}
	return 0;
}

/* Drains this group's per-CPU charge stock (which a limit write drains,
 * and which would show as a fall in usage that no reclaim made): a write
 * of usage - 4 KiB (mem_cgroup_resize_max() drains before reclaiming),
 * and the restore. Not timed. */
static int drain_stock(struct bench *b)
{
	uint64_t usage;
	int r = read_u64(b->usage_fd, &usage);

	if (r == 0)
		r = write_u64(b->limit_fd, usage - PAGE_BYTES);
	if (r == -EBUSY)
		r = 0;
	if (write_u64(b->limit_fd, RECLAIM_LIMIT_BYTES) < 0 && r == 0)
		r = -errno;
	return r;
}

/* One kernel request: memory.limit_in_bytes lowered to usage - 1 GiB,
 * then restored. */
static int one_call(struct bench *b, uint64_t usage, uint64_t *calls)
{
	int w, r;

	w = write_u64(b->limit_fd, (usage - RECLAIM_ASK_BYTES) /
				   PAGE_BYTES * PAGE_BYTES);
	r = write_u64(b->limit_fd, RECLAIM_LIMIT_BYTES);
	*calls = 1;
	if (w == -EBUSY)
		fprintf(stderr, "bench-reclaim: the kernel could not reach "
			"usage - 1 GiB (EBUSY)\n");
	else if (w < 0)
		return fail("lowering the limit", w);
	return r < 0 ? fail("restoring the limit", r) : 0;
}

/* Through the library: mr_group_reclaim() of 1 GiB in the mode's batch. */
static int library_call(struct bench *b, enum reclaim_mode mode,
			uint64_t *calls)
{
	struct mr_reclaim_stats s0 = { .size = sizeof(s0) };
	struct mr_reclaim_stats s1 = { .size = sizeof(s1) };
	uint64_t freed;
	int r;

	r = mr_group_read_reclaim_stats(b->group, MR_REASON_REQUESTED, &s0);
	if (r == 0)
		r = mr_group_reclaim(b->group, RECLAIM_ASK_BYTES, 0, &freed);
	if (r == 0)
		r = mr_group_read_reclaim_stats(b->group, MR_REASON_REQUESTED,
						&s1);
	if (r < 0) {
		fprintf(stderr, "bench-reclaim: mr_group_reclaim: %s\n",
			mr_strerror(r));
		return r;
	}
	*calls = s1.calls - s0.calls;
	return 0;
}

static int run(struct bench *b, const struct shape *sh,
	       enum reclaim_mode mode, struct reclaim_sample *out)
{
	uint64_t usage0, usage1, calls = 0, t0, t1, c0, c1;
	int r;

	r = fill(b, sh);
	if (r == 0)
		r = drain_stock(b);
	if (r == 0 && mode != MODE_ONE_CALL)
		r = reclaim_set_batch(b->group, mode);
	if (r == 0)
		r = read_u64(b->usage_fd, &usage0);
	if (r < 0)
		return r;
	c0 = bench_cpu_ns();
	t0 = bench_now_ns();
	if (mode == MODE_ONE_CALL)
		r = one_call(b, usage0, &calls);
	else
		r = library_call(b, mode, &calls);
	t1 = bench_now_ns();
	c1 = bench_cpu_ns();
	if (r == 0)
		r = read_u64(b->usage_fd, &usage1);
	if (r < 0)
		return r;
	out->time_ms = (double)(t1 - t0) / 1e6;
	out->cpu_ms = (double)(c1 - c0) / 1e6;
	out->calls = (double)calls;
	out->over_reclaim_kib = ((double)usage0 - (double)usage1 -
				 (double)RECLAIM_ASK_BYTES) / 1024;
	fprintf(stderr, "bench-reclaim: %-12s %-20s %7.1f ms (CPU %7.1f ms) "
		"%5.0f calls, freed %" PRIu64 " bytes, over-reclaim %6.1f KiB\n",
		sh->name, reclaim_mode_name[mode], out->time_ms, out->cpu_ms,
		out->calls,
		usage0 - usage1, out->over_reclaim_kib);
	return 0;
}

static int setup(struct bench *b)
{
	char parent[PATH_MAX];
	int r;

	r = find_parent(parent, sizeof(parent));
	if (r < 0)
		return r;
	r = mr_ctx_new(&b->ctx);
	if (r < 0)
		return fail("mr_ctx_new", r);
	if ((size_t)snprintf(b->path, sizeof(b->path), "%s/memreclaim-bench-%ld",
			     parent, (long)getpid()) >= sizeof(b->path))
		return fail(parent, -ENAMETOOLONG);
	r = mr_cgroup_create(b->ctx, b->path, RECLAIM_LIMIT_BYTES);
	if (r < 0) {
		fprintf(stderr, "bench-reclaim: creating %s: %s\n", b->path,
			mr_strerror(r));
		return r == -EACCES || r == -EPERM || r == -EROFS ||
		       r == -ENODEV ? -ENODEV : r;
	}
	b->created = true;
	r = mr_group_open(b->ctx, b->path, "cgroup1", &b->group);
	if (r < 0) {
		fprintf(stderr, "bench-reclaim: opening %s: %s\n", b->path,
			mr_strerror(r));
		return r;
	}
	b->limit_fd = open_control(b, "memory.limit_in_bytes", O_WRONLY);
	b->usage_fd = open_control(b, "memory.usage_in_bytes", O_RDONLY);
	b->force_empty_fd = open_control(b, "memory.force_empty", O_WRONLY);
	if (b->limit_fd < 0 || b->usage_fd < 0 || b->force_empty_fd < 0)
		return fail(b->path, -errno);
	return create_file(b);
}

/* Removes what setup made: the group (emptied of the cache its exited
 * readers left: memory.force_empty) and the file. */
static void cleanup(struct bench *b)
{
	int r;

	mr_group_close(b->group);
	if (b->force_empty_fd >= 0 && write(b->force_empty_fd, "0", 1) < 0)
		fprintf(stderr, "bench-reclaim: memory.force_empty: %s\n",
			strerror(errno));
	if (b->limit_fd >= 0)
		close(b->limit_fd);
	if (b->usage_fd >= 0)
		close(b->usage_fd);
	if (b->force_empty_fd >= 0)
		close(b->force_empty_fd);
	if (b->created) {
		r = mr_cgroup_remove(b->ctx, b->path);
		if (r < 0)
			fprintf(stderr, "bench-reclaim: removing %s: %s\n",
				b->path, mr_strerror(r));
	}
	if (b->file_created)
		unlink(b->file);
	mr_ctx_free(b->ctx);
}

/* Each mode REPEATS times on one shape of the cache, then its medians. */
static int measure(struct bench *b, const struct shape *sh)
{
	struct reclaim_sample s[MODE_COUNT][REPEATS], med[MODE_COUNT];
	double v[REPEATS];
	char suffix[64];
	int r = 0, i, k, m;

	for (i = 0; r == 0 && i < REPEATS; i++) {
		for (k = 0; r == 0 && k < MODE_COUNT; k++) {
			m = (i + k) % MODE_COUNT;
			r = stop_requested(b) ? -EINTR :
			    run(b, sh, m, &s[m][i]);
		}
	}
	if (r < 0)
		return r;
	for (m = 0; m < MODE_COUNT; m++) {
		for (i = 0; i < REPEATS; i++)
			v[i] = s[m][i].time_ms;
		med[m].time_ms = reclaim_median(v, REPEATS);
		for (i = 0; i < REPEATS; i++)
			v[i] = s[m][i].cpu_ms;
		med[m].cpu_ms = reclaim_median(v, REPEATS);
		for (i = 0; i < REPEATS; i++)
			v[i] = s[m][i].calls;
		med[m].calls = reclaim_median(v, REPEATS);
		for (i = 0; i < REPEATS; i++)
			v[i] = s[m][i].over_reclaim_kib;
		med[m].over_reclaim_kib = reclaim_median(v, REPEATS);
	}
	snprintf(suffix, sizeof(suffix), "_%s_median_of_%d", sh->name,
		 REPEATS);
	reclaim_emit(BENCH, med, suffix);
	return 0;
}

int main(void)
{
	struct bench b = { .limit_fd = -1, .usage_fd = -1,
			   .force_empty_fd = -1 };
	size_t k;
	int r;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-reclaim: needs root to create a memory "
			"cgroup; skipped\n");
		return 77;
	}
	sigemptyset(&b.stop_signals);
	sigaddset(&b.stop_signals, SIGINT);
	sigaddset(&b.stop_signals, SIGTERM);
	sigaddset(&b.stop_signals, SIGHUP);
	sigprocmask(SIG_BLOCK, &b.stop_signals, NULL);

	r = setup(&b);
	for (k = 0; r == 0 && k < sizeof(shapes) / sizeof(shapes[0]); k++)
		r = measure(&b, &shapes[k]);
	cleanup(&b);
	if (r == -ENODEV || r == -EACCES)
		return 77;
	return r < 0 ? 1 : 0;
}
