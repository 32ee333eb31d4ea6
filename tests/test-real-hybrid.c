/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-group PSI for cgroup v1 on a hybrid host (mr_ctx_set_hybrid_psi()),
 * on the running kernel. Every v1 group is created here beneath
 * $MEMRECLAIM_TEST_PARENT (default: the v1 memory controller's mount
 * root), its twin beneath the same place of the cgroup2 mount, both
 * removed; only processes this test starts are moved. A writer made to
 * stall under a tight limit shows in the v1 group's pressure, and a PSI
 * trigger armed through it fires. Failures the kernel cannot be made to
 * give at the right moment are injected through the file-access table;
 * after each, nothing is left half-built.
 * Exits 77 with the reason where the host is not hybrid or no group can
 * be created; with CI=true that is a failure instead.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "fileops.h"
#include "group.h"
#include "hybrid.h"
#include "memreclaim.h"
#include "mountinfo.h"

#define MiB (1024ULL * 1024)
#define MS 1000000ULL
#define SEC 1000000000ULL

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static char parent[PATH_MAX];      /* v1 groups are created here */
static char twin_parent[PATH_MAX]; /* and their twins here */
static char v1_mount[PATH_MAX], v2_mount[PATH_MAX];
static char data_dir[PATH_MAX];
static char state_dir[PATH_MAX];
static char group[PATH_MAX], twin[PATH_MAX];
static char data_file[PATH_MAX];
static mr_ctx_t *ctx;
static pid_t children[8];
static int nchildren, seq;

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

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void write_file(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	int fd;

	fmt(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, val, strlen(val)), (ssize_t)strlen(val));
	close(fd);
}

/* The group of pid in the hierarchy of `controller` ("memory", or ""
 * for cgroup2), from /proc/PID/cgroup, into out. */
static void cgroup_of(pid_t pid, const char *controller, char *out,
		      size_t len)
{
	char path[64], line[PATH_MAX + 64], *c, *p;
	FILE *f;

	fmt(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		c = strchr(line, ':');
		p = c ? strchr(c + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		if (strcmp(c + 1, controller) == 0) {
			fmt(out, len, "%s", p);
			break;
		}
	}
	fclose(f);
}

/* A child of this test that sleeps until killed; registered for the
 * teardown. */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	children[nchildren++] = pid;
	return pid;
}

/* A child that, once moved, writes a file of 64 MiB over and over
 * through the page cache of a group with a tight limit: its charges
 * keep meeting the limit and it stalls in reclaim (direct reclaim counts
 * as a memory stall, mm/memcontrol.c try_charge_memcg() with
 * psi_memstall_enter()). */
static pid_t start_writer(const char *path)
{
	static char buf[1 << 20];
	int go[2], fd, i;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		memset(buf, 0x5a, sizeof(buf));
		for (;;) {
			fd = open(data_file, O_WRONLY | O_CREAT | O_TRUNC |
				  O_CLOEXEC, 0600);
			if (fd < 0)
				_exit(3);
			for (i = 0; i < 64; i++)
				if (write(fd, buf, sizeof(buf)) < 0)
					_exit(4);
			close(fd);
		}
	}
	close(go[0]);
	children[nchildren++] = pid;
	ck_assert_int_eq(mr_cgroup_attach(ctx, path, pid), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	return pid;
}

/* A child that, once moved, reads 1 MiB of data_file (written by a
 * writer before, mostly no longer charged: the group's limit is tight)
 * every 500 ms: a trickle of charges and of reclaim, a few tens of
 * microseconds of stall a second. */
