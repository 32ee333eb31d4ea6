/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup2 backend against a fake cgroup2 tree: a temporary directory
 * of regular files named like the cgroup files, statfs answering
 * CGROUP2_SUPER_MAGIC beneath it, and a file-access table that plays the
 * kernel's part where a regular file cannot: memory.reclaim frees page
 * cache (answering EAGAIN when it freed less than asked, EINVAL to
 * swappiness= as 6.1 does, or ENODEV as a removed group does),
 * memory.high and memory.max writes reclaim down to the new value as
 * memory_high_write() and memory_max_write() do, kept fds of a removed
 * group fail with ENODEV and lookups with ENOENT, a sibling vanishes in
 * the middle of a walk, pressure files read empty or fail with
 * EOPNOTSUPP. The proactive controller on it: its I/O gate, its hold
 * after someone else's memory.high, its floor, its pressure hold.
 *
 * The tree: root/ (the real root: no memory.current), root/a (a child of
 * the root), root/a/g (the group under test), root/a/s1, root/a/s2
 * (g's siblings), root/off (memory not enabled in root's
 * subtree_control for it: off/x has no memory files).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup2.h"
#include "clock.h"
#include "fileops.h"
#include "group.h"
#include "journal.h"
#include "log.h"
#include "lowerstep.h"
#include "policy.h"
#include "reclaim.h"
#include "swap.h"

#define MiB (1024ULL * 1024)

static char tmp[64], root[128], grp[160], state[128];

static struct fake {
	uint64_t usage, cache;   /* g: memory.current, reclaimable cache */
	/* memory.reclaim's answer: 0, or an errno returned after freeing
	 * reclaim_frees bytes (EAGAIN) or nothing (EINVAL, ENODEV). */
	int reclaim_err;
	int nchild_reclaims;     /* writes to a/g/c1/memory.reclaim */
	bool swappiness_einval;  /* the kernel of 6.1 */
	char reclaim_writes[64][48];
	int nreclaim_writes;
	char limit_writes[16][48]; /* "max=..." or "high=..." */
	int nlimit_writes;
	bool nonblock_seen, blocking_seen;
	/* After this many reads of g's files, g is removed (0: never). */
	int vanish_after_reads;
	bool vanished;
	char vanish_sibling[16];  /* removed once its memory.current read */
	int pressure_err;         /* pread of memory.pressure fails */
	int max_reads;            /* preads of g's memory.max */
	int pressure_reads;       /* preads of g's memory.pressure */
	bool limits_ro;           /* g's memory.max/high refuse O_RDWR */
	/* g's anonymous memory, which memory.reclaim swaps out after the
	 * cache when `swap` (the fake's swap device has room) and the
	 * request has no swappiness=0. */
	uint64_t anon;
	bool swap;
	/* memory.reclaim frees this much more than asked, in ppm of the
	 * ask (700000: 1 GiB asked, 1.7 GiB gone, as before Linux 6.6). */
	uint64_t over_ppm;
	/* g's memory.swap.current, which swapped anon raises; with zswap
	 * (zswap_ppm: the compressed size, in ppm of a page) the compressed
	 * copy stays charged to memory.current. */
	uint64_t swap_usage, zswap_ppm;
} fk;

static struct mri_logger lg;
static char logbuf[16384];
static void *priv;
static const struct mri_backend *be = &mri_backend_cgroup2;

static void put(const char *rel, const char *file, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s%s%s", root, rel, *rel ? "/" : "", file);
	f = fopen(p, "we");
	ck_assert_msg(f, "cannot write %s", p);
	fputs(content, f);
	fclose(f);
}

static void putu(const char *rel, const char *file, uint64_t v)
{
	char buf[32];

	if (v == MR_UNLIMITED)
		strcpy(buf, "max\n");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	put(rel, file, buf);
}

static void getf(const char *rel, const char *file, char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s/%s", root, rel, file);
	f = fopen(p, "re");
	ck_assert_msg(f, "cannot read %s", p);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void mkgroup(const char *rel, uint64_t usage, uint64_t low,
		    uint64_t min)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	putu(rel, "memory.current", usage);
	putu(rel, "memory.max", MR_UNLIMITED);
	putu(rel, "memory.high", MR_UNLIMITED);
	putu(rel, "memory.low", low);
	putu(rel, "memory.min", min);
	put(rel, "memory.stat", "anon 0\nfile 0\n");
	put(rel, "memory.swap.current", "0\n");
	put(rel, "memory.swap.max", "max\n");
	put(rel, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"
	    "oom_group_kill 0\n");
	put(rel, "cgroup.subtree_control", "memory\n");
}

static void sync_usage(void)
{
	putu("a/g", "memory.current", fk.usage);
}

/* The path an fd refers to. */
static const char *fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* The file `name` of g, for an fd's path. */
static bool is_g_file(const char *path, const char *name)
{
	size_t n = strlen(grp);

	return strncmp(path, grp, n) == 0 && path[n] == '/' &&
	       (!name || strcmp(path + n + 1, name) == 0);
}

static int h_open(const char *path, int flags, mode_t mode)
{
	if (fk.vanished && strncmp(path, grp, strlen(grp)) == 0)
		return -ENOENT;
	return mri_file_ops_real.open(path, flags, mode);
}

static int h_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	char dir[PATH_MAX], full[PATH_MAX * 2];

	snprintf(full, sizeof(full), "%s/%s",
		 fd_path(dirfd, dir, sizeof(dir)), path);
	if (fk.vanished && strncmp(full, grp, strlen(grp)) == 0)
		return -ENOENT;
	if (fk.limits_ro && (flags & O_ACCMODE) != O_RDONLY &&
	    (is_g_file(full, "memory.max") || is_g_file(full, "memory.high")))
		return -EACCES;
	if (fk.vanish_sibling[0] && strncmp(path, fk.vanish_sibling,
					    strlen(fk.vanish_sibling)) == 0 &&
	    !strstr(path, "memory.current"))
		return -ENOENT;
	return mri_file_ops_real.openat(dirfd, path, flags, mode);
}

static ssize_t h_pread(int fd, void *buf, size_t len, off_t off)
{
	char p[PATH_MAX];

	fd_path(fd, p, sizeof(p));
	if (is_g_file(p, NULL)) {
		if (fk.vanish_after_reads && --fk.vanish_after_reads == 0)
			fk.vanished = true;
		if (fk.vanished)
			return -ENODEV;
		if (fk.pressure_err && is_g_file(p, "memory.pressure"))
			return -fk.pressure_err;
		fk.max_reads += is_g_file(p, "memory.max");
		fk.pressure_reads += is_g_file(p, "memory.pressure");
	}
	return mri_file_ops_real.pread(fd, buf, len, off);
}

static uint64_t reclaim_cache(uint64_t bytes)
{
	uint64_t n = bytes < fk.cache ? bytes : fk.cache;

	fk.cache -= n;
	fk.usage -= n;
	sync_usage();
	return n;
}

/* memory.reclaim: "BYTES [swappiness=N]". */
static ssize_t fake_reclaim(const char *s, size_t len)
{
	uint64_t bytes, n, anon;
	char num[32];
	const char *sp = strchr(s, ' ');
	size_t nlen = sp ? (size_t)(sp - s) : len;

	ck_assert_int_lt(fk.nreclaim_writes, 64);
	strcpy(fk.reclaim_writes[fk.nreclaim_writes++], s);
	if (sp && fk.swappiness_einval)
		return -EINVAL;
	if (fk.reclaim_err && fk.reclaim_err != EAGAIN)
		return -fk.reclaim_err;
	ck_assert_uint_lt(nlen, sizeof(num));
	memcpy(num, s, nlen);
	num[nlen] = '\0';
	ck_assert_int_eq(mri_parse_u64(num, &bytes), 0);
	n = reclaim_cache(bytes);
	if (fk.over_ppm)
		reclaim_cache(bytes / 1000000 * fk.over_ppm +
			      bytes % 1000000 * fk.over_ppm / 1000000);
	if (n < bytes && fk.swap && !(sp && strstr(sp, "swappiness=0"))) {
		anon = bytes - n < fk.anon ? bytes - n : fk.anon;
		fk.anon -= anon;
		fk.usage -= anon - anon / 1000000 * fk.zswap_ppm -
			    anon % 1000000 * fk.zswap_ppm / 1000000;
		n += anon;
		sync_usage();
		fk.swap_usage += anon;
		putu("a/g", "memory.swap.current", fk.swap_usage);
	}
	if (n < bytes || fk.reclaim_err == EAGAIN)
		return -EAGAIN;
	return (ssize_t)len;
}

/* memory.reclaim of the child a/g/c1: its cache goes, and with it the
 * group's usage (the child's charges are the group's). */
static ssize_t fake_child_reclaim(const char *s, size_t len)
{
	char p[PATH_MAX], buf[32];
	uint64_t bytes, cur;
	FILE *f;

	fk.nchild_reclaims++;
	ck_assert_int_eq(mri_parse_u64(s, &bytes), 0);
	snprintf(p, sizeof(p), "%s/a/g/c1/memory.current", root);
	f = fopen(p, "re");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_int_eq(mri_parse_u64(buf, &cur), 0);
	if (bytes > cur)
		bytes = cur;
	putu("a/g/c1", "memory.current", cur - bytes);
	fk.usage -= bytes;
	putu("a/g", "memory.current", fk.usage);
	return bytes ? (ssize_t)len : -EAGAIN;
}

/* memory.max and memory.high: the value is set, then the writer
 * reclaims down to it (what O_NONBLOCK skips on 6.16). */
static ssize_t fake_limit(int fd, const char *file, const char *s,
			  size_t len)
{
	uint64_t v;

	ck_assert_int_lt(fk.nlimit_writes, 16);
	snprintf(fk.limit_writes[fk.nlimit_writes++], 48, "%s=%s",
		 strcmp(file, "memory.max") == 0 ? "max" : "high", s);
	if (fcntl(fd, F_GETFL) & O_NONBLOCK)
		fk.nonblock_seen = true;
	else
		fk.blocking_seen = true;
	ck_assert_int_eq(mri_cgroup2_parse_value(s, &v), 0);
	putu("a/g", file, v);
	if (v < fk.usage)
		reclaim_cache(fk.usage - v);
	return (ssize_t)len;
}

static ssize_t h_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	char p[PATH_MAX], s[64];

	fd_path(fd, p, sizeof(p));
	if (!is_g_file(p, NULL))
		return mri_file_ops_real.pwrite(fd, buf, len, off);
	if (fk.vanished)
		return -ENODEV;
	ck_assert_uint_lt(len, sizeof(s));
	memcpy(s, buf, len);
	s[len] = '\0';
	if (is_g_file(p, "memory.reclaim"))
		return fake_reclaim(s, len);
	if (is_g_file(p, "c1/memory.reclaim"))
		return fake_child_reclaim(s, len);
	if (is_g_file(p, "memory.max"))
		return fake_limit(fd, "memory.max", s, len);
	if (is_g_file(p, "memory.high"))
		return fake_limit(fd, "memory.high", s, len);
	/* A trigger written to memory.pressure arms it (psi_write()): the
	 * file reads as before. */
	if (is_g_file(p, "memory.pressure"))
		return (ssize_t)len;
	return mri_file_ops_real.pwrite(fd, buf, len, off);
}

static int h_close(int fd)
{
	return mri_file_ops_real.close(fd);
}

static int h_statfs(const char *path, struct statfs *st)
{
	int r = mri_file_ops_real.statfs(path, st);

	if (r == 0 && strncmp(path, root, strlen(root)) == 0 &&
	    (path[strlen(root)] == '\0' || path[strlen(root)] == '/'))
		st->f_type = CGROUP2_SUPER_MAGIC;
	return r;
}

static const struct mri_file_ops fake_ops = {
	.open = h_open,
	.openat = h_openat,
	.pread = h_pread,
	.pwrite = h_pwrite,
	.close = h_close,
	.statfs = h_statfs,
};

