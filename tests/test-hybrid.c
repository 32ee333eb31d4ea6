/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The core's PSI entry points and hybrid PSI without a kernel: argument
 * checks of mr_group_read_pressure() and mr_group_psi_trigger_open()
 * before any backend call, the unit conversion, -EOPNOTSUPP for a backend
 * without the ops, -ECHILD after fork(); the hybrid switch on captured
 * mountinfo files with injected cgroup.controllers; the twin's path; the
 * twin helpers on a temporary tree through the file-access table.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "context.h"
#include "fileops.h"
#include "group.h"
#include "hybrid.h"
#include "memreclaim.h"
#include "mountinfo.h"
#include "psi.h"
#include "psitrigger.h"
#include "tasks2.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

/* ------------------------------------------------ a backend to watch */

static struct {
	int pressure_calls, trigger_calls;
	int kind;
	uint64_t stall_us, window_us;
	int answer;
} seen;

static int fb_open(void *priv, const char *path,
		   const struct mri_open_env *env)
{
	(void)priv;
	(void)path;
	(void)env;
	return 0;
}

static int fb_close(void *priv)
{
	(void)priv;
	return 0;
}

static void fb_forget(void *priv)
{
	(void)priv;
}

static int fb_read_usage(void *priv, uint64_t *usage_bytes)
{
	(void)priv;
	*usage_bytes = 0;
	return 0;
}

static int fb_read_limits(void *priv, struct mr_limits *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->limit_bytes = out->own_limit_bytes = MR_UNLIMITED;
	return 0;
}

static int fb_read_memstat(void *priv, struct mr_memstat *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	return 0;
}

static int fb_read_pressure(void *priv, struct mr_pressure *out)
{
	(void)priv;
	seen.pressure_calls++;
	if (seen.answer)
		return seen.answer;
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->present = MR_PRESSURE_SOME | MR_PRESSURE_FULL;
	out->some = (struct mr_psi_stat){ 1, 2, 3, 4 };
	out->full = (struct mr_psi_stat){ 5, 6, 7, 8 };
	return 0;
}

static int fb_trigger_open(void *priv, int kind, uint64_t stall_us,
			   uint64_t window_us)
{
	(void)priv;
	seen.trigger_calls++;
	seen.kind = kind;
	seen.stall_us = stall_us;
	seen.window_us = window_us;
	return seen.answer ? seen.answer : 42;
}

static const struct mri_backend psi_backend = {
	.name = "fake-psi",
	.priv_size = 1,
	.open = fb_open,
	.close = fb_close,
	.forget = fb_forget,
	.read_usage = fb_read_usage,
	.read_limits = fb_read_limits,
	.read_memstat = fb_read_memstat,
	.read_pressure = fb_read_pressure,
	.psi_trigger_open = fb_trigger_open,
};

/* The same without the PSI ops. */
static const struct mri_backend plain_backend = {
	.name = "fake-plain",
	.priv_size = 1,
	.open = fb_open,
	.close = fb_close,
	.forget = fb_forget,
	.read_usage = fb_read_usage,
	.read_limits = fb_read_limits,
	.read_memstat = fb_read_memstat,
};

static mr_ctx_t *ctx;
static mr_group_t *grp, *plain;

static int cap_yes(void)
{
	return 1;
}

static int cap_no(void)
{
	return 0;
}

static void setup(void)
{
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mri_group_open(ctx, "/fake/psi", &psi_backend, &grp),
			 0);
	ck_assert_int_eq(mri_group_open(ctx, "/fake/plain", &plain_backend,
					&plain), 0);
	mri_psi_cap_probe_set(cap_yes);
}

static void teardown(void)
{
	mri_psi_cap_probe_set(NULL);
	mri_file_ops_set(NULL);
	mr_ctx_free(ctx);
}

START_TEST(read_pressure_arguments)
{
	struct mr_pressure p = { .size = sizeof(p) };

	ck_assert_int_eq(mr_group_read_pressure(NULL, &p), -EINVAL);
	ck_assert_int_eq(mr_group_read_pressure(grp, NULL), -EINVAL);
	p.size = offsetof(struct mr_pressure, present) + sizeof(p.present) - 1;
	ck_assert_int_eq(mr_group_read_pressure(grp, &p), -EINVAL);
	p.size = 0;
	ck_assert_int_eq(mr_group_read_pressure(grp, &p), -EINVAL);
	ck_assert_int_eq(seen.pressure_calls, 0);
	p.size = sizeof(p);
	ck_assert_int_eq(mr_group_read_pressure(plain, &p), -EOPNOTSUPP);
}
END_TEST

