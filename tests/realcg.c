/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See realcg.h. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void rc_sweep_stale(void)
{
	char dir[PATH_MAX], sub[PATH_MAX];
	struct dirent *e, *c;
	DIR *d, *dd;
	long pid;
	int fd;

	d = opendir(parent);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "memreclaim-test-%ld-", &pid) != 1 ||
		    e->d_type != DT_DIR || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
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
	/* Data files of runs that died before their teardown. */
	d = opendir(data_dir);
	while (d && (e = readdir(d))) {
		if (sscanf(e->d_name, "memreclaim-test-%ld.", &pid) != 1 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		fmt(sub, sizeof(sub), "%s/%s", data_dir, e->d_name);
		if (unlink(sub) == 0)
			fprintf(stderr, "removed stale %s\n", sub);
	}
	if (d)
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
