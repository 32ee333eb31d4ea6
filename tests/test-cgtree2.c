/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup2 group creation, attach and removal (lib/cgroupfs/cgtree2.c) on a fake
 * cgroup2 tree: a temporary directory whose control files a fake kernel
 * behind the file-access table keeps as the kernel would (mkdir fills a
 * group's files; +memory in cgroup.subtree_control and joining
 * cgroup.procs follow the no-internal-process rule; a process is in one
 * group at a time), with failures injected where a root test process
 * would be refused nothing.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtree2.h"
#include "fileops.h"
#include "memreclaim.h"

#define MAX_FDS 1024
#define MAX_GROUPS 16

static char root[PATH_MAX];
static struct {
	char fdpath[MAX_FDS][PATH_MAX];
	int fdflags[MAX_FDS];
	char groups[MAX_GROUPS][PATH_MAX];
	int ngroups;
	int subtree_writes;      /* writes to any cgroup.subtree_control */
	int fail_subtree_err;    /* the next +memory write fails so */
	int fail_max_err;        /* memory.max writes fail so */
	int max_flags;           /* open flags of the last memory.max write */
	char max_written[256];
} fk;

static void path_of(char *out, const char *dir, const char *name)
{
	ck_assert_int_lt(snprintf(out, PATH_MAX, "%s/%s", dir, name), PATH_MAX);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	path_of(p, dir, name);
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static char *get(const char *dir, const char *name)
{
	static char buf[4096];
	char p[PATH_MAX];
	size_t n;
	FILE *f;

	path_of(p, dir, name);
	f = fopen(p, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static bool is_root_dir(const char *dir)
{
	return strcmp(dir, root) == 0;
}

static void dir_of(const char *file, char *dir)
{
	strcpy(dir, file);
	*strrchr(dir, '/') = '\0';
}

static const char *base(const char *file)
{
	return strrchr(file, '/') + 1;
}

/* mkdir as cgroupfs does it: the new group's files appear. */
static int f_mkdir(const char *path, mode_t mode)
{
	char parent[PATH_MAX], *ctl;
	int r = mri_file_ops_real.mkdir(path, mode);

	if (r < 0)
		return r;
	dir_of(path, parent);
	ctl = get(parent, "cgroup.subtree_control");
	put(path, "cgroup.controllers", ctl ? ctl : "");
	put(path, "cgroup.subtree_control", "");
	put(path, "cgroup.procs", "");
	put(path, "cgroup.type", "domain\n");
	put(path, "cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n");
	if (ctl && strstr(ctl, "memory"))
		put(path, "memory.max", "max\n");
	ck_assert_int_lt(fk.ngroups, MAX_GROUPS);
	strcpy(fk.groups[fk.ngroups++], path);
	return 0;
}

static int f_rmdir(const char *path)
{
	static const char *const files[] = {
		"cgroup.controllers", "cgroup.subtree_control", "cgroup.procs",
		"cgroup.type", "cgroup.stat", "memory.max",
	};
	char p[PATH_MAX], *procs = get(path, "cgroup.procs");
	size_t i;

	if (procs && procs[0])
		return -EBUSY;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		path_of(p, path, files[i]);
		unlink(p);
	}
	return mri_file_ops_real.rmdir(path);
}

static int f_open(const char *path, int flags, mode_t mode)
{
	int fd = mri_file_ops_real.open(path, flags & ~O_NONBLOCK, mode);

	if (fd >= 0 && fd < MAX_FDS) {
		strcpy(fk.fdpath[fd], path);
		fk.fdflags[fd] = flags;
	}
	return fd;
}

/* Removes pid from every group's cgroup.procs. */
static void unlist(long pid)
{
	char line[32], out[4096], *procs, *p, *nl;
	int g;

	snprintf(line, sizeof(line), "%ld", pid);
	for (g = -1; g < fk.ngroups; g++) {
		const char *dir = g < 0 ? root : fk.groups[g];

		procs = get(dir, "cgroup.procs");
		if (!procs)
			continue;
		out[0] = '\0';
		for (p = procs; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			*nl = '\0';
			if (strcmp(p, line) != 0)
				strcat(strcat(out, p), "\n");
		}
		put(dir, "cgroup.procs", out);
	}
}

static ssize_t f_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	char dir[PATH_MAX], val[256];
	const char *name = base(fk.fdpath[fd]);

	ck_assert_uint_lt(len, sizeof(val));
	memcpy(val, buf, len);
	val[len] = '\0';
	dir_of(fk.fdpath[fd], dir);
	if (strcmp(name, "cgroup.subtree_control") == 0) {
		fk.subtree_writes++;
		if (strcmp(val, "+memory") == 0) {
			if (fk.fail_subtree_err) {
				int e = fk.fail_subtree_err;

				fk.fail_subtree_err = 0;
				return -e;
			}
			if (!is_root_dir(dir) && get(dir, "cgroup.procs")[0])
				return -EBUSY; /* the kernel's own rule */
			put(dir, "cgroup.subtree_control", "memory\n");
		} else if (strcmp(val, "-memory") == 0) {
			put(dir, "cgroup.subtree_control", "");
		} else {
			ck_abort_msg("unexpected subtree_control write %s", val);
		}
		return (ssize_t)len;
	}
	if (strcmp(name, "cgroup.procs") == 0) {
		long pid = strtol(val, NULL, 10);
		char procs[4096];

		if (pid == 999)
			return -ESRCH;
		if (!is_root_dir(dir) && get(dir, "cgroup.subtree_control")[0])
			return -EBUSY;
		unlist(pid);
		snprintf(procs, sizeof(procs), "%s%ld\n",
			 get(dir, "cgroup.procs"), pid);
		put(dir, "cgroup.procs", procs);
		return (ssize_t)len;
	}
	if (strcmp(name, "memory.max") == 0) {
		fk.max_flags = fk.fdflags[fd];
		if (fk.fail_max_err)
			return -fk.fail_max_err;
		snprintf(fk.max_written, sizeof(fk.max_written), "%s", val);
	}
	return mri_file_ops_real.pwrite(fd, buf, len, off);
}

/* The real table but for the calls the fake kernel answers. */
static struct mri_file_ops ops;

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	memset(&fk, 0, sizeof(fk));
	snprintf(root, sizeof(root), "%s/mr-cgtree2-XXXXXX", t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	put(root, "cgroup.controllers", "cpu io memory pids\n");
	put(root, "cgroup.subtree_control", "");
	put(root, "cgroup.procs", "1\n");
	put(root, "cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n");
	ops = mri_file_ops_real;
	ops.open = f_open;
	ops.pwrite = f_pwrite;
	ops.mkdir = f_mkdir;
	ops.rmdir = f_rmdir;
	mri_file_ops_set(&ops);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	mri_file_ops_set(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* A group `name` under the root with +memory, holding `procs`. */
static void make_group(char *out, const char *name, const char *procs)
{
	path_of(out, root, name);
	ck_assert_int_eq(mri_cg2_create(NULL, out, MR_UNLIMITED, NULL), 0);
	put(out, "cgroup.procs", procs);
}

/* The number of fds the process has open. */
static int open_fds(void)
{
	char p[64];
	int fd, n = 0;

	for (fd = 0; fd < MAX_FDS; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n += access(p, F_OK) == 0;
	}
	return n;
}

/* mri_read_file(), the small-file read of cgtree2, swap and hybrid: the
 * whole file NUL-terminated, its length, its fd closed, also when the
 * file does not fit or is missing. */
START_TEST(read_file_whole_and_closed)
{
	const char *text = "nr_descendants 0\nnr_dying_descendants 0\n";
	char p[PATH_MAX], buf[64], small[8];
	int before = open_fds();

	path_of(p, root, "cgroup.stat");
	ck_assert_int_eq(mri_read_file(p, buf, sizeof(buf)),
			 (ssize_t)strlen(text));
	ck_assert_str_eq(buf, text);
	ck_assert_int_eq(mri_read_file(p, small, sizeof(small)), -EOVERFLOW);
	path_of(p, root, "memory.none");
	ck_assert_int_eq(mri_read_file(p, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(create_under_root)
{
	char g[PATH_MAX];

	path_of(g, root, "db");
	ck_assert_int_eq(mri_cg2_create(NULL, g, 64 << 20, NULL), 0);
	ck_assert(exists(g));
	ck_assert_str_eq(get(root, "cgroup.subtree_control"), "memory\n");
	ck_assert_str_eq(fk.max_written, "67108864");
	ck_assert(fk.max_flags & O_NONBLOCK);
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, NULL), -EEXIST);
}
END_TEST

START_TEST(populated_parent_refused)
{
	char p[PATH_MAX], g[PATH_MAX];

	make_group(p, "app", "100\n101\n");
	path_of(g, p, "child");
	fk.subtree_writes = 0;
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, NULL), -EBUSY);
	/* Refused from cgroup.procs, before asking the kernel. */
	ck_assert_int_eq(fk.subtree_writes, 0);
	ck_assert(!exists(g));
	ck_assert_str_eq(get(p, "cgroup.subtree_control"), "");
	ck_assert_str_eq(get(p, "cgroup.procs"), "100\n101\n");
}
END_TEST

START_TEST(populated_parent_moved_to_leaf)
{
	char p[PATH_MAX], g[PATH_MAX], leaf[PATH_MAX];

	make_group(p, "app", "100\n101\n");
	path_of(g, p, "child");
	path_of(leaf, p, "leaf");
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, "leaf"), 0);
	ck_assert(exists(g));
	ck_assert_str_eq(get(p, "cgroup.procs"), "");
	ck_assert_str_eq(get(leaf, "cgroup.procs"), "100\n101\n");
	ck_assert_str_eq(get(p, "cgroup.subtree_control"), "memory\n");
}
END_TEST