START_TEST(read_pressure_copies_callers_size)
{
	struct mr_pressure p;

	memset(&p, 0xa5, sizeof(p));
	p.size = sizeof(p);
	ck_assert_int_eq(mr_group_read_pressure(grp, &p), 0);
	ck_assert_uint_eq(p.size, sizeof(p));
	ck_assert_uint_eq(p.present, MR_PRESSURE_SOME | MR_PRESSURE_FULL);
	ck_assert_uint_eq(p.some.total_us, 4);
	ck_assert_uint_eq(p.full.avg300_ppm, 7);
	/* A caller built when the struct ended after `some`: `full` is
	 * left alone. */
	memset(&p, 0xa5, sizeof(p));
	p.size = offsetof(struct mr_pressure, full);
	ck_assert_int_eq(mr_group_read_pressure(grp, &p), 0);
	ck_assert_uint_eq(p.size, offsetof(struct mr_pressure, full));
	ck_assert_uint_eq(p.some.avg10_ppm, 1);
	ck_assert_uint_eq(p.full.avg10_ppm, 0xa5a5a5a5u);
	/* The backend's error, nothing written. */
	seen.answer = -EOPNOTSUPP;
	memset(&p, 0xa5, sizeof(p));
	p.size = sizeof(p);
	ck_assert_int_eq(mr_group_read_pressure(grp, &p), -EOPNOTSUPP);
	ck_assert_uint_eq(p.present, 0xa5a5a5a5u);
}
END_TEST

START_TEST(trigger_arguments_checked_first)
{
	ck_assert_int_eq(mr_group_psi_trigger_open(NULL, MR_PSI_SOME, 100 * MS,
						   SEC), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, 7, 100 * MS, SEC),
			 -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 0, SEC),
			 -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 2 * SEC,
						   SEC), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 100 * MS,
						   400 * MS), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 100 * MS,
						   11 * SEC), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME,
						   100 * MS + 1, SEC), -EINVAL);
	mri_psi_cap_probe_set(cap_no);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 100 * MS,
						   SEC), -EINVAL);
	ck_assert_int_eq(seen.trigger_calls, 0);
	/* checked before the op's absence is */
	ck_assert_int_eq(mr_group_psi_trigger_open(plain, MR_PSI_SOME,
						   100 * MS, SEC), -EINVAL);
	ck_assert_int_eq(mr_group_psi_trigger_open(plain, MR_PSI_SOME,
						   100 * MS, 2 * SEC),
			 -EOPNOTSUPP);
}
END_TEST

START_TEST(trigger_passes_microseconds)
{
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_FULL, 150 * MS,
						   SEC), 42);
	ck_assert_int_eq(seen.trigger_calls, 1);
	ck_assert_int_eq(seen.kind, MR_PSI_FULL);
	ck_assert_uint_eq(seen.stall_us, 150000);
	ck_assert_uint_eq(seen.window_us, 1000000);
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 1000,
						   10 * SEC), 42);
	ck_assert_uint_eq(seen.stall_us, 1);
	ck_assert_uint_eq(seen.window_us, 10000000);
	seen.answer = -EBUSY;
	ck_assert_int_eq(mr_group_psi_trigger_open(grp, MR_PSI_SOME, 1000,
						   10 * SEC), -EBUSY);
}
END_TEST

START_TEST(psi_after_fork)
{
	struct mr_pressure p = { .size = sizeof(p) };
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int ok = mr_group_read_pressure(grp, &p) == -ECHILD &&
			 mr_group_psi_trigger_open(grp, MR_PSI_SOME, 100 * MS,
						   2 * SEC) == -ECHILD &&
			 mr_ctx_set_hybrid_psi(ctx, 1) == -ECHILD &&
			 seen.pressure_calls == 0 && seen.trigger_calls == 0;
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(set_hybrid_psi_arguments)
{
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(NULL, 1), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(NULL, 0), -EINVAL);
	/* Off needs no hybrid host. */
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 0), 0);
	ck_assert(!mri_hybrid_enabled(mri_ctx_backend_state(ctx,
							    &mri_backend_cgroup1)));
}
END_TEST

