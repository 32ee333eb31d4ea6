/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance target on a real kernel: cgroup v1 on the running
 * machine, or (CONF_KERNEL_V2) cgroup v2 inside the kernel that
 * tests/kernel/run boots under qemu, run there from this tree as a host
 * program (--host-programs).
 *
 * Every group is created here, below $MEMRECLAIM_TEST_PARENT (v1; default
 * the v1 memory controller's mount root) or /sys/fs/cgroup/memreclaim-conf
 * (v2, with the memory controller enabled for its children), charged only
 * by processes this program starts, and removed. The data files live in
 * $MEMRECLAIM_TEST_DATA_DIR (v1; default /var/tmp, never tmpfs, whose
 * pages are not page cache) or on the guest's scratch disk ($MR_SCRATCH).
 * v2 swaps to zram (set up as tests/kernel/guest/v2-zram-swap.c does).
 * With CONF_KERNEL_HYBRID (v1 on a hybrid host, like the development
 * machines), the groups are made, joined and removed through a context
 * with mr_ctx_set_hybrid_psi() on, as is the test's own: each has its
 * cgroup2 twin, where the v1 backend reads pressure and arms triggers.
 * A v1 target that cannot run here exits 77 with the reason, or fails
 * under CI=true (as tests/test-real-cgroup1.c does).
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target.h"
#if !CONF_KERNEL_V2
#include "mountinfo.h"
#include "swap.h"
#endif

#define V2 CONF_KERNEL_V2
#define HYBRID CONF_KERNEL_HYBRID
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#define LIMIT_FILE (V2 ? "memory.max" : "memory.limit_in_bytes")
#define ZRAM "/sys/block/zram0"
#define MAX_FILES 16

static char parent[PATH_MAX], data_dir[PATH_MAX], state_dir[PATH_MAX];
static char made[MAX_FILES][PATH_MAX]; /* data files of the test */
static unsigned nmade, seq;
/* Hybrid: the context that creates, joins and removes the groups. */
static mr_ctx_t *admin;

__attribute__((format(printf, 3, 4)))
static void fmt(char *out, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(out, len, f, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "path too long: %s\n", out);
		exit(99);
	}
}

/* Writes s to dir/name in one write(): 0 or -errno. */
static int put(const char *dir, const char *name, const char *s)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd, r = 0;

	fmt(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		r = -errno;
	close(fd);
	return r;
}

/* ------------------------------------------------------- processes */

/* Moves pid into the group: through the library where it has a twin to
 * join too, else by its cgroup.procs. */
static void attach(const char *path, pid_t pid)
{
	char v[32];

	if (HYBRID) {
		ck_assert_int_eq(mr_cgroup_attach(admin, path, pid), 0);
		return;
	}
	fmt(v, sizeof(v), "%d", (int)pid);
	ck_assert_int_eq(put(path, "cgroup.procs", v), 0);
}

/* A child that is moved into `path`, then runs fn(arg); its exit status
 * is fn's. Only async-signal-safe calls after fork(): the test may have
 * threads. */
static pid_t start(const char *path, int (*fn)(void *), void *arg)
{
	int go[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(10);
		_exit(fn(arg));
	}
	close(go[0]);
	attach(path, pid);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	return pid;
}

static void wait_ok(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %#x", status);
}

struct file_job {
	const char *path;
	uint64_t bytes;
	unsigned passes;          /* of read_file(); 0 counts as 1 */
};

/* The largest file a stream writes: the guest's scratch disk is 512 MiB. */
#define STREAM_FILE_MAX (256 * MiB)

/* Writes a new file of job->bytes and fsyncs it: its pages stay cached,
 * clean, charged to the writer's group. */
static int write_file(void *arg)
{
	static char buf[1 << 20];
	const struct file_job *j = arg;
	uint64_t done;
	int fd;

	fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 2;
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < j->bytes; done += sizeof(buf)) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 3;
	}
	if (fsync(fd) < 0)
		return 4;
	close(fd);
	return 0;
}

/* A data file path of the test, removed at teardown. */
static const char *new_data_file(void)
{
	ck_assert_uint_lt(nmade, MAX_FILES);
	fmt(made[nmade], sizeof(made[0]), "%s/memreclaim-conf-%d-%u.data",
	    data_dir, (int)getpid(), nmade);
	return made[nmade++];
}

static void drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

/* Reads the file j->passes times (at least once) from start to end,
 * dropping it from the page cache before each pass. */