static void log_fn(int level, const char *msg, void *userdata)
{
	size_t n = strlen(logbuf);

	(void)userdata;
	snprintf(logbuf + n, sizeof(logbuf) - n, "%d %s\n", level, msg);
}

static char data_path[PATH_MAX];

static const char *data(const char *name)
{
	const char *dir = getenv("MEMRECLAIM_TEST_DATA");
	const char *top = getenv("top_srcdir");

	if (dir)
		snprintf(data_path, sizeof(data_path), "%s/%s", dir, name);
	else
		snprintf(data_path, sizeof(data_path), "%s/tests/data/%s",
			 top ? top : ".", name);
	return data_path;
}

/* The host's swap and vm.swappiness, as files of the fake tree. */
static void host_swap(uint64_t free_bytes, unsigned swappiness)
{
	static char meminfo[PATH_MAX], vm[PATH_MAX];
	char buf[128];
	FILE *f;

	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", tmp);
	snprintf(vm, sizeof(vm), "%s/swappiness", tmp);
	f = fopen(meminfo, "we");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "MemTotal:        2000000 kB\nSwapTotal:       1048576 kB\n"
		"SwapFree:        %" PRIu64 " kB\nDirty:               0 kB\n",
		free_bytes / 1024);
	fclose(f);
	snprintf(buf, sizeof(buf), "%u\n", swappiness);
	f = fopen(vm, "we");
	ck_assert_ptr_nonnull(f);
	fputs(buf, f);
	fclose(f);
	mri_swap_meminfo = meminfo;
	mri_swap_vm_swappiness = vm;
}

static void setup(void)
{
	char p[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "/tmp/mr-cg2-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(root, sizeof(root), "%s/cg", tmp);
	snprintf(grp, sizeof(grp), "%s/a/g", root);
	snprintf(state, sizeof(state), "%s/state", tmp);
	ck_assert_int_eq(mkdir(root, 0755), 0);
	put("", "cgroup.subtree_control", "memory\n");
	put("", "memory.stat", "anon 0\n");
	memset(&fk, 0, sizeof(fk));
	fk.usage = 100 * MiB;
	fk.cache = 40 * MiB;
	mkgroup("a", 300 * MiB, 0, 0);
	mkgroup("a/g", fk.usage, 0, 0);
	put("a/g", "memory.reclaim", "");
	put("a/g", "memory.peak", "123456789\n");
	put("a/g", "memory.swap.current", "4096\n");
	put("a/g", "memory.swap.max", "max\n");
	put("a/g", "memory.events.local", "low 1\nhigh 2\nmax 3\noom 4\n"
	    "oom_kill 5\noom_group_kill 6\n");
	put("a/g", "memory.pressure",
	    "some avg10=1.23 avg60=0.50 avg300=0.00 total=1234\n"
	    "full avg10=0.10 avg60=0.00 avg300=0.00 total=99\n");
	mkgroup("a/s1", 100 * MiB, 0, 0);
	mkgroup("a/s2", 100 * MiB, 0, 0);
	snprintf(p, sizeof(p), "%s/off", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	put("off", "cgroup.subtree_control", "cpu io\n");
	snprintf(p, sizeof(p), "%s/off/x", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	mri_cgroup2_mountinfo = data("mountinfo.cgroup2-plain");
	host_swap(64 * MiB, 60);
	mri_file_ops_set(&fake_ops);
	mri_logger_init(&lg);
	lg.fn = log_fn;
	lg.max_level = MR_LOG_DEBUG;
	logbuf[0] = '\0';
	mri_lowerstep_test_pause_ms = 0;
	priv = calloc(1, be->priv_size);
	ck_assert_ptr_nonnull(priv);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	mri_swap_meminfo = "/proc/meminfo";
	mri_swap_vm_swappiness = "/proc/sys/vm/swappiness";
	mri_file_ops_set(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
	free(priv);
}

/* The event fd the backend reported and whether it is on the tick
 * (struct mri_event_sink). */
static int sink_fd = -1, sink_calls;
static bool sink_tick;

static int record_event_fd(void *arg, int fd, uint32_t events)
{
	(void)arg;
	ck_assert_uint_eq(events, EPOLLPRI);
	sink_fd = fd;
	sink_calls++;
	return 0;
}

static int record_tick(void *arg, bool on)
{
	(void)arg;
	sink_tick = on;
	return 0;
}

static int be_open_path(const char *path)
{
	struct mri_open_env env = {
		.log = &lg, .state_dir = state,
		.events = { record_event_fd, record_tick, NULL },
	};

	sink_fd = -1;
	sink_calls = 0;
	sink_tick = false;
	return be->open(priv, path, &env);
}

static int be_open(void)
{
	return be_open_path(grp);
}

/* ------------------------------------------------------------ probe */

START_TEST(probe_and_auto)
{
	char p[PATH_MAX];
	mr_ctx_t *ctx;
	mr_group_t *g;

	ck_assert_int_eq(be->probe(grp), 1);
	/* The root has no memory.current: not a group to open. */
	ck_assert_int_eq(be->probe(root), 0);
	/* Not on cgroup2. */
	ck_assert_int_eq(be->probe(tmp), 0);
	/* A control file is not a directory. */
	snprintf(p, sizeof(p), "%s/memory.current", grp);
	ck_assert_int_eq(be->probe(p), -ENOTDIR);

	/* "auto" picks cgroup2 from the filesystem. */
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "auto", &g), 0);
	ck_assert_str_eq(mr_group_backend(g), "cgroup2");
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	/* cgroup1 does not take a cgroup2 path. */
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup1", &g), -ENODEV);
	mr_ctx_free(ctx);
}
END_TEST

START_TEST(parent_without_memory)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/off/x", root);
	/* Probed as cgroup2 so that the open can say why it fails. */
	ck_assert_int_eq(be->probe(p), 1);
	ck_assert_int_eq(be_open_path(p), -ENODEV);
	ck_assert_ptr_nonnull(strstr(logbuf, "parent does not enable it"));
	ck_assert_ptr_nonnull(strstr(logbuf, "off/cgroup.subtree_control"));
}
END_TEST

/* ------------------------------------------------------------ memstat */

START_TEST(memstat_with_kernel)
{
	struct mr_memstat m;

	ck_assert_int_eq(mri_cgroup2_parse_memstat(
		"anon 1000\nfile 2000\nkernel 3000\nkernel_stack 100\n"
		"slab 50\npgscan 10\npgsteal 7\npgfault 5\n"
		"some_future_key 99\nworkingset_refault_file 2\n",
		4096, &m), 0);
	ck_assert_uint_eq(m.size, sizeof(m));
	ck_assert_uint_eq(m.anon_bytes, 1000);
	ck_assert_uint_eq(m.file_bytes, 2000);
	/* The kernel's own `kernel` wins over the sum of the parts. */
	ck_assert_uint_eq(m.kernel_bytes, 3000);
	ck_assert(m.present & (1ULL << MR_MEMSTAT_KERNEL));
	ck_assert_uint_eq(m.pgscan_bytes, 10 * 4096);
	ck_assert_uint_eq(m.pgsteal_bytes, 7 * 4096);
	ck_assert_uint_eq(m.pgfault, 5);
	ck_assert_uint_eq(m.workingset_refault_file_bytes, 2 * 4096);
	/* Absent, not zero. */
	ck_assert(!(m.present & (1ULL << MR_MEMSTAT_SHMEM)));
	ck_assert(!(m.present & (1ULL << MR_MEMSTAT_PGPGIN)));
	ck_assert(!(m.present & (1ULL << MR_MEMSTAT_WORKINGSET_REFAULT_ANON)));
}
END_TEST

START_TEST(memstat_kernel_from_parts)
{
	struct mr_memstat m;

	/* Before 5.18: kernel_stack + pagetables + percpu + sock + vmalloc
	 * + slab. */
	ck_assert_int_eq(mri_cgroup2_parse_memstat(
		"anon 1\nkernel_stack 100\npagetables 200\npercpu 30\n"
		"sock 4\nvmalloc 5\nslab 600\nslab_reclaimable 400\n"
		"slab_unreclaimable 200\n", 4096, &m), 0);
	ck_assert(m.present & (1ULL << MR_MEMSTAT_KERNEL));
	ck_assert_uint_eq(m.kernel_bytes, 100 + 200 + 30 + 4 + 5 + 600);
	/* Before 5.9 there was no `slab`: its two halves. */
	ck_assert_int_eq(mri_cgroup2_parse_memstat(
		"kernel_stack 100\nslab_reclaimable 400\n"
		"slab_unreclaimable 200\n", 4096, &m), 0);
	ck_assert_uint_eq(m.kernel_bytes, 700);
	/* None of the parts: absent. */
	ck_assert_int_eq(mri_cgroup2_parse_memstat("anon 1\n", 4096, &m), 0);
	ck_assert(!(m.present & (1ULL << MR_MEMSTAT_KERNEL)));
}
END_TEST

START_TEST(memstat_malformed)
{
	struct mr_memstat m;

	/* A known key without a valid value is an error, never a 0. */
	ck_assert_int_eq(mri_cgroup2_parse_memstat("anon 12x\n", 4096, &m),
			 -EIO);
	ck_assert_int_eq(mri_cgroup2_parse_memstat("file \n", 4096, &m),
			 -EIO);
	ck_assert_int_eq(mri_cgroup2_parse_memstat("anon\n", 4096, &m), -EIO);
	ck_assert_int_eq(mri_cgroup2_parse_memstat("kernel -1\n", 4096, &m),
			 -EIO);
	ck_assert_int_eq(mri_cgroup2_parse_memstat(
		"pgscan 99999999999999999999999\n", 4096, &m), -EIO);
	/* Through the backend: logged, -EIO. */
	put("a/g", "memory.stat", "anon 5\nfile x\n");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_memstat(priv, &m), -EIO);
	ck_assert_ptr_nonnull(strstr(logbuf, "memory.stat: unparsable"));
	put("a/g", "memory.stat", "anon 8192\nfile 4096\n");
	ck_assert_int_eq(be->read_memstat(priv, &m), 0);
	ck_assert_uint_eq(m.anon_bytes, 8192);
	/* swap from memory.swap.current. */
	ck_assert(m.present & (1ULL << MR_MEMSTAT_SWAP));
	ck_assert_uint_eq(m.swap_bytes, 4096);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ events */

START_TEST(events)
{
	struct mr_events e;
	struct mr_limits l;
	char p[PATH_MAX];

	put("a/g", "memory.events", "low 10\nhigh 20\nmax 30\noom 40\n"
	    "oom_kill 50\noom_group_kill 60\nfuture 1\n");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_events(priv, false, &e), 0);
	ck_assert_uint_eq(e.low, 10);
	ck_assert_uint_eq(e.high, 20);
	ck_assert_uint_eq(e.max, 30);
	ck_assert_uint_eq(e.oom, 40);
	ck_assert_uint_eq(e.oom_kill, 50);
	ck_assert_uint_eq(e.oom_group_kill, 60);
	ck_assert_uint_eq(e.present, 0x3f);
	ck_assert_int_eq(be->read_events(priv, true, &e), 0);
	ck_assert_uint_eq(e.max, 3);
	ck_assert_uint_eq(e.oom_group_kill, 6);
	/* limit_hits: the group's own max (events.local). */
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.limit_hits, 3);
	/* Before 5.17: no oom_group_kill, absent. */
	put("a/g", "memory.events", "low 1\nhigh 2\nmax 3\noom 4\n"
	    "oom_kill 5\n");
	ck_assert_int_eq(be->read_events(priv, false, &e), 0);
	ck_assert(!(e.present & (1ULL << MR_EVENT_OOM_GROUP_KILL)));
	ck_assert_uint_eq(e.oom_group_kill, 0);
	put("a/g", "memory.events", "low 1\nmax many\n");
	ck_assert_int_eq(be->read_events(priv, false, &e), -EIO);
	ck_assert_int_eq(be->close(priv), 0);

	/* Before 5.2: no events.local; limit_hits from memory.events. */
	snprintf(p, sizeof(p), "%s/memory.events.local", grp);
	ck_assert_int_eq(unlink(p), 0);
	put("a/g", "memory.events", "low 0\nhigh 0\nmax 77\noom 0\n");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_events(priv, true, &e), -EOPNOTSUPP);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.limit_hits, 77);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ pressure */

