/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory cgroup of the calling process, from /proc/self/cgroup and
 * /proc/self/mountinfo: never /proc/mounts (no root field), never
 * /proc/cgroups (it may be missing, or have no memory row where memory is
 * on cgroup2), and never libcgroup, so a libcgroup that fails to
 * initialise cannot hide a group.
 */
#ifndef MR_SELFGROUP_H
#define MR_SELFGROUP_H

#include <limits.h>

struct mri_self_group {
	char dir[PATH_MAX];   /* the group's directory */
	int version;          /* 1: v1 memory controller, 2: cgroup2 */
};

/* Finds the memory cgroup of a process from its cgroup file (the format
 * of /proc/PID/cgroup, "ID:CONTROLLERS:PATH" lines, Documentation/admin-
 * guide/cgroup-v1/cgroups.rst and cgroup-v2.rst) and its mountinfo.
 *
 * Each line splits at its first two colons only; PATH is kept verbatim
 * (it may hold colons; the kernel prints it unescaped). A v1 line whose
 * controllers hold the whole token "memory" is used when a v1 memory
 * mount reaches it; otherwise the "0::" line of cgroup2, at a cgroup2
 * mount. A mount reaches PATH when its root (the mountinfo root field,
 * unescaped) equals PATH or is followed in it by "/", and the root is
 * then stripped: root /docker/ID, PATH /docker/ID/sub, mount point
 * /sys/fs/cgroup give /sys/fs/cgroup/sub. Of several mounts of one
 * hierarchy the longest root wins, and of equal roots the later line.
 *
 * Returns 0, -EIO with *bad_line set to the 1-based number of a
 * malformed line of cgroup_file (0: the error is in mountinfo),
 * -ENODEV (no memory controller line with a mount of its hierarchy),
 * -EREMOTE (the group is outside what this process sees: a PATH
 * beginning "/.." — outside its cgroup namespace — or below no mount's
 * root), -ENAMETOOLONG, -ENOMEM, or an open errno. */
int mri_self_group_find(const char *cgroup_file, const char *mountinfo,
			struct mri_self_group *out, unsigned *bad_line);

#endif /* MR_SELFGROUP_H */