/* ------------------------------------------- the switch and the twin */

static char data_path[PATH_MAX];

static const char *data(const char *name)
{
	const char *dir = getenv("MEMRECLAIM_TEST_DATA");

	snprintf(data_path, sizeof(data_path), "%s/%s", dir ? dir : "tests/data",
		 name);
	return data_path;
}

/* cgroup.controllers of the cgroup2 root, as the injected table shows
 * it; NULL: the open fails with EACCES. */
static const char *controllers;
static char opened[PATH_MAX];

static int ctl_open(const char *path, int flags, mode_t mode)
{
	char tmpl[] = "/tmp/test-hybrid-ctl-XXXXXX";
	int fd;

	(void)flags;
	(void)mode;
	snprintf(opened, sizeof(opened), "%s", path);
	if (!controllers)
		return -EACCES;
	fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	unlink(tmpl);
	ck_assert_int_eq(write(fd, controllers, strlen(controllers)),
			 (ssize_t)strlen(controllers));
	return fd;
}

static struct mri_file_ops ctl_ops;

static void use_controllers(const char *text)
{
	ctl_ops = mri_file_ops_real;
	ctl_ops.open = ctl_open;
	controllers = text;
	mri_file_ops_set(&ctl_ops);
}

START_TEST(hybrid_found_on_captured_host)
{
	struct mri_hybrid_psi h;

	mri_hybrid_init(&h);
	use_controllers("hugetlb\n");
	ck_assert_int_eq(mri_hybrid_set(&h, true,
					data("mountinfo.6.18-hybrid"), NULL), 0);
	ck_assert_str_eq(opened, "/sys/fs/cgroup/unified/cgroup.controllers");
	ck_assert(mri_hybrid_enabled(&h));
	ck_assert_str_eq(h.v1_mount, "/sys/fs/cgroup/memory");
	ck_assert_str_eq(h.v2_mount, "/sys/fs/cgroup/unified");
	ck_assert_int_eq(mri_hybrid_set(&h, false, NULL, NULL), 0);
	ck_assert(!mri_hybrid_enabled(&h));
	/* Found once: turning it on again reads nothing. */
	opened[0] = '\0';
	ck_assert_int_eq(mri_hybrid_set(&h, true, "/nonexistent", NULL), 0);
	ck_assert_str_eq(opened, "");
	ck_assert(mri_hybrid_enabled(&h));
	mri_hybrid_destroy(&h);

	mri_hybrid_init(&h);
	use_controllers(""); /* no controller at all on cgroup2 */
	ck_assert_int_eq(mri_hybrid_set(&h, true,
					data("mountinfo.6.18-hybrid"), NULL), 0);
	mri_hybrid_destroy(&h);
}
END_TEST

START_TEST(hybrid_refused_elsewhere)
{
	static const char *const with_memory[] = {
		"memory\n", "cpu memory pids\n", "cpuset cpu io memory\n",
	};
	struct mri_hybrid_psi h;
	size_t i;

	for (i = 0; i < sizeof(with_memory) / sizeof(with_memory[0]); i++) {
		mri_hybrid_init(&h);
		use_controllers(with_memory[i]);
		ck_assert_int_eq(mri_hybrid_set(&h, true,
				data("mountinfo.6.18-hybrid"), NULL), -ENODEV);
		ck_assert(!mri_hybrid_enabled(&h));
		mri_hybrid_destroy(&h);
	}
	/* memory as part of another controller's name is not memory */
	mri_hybrid_init(&h);
	use_controllers("hugetlb nomemory memoryx\n");
	ck_assert_int_eq(mri_hybrid_set(&h, true,
			data("mountinfo.6.18-hybrid"), NULL), 0);
	mri_hybrid_destroy(&h);
	/* a pure cgroup2 host has no v1 memory mount */
	mri_hybrid_init(&h);
	use_controllers("");
	ck_assert_int_eq(mri_hybrid_set(&h, true, data("mountinfo.v2-only"),
					NULL), -ENODEV);
	/* v1 without cgroup2 */
	ck_assert_int_eq(mri_hybrid_set(&h, true,
			data("mountinfo.cpu-cpuset"), NULL), -ENODEV);
	ck_assert(!mri_hybrid_enabled(&h));
	/* unreadable inputs */
	ck_assert_int_eq(mri_hybrid_set(&h, true, "/nonexistent", NULL),
			 -EIO);
	ck_assert_int_eq(mri_hybrid_set(&h, true,
			data("mountinfo.malformed-short"), NULL), -EIO);
	use_controllers(NULL);
	ck_assert_int_eq(mri_hybrid_set(&h, true,
			data("mountinfo.6.18-hybrid"), NULL), -EIO);
	ck_assert(!mri_hybrid_enabled(&h));
	/* off is always possible */
	ck_assert_int_eq(mri_hybrid_set(&h, false, NULL, NULL), 0);
	mri_hybrid_destroy(&h);
}
END_TEST