START_TEST(pressure)
{
	struct mr_pressure pr;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_pressure(priv, &pr), 0);
	ck_assert_uint_eq(pr.present, MR_PRESSURE_SOME | MR_PRESSURE_FULL);
	ck_assert_uint_eq(pr.some.avg10_ppm, 12300);
	ck_assert_uint_eq(pr.some.total_us, 1234);
	ck_assert_uint_eq(pr.full.total_us, 99);
	/* No full line: absent, not an error; unknown keys ignored. */
	put("a/g", "memory.pressure",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=7 future=3\n");
	ck_assert_int_eq(be->read_pressure(priv, &pr), 0);
	ck_assert_uint_eq(pr.present, MR_PRESSURE_SOME);
	ck_assert_uint_eq(pr.some.total_us, 7);
	/* Empty: PSI unavailable, never zeros. */
	put("a/g", "memory.pressure", "");
	ck_assert_int_eq(be->read_pressure(priv, &pr), -EOPNOTSUPP);
	/* psi=0: the read fails with EOPNOTSUPP. */
	put("a/g", "memory.pressure",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
	fk.pressure_err = EOPNOTSUPP;
	ck_assert_int_eq(be->read_pressure(priv, &pr), -EOPNOTSUPP);
	fk.pressure_err = 0;
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* The memory.pressure of g with these totals, in microseconds. */
static void pressure_totals(uint64_t some_us, uint64_t full_us)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "some avg10=0.00 avg60=0.00 avg300=0.00 "
		 "total=%" PRIu64 "\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
		 "total=%" PRIu64 "\n", some_us, full_us);
	put("a/g", "memory.pressure", buf);
}

/* The first POLLPRI of an unprivileged trigger can come while the stall
 * barely grew (psi_trigger_create() starts the window at a total the
 * averaging worker does not move): mr_group_psi_trigger_confirm() drops a
 * wake-up whose stall total grew by less than the trigger's stall since
 * the arming or the last wake-up, and passes a real crossing. */
START_TEST(psi_first_wakeup_dropped)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	int some, full, other;

	pressure_totals(5000000, 40000);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	/* 100 ms of some stall per 2 s window, as an unprivileged caller. */
	some = mr_group_psi_trigger_open(g, MR_PSI_SOME, 100000000ULL,
					 2000000000ULL);
	ck_assert_int_ge(some, 0);
	full = mr_group_psi_trigger_open(g, MR_PSI_FULL, 50000000ULL,
					 2000000000ULL);
	ck_assert_int_ge(full, 0);
	/* The spurious first wake-up: 2 ms of stall since arming. */
	pressure_totals(5002000, 40000);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, some), 0);
	/* A real crossing: 150 ms more. */
	pressure_totals(5152000, 40000);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, some), 1);
	/* The next window inherits nothing: 99.999 ms is below 100. */
	pressure_totals(5251999, 40000);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, some), 0);
	pressure_totals(5351999, 40000);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, some), 1);
	/* The full trigger counts the full total, from its own arming. */
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, full), 0);
	pressure_totals(5351999, 90000);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, full), 1);
	/* Not a trigger armed here; bad arguments. */
	other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, other), -EBADF);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(g, -1), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_confirm(NULL, some), -EINVAL);
	close(other);
	close(some);
	close(full);
	mr_ctx_free(ctx);
}
END_TEST

/* ------------------------------------------------------------ limits */

START_TEST(limits_and_max_literal)
{
	struct mr_limits l;

	putu("a/g", "memory.max", MR_UNLIMITED);
	putu("a/g", "memory.high", 180 * MiB);
	putu("a/g", "memory.low", 10 * MiB);
	putu("a", "memory.max", 200 * MiB);
	putu("a", "memory.high", MR_UNLIMITED);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.size, sizeof(l));
	ck_assert_uint_eq(l.usage_bytes, 100 * MiB);
	/* "max" is MR_UNLIMITED; the parent's limit binds. */
	ck_assert_uint_eq(l.own_limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.limit_bytes, 200 * MiB);
	ck_assert(l.flags & MR_LIMITS_ANCESTOR_BINDS);
	ck_assert_uint_eq(l.own_high_bytes, 180 * MiB);
	ck_assert_uint_eq(l.high_bytes, 180 * MiB);
	ck_assert_uint_eq(l.low_bytes, 10 * MiB);
	ck_assert_uint_eq(l.peak_bytes, 123456789);
	ck_assert_uint_eq(l.swap_usage_bytes, 4096);
	ck_assert_uint_eq(l.swap_limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.present, MR_LIMITS_HAS_HIGH |
			  MR_LIMITS_HAS_PROTECTION | MR_LIMITS_HAS_PEAK |
			  MR_LIMITS_HAS_SWAP | MR_LIMITS_HAS_BINDING |
			  MR_LIMITS_HAS_SWAP_FREE);
	/* The host's 64 MiB of free swap bounds the group's unlimited
	 * swap.max; vm.swappiness is the group's. */
	ck_assert_uint_eq(l.swap_free_bytes, 64 * MiB);
	ck_assert_uint_eq(l.swappiness, 60);
	/* The parent's swap.max - swap.current bounds it too. */
	put("a", "memory.swap.max", "20971520\n");
	put("a", "memory.swap.current", "12582912\n");
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_free_bytes, 8 * MiB);
	put("a", "memory.swap.max", "max\n");
	/* A parent's high binds too. */
	putu("a", "memory.high", 150 * MiB);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.high_bytes, 150 * MiB);
	/* Not "max", not a number: -EIO, logged. */
	put("a/g", "memory.max", "maximum\n");
	ck_assert_int_eq(be->read_limits(priv, &l), -EIO);
	ck_assert_ptr_nonnull(strstr(logbuf, "memory.max: not a number"));

	/* Writes: "max" for MR_UNLIMITED, decimal bytes else, through
	 * fds opened O_NONBLOCK. */
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, MR_UNLIMITED),
			 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_HIGH, 64 * MiB), 0);
	ck_assert_int_eq(fk.nlimit_writes, 2);
	ck_assert_str_eq(fk.limit_writes[0], "max=max");
	ck_assert_str_eq(fk.limit_writes[1], "high=67108864");
	ck_assert(fk.nonblock_seen);
	ck_assert(!fk.blocking_seen);
	ck_assert_int_eq(be->write_limit(priv, 7, 1), -EINVAL);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* The binding group and the headroom under it: a pod at 11.5 of its
 * 12 GiB over a child with no limit and 9 GiB used leaves the child
 * 0.5 GiB, not 3 GiB; the nearest of two equal limits binds; a top that
 * is not the real root (it has memory.current: a namespace's or a bind
 * mount's) is a partial view, unlimited only as far as visible. */
START_TEST(binding_group_and_headroom)
{
	const uint64_t GiB = 1024 * MiB;
	struct mr_limits l;

	putu("a", "memory.max", 12 * GiB);
	putu("a", "memory.current", 11 * GiB + GiB / 2);
	fk.usage = 9 * GiB;
	sync_usage();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert(l.present & MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.limit_bytes, 12 * GiB);
	ck_assert_uint_eq(l.binding_level, 1);
	ck_assert_uint_eq(l.binding_usage_bytes, 11 * GiB + GiB / 2);
	ck_assert_uint_eq(l.headroom_bytes, GiB / 2);
	ck_assert(!(l.flags & MR_LIMITS_PARTIAL_VIEW));
	/* The group's own equal limit is nearer: it binds. */
	putu("a/g", "memory.max", 12 * GiB);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.binding_level, 0);
	ck_assert_uint_eq(l.headroom_bytes, 3 * GiB);
	/* Over its limit: no headroom, not a wrapped one. */
	putu("a", "memory.max", 11 * GiB);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.binding_level, 1);
	ck_assert_uint_eq(l.headroom_bytes, 0);
	ck_assert_int_eq(be->close(priv), 0);

	/* No limit anywhere, with the real root at the top. */
	putu("a", "memory.max", MR_UNLIMITED);
	putu("a/g", "memory.max", MR_UNLIMITED);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.headroom_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.binding_level, 0);
	ck_assert(!(l.flags & MR_LIMITS_PARTIAL_VIEW));
	ck_assert_int_eq(be->close(priv), 0);
	/* The top has memory files: not the real root. */
	putu("", "memory.current", 20 * GiB);
	putu("", "memory.max", MR_UNLIMITED);
	putu("", "memory.high", MR_UNLIMITED);
	putu("", "memory.low", 0);
	putu("", "memory.min", 0);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.limit_bytes, MR_UNLIMITED);
	ck_assert(l.flags & MR_LIMITS_PARTIAL_VIEW);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A snapshot interrupted by the group's removal: -ENOENT, and the
 * caller's struct untouched, whichever read the removal hits. */