static int read_file(void *arg)
{
	static char buf[1 << 20];
	const struct file_job *j = arg;
	unsigned pass = 0;
	int fd;

	do {
		fd = open(j->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 2;
		if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
			return 3;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	} while (++pass < j->passes);
	return 0;
}

/* Writes, fsyncs, drops and reads back a new file: clean page cache in
 * the folios readahead makes. (The folios of a write can be much larger
 * on kernels whose filesystem has large folios, 6.x ext4: reclaim then
 * frees a whole one at a time, beyond the plain reclaim tolerance;
 * tests/reclaim-bound.h allows one folio.) */
static int write_read_file(void *arg)
{
	const struct file_job *j = arg;
	int r = write_file(arg), fd;

	if (r)
		return r;
	fd = open(j->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		return 5;
	close(fd);
	return read_file(arg);
}

static void charge_cache(const char *path, uint64_t bytes)
{
	struct file_job j = { .path = new_data_file(), .bytes = bytes };

	wait_ok(start(path, write_read_file, &j));
}

static void stream(mr_ctx_t *ctx, const char *path, uint64_t file_bytes,
		   bool worker)
{
	static char file[PATH_MAX];
	static uint64_t file_size;
	uint64_t size = file_bytes < STREAM_FILE_MAX ? file_bytes :
			STREAM_FILE_MAX;
	struct file_job j = {
		.path = file,
		.bytes = size,
		.passes = (unsigned)((file_bytes + size - 1) / size),
	};
	struct stat st;

	/* One file per size, written here (charged to this process's own
	 * group) and dropped from the cache before each pass. */
	if (file_size != size || stat(file, &st) < 0) {
		fmt(file, sizeof(file), "%s", new_data_file());
		ck_assert_int_eq(write_file(&j), 0);
		file_size = size;
	}
	drop_cache(file);
	/* The worker ahead of other programs on a shared machine (nice -10;
	 * refused without CAP_SYS_NICE, then it runs at the caller's level
	 * with a warning): what is measured is how the library keeps the
	 * margin, not the worker's share of a CPU among other programs'
	 * builds. */
	if (worker) {
		ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_NICE,
							 -10), 0);
		ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	}
	wait_ok(start(path, read_file, &j));
	if (worker)
		ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
}

struct conf_proc {
	pid_t pid;
	int go;                   /* write end: tells the child to check */
};

struct anon_job {
	uint64_t bytes;
	int ready, go;            /* the child's ends */
};

/* Fills `bytes` of anonymous memory, a different word in each page, says
 * so, waits, then checks every page (those swapped out come back). */