static pid_t start_trickle(const char *path)
{
	static char buf[1 << 20];
	int go[2], fd;
	pid_t pid;
	off_t off = 0;
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		fd = open(data_file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(3);
		for (;;) {
			if (pread(fd, buf, sizeof(buf), off) <= 0)
				off = 0;
			else
				off = (off + 7 * (off_t)sizeof(buf)) %
				      (64 * (off_t)sizeof(buf));
			usleep(500000);
		}
	}
	close(go[0]);
	children[nchildren++] = pid;
	ck_assert_int_eq(mr_cgroup_attach(ctx, path, pid), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	return pid;
}

static void kill_children(void)
{
	int i;

	for (i = 0; i < nchildren; i++) {
		kill(children[i], SIGKILL);
		waitpid(children[i], NULL, 0);
	}
	nchildren = 0;
}

/* The names of the next group and its twin (nothing created). */
static void next_names(void)
{
	fmt(group, sizeof(group), "%s/memreclaim-hybrid-%d-%d", parent,
	    (int)getpid(), ++seq);
	fmt(twin, sizeof(twin), "%s/memreclaim-hybrid-%d-%d", twin_parent,
	    (int)getpid(), seq);
}

static void setup(void)
{
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
	nchildren = 0;
	next_names();
	fmt(data_file, sizeof(data_file), "%s/memreclaim-hybrid-%d.data",
	    data_dir, (int)getpid());
}

/* Whatever a test left: its children killed, its groups (and a child
 * group a test made) removed without the library, so that a failing
 * test cannot leave them behind either. */
static void teardown(void)
{
	char sub[PATH_MAX];

	mri_file_ops_set(NULL);
	kill_children();
	fmt(sub, sizeof(sub), "%s/sub", group);
	rmdir(sub);
	if (exists(group)) {
		write_file(group, "memory.force_empty", "0");
		ck_assert_msg(rmdir(group) == 0, "rmdir %s: %s", group,
			      strerror(errno));
	}
	if (exists(twin))
		ck_assert_msg(rmdir(twin) == 0, "rmdir %s: %s", twin,
			      strerror(errno));
	unlink(data_file);
	mr_ctx_free(ctx);
}

/* Both groups gone, as the test found the place. */
static void assert_nothing_left(void)
{
	ck_assert_msg(!exists(group), "%s left behind", group);
	ck_assert_msg(!exists(twin), "%s left behind", twin);
}

/* -------------------------------------------------------------- tests */

START_TEST(create_attach_remove_both)
{
	char v1[PATH_MAX], v2[PATH_MAX], v2_before[PATH_MAX];
	const char *rel = group + strlen(v1_mount);
	pid_t pid;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), 0);
	ck_assert(exists(group));
	ck_assert(exists(twin));
	pid = start_sleeper();
	cgroup_of(pid, "", v2_before, sizeof(v2_before));
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), 0);
	cgroup_of(pid, "memory", v1, sizeof(v1));
	cgroup_of(pid, "", v2, sizeof(v2));
	ck_assert_str_eq(v1, rel);
	ck_assert_str_eq(v2, twin + strlen(v2_mount));
	ck_assert_str_ne(v2, v2_before);
	/* Populated: neither goes. */
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), -EBUSY);
	ck_assert(exists(group));
	ck_assert(exists(twin));
	kill_children();
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

START_TEST(pressure_rises_and_trigger_fires)
{
	struct mr_pressure p0 = { .size = sizeof(p0) };
	struct mr_pressure p1 = { .size = sizeof(p1) };
	struct pollfd pfd;
	mr_group_t *g;
	int fd, n = 0, i;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 16 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p0), 0);
	ck_assert_uint_eq(p0.present & MR_PRESSURE_SOME, MR_PRESSURE_SOME);
	ck_assert_uint_eq(p0.some.total_us, 0); /* a new, empty group */
	/* 50 ms of stall in a 2 s window (a window any process may arm). */
	fd = mr_group_psi_trigger_open(g, MR_PSI_SOME, 50 * MS, 2 * SEC);
	ck_assert_msg(fd >= 0, "trigger: %s", mr_strerror(fd));
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* no stall yet */

	start_writer(group);
	/* Up to 60 s for the first event: a generous bound on a loaded
	 * machine; not a timing assertion. */
	for (i = 0; i < 60 && n == 0; i++)
		n = poll(&pfd, 1, 1000);
	ck_assert_msg(n == 1 && (pfd.revents & POLLPRI),
		      "no PSI event in 60 s (revents %#x)", pfd.revents);
	ck_assert_int_eq(mr_group_read_pressure(g, &p1), 0);
	ck_assert_msg(p1.some.total_us > p0.some.total_us,
		      "some.total_us stayed at %" PRIu64, p1.some.total_us);
	fprintf(stderr, "twin pressure: some total %" PRIu64 " us, avg10 %u "
		"ppm; full total %" PRIu64 " us\n", p1.some.total_us,
		p1.some.avg10_ppm, p1.full.total_us);
	close(fd);
	kill_children();
	/* A trigger open when the group is removed polls POLLERR (kernfs:
	 * a removed node's files answer EPOLLERR), and the v1 group's
	 * reads say it is gone. */
	fd = mr_group_psi_trigger_open(g, MR_PSI_FULL, 100 * MS, 2 * SEC);
	ck_assert_int_ge(fd, 0);
	write_file(group, "memory.force_empty", "0");
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert(pfd.revents & POLLERR);
	close(fd);
	ck_assert_int_eq(mr_group_read_pressure(g, &p1), -ENOENT);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_SOME, 50 * MS,
						   2 * SEC), -ENOENT);
	ck_assert_int_eq(mr_group_close(g), 0);
	assert_nothing_left();
}
END_TEST

