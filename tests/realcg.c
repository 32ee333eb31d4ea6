/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See realcg.h. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "memreclaim.h"
#include "mountinfo.h"
#include "realcg.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

char parent[PATH_MAX];
char data_dir[PATH_MAX];
char state_dir[PATH_MAX];

void fmt(char *out, size_t len, const char *f, ...)
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

const char *read_text(const char *dir, const char *name)
{
	static char buf[4096];
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	fmt(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

void write_file(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	int fd;

	fmt(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, val, strlen(val)), (ssize_t)strlen(val));
	close(fd);
}

void rc_make_uncached_file(const char *path, unsigned long long bytes)
{
	static char buf[1 << 20];
	unsigned long long done;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < bytes; done += sizeof(buf))
		ck_assert_int_eq(write(fd, buf, sizeof(buf)),
				 (ssize_t)sizeof(buf));
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

void rc_drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

int rc_skip(const char *why)
{
	const char *ci = getenv("CI");

	if (ci && strcmp(ci, "true") == 0) {
		printf("FAIL: real-kernel test cannot run under CI: %s\n", why);
		return 1;
	}
	printf("SKIP: %s\n", why);
	return 77;
}

int rc_find_places(const char *tag)
{
	struct mri_cgroup_mount m;
	const char *p = getenv("MEMRECLAIM_TEST_PARENT");
	const char *d = getenv("MEMRECLAIM_TEST_DATA_DIR");
	char probe[PATH_MAX];
	struct statfs sf;
	mr_ctx_t *c;
	int r;

	if (getenv("MEMRECLAIM_SKIP_REAL_KERNEL")) {
		printf("SKIP: real-kernel tests disabled "
		       "(--disable-real-kernel-tests, as make distcheck does)\n");
		return 77;
	}

	if (p && *p) {
		fmt(parent, sizeof(parent), "%s", p);
	} else {
		if (mri_mount_find_memory_v1("/proc/self/mountinfo", &m) < 0)
			return rc_skip("no cgroup v1 memory controller is mounted");
		fmt(parent, sizeof(parent), "%s", m.mount_point);
	}
	fmt(data_dir, sizeof(data_dir), "%s", d && *d ? d : "/var/tmp");
	if (statfs(data_dir, &sf) < 0 || sf.f_type == TMPFS_MAGIC)
		return rc_skip("MEMRECLAIM_TEST_DATA_DIR is missing or tmpfs");
	fmt(state_dir, sizeof(state_dir), "/tmp/memreclaim-test%s-state-%d",
	    tag, (int)getpid());
	/* A probe group: can we create one here at all? (No ck_assert here:
	 * Check allows them only inside a test.) */
	r = mr_ctx_new(&c);
	if (r < 0)
		return rc_skip(mr_strerror(r));
	fmt(probe, sizeof(probe), "%s/memreclaim-test-%d-probe", parent,
	    (int)getpid());
	r = mr_cgroup_create(c, probe, 64 * 1024 * 1024);
	if (r == 0)
		r = mr_cgroup_remove(c, probe);
	mr_ctx_free(c);
	if (r < 0) {
		static char why[PATH_MAX + 128];

		fmt(why, sizeof(why), "cannot create a memory cgroup in %s: %s",
		    parent, mr_strerror(r));
		return rc_skip(why);
	}
	return 0;
}

bool rc_dead_run(const char *name, char sep)
{
	static const char prefix[] = "memreclaim-test-";
	char *end;
	long pid;

	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return false;
	name += sizeof(prefix) - 1;
	if (*name < '1' || *name > '9')
		return false;
	errno = 0;
	pid = strtol(name, &end, 10);
	if (errno || *end != sep || pid > INT_MAX)
		return false;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* The deepest tree of a dead run's data rc_sweep_stale() removes (sort's
 * temporary directory is one level deep). */
#define SWEEP_MAX_DEPTH 8

/* Removes the entry name of the directory dirfd: a directory's contents
 * first, depth levels down at most. Never follows a symbolic link (a link
 * is removed, not what it names), never leaves the file system of dirfd,
 * never removes what another user owns. Returns 0, or -1 when something
 * was left. */
static int remove_tree(int dirfd, const char *name, dev_t dev, int depth)
{
	struct dirent *e;
	struct stat st;
	int fd, left = 0;
	DIR *d;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_uid != geteuid() || st.st_dev != dev)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) == 0 ? 0 : -1;
	if (depth == 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			left |= remove_tree(fd, e->d_name, dev, depth - 1);
	closedir(d);
	if (left)
		return -1;
	return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 ? 0 : -1;
}

bool rc_twin_parent(char *out, size_t len)
{
	struct mri_cgroup_mount v1, v2;
	size_t n;

	if (mri_mount_find_memory_v1("/proc/self/mountinfo", &v1) < 0 ||
	    mri_mount_find_v2("/proc/self/mountinfo", &v2) < 0)
		return false;
	n = strlen(v1.mount_point);
	if (strncmp(parent, v1.mount_point, n) != 0 ||
	    (parent[n] != '/' && parent[n] != '\0'))
		return false;
	fmt(out, len, "%s%s", v2.mount_point, parent + n);
	return true;
}

/* Removes the cgroup2 twins of dead runs' groups: empty directories, as
 * their processes are gone (rmdir fails on anything else). */
static void sweep_stale_twins(void)
{
	char dir[PATH_MAX], sub[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (!rc_twin_parent(dir, sizeof(dir)))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || !rc_dead_run(e->d_name, '-'))
			continue;
		fmt(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (rmdir(sub) == 0)
			fprintf(stderr, "removed stale %s\n", sub);
	}
	closedir(d);
}

void rc_sweep_stale(void)
{
	char dir[PATH_MAX], sub[PATH_MAX];
	struct dirent *e, *c;
	struct stat st;
	DIR *d, *dd;
	int fd;

	d = opendir(parent);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || !rc_dead_run(e->d_name, '-'))
			continue;
		fmt(dir, sizeof(dir), "%s/%s", parent, e->d_name);
		dd = opendir(dir);
		while (dd && (c = readdir(dd))) {
			if (c->d_type != DT_DIR || c->d_name[0] == '.')
				continue;
			fmt(sub, sizeof(sub), "%s/%s", dir, c->d_name);
			rmdir(sub);
		}
		if (dd)
			closedir(dd);
		fmt(sub, sizeof(sub), "%s/memory.force_empty", dir);
		fd = open(sub, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "0", 1) < 0)
				fprintf(stderr, "force_empty %s failed\n", dir);
			close(fd);
		}
		if (rmdir(dir) == 0)
			fprintf(stderr, "removed stale %s\n", dir);
	}
	closedir(d);
	sweep_stale_twins();
	/* Data files and directories of runs that died before their
	 * teardown. */
	d = opendir(data_dir);
	if (!d)
		return;
	if (fstat(dirfd(d), &st) < 0) {
		closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		if (!rc_dead_run(e->d_name, '.'))
			continue;
		fmt(sub, sizeof(sub), "%s/%s", data_dir, e->d_name);
		if (remove_tree(dirfd(d), e->d_name, st.st_dev,
				SWEEP_MAX_DEPTH) == 0)
			fprintf(stderr, "removed stale %s\n", sub);
		else
			fprintf(stderr, "could not remove stale %s\n", sub);
	}
	closedir(d);
}

void rc_remove_state_dir(void)
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

int rc_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rc_remove_state_dir();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