/* Of two cgroup2 mounts, the whole hierarchy wins over a bind mount of a
 * subtree, in either order. */
START_TEST(v2_mount_prefers_whole_hierarchy)
{
	static const char *const orders[2][2] = {
		{ "41 30 0:37 /sub /mnt/sub rw - cgroup2 cgroup2 rw\n",
		  "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 "
		  "rw\n" },
		{ "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 "
		  "rw\n",
		  "41 30 0:37 /sub /mnt/sub rw - cgroup2 cgroup2 rw\n" },
	};
	struct mri_cgroup_mount m;
	char path[] = "/tmp/test-hybrid-mi-XXXXXX";
	int fd, i;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	for (i = 0; i < 2; i++) {
		FILE *f = fopen(path, "we");

		ck_assert_ptr_nonnull(f);
		fputs("34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup "
		      "rw,memory\n", f);
		fputs(orders[i][0], f);
		fputs(orders[i][1], f);
		fclose(f);
		ck_assert_int_eq(mri_mount_find_v2(path, &m), 0);
		ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup/unified");
		ck_assert_str_eq(m.root, "/");
		ck_assert_int_eq(m.version, 2);
	}
	unlink(path);
	ck_assert_int_eq(mri_mount_find_v2(data("mountinfo.cpu-cpuset"), &m),
			 -ENODEV);
	ck_assert_int_eq(mri_mount_find_v2(data("mountinfo.v2-only"), &m), 0);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup");
}
END_TEST

static void hybrid_at(struct mri_hybrid_psi *h, const char *v1,
		      const char *v2)
{
	mri_hybrid_init(h);
	snprintf(h->v1_mount, sizeof(h->v1_mount), "%s", v1);
	snprintf(h->v2_mount, sizeof(h->v2_mount), "%s", v2);
	h->found = true;
	atomic_store(&h->enabled, true);
}

START_TEST(twin_paths)
{
	static const struct {
		const char *v1, *want;
		int ret;
	} cases[] = {
		{ "/sys/fs/cgroup/memory/a/b", "/sys/fs/cgroup/unified/a/b", 0 },
		{ "/sys/fs/cgroup/memory/a", "/sys/fs/cgroup/unified/a", 0 },
		{ "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified", 0 },
		{ "/sys/fs/cgroup/memoryx/a", NULL, -ENODEV },
		{ "/sys/fs/cgroup/cpu/a", NULL, -ENODEV },
		{ "/sys/fs/cgroup", NULL, -ENODEV },
	};
	struct mri_hybrid_psi h;
	char out[PATH_MAX], small[24], longp[PATH_MAX];
	size_t i;

	hybrid_at(&h, "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(mri_hybrid_twin_path(&h, cases[i].v1, out,
						      sizeof(out)),
				 cases[i].ret);
		if (cases[i].want)
			ck_assert_str_eq(out, cases[i].want);
	}
	ck_assert_int_eq(mri_hybrid_twin_path(&h, "/sys/fs/cgroup/memory/a",
					      small, sizeof(small)),
			 -ENAMETOOLONG);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	memcpy(longp, "/sys/fs/cgroup/memory/", 22);
	ck_assert_int_eq(mri_hybrid_twin_path(&h, longp, out, sizeof(out)),
			 -ENAMETOOLONG);
	/* off: no twin */
	atomic_store(&h.enabled, false);
	ck_assert_int_eq(mri_hybrid_twin_path(&h, "/sys/fs/cgroup/memory/a",
					      out, sizeof(out)), -EOPNOTSUPP);
	ck_assert_int_eq(mri_hybrid_twin_path(NULL, "/sys/fs/cgroup/memory/a",
					      out, sizeof(out)), -EOPNOTSUPP);
	mri_hybrid_destroy(&h);
}
END_TEST

