/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup2 groups: create, attach, remove (see cgtree2.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtree2.h"
#include "fileops.h"
#include "memreclaim.h"

/* Bounds the moves of a leaf migration: processes that fork while they are
 * moved can keep the parent populated. */
#define LEAF_MOVE_ROUNDS 8

/* "dir/name" into out (PATH_MAX). */
static int join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Reads dir/name, whole, into buf (size len): 0 or -errno. */
static int read_file(const char *dir, const char *name, char *buf,
		     size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	r = join(path, dir, name);
	if (r < 0)
		return r;
	n = mri_read_file(path, buf, len);
	return n < 0 ? (int)n : 0;
}

/* Writes s to dir/name in one write. */
static int write_file(const char *dir, const char *name, const char *s,
		      int extra_flags)
{
	char path[PATH_MAX];
	int fd, r;

	r = join(path, dir, name);
	if (r < 0)
		return r;
	fd = mri_open(path, O_WRONLY | O_CLOEXEC | extra_flags, 0);
	if (fd < 0)
		return fd;
	r = mri_write_fd(fd, s);
	mri_close(fd);
	return r;
}

/* Whether the whitespace-separated list holds `token`. */
static bool has_word(const char *list, const char *token)
{
	size_t len = strlen(token);
	const char *p = list;

	while ((p = strstr(p, token))) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \n")] == '\0';
}

/* The cgroup2 root is the one group without cgroup.type. */
static int is_root(const char *dir)
{
	char buf[32];
	int r = read_file(dir, "cgroup.type", buf, sizeof(buf));

	if (r == -ENOENT)
		return 1;
	return r < 0 ? r : 0;
}

static void parent_of(const char *path, char *parent)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash == path ? 1 : (size_t)(slash - path);

	memcpy(parent, path, len);
	parent[len] = '\0';
}

/* Moves every pid listed in from/cgroup.procs into `to`, a round at a
 * time. */
static int move_procs(const char *from, const char *to)
{
	char *buf, *p, *end, num[32];
	int r = 0, round;
	long pid;

	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	for (round = 0; round < LEAF_MOVE_ROUNDS; round++) {
		r = read_file(from, "cgroup.procs", buf, 65536);
		if (r < 0 || blank(buf))
			break;
		for (p = buf; ; p = end) {
			pid = strtol(p, &end, 10);
			if (end == p)
				break;
			snprintf(num, sizeof(num), "%ld", pid);
			r = write_file(to, "cgroup.procs", num, 0);
			/* A process that exited meanwhile is not an error. */
			if (r == -ESRCH)
				r = 0;
			if (r < 0)
				goto out;
		}
	}
	if (r == 0 && round == LEAF_MOVE_ROUNDS)
		r = -EBUSY;
out:
	free(buf);
	return r;
}

/* Clears the way for +memory in `parent` (populated, not the root): moves
 * its processes into parent/leaf. *made: whether leaf was created here. */
static int move_to_leaf(struct mri_logger *log, const char *parent,
			const char *leaf, bool *made)
{
	char dir[PATH_MAX];
	int r;

	if (!leaf[0] || strchr(leaf, '/') || strcmp(leaf, ".") == 0 ||
	    strcmp(leaf, "..") == 0)
		return -EINVAL;
	r = join(dir, parent, leaf);
	if (r < 0)
		return r;
	r = mri_fops->mkdir(dir, 0755);
	*made = r == 0;
	if (r < 0 && r != -EEXIST)
		return r;
	r = move_procs(parent, dir);
	if (r < 0) {
		mri_log(log, MR_LOG_ERR, "moving the processes of %s into %s: "
			"%s; moving them back", parent, dir, mr_strerror(r));
		move_procs(dir, parent);
		if (*made)
			mri_fops->rmdir(dir);
		*made = false;
	}
	return r;
}

/* Undoes what mri_cg2_create() did to the parent. */
static void undo_parent(const char *parent, bool enabled, const char *leaf,
			bool leaf_made, bool leaf_moved)
{
	char dir[PATH_MAX];

	if (enabled)
		write_file(parent, "cgroup.subtree_control", "-memory", 0);
	if (!leaf_moved || join(dir, parent, leaf) < 0)
		return;
	move_procs(dir, parent);
	if (leaf_made)
		mri_fops->rmdir(dir);
}