START_TEST(removed_mid_snapshot)
{
	struct mr_limits l, sentinel;
	struct mr_memstat m;
	int reads, r;

	ck_assert_int_eq(be_open(), 0);
	for (reads = 1; reads < 12; reads++) {
		fk.vanished = false;
		fk.vanish_after_reads = reads;
		memset(&l, 0xa5, sizeof(l));
		sentinel = l;
		r = be->read_limits(priv, &l);
		if (!fk.vanished) {
			/* Fewer reads than that in a snapshot. */
			ck_assert_int_eq(r, 0);
			break;
		}
		ck_assert_int_eq(r, -ENOENT);
		ck_assert_mem_eq(&l, &sentinel, sizeof(l));
	}
	ck_assert_int_gt(reads, 5);
	fk.vanish_after_reads = 0;
	fk.vanished = true;
	memset(&m, 0xa5, sizeof(m));
	ck_assert_int_eq(be->read_memstat(priv, &m), -ENOENT);
	ck_assert_uint_eq(m.size, 0xa5a5a5a5a5a5a5a5ULL);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ protection */

/* The two-level example of tests/test-protection.c in bytes: a (a child
 * of the root) low 300 pages, usage 400 pages; its children g (usage
 * 100, low 0), s1 (usage 300, low 100), s2 (no usage). With
 * memory_recursiveprot g gets (300 - 100) * 100 / (400 - 100) = 66 pages;
 * without, 0. s1's share is checked by opening s1. */
static void protection_tree(void)
{
	const uint64_t P = 4096;

	putu("a", "memory.current", 400 * P);
	putu("a", "memory.low", 300 * P);
	putu("a", "memory.min", 300 * P);
	fk.usage = 100 * P;
	sync_usage();
	putu("a/g", "memory.low", 0);
	putu("a/s1", "memory.current", 300 * P);
	putu("a/s1", "memory.low", 100 * P);
	putu("a/s1", "memory.min", 100 * P);
	putu("a/s2", "memory.current", 0);
}

START_TEST(protection_recursiveprot)
{
	const uint64_t P = 4096;
	struct mr_limits l;
	char p[PATH_MAX];

	protection_tree();
	mri_cgroup2_mountinfo = data("mountinfo.cgroup2-recursiveprot");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 66 * P);
	ck_assert_uint_eq(l.effective_min_bytes, 66 * P);
	ck_assert_int_eq(be->close(priv), 0);

	snprintf(p, sizeof(p), "%s/a/s1", root);
	ck_assert_int_eq(be_open_path(p), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 233 * P);
	ck_assert_int_eq(be->close(priv), 0);

	/* A child of the root: its own setting. */
	snprintf(p, sizeof(p), "%s/a", root);
	ck_assert_int_eq(be_open_path(p), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 300 * P);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(protection_plain)
{
	const uint64_t P = 4096;
	struct mr_limits l;
	char p[PATH_MAX];

	protection_tree();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 0);
	ck_assert_int_eq(be->close(priv), 0);
	snprintf(p, sizeof(p), "%s/a/s1", root);
	ck_assert_int_eq(be_open_path(p), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 100 * P);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A (a child of the real root) max 200 MiB, low 0; A/B low 50 MiB; B's
 * children C low 75 MiB, D low 25 MiB, E low 0 (50 MiB of usage each)
 * and F low 500 MiB with no usage. */
static void reclaim_root_tree(void)
{
	mkgroup("A", 150 * MiB, 0, 0);
	putu("A", "memory.max", 200 * MiB);
	mkgroup("A/B", 150 * MiB, 50 * MiB, 0);
	mkgroup("A/B/C", 50 * MiB, 75 * MiB, 0);
	mkgroup("A/B/D", 50 * MiB, 25 * MiB, 0);
	mkgroup("A/B/E", 50 * MiB, 0, 0);
	mkgroup("A/B/F", 0, 500 * MiB, 0);
}

static uint64_t elow_at(const char *rel, uint32_t root_level)
{
	struct mr_protection p = { .size = sizeof(p) };
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(be_open_path(path), 0);
	ck_assert_int_eq(be->read_protection(priv, root_level, &p), 0);
	ck_assert_int_eq(be->close(priv), 0);
	return p.effective_low_bytes;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Effective protection relative to the reclaim root
 * (mem_cgroup_calculate_protection(root, memcg)): rooted at A, B is a
 * child of the root and keeps its 50 MiB, which its children share in
 * proportion to min(usage, low): C 50, D 25, E 0, F 0 of 75, so C gets
 * 50 * 50 / 75 = 33.3 MiB and D 50 * 25 / 75 = 16.7 MiB (in pages, as the
 * kernel divides). Rooted at the real root, A's low of 0 leaves nothing
 * to anyone below it. */
START_TEST(protection_from_reclaim_root)
{
	struct mr_protection p = { .size = sizeof(p) };
	char path[PATH_MAX];
	mr_ctx_t *ctx;
	mr_group_t *g;

	reclaim_root_tree();
	ck_assert_uint_le(absdiff(elow_at("A/B/C", 2), 100 * MiB / 3), 4096);
	ck_assert_uint_eq(elow_at("A/B/C", 2), 8533 * 4096);
	ck_assert_uint_le(absdiff(elow_at("A/B/D", 2), 50 * MiB / 3), 4096);
	ck_assert_uint_eq(elow_at("A/B/E", 2), 0);
	ck_assert_uint_eq(elow_at("A/B/F", 2), 0);
	ck_assert_uint_eq(elow_at("A/B", 1), 50 * MiB);
	/* The root itself gets none. */
	ck_assert_uint_eq(elow_at("A/B", 0), 0);
	/* Global reclaim: A's low is 0. */
	ck_assert_uint_eq(elow_at("A/B/C", MR_RECLAIM_ROOT_TOP), 0);
	ck_assert_uint_eq(elow_at("A/B/C", 3), 0);
	snprintf(path, sizeof(path), "%s/A/B/C", root);
	ck_assert_int_eq(be_open_path(path), 0);
	ck_assert_int_eq(be->read_protection(priv, 4, &p), -EINVAL);
	ck_assert_int_eq(be->close(priv), 0);

	/* Through the API: the binding limit is A's, so a charge that meets
	 * it reclaims from A; mr_limits keeps global reclaim's view. */
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, path, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_read_protection(g, MR_RECLAIM_ROOT_BINDING,
						  &p), 0);
	ck_assert_uint_eq(p.root_level, 2);
	ck_assert_uint_eq(p.low_bytes, 75 * MiB);
	ck_assert_uint_eq(p.effective_low_bytes, 8533 * 4096);
	ck_assert_int_eq(mr_group_read_protection(g, MR_RECLAIM_ROOT_TOP, &p),
			 0);
	ck_assert_uint_eq(p.root_level, 3);
	ck_assert_uint_eq(p.effective_low_bytes, 0);
	p.size = 0;
	ck_assert_int_eq(mr_group_read_protection(g, 1, &p), -EINVAL);
	ck_assert_int_eq(mr_group_read_protection(g, 1, NULL), -EINVAL);
	mr_ctx_free(ctx);
}
END_TEST

/* s2 claims 300 pages of a's 300 too, but is removed between the listing
 * and the read of its memory.low: skipped, and g's share is computed
 * from g and s1 as if s2 had never been there. */
START_TEST(sibling_removed_mid_walk)
{
	const uint64_t P = 4096;
	struct mr_limits l;

	protection_tree();
	putu("a/s2", "memory.current", 300 * P);
	putu("a/s2", "memory.low", 300 * P);
	mri_cgroup2_mountinfo = data("mountinfo.cgroup2-recursiveprot");
	ck_assert_int_eq(be_open(), 0);
	strcpy(fk.vanish_sibling, "s2/");
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 66 * P);
	ck_assert_ptr_nonnull(strstr(logbuf, "sibling s2 skipped"));
	/* With s2 there, the children claim 400 pages of a's 300:
	 * overcommitted, g's protected usage is 0, so 0. */
	fk.vanish_sibling[0] = '\0';
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.effective_low_bytes, 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ reclaim */

START_TEST(reclaim_memory_reclaim)
{
	uint64_t asked, freed;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 8 * MiB);
	ck_assert_str_eq(fk.reclaim_writes[0], "8388608");
	/* Whole pages: 5000 bytes ask for one page. */
	ck_assert_int_eq(be->reclaim(priv, 5000, &asked, &freed), 0);
	ck_assert_str_eq(fk.reclaim_writes[1], "4096");
	/* One write asks at most a chunk (MRI_CGROUP2_RECLAIM_CHUNK_BYTES):
	 * the bound of its time. */
	ck_assert_int_eq(be->reclaim(priv, 64 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 16 * MiB);
	ck_assert_str_eq(fk.reclaim_writes[2], "16777216");
	ck_assert_uint_eq(freed, 16 * MiB);
	/* EAGAIN: less than asked, not an error; what was freed counts. */
	ck_assert_int_eq(be->reclaim(priv, 64 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 16 * MiB);
	ck_assert_uint_eq(freed, 40 * MiB - 8 * MiB - 16 * MiB - 4096);
	ck_assert_uint_eq(fk.cache, 0);
	/* Nothing left: EAGAIN answered, 0 freed, still success. */
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(freed, 0);
	/* Never more than the usage. */
	fk.usage = 2 * MiB;
	sync_usage();
	ck_assert_int_eq(be->reclaim(priv, 64 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 2 * MiB);
	/* A removed group: ENODEV from the write is -ENOENT. */
	fk.reclaim_err = ENODEV;
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), -ENOENT);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A memory.reclaim that frees 70 % more than asked (0388536ac291's
 * 1 GiB -> 1.7 GiB): freed is the fall in usage, the excess is carried
 * into the controller's next step, which asks that much less, and a large
 * step is written in chunks of MRI_CGROUP2_RECLAIM_CHUNK_BYTES, the next
 * chunk asking only what is still missing, none after the deadline. */
START_TEST(overreclaim_carried)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	uint64_t carry = 0, freed, usage;
	mr_ctx_t *ctx;
	mr_group_t *g;
	int i;

	fk.usage = 900 * MiB;
	fk.cache = 800 * MiB;
	fk.over_ppm = 700000;
	sync_usage();
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	/* A controller's batch as large as its step. */
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 1ULL << 30), 0);
	pthread_mutex_lock(&g->reclaim_lock);
	/* 10 MiB asked, 17 MiB gone: 7 MiB carried. */
	ck_assert_int_eq(mri_reclaim_carried(g, MR_REASON_REQUESTED,
					     10 * MiB, 0, 0, NULL, &carry,
					     &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_str_eq(fk.reclaim_writes[0], "10485760");
	ck_assert_uint_eq(freed, 17 * MiB);
	ck_assert_uint_eq(carry, 7 * MiB);
	/* The next step of 10 MiB asks 3 MiB; 5.1 MiB gone. */
	ck_assert_int_eq(mri_reclaim_carried(g, MR_REASON_REQUESTED,
					     10 * MiB, 0, 0, NULL, &carry,
					     &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 2);
	ck_assert_str_eq(fk.reclaim_writes[1], "3145728");
	ck_assert_uint_eq(freed, 3 * MiB + 3 * MiB * 7 / 10);
	ck_assert_uint_eq(carry, 3 * MiB * 7 / 10 - 0);
	/* A step the carry covers writes nothing. */
	ck_assert_int_eq(mri_reclaim_carried(g, MR_REASON_REQUESTED, 1 * MiB,
					     0, 0, NULL, &carry, &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 2);
	ck_assert_uint_eq(freed, 0);
	ck_assert_uint_eq(carry, 3 * MiB * 7 / 10 - 1 * MiB);
	/* 100 MiB: 16 MiB chunks, each freeing 27.2 MiB; the fourth asks
	 * 16 MiB of the 18.4 missing, and the call ends at 108.8 MiB. */
	carry = 0;
	usage = fk.usage;
	ck_assert_int_eq(mri_reclaim_carried(g, MR_REASON_REQUESTED,
					     100 * MiB, 0, 0, NULL, &carry,
					     &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 6);
	for (i = 2; i < 6; i++)
		ck_assert_str_eq(fk.reclaim_writes[i], "16777216");
	ck_assert_uint_eq(freed, usage - fk.usage);
	ck_assert_uint_eq(freed, 4 * (16 * MiB + 16 * MiB * 7 / 10));
	ck_assert_uint_eq(carry, freed - 100 * MiB);
	/* A deadline already passed: the first chunk only. */
	carry = 0;
	ck_assert_int_eq(mri_reclaim_carried(g, MR_REASON_REQUESTED,
					     100 * MiB, 0,
					     mri_group_now_ns(g), NULL,
					     &carry, &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 7);
	ck_assert_uint_eq(freed, 16 * MiB + 16 * MiB * 7 / 10);
	ck_assert_uint_eq(carry, 0);
	pthread_mutex_unlock(&g->reclaim_lock);
	/* The statistics count the fall in usage, not the asks. */
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.calls, 7);
	ck_assert_uint_eq(st.asked_bytes, 13 * MiB + 5 * 16 * MiB);
	ck_assert_uint_eq(st.freed_bytes, 900 * MiB - fk.usage);
	mr_ctx_free(ctx);
}
END_TEST

/* With swap, memory.current falls while memory.swap.current rises: the
 * statistics report what reclaim freed and what it offloaded to swap
 * apart; with zswap the compressed copy stays charged, so less is freed
 * than offloaded. Without usable swap (memory.swap.max 0, no swap
 * device), what reclaim can take, which a step is sized on, is the page
 * cache alone (mri_reclaimable()). */
START_TEST(freed_and_offloaded_apart)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_memstat ms = { .size = sizeof(ms) };
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_reclaimable rc;
	char stat[512];
	uint64_t freed;
	mr_ctx_t *ctx;
	mr_group_t *g;

	fk.usage = 100 * MiB;
	fk.cache = 4 * MiB;
	fk.anon = 90 * MiB;
	fk.swap = true;
	fk.swap_usage = 0;
	sync_usage();
	putu("a/g", "memory.swap.current", 0);
	snprintf(stat, sizeof(stat), "anon %" PRIu64 "\nfile %" PRIu64 "\n"
		 "inactive_anon %" PRIu64 "\nactive_anon 0\n"
		 "inactive_file %" PRIu64 "\nactive_file 0\n", fk.anon,
		 fk.cache, fk.anon, fk.cache);
	put("a/g", "memory.stat", stat);
	host_swap(512 * MiB, 60);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 16 * MiB), 0);
	/* Swap usable: the anon counts. */
	ck_assert_int_eq(g->be->read_limits(g->priv, &l), 0);
	ck_assert_int_eq(g->be->read_memstat(g->priv, &ms), 0);
	mri_reclaimable(&ms, &l, -1, &rc);
	ck_assert_uint_eq(rc.file_bytes, 4 * MiB);
	ck_assert_uint_eq(rc.swappable_bytes, 90 * MiB);
	/* 12 MiB: the 4 MiB of cache dropped, 8 MiB of anon swapped. */
	ck_assert_int_eq(mr_group_reclaim(g, 12 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 12 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.freed_bytes, 12 * MiB);
	ck_assert_uint_eq(st.offloaded_bytes, 8 * MiB);
	/* zswap keeping a quarter of each page: a batch of 16 MiB swaps
	 * 16 MiB out and frees 12 MiB, and the call asks on for what it
	 * still lacks; offloaded exceeds freed by a third. */
	fk.zswap_ppm = 250000;
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 0, &freed), 0);
	ck_assert_uint_ge(freed, 16 * MiB);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.freed_bytes, 12 * MiB + freed);
	ck_assert_uint_eq(st.offloaded_bytes, fk.swap_usage);
	/* Each write's anon, less the quarter kept (rounded down per write:
	 * at most a byte per write). */
	ck_assert_uint_le(freed, (st.offloaded_bytes - 8 * MiB) * 3 / 4);
	ck_assert_uint_ge(freed + 16, (st.offloaded_bytes - 8 * MiB) * 3 / 4);
	/* A caller of the old, shorter struct reads no offloaded_bytes. */
	st.size = offsetof(struct mr_reclaim_stats, offloaded_bytes);
	st.offloaded_bytes = 7;
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED,
						     &st), 0);
	ck_assert_uint_eq(st.offloaded_bytes, 7);
	/* memory.swap.max 0: no anon is reclaimable, the cache alone. */
	put("a/g", "memory.swap.max", "0\n");
	ck_assert_int_eq(g->be->read_limits(g->priv, &l), 0);
	mri_reclaimable(&ms, &l, -1, &rc);
	ck_assert_uint_eq(rc.swappable_bytes, 0);
	ck_assert_uint_eq(rc.file_bytes + rc.swappable_bytes, 4 * MiB);
	/* No swap device. */
	put("a/g", "memory.swap.max", "max\n");
	host_swap(0, 60);
	ck_assert_int_eq(g->be->read_limits(g->priv, &l), 0);
	mri_reclaimable(&ms, &l, -1, &rc);
	ck_assert_uint_eq(rc.swappable_bytes, 0);
	mr_ctx_free(ctx);
}
END_TEST