/* The first POLLPRI after arming an unprivileged trigger on a group that
 * has stalled before can come while the stall barely grew (the trigger's
 * window starts at a total only privileged triggers' poll worker moves:
 * docs/kernels.md): mr_group_psi_trigger_confirm() drops every wake-up
 * whose stall since the arming is below the trigger's, and a real
 * crossing still answers 1. On a kernel with the fix no such wake-up
 * comes, and the test checks the real crossing alone. */
START_TEST(spurious_first_wakeup_dropped)
{
	struct mr_pressure p = { .size = sizeof(p) };
	uint64_t armed_us, grown_us;
	struct pollfd pfd;
	unsigned dropped = 0, i;
	bool real = false;
	mr_group_t *g;
	int fd, r;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 16 * MiB), 0);
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	/* Some stall first: at least 200 ms (up to 60 s on a loaded
	 * machine: not a timing assertion). */
	start_writer(group);
	for (i = 0; i < 120; i++) {
		ck_assert_int_eq(mr_group_read_pressure(g, &p), 0);
		if (p.some.total_us >= 200000)
			break;
		usleep(500000);
	}
	ck_assert_uint_ge(p.some.total_us, 200000);
	kill_children();
	usleep(2500000);
	start_trickle(group);
	usleep(500000);
	/* 50 ms a 2 s window, as a process without CAP_SYS_RESOURCE may. */
	ck_assert_int_eq(mr_group_read_pressure(g, &p), 0);
	armed_us = p.some.total_us;
	fd = mr_group_psi_trigger_open(g, MR_PSI_SOME, 50 * MS, 2 * SEC);
	ck_assert_msg(fd >= 0, "trigger: %s", mr_strerror(fd));
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	for (i = 0; i < 16; i++) {
		if (poll(&pfd, 1, 500) != 1)
			continue;
		r = mr_group_psi_trigger_confirm(g, fd);
		ck_assert_int_eq(mr_group_read_pressure(g, &p), 0);
		grown_us = p.some.total_us - armed_us;
		fprintf(stderr, "wake-up %.1f s after arming: stall grew "
			"%" PRIu64 " us, confirm %d\n", (i + 1) * 0.5,
			grown_us, r);
		if (grown_us < 50000) {
			ck_assert_int_eq(r, 0);
			dropped++;
		}
	}
	fprintf(stderr, "%u wake-ups of the kernel dropped (%s)\n", dropped,
		dropped ? "an unprivileged trigger's stale window start" :
		"this kernel signals none");
	/* A real crossing. */
	kill_children();
	start_writer(group);
	for (i = 0; i < 60 && !real; i++)
		if (poll(&pfd, 1, 1000) == 1)
			real = mr_group_psi_trigger_confirm(g, fd) == 1;
	ck_assert_msg(real, "no real crossing confirmed in 60 s");
	close(fd);
	kill_children();
	write_file(group, "memory.force_empty", "0");
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

/* The option is never on by default: no twin is made, nothing moves in
 * cgroup2, and the v1 group has no PSI. */
