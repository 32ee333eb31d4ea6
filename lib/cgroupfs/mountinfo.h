/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Discovery of cgroup mounts from /proc/self/mountinfo (never /proc/mounts:
 * it has no root field). Controller names and options are matched as whole
 * comma-separated tokens ("cpu" is not "cpuset").
 */
#ifndef MR_MOUNTINFO_H
#define MR_MOUNTINFO_H

#include <limits.h>
#include <stdbool.h>

struct mri_cgroup_mount {
	char mount_point[PATH_MAX]; /* unescaped (\040 etc. decoded) */
	char root[PATH_MAX];        /* the mount's root within the hierarchy */
	int version;                /* 1 (fstype cgroup) or 2 (cgroup2) */
	bool has_memory;            /* v1: "memory" is a super option token */
	/* v2: the memory_recursiveprot super option (Linux 5.7) */
	bool memory_recursiveprot;
};

/* The process's mount table, the file every caller reads. */
#define MRI_MOUNTINFO "/proc/self/mountinfo"

/* Finds the cgroup or cgroup2 mount whose mount point contains `path`
 * (equal, or a prefix followed by '/'); the longest such mount point wins.
 * mountinfo: the file to parse, normally "/proc/self/mountinfo" (tests pass
 * a captured copy). Returns 0, -ENODEV (no cgroup mount contains path),
 * -EIO (a malformed line), or the
 * errno of opening the file. */
int mri_mount_find(const char *mountinfo, const char *path,
		   struct mri_cgroup_mount *out);

/* Finds the cgroup v1 mount that carries the memory controller. Returns 0,
 * -ENODEV (none), -EIO, or an open errno. */
int mri_mount_find_memory_v1(const char *mountinfo,
			     struct mri_cgroup_mount *out);

/* Calls fn for each cgroup and cgroup2 mount, in the file's order (a
 * later mount on one mount point is on top of an earlier one), until fn
 * returns non-zero, which is then returned. Returns 0, -EIO (a malformed
 * line), -ENOMEM, or an open errno. */
int mri_mount_each(const char *mountinfo,
		   int (*fn)(const struct mri_cgroup_mount *m, void *arg),
		   void *arg);

/* Finds a cgroup2 mount, the whole hierarchy (root "/") preferred over a
 * bind mount of a subtree. Returns 0, -ENODEV (none), -EIO, or an open
 * errno. */
int mri_mount_find_v2(const char *mountinfo, struct mri_cgroup_mount *out);

#endif /* MR_MOUNTINFO_H */