/* Through the core: work on a removed group stops with -ENOENT. */
START_TEST(reclaim_gone_stops)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	uint64_t freed = 1;

	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	fk.reclaim_err = ENODEV;
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), -ENOENT);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	mr_ctx_free(ctx);
}
END_TEST

/* A refusal at write() (nsdelegate gives EPERM there, not at open()) is
 * learnt per control: it reaches the caller unchanged, is answered from
 * then on without writing again, and the worker leaves the group to
 * statistics (advisory mode); other controls are not affected. */
START_TEST(refused_reclaim_is_learnt)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	uint64_t freed = 1;
	int i;

	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_control_state(g, MR_CONTROL_RECLAIM), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), 0);
	ck_assert_int_eq(mr_group_control_state(g, MR_CONTROL_RECLAIM), 1);
	fk.reclaim_err = EPERM;
	fk.nreclaim_writes = 0;
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), -EPERM);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_int_eq(mr_group_control_state(g, MR_CONTROL_RECLAIM),
			 -EPERM);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed),
				 -EPERM);
	ck_assert_int_eq(mr_ctx_reclaim(ctx, 4 * MiB, 0, &freed), -EPERM);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_ptr_nonnull(strstr(logbuf, "reclaim was refused"));
	/* The worker: advisory mode, nothing written. */
	putu("a/g", "memory.max", 120 * MiB);
	ck_assert_int_eq(mr_group_set_margin(g, 10 * MiB, 0, 0), 0);
	fk.usage = 115 * MiB;
	sync_usage();
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_ptr_nonnull(strstr(logbuf, "advisory mode"));
	/* Other controls learn on their own. */
	ck_assert_int_eq(mr_group_control_state(g, MR_CONTROL_HIGH), 0);
	ck_assert_int_eq(mr_group_control_state(g, 99), -EINVAL);
	mr_ctx_free(ctx);
}
END_TEST

/* With its own reclaim refused (a delegated group: the delegator owns its
 * memory.reclaim), a group is reclaimed through the child the caller owns,
 * without writing its own control again; with that refused too, it is
 * left to statistics (advisory mode). */
START_TEST(refused_reclaim_goes_to_owned_child)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	uint64_t freed = 0;

	mkgroup("a/g/c1", 30 * MiB, 0, 0);
	put("a/g/c1", "memory.reclaim", "");
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	fk.reclaim_err = EPERM;
	ck_assert_int_eq(mr_group_reclaim(g, 8 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 8 * MiB);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_int_ge(fk.nchild_reclaims, 1);
	ck_assert_int_eq(mr_group_control_state(g, MR_CONTROL_RECLAIM),
			 -EPERM);
	ck_assert_ptr_nonnull(strstr(logbuf, "1 child group owned"));
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 4 * MiB);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	/* The child's cache is gone: nothing more there. */
	ck_assert_int_eq(mr_group_reclaim(g, 64 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 18 * MiB);
	ck_assert_int_eq(mr_group_reclaim(g, 4 * MiB, 0, &freed), -EAGAIN);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	mr_ctx_free(ctx);
}
END_TEST

START_TEST(swappiness_probe)
{
	uint64_t asked, freed;

	/* 6.1: EINVAL to the argument: unsupported, probed once. */
	fk.swappiness_einval = true;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->set_swappiness(priv, 0), -EOPNOTSUPP);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_str_eq(fk.reclaim_writes[0], "0 swappiness=0");
	ck_assert_int_eq(be->set_swappiness(priv, 60), -EOPNOTSUPP);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	/* -1 (the kernel's own) needs no argument. */
	ck_assert_int_eq(be->set_swappiness(priv, -1), 0);
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_str_eq(fk.reclaim_writes[1], "1048576");
	ck_assert_int_eq(be->close(priv), 0);

	/* 6.11+: accepted; every reclaim call passes it. */
	memset(fk.reclaim_writes, 0, sizeof(fk.reclaim_writes));
	fk.nreclaim_writes = 0;
	fk.swappiness_einval = false;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->set_swappiness(priv, 0), 0);
	ck_assert_str_eq(fk.reclaim_writes[0], "0 swappiness=0");
	ck_assert_uint_eq(fk.usage, 100 * MiB - 1 * MiB); /* probe: 0 */
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_str_eq(fk.reclaim_writes[1], "1048576 swappiness=0");
	ck_assert_int_eq(be->set_swappiness(priv, 100), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 2);
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_str_eq(fk.reclaim_writes[2], "1048576 swappiness=100");
	ck_assert_int_eq(be->set_swappiness(priv, 201), -EINVAL);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ fallback */

static void no_memory_reclaim(void)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/memory.reclaim", grp);
	ck_assert_int_eq(unlink(p), 0);
}

static long long journal_size(void)
{
	char name[48], p[PATH_MAX + 64];
	struct stat st;

	ck_assert_int_eq(mri_journal_name(grp, name, sizeof(name)), 0);
	snprintf(p, sizeof(p), "%s/%s", state, name);
	return lstat(p, &st) < 0 ? -1 : st.st_size;
}

START_TEST(fallback_high_step)
{
	uint64_t asked, freed;
	char buf[64];

	no_memory_reclaim();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "no memory.reclaim"));
	ck_assert_int_eq(be->set_swappiness(priv, 0), -EOPNOTSUPP);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 8 * MiB);
	/* Lowered to usage - step, then put back to "max". */
	ck_assert_int_eq(fk.nlimit_writes, 2);
	ck_assert_str_eq(fk.limit_writes[0], "high=96468992");
	ck_assert_str_eq(fk.limit_writes[1], "high=max");
	getf("a/g", "memory.high", buf, sizeof(buf));
	ck_assert_str_eq(buf, "max\n");
	/* The journal is empty between steps and gone at close. */
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(fk.nreclaim_writes, 0);
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

/* A group of 55 MiB of anonymous memory, 3 MiB unevictable and 2 MiB of
 * kernel memory beside 40 MiB of page cache, at 100 MiB. */
static void anon_heavy_counters(uint64_t scan_pages, uint64_t steal_pages)
{
	char buf[512];

	/* As 6.1 prints them: no proactive pair, all reclaim direct. */
	snprintf(buf, sizeof(buf), "anon 57671680\nfile 41943040\n"
		 "kernel 2097152\ninactive_anon 57671680\nactive_anon 0\n"
		 "inactive_file 41943040\nactive_file 0\n"
		 "unevictable 3145728\npgscan %" PRIu64 "\npgsteal %" PRIu64
		 "\npgscan_kswapd 0\npgscan_direct %" PRIu64
		 "\npgsteal_kswapd 0\npgsteal_direct %" PRIu64 "\n",
		 scan_pages, steal_pages, scan_pages, steal_pages);
	put("a/g", "memory.stat", buf);
}

static void anon_heavy_stat(void)
{
	fk.usage = 100 * MiB;
	fk.cache = 40 * MiB;
	sync_usage();
	anon_heavy_counters(0, 0);
}

/* The v2 high fallback never lowers memory.high below what reclaim
 * cannot take: without usable swap, anonymous + unevictable + kernel
 * memory (60 MiB here); a high below it would throttle the group's tasks
 * at every return to user space, stuck at a high of the library's own
 * making. With swap, the anon is reclaimable and the floor is 5 MiB. */
START_TEST(fallback_high_floored)
{
	uint64_t freed, v;
	mr_ctx_t *ctx;
	mr_group_t *g;
	int i;

	no_memory_reclaim();
	anon_heavy_stat();
	host_swap(0, 60);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 64 * MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 64 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 40 * MiB);
	ck_assert_int_gt(fk.nlimit_writes, 0);
	for (i = 0; i < fk.nlimit_writes; i++) {
		if (strcmp(fk.limit_writes[i], "high=max") == 0)
			continue;
		ck_assert_int_eq(mri_parse_u64(fk.limit_writes[i] + 5, &v), 0);
		ck_assert_msg(v >= 60 * MiB, "%s below the floor",
			      fk.limit_writes[i]);
	}
	ck_assert_str_eq(fk.limit_writes[0], "high=62914560");
	/* At the floor: nothing reclaimable, no write. */
	i = fk.nlimit_writes;
	ck_assert_int_eq(mr_group_reclaim(g, 8 * MiB, 0, &freed), -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(fk.nlimit_writes, i);
	mr_ctx_free(ctx);

	/* With swap: only unevictable and kernel memory hold. */
	anon_heavy_stat();
	fk.nlimit_writes = 0;
	host_swap(512 * MiB, 60);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 64 * MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 64 * MiB, 0, &freed), 0);
	ck_assert_str_eq(fk.limit_writes[0], "high=37748736");
	mr_ctx_free(ctx);
}
END_TEST

/* A group of dentries and inodes: 80 MiB of kernel memory, 76 MiB of it
 * reclaimable slab, 20 MiB of anon without swap. The slab is not a floor:
 * memory.reclaim shrinks it (shrink_slab() with the LRUs), so
 * mr_group_reclaim() writes memory.reclaim (before, the 100 MiB counted as
 * unreclaimable ended the call with -EAGAIN and no write), down to anon +
 * unevictable + the rest of kernel memory. */