int mri_cg2_create(struct mri_logger *log, const char *path,
		   uint64_t limit_bytes, const char *leaf)
{
	char parent[PATH_MAX], buf[4096], num[32];
	bool enabled = false, leaf_made = false, leaf_moved = false;
	int fd, r;

	parent_of(path, parent);
	fd = mri_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd >= 0) {
		mri_close(fd);
		return -EEXIST;
	}
	if (fd != -ENOENT)
		return fd;
	r = read_file(parent, "cgroup.controllers", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (!has_word(buf, "memory")) {
		mri_log(log, MR_LOG_ERR, "%s: the memory controller is not "
			"available there (its parent's cgroup.subtree_control "
			"lacks +memory)", parent);
		return -ENODEV;
	}
	r = read_file(parent, "cgroup.subtree_control", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (!has_word(buf, "memory")) {
		r = is_root(parent);
		if (r < 0)
			return r;
		if (!r) {
			r = read_file(parent, "cgroup.procs", buf, sizeof(buf));
			if (r < 0 && r != -EOVERFLOW)
				return r;
			if (r == -EOVERFLOW || !blank(buf)) {
				if (!leaf) {
					mri_log(log, MR_LOG_ERR, "%s holds "
						"processes: cgroup v2 lets no "
						"group but the root hold any "
						"while it enables memory for "
						"its children; nothing created",
						parent);
					return -EBUSY;
				}
				r = move_to_leaf(log, parent, leaf, &leaf_made);
				if (r < 0)
					return r;
				leaf_moved = true;
			}
		}
		r = write_file(parent, "cgroup.subtree_control", "+memory", 0);
		if (r < 0) {
			mri_log(log, MR_LOG_ERR, "%s: enabling +memory: %s",
				parent, mr_strerror(r));
			undo_parent(parent, false, leaf, leaf_made, leaf_moved);
			return r;
		}
		enabled = true;
	}
	r = mri_fops->mkdir(path, 0755);
	if (r == 0 && limit_bytes != MR_UNLIMITED) {
		snprintf(num, sizeof(num), "%" PRIu64, limit_bytes);
		r = write_file(path, "memory.max", num, O_NONBLOCK);
		if (r < 0) {
			mri_log(log, MR_LOG_ERR, "%s: writing memory.max: %s",
				path, mr_strerror(r));
			mri_fops->rmdir(path);
		}
	}
	if (r < 0)
		undo_parent(parent, enabled, leaf, leaf_made, leaf_moved);
	return r;
}

int mri_cg2_attach(struct mri_logger *log, const char *path, pid_t pid)
{
	char buf[4096], num[32];
	int r;

	r = read_file(path, "cgroup.subtree_control", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (!blank(buf)) {
		r = is_root(path);
		if (r < 0)
			return r;
		if (!r) {
			mri_log(log, MR_LOG_ERR, "%s enables controllers for its "
				"children (%s): no process may join it", path,
				strtok(buf, "\n"));
			return -EBUSY;
		}
	}
	snprintf(num, sizeof(num), "%d", (int)pid);
	return write_file(path, "cgroup.procs", num, 0);
}

int mri_cg2_remove(struct mri_logger *log, const char *path)
{
	char buf[4096];
	const char *p;
	int r;

	r = read_file(path, "cgroup.procs", buf, sizeof(buf));
	if (r == 0 && !blank(buf))
		r = -EBUSY;
	if (r == 0)
		r = read_file(path, "cgroup.stat", buf, sizeof(buf));
	if (r == 0) {
		/* kernel/cgroup/cgroup.c, cgroup_stat_show() */
		p = strstr(buf, "nr_descendants ");
		if (!p || strtoul(p + 15, NULL, 10) != 0)
			r = -EBUSY;
	}
	if (r == -EBUSY)
		mri_log(log, MR_LOG_ERR, "%s holds processes or child groups: "
			"not removed", path);
	if (r < 0)
		return r == -EOVERFLOW ? -EBUSY : r;
	return mri_fops->rmdir(path);
}