START_TEST(off_by_default)
{
	struct mr_pressure p = { .size = sizeof(p) };
	char v2_before[PATH_MAX], v2[PATH_MAX];
	mr_ctx_t *plain;
	mr_group_t *g;
	pid_t pid;

	ck_assert_int_eq(mr_ctx_new(&plain), 0);
	ck_assert_int_eq(mr_cgroup_create(plain, group, 64 * MiB), 0);
	ck_assert(!exists(twin));
	pid = start_sleeper();
	cgroup_of(pid, "", v2_before, sizeof(v2_before));
	ck_assert_int_eq(mr_cgroup_attach(plain, group, pid), 0);
	cgroup_of(pid, "", v2, sizeof(v2));
	ck_assert_str_eq(v2, v2_before);
	ck_assert_int_eq(mr_group_open(plain, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_SOME, 50 * MS,
						   2 * SEC), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_close(g), 0);
	/* A hybrid context on a group without a twin: no PSI, and attach
	 * refuses before moving anything. */
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_close(g), 0);
	kill_children();
	pid = start_sleeper();
	cgroup_of(pid, "memory", v2_before, sizeof(v2_before));
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), -ENOENT);
	cgroup_of(pid, "memory", v2, sizeof(v2));
	ck_assert_str_eq(v2, v2_before);
	kill_children();
	ck_assert_int_eq(mr_cgroup_remove(plain, group), 0);
	mr_ctx_free(plain);
	assert_nothing_left();
}
END_TEST

/* Turned on for a group already open, then off again. */
START_TEST(switch_applies_to_open_groups)
{
	struct mr_pressure p = { .size = sizeof(p) };
	mr_group_t *g;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), 0);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 0), 0);
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), -EOPNOTSUPP);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), 0);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 0), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), -EOPNOTSUPP);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
	/* The twin removed under the kept fd: no PSI while v1 lives. */
	ck_assert_int_eq(rmdir(twin), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_psi_trigger_open(g, MR_PSI_SOME, 50 * MS,
						   2 * SEC), -EOPNOTSUPP);
	ck_assert_int_eq(mkdir(twin, 0755), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &p), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

START_TEST(create_refusals_make_nothing)
{
	char deep[PATH_MAX], deep_twin[PATH_MAX];
	mr_ctx_t *plain;

	/* A cgroup2 group of the twin's name is someone else's. */
	ck_assert_int_eq(mkdir(twin, 0755), 0);
	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), -EEXIST);
	ck_assert(!exists(group));
	ck_assert_int_eq(rmdir(twin), 0);
	/* A parent made without the option has no twin to nest in. */
	ck_assert_int_eq(mr_ctx_new(&plain), 0);
	ck_assert_int_eq(mr_cgroup_create(plain, group, 64 * MiB), 0);
	fmt(deep, sizeof(deep), "%s/sub", group);
	fmt(deep_twin, sizeof(deep_twin), "%s/sub", twin);
	ck_assert_int_eq(mr_cgroup_create(ctx, deep, 64 * MiB), -ENOENT);
	ck_assert(!exists(deep));
	ck_assert(!exists(twin));
	ck_assert_int_eq(mr_cgroup_remove(plain, group), 0);
	mr_ctx_free(plain);
	assert_nothing_left();
}
END_TEST

/* Injected: the twin's mkdir fails after the v1 group was made. */
static int twin_mkdir_err;

static int inj_mkdir(const char *path, mode_t mode)
{
	if (twin_mkdir_err && strcmp(path, twin) == 0)
		return twin_mkdir_err;
	return mri_file_ops_real.mkdir(path, mode);
}

/* Injected: the twin's cgroup.procs refuses the process. */
static int twin_procs_err;

static int inj_open(const char *path, int flags, mode_t mode)
{
	char procs[PATH_MAX + 16];

	fmt(procs, sizeof(procs), "%s/cgroup.procs", twin);
	if (twin_procs_err && strcmp(path, procs) == 0)
		return twin_procs_err;
	return mri_file_ops_real.open(path, flags, mode);
}

/* Injected: right after the twin's (real) rmdir, a child group appears
 * in the v1 group, so that its removal fails. */
static bool v1_busy_after_twin_rmdir;