/* The twin helpers on a temporary directory (a regular cgroup.procs
 * file stands in for the kernel's), errors injected where a real
 * directory cannot fail. */
static char tree[] = "/tmp/test-hybrid-XXXXXX";
static int mkdir_err, rmdir_err, procs_err;

static int inj_mkdir(const char *path, mode_t mode)
{
	return mkdir_err ? mkdir_err : mri_file_ops_real.mkdir(path, mode);
}

static int inj_rmdir(const char *path)
{
	return rmdir_err ? rmdir_err : mri_file_ops_real.rmdir(path);
}

static int inj_open(const char *path, int flags, mode_t mode)
{
	char fake[PATH_MAX];
	long pid;

	if (procs_err && strstr(path, "/cgroup.procs"))
		return procs_err;
	/* /proc/PID/cgroup: TREE/proc-PID, or ENOENT (an exited task). */
	if (sscanf(path, "/proc/%ld/cgroup", &pid) == 1) {
		snprintf(fake, sizeof(fake), "%s/proc-%ld", tree, pid);
		return mri_file_ops_real.open(fake, flags, mode);
	}
	return mri_file_ops_real.open(path, flags, mode);
}

static struct mri_file_ops inj_ops;

static void tree_setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tree));
	inj_ops = mri_file_ops_real;
	inj_ops.mkdir = inj_mkdir;
	inj_ops.rmdir = inj_rmdir;
	inj_ops.open = inj_open;
	mkdir_err = rmdir_err = procs_err = 0;
	mri_file_ops_set(&inj_ops);
}