START_TEST(leaf_move_undone_when_enable_fails)
{
	char p[PATH_MAX], g[PATH_MAX], leaf[PATH_MAX];

	make_group(p, "app", "100\n");
	path_of(g, p, "child");
	path_of(leaf, p, "leaf");
	fk.fail_subtree_err = EACCES;
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, "leaf"),
			 -EACCES);
	ck_assert(!exists(g));
	ck_assert(!exists(leaf));
	ck_assert_str_eq(get(p, "cgroup.procs"), "100\n");
	ck_assert_str_eq(get(p, "cgroup.subtree_control"), "");
}
END_TEST

START_TEST(bad_leaf_name_changes_nothing)
{
	static const char *const bad[] = { "", "a/b", ".", ".." };
	char p[PATH_MAX], g[PATH_MAX];
	size_t i;

	make_group(p, "app", "100\n");
	path_of(g, p, "child");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, bad[i]),
				 -EINVAL);
		ck_assert(!exists(g));
		ck_assert_str_eq(get(p, "cgroup.procs"), "100\n");
		ck_assert_str_eq(get(p, "cgroup.subtree_control"), "");
	}
}
END_TEST

START_TEST(limit_write_failure_undoes_everything)
{
	char p[PATH_MAX], g[PATH_MAX];

	make_group(p, "app", "");
	path_of(g, p, "child");
	fk.fail_max_err = EACCES;
	ck_assert_int_eq(mri_cg2_create(NULL, g, 1 << 20, NULL), -EACCES);
	ck_assert(!exists(g));
	ck_assert_str_eq(get(p, "cgroup.subtree_control"), "");
}
END_TEST