static int inj_rmdir(const char *path)
{
	char sub[PATH_MAX];
	int r = mri_file_ops_real.rmdir(path);

	if (r == 0 && v1_busy_after_twin_rmdir && strcmp(path, twin) == 0) {
		fmt(sub, sizeof(sub), "%s/sub", group);
		if (mkdir(sub, 0755) < 0)
			return -errno;
	}
	return r;
}

static struct mri_file_ops inj_ops;

static void inject(void)
{
	inj_ops = mri_file_ops_real;
	inj_ops.mkdir = inj_mkdir;
	inj_ops.open = inj_open;
	inj_ops.rmdir = inj_rmdir;
	twin_mkdir_err = twin_procs_err = 0;
	v1_busy_after_twin_rmdir = false;
	mri_file_ops_set(&inj_ops);
}

START_TEST(create_twin_failure_removes_v1)
{
	inject();
	twin_mkdir_err = -ENOSPC; /* cgroup.max.descendants reached */
	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), -ENOSPC);
	assert_nothing_left();
	twin_mkdir_err = 0;
	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), 0);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

START_TEST(attach_twin_failure_moves_back)
{
	char v1_before[PATH_MAX], v2_before[PATH_MAX];
	char v1[PATH_MAX], v2[PATH_MAX];
	pid_t pid;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), 0);
	inject();
	pid = start_sleeper();
	cgroup_of(pid, "memory", v1_before, sizeof(v1_before));
	cgroup_of(pid, "", v2_before, sizeof(v2_before));
	twin_procs_err = -EACCES;
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), -EACCES);
	cgroup_of(pid, "memory", v1, sizeof(v1));
	cgroup_of(pid, "", v2, sizeof(v2));
	ck_assert_str_eq(v1, v1_before);
	ck_assert_str_eq(v2, v2_before);
	/* The twin gone for real (removed behind the library's back):
	 * refused before anything moves. */
	twin_procs_err = 0;
	ck_assert_int_eq(rmdir(twin), 0);
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), -ENOENT);
	cgroup_of(pid, "memory", v1, sizeof(v1));
	ck_assert_str_eq(v1, v1_before);
	/* No such process: nothing moves either. */
	ck_assert_int_eq(mkdir(twin, 0755), 0);
	kill_children();
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), -ESRCH);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

START_TEST(remove_refusals_keep_both)
{
	char line[32], sub[PATH_MAX];
	pid_t pid;

	ck_assert_int_eq(mr_cgroup_create(ctx, group, 64 * MiB), 0);
	/* A process in the twin alone (moved there by hand): the twin's
	 * rmdir refuses, the v1 group stays too. */
	pid = start_sleeper();
	fmt(line, sizeof(line), "%d", (int)pid);
	write_file(twin, "cgroup.procs", line);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), -EBUSY);
	ck_assert(exists(group));
	ck_assert(exists(twin));
	kill_children();
	/* The v1 removal fails after the twin's: the twin is made again. */
	inject();
	v1_busy_after_twin_rmdir = true;
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), -EBUSY);
	ck_assert(exists(group));
	ck_assert(exists(twin));
	v1_busy_after_twin_rmdir = false;
	fmt(sub, sizeof(sub), "%s/sub", group);
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	assert_nothing_left();
}
END_TEST

/* ------------------------------------------------------------- main */

static int skip(const char *why)
{
	const char *ci = getenv("CI");

	if (ci && strcmp(ci, "true") == 0) {
		printf("FAIL: real-kernel test cannot run under CI: %s\n", why);
		return 1;
	}
	printf("SKIP: %s\n", why);
	return 77;
}

/* Groups of earlier runs of this test whose process is gone. */
static void sweep_stale(const char *dir, bool v1)
{
	char path[PATH_MAX], sub[PATH_MAX];
	struct dirent *e;
	long pid;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (sscanf(e->d_name, "memreclaim-hybrid-%ld-", &pid) != 1 ||
		    e->d_type != DT_DIR || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
		fmt(sub, sizeof(sub), "%s/sub", path);
		rmdir(sub);
		if (v1) {
			fmt(sub, sizeof(sub), "%s/memory.force_empty", path);
			int fd = open(sub, O_WRONLY | O_CLOEXEC);

			if (fd >= 0) {
				if (write(fd, "0", 1) < 0)
					fprintf(stderr, "force_empty %s\n", path);
				close(fd);
			}
		}
		if (rmdir(path) == 0)
			fprintf(stderr, "removed stale %s\n", path);
	}
	if (d)
		closedir(d);
}