static void tree_teardown(void)
{
	char cmd[PATH_MAX];

	mri_file_ops_set(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(twin_helpers)
{
	char twin[PATH_MAX], deep[PATH_MAX], p[PATH_MAX + 16], buf[32];
	int fd;

	snprintf(twin, sizeof(twin), "%s/g", tree);
	snprintf(deep, sizeof(deep), "%s/missing/g", tree);
	ck_assert_int_eq(mri_hybrid_twin_exists(twin), 0);
	ck_assert_int_eq(mri_hybrid_twin_check_new(twin, NULL), 0);
	ck_assert_int_eq(mri_hybrid_twin_check_new(deep, NULL), -ENOENT);
	mkdir_err = -EACCES;
	ck_assert_int_eq(mri_hybrid_twin_create(twin, NULL), -EACCES);
	ck_assert_int_eq(mri_hybrid_twin_exists(twin), 0);
	mkdir_err = 0;
	ck_assert_int_eq(mri_hybrid_twin_create(twin, NULL), 0);
	ck_assert_int_eq(mri_hybrid_twin_exists(twin), 1);
	/* someone else's group of that name is never adopted */
	ck_assert_int_eq(mri_hybrid_twin_check_new(twin, NULL), -EEXIST);

	/* attach: one write of "PID\n" to cgroup.procs */
	snprintf(p, sizeof(p), "%s/cgroup.procs", twin);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(mri_hybrid_twin_attach(twin, 4242), 0);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	ck_assert(memcmp(buf, "4242\n", 5) == 0);
	procs_err = -ESRCH;
	ck_assert_int_eq(mri_hybrid_twin_attach(twin, 4242), -ESRCH);
	procs_err = 0;
	ck_assert_int_eq(mri_hybrid_twin_attach(deep, 4242), -ENOENT);
	ck_assert_int_eq(unlink(p), 0);

	/* remove: 1 removed, 0 absent, EBUSY (and ENOTEMPTY) refused */
	rmdir_err = -EBUSY;
	ck_assert_int_eq(mri_hybrid_twin_remove(twin, NULL), -EBUSY);
	rmdir_err = -ENOTEMPTY;
	ck_assert_int_eq(mri_hybrid_twin_remove(twin, NULL), -EBUSY);
	ck_assert_int_eq(mri_hybrid_twin_exists(twin), 1);
	rmdir_err = 0;
	ck_assert_int_eq(mri_hybrid_twin_remove(twin, NULL), 1);
	ck_assert_int_eq(mri_hybrid_twin_exists(twin), 0);
	ck_assert_int_eq(mri_hybrid_twin_remove(twin, NULL), 0);
}
END_TEST

/* A file of the tree (TREE/rel), with text. */
static void tree_put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(tasks2_parse)
{
	char out[64];

	ck_assert_int_eq(mri_tasks2_parse_cgroup("4:memory:/m/g\n"
						 "0::/system.slice/x\n",
						 out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/system.slice/x");
	ck_assert_int_eq(mri_tasks2_parse_cgroup("0::/\n", out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "/");
	ck_assert_int_eq(mri_tasks2_parse_cgroup("4:memory:/m/g\n", out,
						 sizeof(out)), -ENOENT);
	ck_assert_int_eq(mri_tasks2_parse_cgroup("0::/a/b/c", out, 4),
			 -ENAMETOOLONG);
}
END_TEST

/* The v1 group's tasks 11 and 12 in the cgroup2 group /s/x of the tree
 * (as the cgroup2 mount): taken while it holds them alone and has no
 * descendants; refused otherwise, and for tasks spread over groups or
 * in the root. */
START_TEST(tasks2_group)
{
	char dir[PATH_MAX], out[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/s", tree);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/s/x", tree);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	tree_put("proc-11", "4:memory:/m/g\n0::/s/x\n");
	tree_put("proc-12", "4:memory:/m/g\n0::/s/x\n");
	tree_put("s/x/cgroup.procs", "11\n12\n");
	tree_put("s/x/cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n12\n", out, sizeof(out),
					  NULL), 0);
	ck_assert_str_eq(out, dir);
	/* 13 exited meanwhile: skipped. */
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n12\n13\n", out,
					  sizeof(out), NULL), 0);
	/* No task, or every one gone. */
	ck_assert_int_eq(mri_tasks2_group(tree, "", out, sizeof(out), NULL),
			 -EOPNOTSUPP);
	ck_assert_int_eq(mri_tasks2_group(tree, "13\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
	/* The cgroup2 group holds another task. */
	tree_put("s/x/cgroup.procs", "11\n12\n99\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n12\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
	tree_put("s/x/cgroup.procs", "11\n12\n");
	/* It has a descendant. */
	tree_put("s/x/cgroup.stat", "nr_descendants 1\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n12\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
	tree_put("s/x/cgroup.stat", "nr_descendants 0\n");
	/* The tasks in two groups; in the root. */
	tree_put("proc-12", "0::/s/y\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n12\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
	tree_put("proc-11", "0::/\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
	/* No cgroup2 line at all. */
	tree_put("proc-11", "4:memory:/m/g\n");
	ck_assert_int_eq(mri_tasks2_group(tree, "11\n", out, sizeof(out),
					  NULL), -EOPNOTSUPP);
}
END_TEST

static void teardown_switch(void)
{
	mri_file_ops_set(NULL);
}

int main(void)
{
	Suite *s = suite_create("hybrid");
	TCase *tc;
	SRunner *sr;
	int failed;

	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_pressure_arguments);
	tcase_add_test(tc, read_pressure_copies_callers_size);
	tcase_add_test(tc, trigger_arguments_checked_first);
	tcase_add_test(tc, trigger_passes_microseconds);
	tcase_add_test(tc, psi_after_fork);
	tcase_add_test(tc, set_hybrid_psi_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("switch");
	tcase_add_checked_fixture(tc, NULL, teardown_switch);
	tcase_add_test(tc, hybrid_found_on_captured_host);
	tcase_add_test(tc, hybrid_refused_elsewhere);
	tcase_add_test(tc, twin_paths);
	tcase_add_test(tc, v2_mount_prefers_whole_hierarchy);
	suite_add_tcase(s, tc);

	tc = tcase_create("twin");
	tcase_add_checked_fixture(tc, tree_setup, tree_teardown);
	tcase_add_test(tc, twin_helpers);
	tcase_add_test(tc, tasks2_parse);
	tcase_add_test(tc, tasks2_group);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
