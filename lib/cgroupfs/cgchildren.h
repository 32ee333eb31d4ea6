/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child groups of a cgroup directory that the caller owns: the
 * groups a delegatee may reclaim through when the delegated group's own
 * controls belong to the delegator (Documentation/admin-guide/
 * cgroup-v2.rst, "Delegation Containment"). A cgroup directory, v1 or
 * v2, belongs to the fsuid that created it (kernel/cgroup/cgroup.c,
 * cgroup_mkdir() -> cgroup_kn_set_ugid()), so a child the caller made
 * is one it owns. Shared by the cgroup1 and cgroup2 backends (their
 * list_children op, lib/core/backend.h).
 */
#ifndef MR_CGCHILDREN_H
#define MR_CGCHILDREN_H

/* Calls fn(arg, child_path) for each child directory of the cgroup
 * directory at absolute `path` that is owned by the caller's effective
 * uid (stat() of it, so a directory removed meanwhile is skipped), in
 * the directory's order; child_path is "path/name", valid during the
 * call only. Skips names starting with '.', entries that are not
 * directories, and children whose path would not fit PATH_MAX. The
 * directory stream is the library's (lib/core/fds.h, mri_opendir()): a
 * child of fork() does not keep its fd; fn may open and close fds of
 * its own. fn returns 0 to go on, or a negative errno to stop the walk,
 * which is then returned. Returns 0 after the last entry, fn's negative
 * return, or the -errno of opening the directory (-ENOENT: gone,
 * -EACCES, -EMFILE) or of reading it. May block on the directory's
 * reads. MT-safe. */
int mri_cgroup_list_children(const char *path,
			     int (*fn)(void *arg, const char *child_path),
			     void *arg);

#endif /* MR_CGCHILDREN_H */
