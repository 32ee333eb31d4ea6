/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-group PSI for cgroup v1 on hybrid hosts.
 *
 * The kernel accounts pressure stalls to the task's cgroup on the default
 * (cgroup2) hierarchy, whichever controllers that hierarchy carries
 * (kernel/sched/psi.c: task_psi_group() is the psi of task_dfl_cgroup();
 * kernel/cgroup/cgroup.c gives every cgroup2 group its memory.pressure).
 * On a hybrid host (systemd's layout: v1 controllers, and a cgroup2
 * hierarchy at /sys/fs/cgroup/unified with no controller of its own), a
 * v1 memory group has no pressure file, but a cgroup2 group holding the
 * same processes measures exactly their memory stalls. That group is the
 * v1 group's twin: the same path relative to the v1 memory mount point,
 * beneath the cgroup2 mount point.
 *
 * The twin is created, entered and removed only for groups and processes
 * the caller names through mr_cgroup_create(), mr_cgroup_attach() and
 * mr_cgroup_remove() with the option on: systemd tracks its units by
 * their cgroup2 group, so a process it manages must never be moved there
 * (docs/design.md, "Per-group PSI on hybrid hosts").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fileops.h"
#include "hybrid.h"
#include "mountinfo.h"


void mri_hybrid_init(struct mri_hybrid_psi *h)
{
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->enabled, false);
	h->found = false;
	h->v1_mount[0] = h->v2_mount[0] = '\0';
}

void mri_hybrid_destroy(struct mri_hybrid_psi *h)
{
	pthread_mutex_destroy(&h->lock);
}

/* True if the comma- or blank-separated list holds the word. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* Finds the two mounts and checks that cgroup2 has no memory controller
 * (its root's cgroup.controllers, Documentation/admin-guide/cgroup-v2.rst:
 * a controller bound to v1 is not available on cgroup2). */
static int find_mounts(struct mri_hybrid_psi *h, const char *mountinfo,
		       struct mri_logger *log)
{
	struct mri_cgroup_mount v1, v2;
	char path[PATH_MAX + 32], buf[512];
	ssize_t n;
	int r;

	r = mri_mount_find_memory_v1(mountinfo, &v1);
	if (r < 0) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: no cgroup v1 memory "
			"controller mounted: %s", mr_strerror(r));
		return r == -ENODEV ? r : -EIO;
	}
	r = mri_mount_find_v2(mountinfo, &v2);
	if (r < 0) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: no cgroup2 mount: %s",
			mr_strerror(r));
		return r == -ENODEV ? r : -EIO;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", v2.mount_point);
	n = mri_read_file(path, buf, sizeof(buf));
	if (n < 0) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: reading %s: %s", path,
			mr_strerror((int)n));
		return -EIO;
	}
	if (has_word(buf, "memory")) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: the cgroup2 mount %s "
			"has the memory controller: not a hybrid host",
			v2.mount_point);
		return -ENODEV;
	}
	strcpy(h->v1_mount, v1.mount_point);
	strcpy(h->v2_mount, v2.mount_point);
	h->found = true;
	mri_log(log, MR_LOG_INFO, "hybrid PSI: v1 memory at %s, twins under "
		"cgroup2 at %s", h->v1_mount, h->v2_mount);
	return 0;
}

int mri_hybrid_set(struct mri_hybrid_psi *h, bool enable,
		   const char *mountinfo, struct mri_logger *log)
{
	int r = 0;

	pthread_mutex_lock(&h->lock);
	if (enable && !h->found)
		r = find_mounts(h, mountinfo, log);
	if (r == 0)
		atomic_store_explicit(&h->enabled, enable,
				      memory_order_release);
	pthread_mutex_unlock(&h->lock);
	return r;
}

bool mri_hybrid_enabled(const struct mri_hybrid_psi *h)
{
	return h && atomic_load_explicit(&h->enabled, memory_order_acquire);
}

int mri_hybrid_twin_path(const struct mri_hybrid_psi *h, const char *path,
			 char *out, size_t len)
{
	size_t mlen;
	int n;

	if (!mri_hybrid_enabled(h))
		return -EOPNOTSUPP;
	mlen = strcmp(h->v1_mount, "/") == 0 ? 0 : strlen(h->v1_mount);
	if (strncmp(path, h->v1_mount, mlen) != 0 ||
	    (path[mlen] != '/' && path[mlen] != '\0'))
		return -ENODEV;
	n = snprintf(out, len, "%s%s",
		     strcmp(h->v2_mount, "/") == 0 && path[mlen] ? "" :
								 h->v2_mount,
		     path + mlen);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int mri_hybrid_twin_exists(const char *twin)
{
	int fd = mri_open(twin, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	mri_close(fd);
	return 1;
}

int mri_hybrid_twin_check_new(const char *twin, struct mri_logger *log)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(twin, '/');
	size_t plen;
	int r;

	if (!slash || !slash[1])
		return -EINVAL;
	plen = slash == twin ? 1 : (size_t)(slash - twin);
	memcpy(parent, twin, plen);
	parent[plen] = '\0';
	r = mri_hybrid_twin_exists(parent);
	if (r == 0) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: the twin's parent %s "
			"does not exist (create the parent group with hybrid "
			"PSI on first)", parent);
		return -ENOENT;
	}
	if (r < 0) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: %s: %s", parent,
			mr_strerror(r));
		return r;
	}
	r = mri_hybrid_twin_exists(twin);
	if (r == 1) {
		mri_log(log, MR_LOG_ERR, "hybrid PSI: %s exists already and "
			"is not adopted as a twin", twin);
		return -EEXIST;
	}
	return r;
}

int mri_hybrid_twin_create(const char *twin, struct mri_logger *log)
{
	int r = mri_fops->mkdir(twin, 0755);

	if (r < 0)
		mri_log(log, MR_LOG_ERR, "hybrid PSI: creating the twin %s: %s",
			twin, mr_strerror(r));
	return r;
}

int mri_hybrid_twin_remove(const char *twin, struct mri_logger *log)
{
	int r = mri_fops->rmdir(twin);

	if (r == 0)
		return 1;
	if (r == -ENOENT)
		return 0;
	/* cgroup_rmdir() answers EBUSY for a populated group or one with
	 * children; ENOTEMPTY only from older kernels' VFS path. */
	if (r == -ENOTEMPTY)
		r = -EBUSY;
	if (r < 0)
		mri_log(log, MR_LOG_ERR, "hybrid PSI: removing the twin %s: %s",
			twin, mr_strerror(r));
	return r;
}

int mri_hybrid_twin_attach(const char *twin, pid_t pid)
{
	char path[PATH_MAX + 16], buf[24];
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", twin) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	fd = mri_open(path, O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	r = mri_write_fd(fd, buf);
	mri_close(fd);
	return r;
}
