/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup2 group of a cgroup v1 memory group's tasks, on hybrid hosts
 * (lib/cgroupfs/tasks2.c): where the group's PSI lives when the library
 * did not create a twin for it (a container runtime's or systemd's group,
 * whose tasks sit in a cgroup2 group of another name). The kernel
 * accounts a task's stalls to its cgroup2 group and that group's
 * ancestors (kernel/sched/psi.c, task_dfl_cgroup()), so that group's
 * pressure is the v1 group's only when it holds the v1 group's tasks and
 * nothing else: every task of the v1 group in the one cgroup2 group,
 * every task of that group in the v1 group, no descendant groups (their
 * stalls would count), not the cgroup2 root (the whole machine).
 */
#ifndef MR_TASKS2_H
#define MR_TASKS2_H

#include <stddef.h>

#include "log.h"

/* The most tasks checked; a group with more is refused (the check reads
 * /proc/PID/cgroup of each, at every pressure read). */
#define MRI_TASKS2_MAX_PIDS 256
/* A cgroup.procs text of that many tasks fits in this many bytes. */
#define MRI_TASKS2_PROCS_BYTES 8192

/* The cgroup2 path ("/system.slice/x.service") of the "0::" line of a
 * /proc/PID/cgroup text into out. Returns 0, -ENOENT (no such line: no
 * cgroup2 hierarchy), -ENAMETOOLONG. Pure. */
int mri_tasks2_parse_cgroup(const char *text, char *out, size_t len);

/* The directory, beneath the cgroup2 mount v2_mount, of the cgroup2
 * group that holds exactly the tasks listed in v1_procs (the text of the
 * v1 group's cgroup.procs) and has no descendants, into out. Reads
 * /proc/PID/cgroup of each task (a task that exited meanwhile is
 * skipped) and the group's cgroup.procs and cgroup.stat, through
 * mri_fops. Returns 0, -EOPNOTSUPP (no task, more than
 * MRI_TASKS2_MAX_PIDS, tasks in several cgroup2 groups, the root, a group
 * with descendants or with other tasks: each logged at debug level on
 * log, which may be NULL), -ENAMETOOLONG, or a read's negative errno. */
int mri_tasks2_group(const char *v2_mount, const char *v1_procs, char *out,
		     size_t len, struct mri_logger *log);

#endif /* MR_TASKS2_H */