START_TEST(parent_without_memory)
{
	char p[PATH_MAX], g[PATH_MAX];

	make_group(p, "app", "");
	put(p, "cgroup.controllers", "cpu pids\n");
	path_of(g, p, "child");
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, NULL), -ENODEV);
	ck_assert(!exists(g));
	path_of(g, root, "no/such/parent");
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, NULL), -ENOENT);
}
END_TEST

START_TEST(attach_rules)
{
	char p[PATH_MAX], g[PATH_MAX];

	make_group(p, "app", "");
	path_of(g, p, "child");
	ck_assert_int_eq(mri_cg2_create(NULL, g, MR_UNLIMITED, NULL), 0);
	/* app enables memory for child: no process may join app. */
	ck_assert_int_eq(mri_cg2_attach(NULL, p, 100), -EBUSY);
	ck_assert_str_eq(get(root, "cgroup.procs"), "1\n");
	ck_assert_int_eq(mri_cg2_attach(NULL, g, 1), 0);
	ck_assert_str_eq(get(g, "cgroup.procs"), "1\n");
	ck_assert_str_eq(get(root, "cgroup.procs"), "");
	ck_assert_int_eq(mri_cg2_attach(NULL, g, 999), -ESRCH);
	/* The root takes processes whatever its subtree_control says. */
	ck_assert_int_eq(mri_cg2_attach(NULL, root, 1), 0);
	ck_assert_str_eq(get(root, "cgroup.procs"), "1\n");
}
END_TEST

START_TEST(remove_rules)
{
	char g[PATH_MAX];

	make_group(g, "app", "100\n");
	ck_assert_int_eq(mri_cg2_remove(NULL, g), -EBUSY);
	ck_assert(exists(g));
	put(g, "cgroup.procs", "");
	put(g, "cgroup.stat", "nr_descendants 1\nnr_dying_descendants 0\n");
	ck_assert_int_eq(mri_cg2_remove(NULL, g), -EBUSY);
	ck_assert(exists(g));
	put(g, "cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n");
	ck_assert_int_eq(mri_cg2_remove(NULL, g), 0);
	ck_assert(!exists(g));
	ck_assert_int_eq(mri_cg2_remove(NULL, g), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgtree2");
	TCase *tc = tcase_create("fake");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_file_whole_and_closed);
	tcase_add_test(tc, create_under_root);
	tcase_add_test(tc, populated_parent_refused);
	tcase_add_test(tc, populated_parent_moved_to_leaf);
	tcase_add_test(tc, leaf_move_undone_when_enable_fails);
	tcase_add_test(tc, bad_leaf_name_changes_nothing);
	tcase_add_test(tc, limit_write_failure_undoes_everything);
	tcase_add_test(tc, parent_without_memory);
	tcase_add_test(tc, attach_rules);
	tcase_add_test(tc, remove_rules);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