static int find_places(void)
{
	const char *p = getenv("MEMRECLAIM_TEST_PARENT");
	const char *d = getenv("MEMRECLAIM_TEST_DATA_DIR");
	static char why[3 * PATH_MAX];
	const struct mri_hybrid_psi *hy;
	struct statfs sf;
	mr_ctx_t *c;
	int r;

	r = mr_ctx_new(&c);
	if (r < 0)
		return skip(mr_strerror(r));
	r = mr_ctx_set_hybrid_psi(c, 1);
	if (r < 0) {
		mr_ctx_free(c);
		fmt(why, sizeof(why), "not a hybrid host (cgroup v1 memory "
		    "beside cgroup2 without it): %s", mr_strerror(r));
		return skip(why);
	}
	hy = mri_ctx_backend_state(c, &mri_backend_cgroup1);
	fmt(v1_mount, sizeof(v1_mount), "%s", hy->v1_mount);
	fmt(v2_mount, sizeof(v2_mount), "%s", hy->v2_mount);
	fmt(parent, sizeof(parent), "%s", p && *p ? p : v1_mount);
	r = mri_hybrid_twin_path(hy, parent, twin_parent,
				 sizeof(twin_parent));
	mr_ctx_free(c);
	if (r < 0) {
		fmt(why, sizeof(why), "%s is not beneath the v1 memory mount %s",
		    parent, v1_mount);
		return skip(why);
	}
	if (!exists(twin_parent)) {
		fmt(why, sizeof(why), "the twin of %s, %s, does not exist",
		    parent, twin_parent);
		return skip(why);
	}
	fmt(data_dir, sizeof(data_dir), "%s", d && *d ? d : "/var/tmp");
	if (statfs(data_dir, &sf) < 0 || sf.f_type == TMPFS_MAGIC)
		return skip("MEMRECLAIM_TEST_DATA_DIR is missing or tmpfs");
	fmt(state_dir, sizeof(state_dir), "/tmp/memreclaim-hybrid-state-%d",
	    (int)getpid());
	/* Can we create a v1 group and its twin here? */
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	r = mr_ctx_new(&c);
	if (r == 0)
		r = mr_ctx_set_hybrid_psi(c, 1);
	fmt(group, sizeof(group), "%s/memreclaim-hybrid-%d-probe", parent,
	    (int)getpid());
	if (r == 0)
		r = mr_cgroup_create(c, group, 64 * MiB);
	if (r == 0)
		r = mr_cgroup_remove(c, group);
	mr_ctx_free(c);
	if (r < 0) {
		fmt(why, sizeof(why), "cannot create a group and its twin in "
		    "%s: %s", parent, mr_strerror(r));
		return skip(why);
	}
	return 0;
}

static void remove_state_dir(void)
{
	char p[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(state_dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fmt(p, sizeof(p), "%s/%s", state_dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(state_dir);
}

int main(void)
{
	Suite *s = suite_create("real-hybrid");
	TCase *tc = tcase_create("kernel");
	SRunner *sr;
	int failed, r;

	if (getenv("MEMRECLAIM_SKIP_REAL_KERNEL")) {
		printf("SKIP: real-kernel tests disabled "
		       "(--disable-real-kernel-tests, as make distcheck does)\n");
		return 77;
	}
	r = find_places();
	if (r)
		return r;
	sweep_stale(parent, true);
	sweep_stale(twin_parent, false);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, create_attach_remove_both);
	tcase_add_test(tc, pressure_rises_and_trigger_fires);
	tcase_add_test(tc, spurious_first_wakeup_dropped);
	tcase_add_test(tc, off_by_default);
	tcase_add_test(tc, switch_applies_to_open_groups);
	tcase_add_test(tc, create_refusals_make_nothing);
	tcase_add_test(tc, create_twin_failure_removes_v1);
	tcase_add_test(tc, attach_twin_failure_moves_back);
	tcase_add_test(tc, remove_refusals_keep_both);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_state_dir();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