START_TEST(reclaimable_slab_reclaimed)
{
	struct mr_memstat ms = { .size = sizeof(ms) };
	uint64_t freed;
	mr_ctx_t *ctx;
	mr_group_t *g;

	fk.usage = 100 * MiB;
	fk.cache = 76 * MiB; /* what the fake's memory.reclaim frees */
	sync_usage();
	put("a/g", "memory.stat", "anon 20971520\nfile 0\nkernel 83886080\n"
	    "slab 81788928\nslab_reclaimable 79691776\n"
	    "slab_unreclaimable 2097152\ninactive_anon 20971520\n"
	    "active_anon 0\ninactive_file 0\nactive_file 0\n"
	    "unevictable 0\n");
	host_swap(0, 60);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_read_memstat(g, &ms), 0);
	ck_assert(ms.present & (1ULL << MR_MEMSTAT_SLAB_RECLAIMABLE));
	ck_assert_uint_eq(ms.slab_reclaimable_bytes, 76 * MiB);
	ck_assert_uint_eq(ms.kernel_bytes, 80 * MiB);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 16 * MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 16 * MiB, 0, &freed), 0);
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_str_eq(fk.reclaim_writes[0], "16777216");
	ck_assert_uint_eq(freed, 16 * MiB);
	/* Down to 20 MiB of anon and 4 MiB of other kernel memory, no
	 * further: 76 MiB asked, 60 MiB more freed. */
	ck_assert_int_eq(mr_group_reclaim(g, 76 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 60 * MiB);
	ck_assert_uint_eq(fk.usage, 24 * MiB);
	ck_assert_int_eq(mr_group_reclaim(g, 8 * MiB, 0, &freed), -EAGAIN);
	mr_ctx_free(ctx);
}
END_TEST

/* memory.events and memory.pressure of g with these counters. */
static void events_and_full(uint64_t high, uint64_t max, uint64_t full_us)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "low 0\nhigh %" PRIu64 "\nmax %" PRIu64
		 "\noom 0\noom_kill 0\noom_group_kill 0\n", high, max);
	put("a/g", "memory.events", buf);
	pressure_totals(2 * full_us, full_us);
}

/* A log callback that reads the group's conditions, as a program's may:
 * the warning is logged out of the detection's lock. */
static mr_group_t *log_group;
static int log_fd = -1;
static bool log_fd_readable;
static struct mr_conditions log_c = { .size = sizeof(log_c) };

static void log_reads_conditions(int level, const char *msg, void *userdata)
{
	struct pollfd pfd = { .fd = log_fd, .events = POLLIN };

	log_fn(level, msg, userdata);
	if (!log_group || !strstr(msg, "stuck at memory.high"))
		return;
	log_fd_readable = poll(&pfd, 1, 0) == 1;
	ck_assert_int_eq(mr_group_read_conditions(log_group, &log_c), 0);
}

/* Stuck at memory.high: no swap, nearly all memory anonymous, a high the
 * caller set below what the group needs; high events rise by thousands a
 * second (a group of many threads) while max and oom stay, and PSI full
 * is high. The worker's
 * safety round detects it and makes the conditions fd readable; the
 * caller's high stays the caller's. */
START_TEST(stuck_at_high_detected)
{
	struct mr_conditions c = { .size = sizeof(c) };
	struct pollfd pfd;
	mr_ctx_t *ctx;
	mr_group_t *g;
	char buf[64];
	int fd, status;
	pid_t pid;

	anon_heavy_stat();
	fk.cache = 0;
	host_swap(0, 60);
	events_and_full(0, 0, 0);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_reads_conditions, NULL,
				       MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	fd = mr_group_conditions_fd(g);
	log_group = g;
	log_fd = fd;
	log_fd_readable = false;
	log_c.active = 0;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(mr_group_conditions_fd(g), fd);
	/* The caller's high, below the 60 MiB reclaim cannot take: written
	 * as asked (after what reclaim could do). */
	ck_assert_int_eq(mr_group_set_high(g, 50 * MiB, 0), 0);
	getf("a/g", "memory.high", buf, sizeof(buf));
	ck_assert_str_eq(buf, "52428800\n");
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	/* While high stands still, memory.events alone is read: no
	 * memory.pressure (each read of it sums per-CPU times in the
	 * kernel, for every group every second). */
	fk.pressure_reads = 0;
	usleep(600000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(fk.pressure_reads, 0);
	/* Half a second later (the rule's shortest interval): a million
	 * high events and as much full stall as time, whatever the
	 * machine's pace. The first interval of the rise reads the PSI
	 * base: not judged yet, nothing signalled. */
	usleep(600000);
	events_and_full(500000, 0, 500000000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_gt(fk.pressure_reads, 0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_eq(c.active, 0);
	/* The second in a row: judged, stuck. */
	usleep(600000);
	events_and_full(1000000, 0, 1000000000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	/* The warning came with the fd readable, and the log callback read
	 * the conditions (which took the fd's readiness). */
	ck_assert_msg(strstr(logbuf, "stuck at memory.high"), "%s", logbuf);
	ck_assert(log_fd_readable);
	ck_assert_uint_eq(log_c.active, MR_CONDITION_STUCK_HIGH);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	log_group = NULL;
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_eq(c.active, MR_CONDITION_STUCK_HIGH);
	ck_assert_uint_eq(c.stuck_high_entered, 1);
	ck_assert_uint_ge(c.high_events_per_s, 1000);
	ck_assert_uint_eq(c.full_ppm, 1000000);
	ck_assert_uint_eq(c.unreclaimable_bytes, 60 * MiB);
	ck_assert_uint_eq(c.high_bytes, 50 * MiB);
	/* Read: not readable. */
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	getf("a/g", "memory.high", buf, sizeof(buf));
	ck_assert_str_eq(buf, "52428800\n");
	/* A second fast interval: the tasks' own direct reclaim, from
	 * memory.stat, with the library's taken out (6.1 counts its
	 * memory.reclaim as direct). The library frees 8 MiB of cache, and
	 * pgsteal_direct grows by those 8 MiB alone: the tasks' own is 0;
	 * 4 pages scanned for each stolen. */
	ck_assert_uint_eq(c.direct_reclaim_bytes_per_s, 0);
	fk.cache = 8 * MiB;
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 8 * MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(g, 8 * MiB, 0, NULL), 0);
	anon_heavy_counters(8192, 2048);
	usleep(600000);
	events_and_full(2000000, 0, 2000000000ULL);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_eq(c.active, MR_CONDITION_STUCK_HIGH);
	ck_assert_uint_eq(c.direct_reclaim_bytes_per_s, 0);
	ck_assert_uint_eq(c.reclaim_efficiency_ppm, 250000);
	/* 8 MiB more, none of it the library's: the tasks'. */
	anon_heavy_counters(16384, 4096);
	usleep(600000);
	events_and_full(3000000, 0, 3000000000ULL);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_gt(c.direct_reclaim_bytes_per_s, 0);
	ck_assert_uint_le(c.direct_reclaim_bytes_per_s, 8 * MiB * 2);
	/* The events stop: the condition ends, readable again. */
	usleep(600000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_eq(c.active, 0);
	ck_assert_uint_eq(c.stuck_high_entered, 1);
	/* A max event alongside is no longer "stuck at high" but a limit
	 * met (the kernel reclaims or OOM-kills there): judged (the PSI
	 * base read at the first interval of the rise, full weighed at the
	 * second) and not stuck. */
	usleep(600000);
	events_and_full(4000000, 0, 4000000000ULL);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	usleep(600000);
	events_and_full(5000000, 5, 5000000000ULL);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_int_eq(mr_group_read_conditions(g, &c), 0);
	ck_assert_uint_eq(c.full_ppm, 1000000);
	ck_assert_uint_eq(c.active, 0);
	ck_assert_int_eq(mr_group_conditions_fd(NULL), -EINVAL);
	ck_assert_int_eq(mr_group_read_conditions(g, NULL), -EINVAL);
	/* In a child after fork(): the conditions are the parent's (the
	 * eventfd was closed there, and its lock may be held by the
	 * parent's worker). */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(mr_group_read_conditions(g, &c) != -ECHILD ||
		      mr_group_conditions_fd(g) != -ECHILD ||
		      fcntl(fd, F_GETFD) != -1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mr_ctx_free(ctx);
}
END_TEST

/* A manager died with memory.high lowered: the next open restores it. */
START_TEST(fallback_crash_recovery)
{
	struct mri_journal_record rec = {
		.file = MRI_CGROUP2_HIGH_FILE,
		.original = MR_UNLIMITED,
		.lowest = 50 * MiB,
		.highest = 50 * MiB,
		.pid = 4242,
	};
	struct mri_journal j;
	struct mr_limits l;
	char buf[64], real[PATH_MAX];

	no_memory_reclaim();
	ck_assert_ptr_nonnull(realpath(grp, real));
	ck_assert_int_eq(mri_journal_open(&j, state, real, root, &lg), 0);
	ck_assert_int_eq(mri_journal_lock(&j), 0);
	ck_assert_int_eq(mri_journal_write(&j, &rec), 0);
	mri_journal_unlock(&j);
	mri_journal_close(&j);
	putu("a/g", "memory.high", 50 * MiB);
	ck_assert_int_gt(journal_size(), 0);

	ck_assert_int_eq(be_open(), 0);
	getf("a/g", "memory.high", buf, sizeof(buf));
	ck_assert_str_eq(buf, "max\n");
	ck_assert_ptr_nonnull(strstr(logbuf, "journal of pid 4242"));
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.own_high_bytes, MR_UNLIMITED);
	ck_assert_int_eq(be->close(priv), 0);

	/* Changed by someone else since: left as it is. */
	ck_assert_int_eq(mri_journal_open(&j, state, real, root, &lg), 0);
	ck_assert_int_eq(mri_journal_lock(&j), 0);
	ck_assert_int_eq(mri_journal_write(&j, &rec), 0);
	mri_journal_unlock(&j);
	mri_journal_close(&j);
	putu("a/g", "memory.high", 70 * MiB);
	ck_assert_int_eq(be_open(), 0);
	getf("a/g", "memory.high", buf, sizeof(buf));
	ck_assert_str_eq(buf, "73400320\n");
	ck_assert_ptr_nonnull(strstr(logbuf, "changed by someone else"));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------------------ set_limit */

START_TEST(set_limit_reclaims_first)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	char buf[64];

	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	/* 100 MiB used, 40 of it cache: 80 MiB is reached by reclaim in
	 * 4 MiB batches, then written once. */
	ck_assert_int_eq(mr_group_set_limit(g, 80 * MiB, 0), 0);
	ck_assert_uint_eq(fk.usage, 80 * MiB);
	ck_assert_int_eq(fk.nreclaim_writes, 5);
	ck_assert_str_eq(fk.reclaim_writes[0], "4194304");
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_str_eq(fk.limit_writes[0], "max=83886080");
	ck_assert(fk.nonblock_seen && !fk.blocking_seen);
	/* 50 MiB cannot be reached (60 MiB is not cache): -EBUSY, the limit
	 * unchanged, nothing written. */
	ck_assert_int_eq(mr_group_set_limit(g, 50 * MiB, 0), -EBUSY);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	getf("a/g", "memory.max", buf, sizeof(buf));
	ck_assert_str_eq(buf, "83886080\n");
	/* A high that cannot be reached is written all the same. */
	ck_assert_int_eq(mr_group_set_high(g, 50 * MiB, 0), 0);
	ck_assert_str_eq(fk.limit_writes[1], "high=52428800");
	ck_assert_int_eq(mr_group_set_limit(g, MR_UNLIMITED, 0), 0);
	ck_assert_str_eq(fk.limit_writes[2], "max=max");
	ck_assert_int_eq(mr_group_set_limit(g, 4095, 0), -EINVAL);
	mr_ctx_free(ctx);
}
END_TEST

/* ------------------------------------------------------------ watch */

static int poll_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

/* The fds this process has open (/proc/self/fd, its own fd not
 * counted). */
static int count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* The fds an open v2 group keeps (docs/design.md, "Scale"):
 * memory.current and memory.events (the event fd), armed or not; every
 * read, write and reclaim opens what it needs and closes it. */
START_TEST(fd_count)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat ms = { .size = sizeof(ms) };
	struct mr_events ev = { .size = sizeof(ev) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	uint64_t asked, freed;
	int base = count_fds();

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(count_fds(), base + 2);
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_int_eq(be->read_memstat(priv, &ms), 0);
	ck_assert_int_eq(be->read_events(priv, false, &ev), 0);
	ck_assert_int_eq(be->read_events(priv, true, &ev), 0);
	be->read_pressure(priv, &pr);
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_HIGH, 180 * MiB), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0);
	ck_assert_int_eq(count_fds(), base + 2);
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(count_fds(), base);
}
END_TEST

/* The threshold is watched at the context's tick: on while armed, each
 * acknowledgement answering whether usage is above it. memory.events is
 * a regular file here, which epoll refuses: no event fd is reported and
 * the tick alone watches (conformance-fake-v2 polls a real one). */
START_TEST(threshold_ticks)
{
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(sink_calls, 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "watched by the tick only"));
	/* Disarmed: not on the tick. */
	ck_assert(!sink_tick);
	ck_assert_int_eq(be->event_ack(priv), 0);
	/* Armed above usage: on the tick, each answered "nothing to do". */
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	ck_assert(sink_tick);
	ck_assert_int_eq(be->event_ack(priv), 0);
	/* A new threshold keeps it on. */
	ck_assert_int_eq(be->set_usage_threshold(priv, 140 * MiB), 0);
	ck_assert(sink_tick);
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	/* Usage crosses it: the next tick is a real event. */
	fk.usage = 160 * MiB;
	sync_usage();
	ck_assert_int_eq(be->event_ack(priv), 1);
	/* Disarmed again: off the tick. */
	ck_assert_int_eq(be->set_usage_threshold(priv, MR_UNLIMITED), 0);
	ck_assert(!sink_tick);
	ck_assert_int_eq(be->event_ack(priv), 0);
	/* A removed group: -ENOENT, and off the tick: a gone group must not
	 * keep the worker busy. */
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	ck_assert(sink_tick);
	fk.vanished = true;
	ck_assert_int_eq(be->event_ack(priv), -ENOENT);
	ck_assert(!sink_tick);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* The worker keeps the margin below min(max, high) on cgroup2. */
START_TEST(worker_margin_below_high)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	int r;

	putu("a/g", "memory.max", 200 * MiB);
	putu("a/g", "memory.high", 110 * MiB);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	/* A margin of 120 MiB fits below max but not below high. */
	ck_assert_int_eq(mr_group_set_margin(g, 120 * MiB, 0, 0), -ERANGE);
	ck_assert_int_eq(mr_group_set_margin(g, 20 * MiB, 0, 0), 0);
	/* Usage 100 MiB is above high - margin = 90 MiB: one dispatch
	 * round reclaims it down. */
	r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
	ck_assert_int_ge(r, 0);
	ck_assert_uint_le(fk.usage, 90 * MiB);
	mr_ctx_free(ctx);
}
END_TEST

/* A group of 95 MiB of anonymous memory and no page cache, limit
 * 100 MiB, margin 10 MiB: only swap can bring it below 90 MiB. Returns
 * the margin reclaim calls of a few worker rounds; the log in logbuf. */
static uint64_t anon_margin_calls(void)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	char stat[512];
	mr_ctx_t *ctx;
	mr_group_t *g;
	int i, r;

	fk.usage = fk.anon = 95 * MiB;
	fk.cache = 0;
	sync_usage();
	snprintf(stat, sizeof(stat), "anon %" PRIu64 "\nfile 0\n"
		 "inactive_anon %" PRIu64 "\nactive_anon %" PRIu64 "\n"
		 "inactive_file 0\nactive_file 0\n", fk.anon, fk.anon / 2,
		 fk.anon - fk.anon / 2);
	put("a/g", "memory.stat", stat);
	putu("a/g", "memory.max", 100 * MiB);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 10 * MiB, 0, 0), 0);
	/* Until the worker wants no more rounds (a pass yields after
	 * 100 ms; the bound only ends a runaway). */
	for (i = 0; i < 1000; i++) {
		r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
	}
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN,
						     &st), 0);
	mr_ctx_free(ctx);
	return st.calls;
}