static int anon_child(void *arg)
{
	const struct anon_job *j = arg;
	uint64_t *p, i, n = j->bytes / 4096;
	char c = 'r';

	p = mmap(NULL, j->bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	for (i = 0; i < n; i++)
		p[i * 512] = i * 0x9e3779b97f4a7c15ULL + 1;
	if (write(j->ready, &c, 1) != 1 || read(j->go, &c, 1) != 1)
		return 3;
	for (i = 0; i < n; i++) {
		if (p[i * 512] != i * 0x9e3779b97f4a7c15ULL + 1)
			return 4;
	}
	return 0;
}

static struct conf_proc *start_anon(const char *path, uint64_t bytes)
{
	struct conf_proc *p = calloc(1, sizeof(*p));
	int ready[2], go[2];
	struct anon_job j;
	char c;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	j = (struct anon_job){ .bytes = bytes, .ready = ready[1],
			       .go = go[0] };
	p->pid = start(path, anon_child, &j);
	close(ready[1]);
	close(go[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	p->go = go[1];
	return p;
}

static void stop_anon(struct conf_proc *p)
{
	ck_assert_int_eq(write(p->go, "g", 1), 1);
	close(p->go);
	wait_ok(p->pid);
	free(p);
}

/* ------------------------------------------------------------ groups */

static void create(uint64_t limit_bytes, char *path, size_t len)
{
	char v[32];

	fmt(path, len, "%s/memreclaim-conf-%d-%u", parent, (int)getpid(),
	    ++seq);
	if (HYBRID) {
		ck_assert_int_eq(mr_cgroup_create(admin, path, limit_bytes), 0);
		return;
	}
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path,
		      strerror(errno));
	fmt(v, sizeof(v), "%" PRIu64, limit_bytes);
	ck_assert_int_eq(put(path, LIMIT_FILE, v), 0);
}

/* rmdir, or mr_cgroup_remove() for a group with a twin: 0 or -errno. */
static int rm_group(const char *path)
{
	if (HYBRID)
		return mr_cgroup_remove(admin, path);
	return rmdir(path) < 0 ? -errno : 0;
}

static void remove_group(const char *path)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	/* v1: charges of exited processes stay; force_empty drops them so
	 * the group goes (it holds no task). v2 takes a group with charges,
	 * once its exited tasks are gone, which may take a moment. */
	if (!V2)
		ck_assert_int_eq(put(path, "memory.force_empty", "0"), 0);
	for (i = 0; rm_group(path) == -EBUSY && i < 5000; i++)
		nanosleep(&ms, NULL);
	ck_assert_msg(access(path, F_OK) < 0, "%s is left", path);
}

/* Groups and data files of earlier tests whose process is gone (a failed
 * test ends before its teardown): "memreclaim-conf-<pid>-..." only. */
static void sweep(const char *dir, bool groups)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	long pid;

	while (d && (e = readdir(d))) {
		if (sscanf(e->d_name, "memreclaim-conf-%ld-", &pid) != 1 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH ||
		    (e->d_type == DT_DIR) != groups)
			continue;
		fmt(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (!groups) {
			unlink(p);
			continue;
		}
		if (!V2)
			put(p, "memory.force_empty", "0");
		rm_group(p);
	}
	if (d)
		closedir(d);
}

static void setup(mr_ctx_t *ctx)
{
	nmade = 0;
	if (HYBRID) {
		ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
		ck_assert_int_eq(mr_ctx_new(&admin), 0);
		ck_assert_int_eq(mr_ctx_set_hybrid_psi(admin, 1), 0);
	}
	sweep(parent, true);
	sweep(data_dir, false);
}

static void teardown(void)
{
	unsigned i;

	for (i = 0; i < nmade; i++)
		unlink(made[i]);
	mr_ctx_free(admin);
	admin = NULL;
}

/* ------------------------------------------------------------- init */

static int cannot_run(const char *why)
{
	const char *ci = getenv("CI");

	if (V2 || (ci && strcmp(ci, "true") == 0)) {
		printf("FAIL: the conformance suite cannot run on the kernel: "
		       "%s\n", why);
		return 1;
	}
	printf("SKIP: %s\n", why);
	return 77;
}

#if V2
/* mkswap from the guest's busybox. */
static int mkswap_zram(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("mkswap", "mkswap", "/dev/zram0", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int init(void)
{
	const char *scratch = getenv("MR_SCRATCH");

	if (!scratch || !*scratch)
		return cannot_run("no scratch disk ($MR_SCRATCH)");
	fmt(data_dir, sizeof(data_dir), "%s", scratch);
	fmt(parent, sizeof(parent), "/sys/fs/cgroup/memreclaim-conf");
	fmt(state_dir, sizeof(state_dir), "/tmp/memreclaim-conf-state");
	mkdir(state_dir, 0700);
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return cannot_run("cannot create /sys/fs/cgroup/memreclaim-conf");
	if (put(parent, "cgroup.subtree_control", "+memory") < 0)
		return cannot_run("cannot enable memory below memreclaim-conf");
	swapoff("/dev/zram0");
	put(ZRAM, "reset", "1");
	if (put(ZRAM, "disksize", "256M") < 0 || mkswap_zram() < 0 ||
	    swapon("/dev/zram0", 0) < 0)
		return cannot_run("no swap on zram");
	return 0;
}

static void fini(void)
{
	swapoff("/dev/zram0");
	put(ZRAM, "reset", "1");
	rmdir(parent);
	rmdir(state_dir);
}
#else
/* A decimal file: 0, or -1. */
static int read_u64_at(const char *file, uint64_t *v)
{
	unsigned long long x;
	FILE *f = fopen(file, "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu", &x);
	fclose(f);
	if (n != 1)
		return -1;
	*v = x;
	return 0;
}

static int init(void)
{
	const char *p = getenv("MEMRECLAIM_TEST_PARENT");
	const char *d = getenv("MEMRECLAIM_TEST_DATA_DIR");
	static char why[PATH_MAX + 64];
	struct mri_cgroup_mount m;
	uint64_t swap_free, swappiness;
	char probe[PATH_MAX];
	struct statfs sf;

	if (getenv("MEMRECLAIM_SKIP_REAL_KERNEL")) {
		printf("SKIP: real-kernel tests disabled "
		       "(--disable-real-kernel-tests, as make distcheck does)\n");
		return 77;
	}
	if (p && *p)
		fmt(parent, sizeof(parent), "%s", p);
	else if (mri_mount_find_memory_v1("/proc/self/mountinfo", &m) < 0)
		return cannot_run("no cgroup v1 memory controller is mounted");
	else
		fmt(parent, sizeof(parent), "%s", m.mount_point);
	fmt(data_dir, sizeof(data_dir), "%s", d && *d ? d : "/var/tmp");
	if (statfs(data_dir, &sf) < 0 || sf.f_type == TMPFS_MAGIC)
		return cannot_run("MEMRECLAIM_TEST_DATA_DIR is missing or tmpfs");
	fmt(state_dir, sizeof(state_dir), "/tmp/memreclaim-conf-state-%d",
	    (int)getpid());
	if (mkdir(state_dir, 0700) < 0)
		return cannot_run("cannot create the state directory");
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	fmt(probe, sizeof(probe), "%s/memreclaim-conf-%d-probe", parent,
	    (int)getpid());
	if (mkdir(probe, 0755) < 0) {
		fmt(why, sizeof(why), "cannot create a memory cgroup in %s: %s",
		    parent, strerror(errno));
		return cannot_run(why);
	}
	rmdir(probe);
	if (HYBRID) {
		mr_ctx_t *c;
		int r = mr_ctx_new(&c);

		if (r == 0)
			r = mr_ctx_set_hybrid_psi(c, 1);
		mr_ctx_free(c);
		if (r < 0) {
			fmt(why, sizeof(why), "no hybrid PSI here (cgroup2 "
			    "without the memory controller beside v1): %s",
			    strerror(-r));
			return cannot_run(why);
		}
	}
	/* Swap accounting (swapaccount=1, CONFIG_MEMCG_SWAP): the memsw
	 * files, which read_limits() turns into swap usage and limit. */
	fmt(probe, sizeof(probe), "%s/memory.memsw.usage_in_bytes", parent);
	if (access(probe, F_OK) == 0)
		conf_target.expect.limits_present |= MR_LIMITS_HAS_SWAP;
	/* Swap on the host, and a swappiness the groups inherit that is
	 * not 0: a step may then swap anonymous memory out (lib/core/policy.h). */
	fmt(probe, sizeof(probe), "%s/memory.swappiness", parent);
	if (mri_swap_host_free(&swap_free) == 0 && swap_free > 0 &&
	    read_u64_at(probe, &swappiness) == 0 && swappiness > 0) {
		conf_target.expect.anon_reclaim = 0;
		conf_target.expect.margin_swaps = true;
	}
	return 0;
}

static void fini(void)
{
	char cmd[PATH_MAX + 16];

	/* Our own state directory: lock files and emptied journals. */
	fmt(cmd, sizeof(cmd), "rm -rf '%s'", state_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", state_dir);
}

#endif

struct conf_target conf_target = {
	.name = V2 ? "cgroup2" : HYBRID ? "cgroup1-hybrid" : "cgroup1",
	.backend = V2 ? "cgroup2" : "cgroup1",
	.init = init,
	.fini = fini,
	.setup = setup,
	.teardown = teardown,
	.create = create,
	.remove = remove_group,
	.charge_cache = charge_cache,
	.start_anon = start_anon,
	.stop_anon = stop_anon,
	.stream = stream,
	.expect = {
#if V2
		/* Linux 6.1: memory.reclaim has no swappiness= (6.11). */
		.set_high = 0,
		.swappiness = -EOPNOTSUPP,
		.pressure = 0,
		.psi_poll = POLLPRI,
		.events_present = (1ULL << (MR_EVENT_OOM_GROUP_KILL + 1)) - 1,
		.limits_present = MR_LIMITS_HAS_HIGH |
				  MR_LIMITS_HAS_PROTECTION |
				  MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_SWAP |
				  MR_LIMITS_HAS_BINDING | MR_LIMITS_HAS_SWAP_FREE,
		.anon_reclaim = 0,
		/* 256 MiB of zram swap (init()). */
		.margin_swaps = true,
		.charge_stock = true,
#else
		.set_high = -EOPNOTSUPP,
		.whole_later_steps = true,
		.swappiness = -EOPNOTSUPP,
#if HYBRID
		/* From the group's cgroup2 twin. */
		.pressure = 0,
		.psi_poll = POLLPRI,
#else
		.pressure = -EOPNOTSUPP,
#endif
		.events_present = 1ULL << MR_EVENT_MAX |
				  1ULL << MR_EVENT_OOM_KILL,
		.limits_present = MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_BINDING |
				  MR_LIMITS_HAS_SWAP_FREE,
		/* Without swap on the host (init() tells): */
		.anon_reclaim = -EAGAIN,
		.anon_reason = "the host has no free swap (or the parent's "
			       "memory.swappiness is 0): a cgroup1 step asks "
			       "at most half of the group's page cache (the "
			       "core's batch, since the step can OOM-kill) "
			       "and the group has none",
		.swap_reason = "the host has no free swap (or the parent's "
			       "memory.swappiness is 0)",
		.charge_stock = true,
#endif
	},
};
