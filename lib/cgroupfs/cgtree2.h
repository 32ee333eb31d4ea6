/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating, attaching to and removing cgroup2 groups with the memory
 * controller, directly through the file-access table (no libcgroup: a
 * libcgroup that fails to initialise must not take the cgroup2 path down),
 * keeping cgroup v2's rules (Documentation/admin-guide/cgroup-v2.rst):
 *
 *  - "no internal processes": a group other than the root that enables a
 *    controller in cgroup.subtree_control may hold no process itself
 *    (kernel/cgroup/cgroup.c, cgroup_vet_subtree_control_enable() and
 *    cgroup_migrate_vet_dst() answer EBUSY). Before +memory is enabled in
 *    a parent, its cgroup.procs is read: populated, the create fails with
 *    -EBUSY and creates nothing, unless the caller named a leaf child to
 *    move the parent's processes into first;
 *  - no process is attached to a group whose cgroup.subtree_control is
 *    not empty;
 *  - every step is undone when a later one fails: nothing half-built.
 */
#ifndef MR_CGTREE2_H
#define MR_CGTREE2_H

#include <stdint.h>
#include <sys/types.h>

#include "log.h"

/* Creates the group `path` (absolute, normalised; its parent must exist and
 * be a cgroup2 group whose cgroup.controllers has memory), enabling
 * +memory in the parent's cgroup.subtree_control if it is not, and writes
 * memory.max = limit_bytes unless MR_UNLIMITED. leaf: NULL, or the name
 * of a child of the parent to move the parent's processes into when they
 * stand in the way of +memory (created if missing).
 * Returns 0, -EEXIST, -ENOENT (no parent), -ENODEV (the parent has no
 * memory controller available), -EBUSY (the parent holds processes and
 * no leaf was given), -EINVAL (bad leaf name), or a file error. */
int mri_cg2_create(struct mri_logger *log, const char *path,
		   uint64_t limit_bytes, const char *leaf);

/* Moves process pid into `path`: -EBUSY when the group enables
 * controllers for its children (its cgroup.subtree_control is not
 * empty), else what writing cgroup.procs answers (-ESRCH, -EACCES...). */
int mri_cg2_attach(struct mri_logger *log, const char *path, pid_t pid);

/* Removes the empty group `path`: -EBUSY (and nothing done) when it holds
 * processes or child groups, -ENOENT when it does not exist. */
int mri_cg2_remove(struct mri_logger *log, const char *path);

#endif /* MR_CGTREE2_H */