/* Anonymous memory is reclaimable where the group may swap
 * (mem_cgroup_get_nr_swap_pages(), get_scan_count()): the worker
 * reclaims it; with no swap free, vm.swappiness 0, or no headroom under
 * memory.swap.max, it leaves the group alone and says what it counted. */
START_TEST(worker_margin_swaps_anon)
{
	fk.swap = true;
	host_swap(512 * MiB, 60);
	ck_assert_uint_gt(anon_margin_calls(), 0);
	ck_assert_msg(fk.usage <= 90 * MiB, "%s", logbuf);
	ck_assert_ptr_null(strstr(logbuf, "unreachable"));
}
END_TEST

START_TEST(worker_margin_anon_without_swap)
{
	host_swap(0, 60);
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "margin unreachable") &&
		      strstr(logbuf, "reclaimable: 0.0 MiB page cache + "
			     "0.0 MiB anon (swap 0.0 MiB free)"), "%s", logbuf);
}
END_TEST

START_TEST(worker_margin_anon_swappiness_0)
{
	fk.swap = true;
	host_swap(512 * MiB, 0);
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "0.0 MiB anon (swap 512.0 MiB free, "
			     "swappiness 0)"), "%s", logbuf);
}
END_TEST

START_TEST(worker_margin_anon_swap_max_reached)
{
	fk.swap = true;
	host_swap(512 * MiB, 60);
	/* The parent's memory.swap.max is used up: nothing to swap to. */
	put("a", "memory.swap.current", "8388608\n");
	put("a", "memory.swap.max", "8388608\n");
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "0.0 MiB anon (swap 0.0 MiB free)"),
		      "%s", logbuf);
}
END_TEST

/* A tick with usage below the mark costs no margin pass (no read of the
 * limits); a tick above it runs one. */
START_TEST(worker_skips_idle_ticks)
{
	mr_ctx_t *ctx;
	mr_group_t *g;
	int fd, reads;

	putu("a/g", "memory.max", 200 * MiB);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 50 * MiB, 0, 0), 0);
	/* The round after the policy change arms the threshold at 150 MiB
	 * (usage 100 MiB: nothing to do). */
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, 0), 0);
	fd = mr_ctx_worker_fd(ctx);
	ck_assert_int_eq(poll_in(fd, 5000), 1);
	reads = fk.max_reads;
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert_int_eq(fk.max_reads, reads);
	ck_assert_uint_eq(fk.usage, 100 * MiB);
	/* Usage crosses the mark: the next tick is served. */
	fk.usage = 160 * MiB;
	fk.cache = 100 * MiB;
	sync_usage();
	ck_assert_int_eq(poll_in(fd, 5000), 1);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert_int_gt(fk.max_reads, reads);
	ck_assert_uint_le(fk.usage, 150 * MiB);
	mr_ctx_free(ctx);
}
END_TEST

/* A delegated group: its own memory.max and memory.high are its parent's
 * to write. The group opens, reads and reclaims; limit writes answer
 * -EACCES; the keeper's lock (on memory.current) is still taken. */
START_TEST(delegated_read_only_limits)
{
	struct mr_limits l;
	uint64_t asked, freed;

	fk.limits_ro = true;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "not writable"));
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.own_limit_bytes, MR_UNLIMITED);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 50 * MiB),
			 -EACCES);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_HIGH, 50 * MiB),
			 -EACCES);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(freed, 1 * MiB);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0);
	ck_assert_int_eq(be->claim_keeper(priv, false), 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A backend without a high (as cgroup v1): mr_group_set_high() is
 * refused before anything is reclaimed for it. */
static int nohigh_reclaims, nohigh_writes;

static int nohigh_open(void *p, const char *path,
		       const struct mri_open_env *env)
{
	(void)p, (void)path, (void)env;
	return 0;
}

static int nohigh_close(void *p)
{
	(void)p;
	return 0;
}

static void nohigh_forget(void *p)
{
	(void)p;
}

static int nohigh_usage(void *p, uint64_t *usage)
{
	(void)p;
	*usage = 100 * MiB;
	return 0;
}

static int nohigh_limits(void *p, struct mr_limits *l)
{
	(void)p;
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->usage_bytes = 100 * MiB;
	l->limit_bytes = l->own_limit_bytes = 200 * MiB;
	return 0;
}

static int nohigh_memstat(void *p, struct mr_memstat *m)
{
	(void)p;
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	return 0;
}

static int nohigh_reclaim(void *p, uint64_t bytes, uint64_t *asked,
			  uint64_t *freed)
{
	(void)p;
	nohigh_reclaims++;
	*asked = bytes;
	*freed = bytes;
	return 0;
}

static int nohigh_write(void *p, int which, uint64_t bytes)
{
	(void)p, (void)bytes;
	nohigh_writes++;
	return which == MRI_LIMIT_HIGH ? -EOPNOTSUPP : 0;
}

static const struct mri_backend nohigh_backend = {
	.name = "nohigh",
	.caps = MRI_CAP_RECLAIM,
	.open = nohigh_open,
	.close = nohigh_close,
	.forget = nohigh_forget,
	.read_usage = nohigh_usage,
	.read_limits = nohigh_limits,
	.read_memstat = nohigh_memstat,
	.reclaim = nohigh_reclaim,
	.write_limit = nohigh_write,
};

/* ------------------------------------------------------------ proactive */

/* memory.stat of g: cache_bytes of page cache on the file LRUs and
 * anon_bytes on the anonymous ones. */
static void put_stat(uint64_t cache_bytes, uint64_t anon_bytes)
{
	char stat[512];

	snprintf(stat, sizeof(stat), "anon %" PRIu64 "\nfile %" PRIu64 "\n"
		 "inactive_anon %" PRIu64 "\nactive_anon %" PRIu64 "\n"
		 "inactive_file %" PRIu64 "\nactive_file %" PRIu64 "\n",
		 anon_bytes, cache_bytes, anon_bytes / 2,
		 anon_bytes - anon_bytes / 2, cache_bytes / 2,
		 cache_bytes - cache_bytes / 2);
	put("a/g", "memory.stat", stat);
}

/* A PSI file of g whose some total is total_us. */
static void put_psi(const char *file, uint64_t total_us)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "some avg10=0.00 avg60=0.00 avg300=0.00 "
		 "total=%" PRIu64 "\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
		 "total=0\n", total_us);
	put("a/g", file, buf);
}

/* g with 100 MiB of page cache, PSI at rest, the controller on with its
 * defaults (the group's batches 4 MiB: a proactive step is asked whole
 * all the same), its first interval started. */
static mr_group_t *proactive_group(mr_ctx_t **ctx)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	mr_group_t *g;

	fk.usage = fk.cache = 100 * MiB;
	sync_usage();
	put_stat(fk.cache, 0);
	put_psi("memory.pressure", 1000);
	put_psi("io.pressure", 0);
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(*ctx, log_fn, NULL, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_group_open(*ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)), 0);
	ck_assert_int_ge(mr_ctx_worker_dispatch(*ctx, MR_DISPATCH_ALL), 0);
	return g;
}

/* Dispatches, as a caller's loop does, until the controller has measured
 * one more interval (a second of CLOCK_MONOTONIC); its statistics. */
static void next_interval(mr_ctx_t *ctx, mr_group_t *g,
			  struct mr_proactive_stats *st)
{
	struct mr_proactive_stats now = { .size = sizeof(now) };
	int i;

	ck_assert_int_eq(mr_group_read_proactive_stats(g, &now, sizeof(now)),
			 0);
	for (i = 0; i < 100; i++) {
		usleep(100000);
		ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL),
				 0);
		ck_assert_int_eq(mr_group_read_proactive_stats(g, st,
							       sizeof(*st)), 0);
		if (st->intervals > now.intervals)
			return;
	}
	ck_abort_msg("no interval in 100 dispatches");
}

static uint64_t proactive_calls(mr_group_t *g)
{
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };

	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_PROACTIVE,
						     &rs), 0);
	return rs.calls;
}

/* The I/O gate holds a step while io.pressure's some stall is above 5%
 * of the interval; then a step of a tenth of the cache goes through
 * memory.reclaim, in one write; then memory.high written by someone else
 * holds it, counted and logged. */
START_TEST(proactive_io_gate_and_external_high)
{
	struct mr_proactive_stats st = { .size = sizeof(st) };
	mr_ctx_t *ctx;
	mr_group_t *g = proactive_group(&ctx);

	put_psi("io.pressure", 500000);
	next_interval(ctx, g, &st);
	ck_assert_int_eq(st.io_gate, MR_PROACTIVE_IO_GATE_ON);
	ck_assert_uint_eq(st.io_stall_ns, 500000000ULL);
	ck_assert_uint_eq(st.pauses_io, 1);
	ck_assert_uint_eq(proactive_calls(g), 0);
	ck_assert_uint_eq(fk.usage, 100 * MiB);
	ck_assert_ptr_nonnull(strstr(logbuf, "io pressure above the gate"));

	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.pauses_io, 1);
	ck_assert_uint_eq(st.step_bytes, 10 * MiB);
	ck_assert_uint_gt(proactive_calls(g), 0);
	ck_assert_uint_le(fk.usage, 90 * MiB);
	ck_assert_uint_ge(fk.usage, 86 * MiB);
	ck_assert_uint_eq(st.reclaimed_bytes, 100 * MiB - fk.usage);
	/* The step in one write, not in the group's 4 MiB batches. */
	ck_assert_int_eq(fk.nreclaim_writes, 1);
	ck_assert_str_eq(fk.reclaim_writes[0], "10485760");

	putu("a/g", "memory.high", 200 * MiB);
	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.external_high_changes, 1);
	ck_assert_uint_eq(st.last_external_high_bytes, 200 * MiB);
	ck_assert_uint_eq(st.pauses_external, 1);
	ck_assert_uint_eq(st.step_bytes, 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "memory.high changed by someone "
				     "else"));
	mr_ctx_free(ctx);
}
END_TEST

/* The floor: memory.min (which memory.reclaim on the group itself would
 * not keep), then anonymous memory without swap; a stall above the
 * target holds the step. */
START_TEST(proactive_floor_and_pressure)
{
	struct mr_proactive_stats st = { .size = sizeof(st) };
	mr_ctx_t *ctx;
	mr_group_t *g;

	putu("a/g", "memory.min", 95 * MiB);
	g = proactive_group(&ctx);
	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.floor_bytes, 95 * MiB);
	ck_assert_uint_eq(st.step_bytes, 512 * 1024); /* a tenth of 5 MiB */
	ck_assert_uint_ge(fk.usage, 95 * MiB);

	/* 2 ms of stall in a second: above 10 ms per 6 s. */
	put_psi("memory.pressure", 1000 + 2000);
	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.pauses_pressure, 1);
	ck_assert_uint_eq(st.stall_ns, 2000000);
	ck_assert_uint_eq(st.step_bytes, 0);

	/* 97 MiB of anonymous memory and no swap: the floor. */
	putu("a/g", "memory.min", 0);
	host_swap(0, 60);
	put_stat(3 * MiB, 97 * MiB);
	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.floor_bytes, 97 * MiB);
	ck_assert_uint_ge(st.target_bytes, 97 * MiB);
	mr_ctx_free(ctx);
}
END_TEST

/* A pressure read that fails once the controller runs (psi switched off
 * under it): the interval restarts, and the read is tried again an
 * interval later, not at every round of the worker (a v2 group with a
 * margin is served every 10 ms). */
START_TEST(proactive_failed_read_waits_an_interval)
{
	mr_ctx_t *ctx;
	mr_group_t *g = proactive_group(&ctx);
	const char *at;
	int i, n = 0;

	fk.pressure_err = EOPNOTSUPP;
	usleep(950000);
	for (i = 0; i < 20; i++)
		ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL),
				 0);
	for (at = logbuf; (at = strstr(at, "proactive: reading the group"));
	     at++)
		n++;
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(proactive_calls(g), 0);
	fk.pressure_err = 0;
	mr_ctx_free(ctx);
}
END_TEST

/* The count of lines at `level` in the log that hold `text`. */
static int log_count(int level, const char *text)
{
	char head[16];
	const char *line;
	int n = 0;

	snprintf(head, sizeof(head), "%d ", level);
	for (line = logbuf; *line; line = strchr(line, '\n') + 1) {
		const char *end = strchr(line, '\n');

		if (!strncmp(line, head, strlen(head)) &&
		    memmem(line, (size_t)(end - line), text, strlen(text)))
			n++;
	}
	return n;
}

/* Pressure that becomes unreadable under a running controller (a cgroup
 * v1 group's twin removed, psi switched off) is a warning once, not at
 * each retry, and its return is said: the controller takes no step in
 * between and its interval count stops, which alone went unnoticed
 * (regression from a fresh user's trial: memreclaimd --proactive said
 * nothing when the twin was removed). */
START_TEST(proactive_lost_pressure_warned_once)
{
	struct mr_proactive_stats st = { .size = sizeof(st) };
	mr_ctx_t *ctx;
	mr_group_t *g = proactive_group(&ctx);
	int i;

	fk.pressure_err = EOPNOTSUPP;
	for (i = 0; i < 100; i++) {
		if (log_count(MR_LOG_DEBUG, "proactive: reading the group"))
			break;
		usleep(100000);
		ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL),
				 0);
	}
	/* Two failed reads at least: the first warned, the next not. */
	ck_assert_int_eq(log_count(MR_LOG_WARNING,
				   "proactive: reading the group"), 1);
	ck_assert_int_ge(log_count(MR_LOG_DEBUG,
				   "proactive: reading the group"), 1);
	ck_assert_int_eq(log_count(MR_LOG_INFO, "reads again"), 0);
	ck_assert_uint_eq(proactive_calls(g), 0);

	fk.pressure_err = 0;
	next_interval(ctx, g, &st);
	ck_assert_int_eq(log_count(MR_LOG_INFO, "proactive: the group reads "
				   "again; intervals resume"), 1);
	ck_assert_uint_eq(st.intervals, 1);
	mr_ctx_free(ctx);
}
END_TEST

/* No PSI (psi=0: the pressure file reads empty): refused, said why. */
START_TEST(proactive_without_psi)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	mr_ctx_t *ctx;
	mr_group_t *g;

	put("a/g", "memory.pressure", "");
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup2", &g), 0);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)),
			 -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(logbuf, "has no memory PSI"));
	mr_ctx_free(ctx);
}
END_TEST

/* From Linux 6.2 a group's cgroup.pressure set to 0 hides its pressure
 * files (cgroup_pressure_write() -> cgroup_file_show()): the group lives
 * and has no PSI. The reads and the trigger answer -EOPNOTSUPP, not
 * -ENOENT (a group gone, which the worker would give up), and the
 * controller keeps the group: once the files are back it steps. */
START_TEST(proactive_pressure_files_hidden)
{
	struct mr_proactive_stats st = { .size = sizeof(st) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	char p[PATH_MAX];
	mr_ctx_t *ctx;
	mr_group_t *g = proactive_group(&ctx);

	snprintf(p, sizeof(p), "%s/memory.pressure", grp);
	ck_assert_int_eq(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/io.pressure", grp);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &pr), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PRESSURE_SOME,
						   150000000, 2000000000),
			 -EOPNOTSUPP);
	usleep(1100000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "proactive: reading the group: "
				     "no memory PSI (psi=0, or its pressure "
				     "files hidden by cgroup.pressure"));
	ck_assert_uint_eq(proactive_calls(g), 0);

	put_psi("memory.pressure", 1000);
	put_psi("io.pressure", 0);
	usleep(1100000);
	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	next_interval(ctx, g, &st);
	ck_assert_uint_eq(st.step_bytes, 10 * MiB);
	ck_assert_uint_gt(proactive_calls(g), 0);
	mr_ctx_free(ctx);
}
END_TEST

/* PSI totals that jump by more than the interval, or fall, are another
 * group's (on cgroup v1, the cgroup2 group of tasks that moved): the
 * interval restarts, and the next steps in full, where the difference
 * taken as a stall (50 s against 1.7 ms allowed) would have held every
 * step for about 40 intervals. */
START_TEST(proactive_psi_source_changed)
{
	struct mr_proactive_stats st = { .size = sizeof(st) };
	mr_ctx_t *ctx;
	mr_group_t *g = proactive_group(&ctx);

	put_psi("memory.pressure", 1000 + 50000000);
	next_interval(ctx, g, &st);
	ck_assert_ptr_nonnull(strstr(logbuf, "another group's; interval "
				     "restarts"));
	ck_assert_uint_eq(st.intervals, 1);
	ck_assert_uint_eq(st.pauses_pressure, 0);
	ck_assert_uint_eq(st.step_bytes, 10 * MiB);

	/* A total that fell: the same. */
	logbuf[0] = '\0';
	put_psi("memory.pressure", 500);
	next_interval(ctx, g, &st);
	ck_assert_ptr_nonnull(strstr(logbuf, "another group's; interval "
				     "restarts"));
	ck_assert_uint_eq(st.intervals, 2);
	ck_assert_uint_eq(st.pauses_pressure, 0);
	ck_assert_uint_gt(st.step_bytes, 0);
	mr_ctx_free(ctx);
}
END_TEST

START_TEST(set_high_without_high)
{
	mr_ctx_t *ctx;
	mr_group_t *g;

	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mri_group_open(ctx, "/nohigh", &nohigh_backend, &g),
			 0);
	ck_assert_int_eq(mr_group_set_high(g, 50 * MiB, 0), -EOPNOTSUPP);
	ck_assert_int_eq(nohigh_reclaims, 0);
	ck_assert_int_eq(nohigh_writes, 0);
	mr_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup2-fake");
	TCase *tc = tcase_create("backend");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, probe_and_auto);
	tcase_add_test(tc, parent_without_memory);
	tcase_add_test(tc, memstat_with_kernel);
	tcase_add_test(tc, memstat_kernel_from_parts);
	tcase_add_test(tc, memstat_malformed);
	tcase_add_test(tc, events);
	tcase_add_test(tc, pressure);
	tcase_add_test(tc, psi_first_wakeup_dropped);
	tcase_add_test(tc, limits_and_max_literal);
	tcase_add_test(tc, binding_group_and_headroom);
	tcase_add_test(tc, removed_mid_snapshot);
	tcase_add_test(tc, protection_recursiveprot);
	tcase_add_test(tc, protection_plain);
	tcase_add_test(tc, protection_from_reclaim_root);
	tcase_add_test(tc, sibling_removed_mid_walk);
	tcase_add_test(tc, reclaim_memory_reclaim);
	tcase_add_test(tc, overreclaim_carried);
	tcase_add_test(tc, freed_and_offloaded_apart);
	tcase_add_test(tc, reclaim_gone_stops);
	tcase_add_test(tc, refused_reclaim_is_learnt);
	tcase_add_test(tc, refused_reclaim_goes_to_owned_child);
	tcase_add_test(tc, swappiness_probe);
	tcase_add_test(tc, fallback_high_step);
	tcase_add_test(tc, fallback_crash_recovery);
	tcase_add_test(tc, fallback_high_floored);
	tcase_add_test(tc, reclaimable_slab_reclaimed);
	tcase_add_test(tc, stuck_at_high_detected);
	tcase_add_test(tc, set_limit_reclaims_first);
	tcase_add_test(tc, threshold_ticks);
	tcase_add_test(tc, fd_count);
	tcase_add_test(tc, worker_margin_below_high);
	tcase_add_test(tc, worker_margin_swaps_anon);
	tcase_add_test(tc, worker_margin_anon_without_swap);
	tcase_add_test(tc, worker_margin_anon_swappiness_0);
	tcase_add_test(tc, worker_margin_anon_swap_max_reached);
	tcase_add_test(tc, worker_skips_idle_ticks);
	tcase_add_test(tc, set_high_without_high);
	tcase_add_test(tc, proactive_io_gate_and_external_high);
	tcase_add_test(tc, proactive_floor_and_pressure);
	tcase_add_test(tc, proactive_without_psi);
	tcase_add_test(tc, proactive_failed_read_waits_an_interval);
	tcase_add_test(tc, proactive_pressure_files_hidden);
	tcase_add_test(tc, proactive_psi_source_changed);
	tcase_add_test(tc, proactive_lost_pressure_warned_once);
	tcase_add_test(tc, delegated_read_only_limits);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
