/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-group PSI for cgroup v1 on hybrid hosts (mr_ctx_set_hybrid_psi()):
 * the context's switch, the mounts it found, and the cgroup2 twin of a v1
 * memory group (same path relative to the v1 memory mount point, beneath
 * the cgroup2 mount point). Every file of a twin goes through mri_fops.
 */
#ifndef MR_HYBRID_H
#define MR_HYBRID_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "log.h"

struct mri_hybrid_psi {
	pthread_mutex_t lock;     /* serialises mri_hybrid_set() */
	/* Stored (release) after the mount points are written; loaded
	 * (acquire) before they are read. */
	atomic_bool enabled;
	/* The mount points, written once under lock by the first
	 * successful enable and never changed after: a reader that saw
	 * enabled reads them without a lock. */
	bool found;
	char v1_mount[PATH_MAX];  /* the cgroup v1 memory mount point */
	char v2_mount[PATH_MAX];  /* the cgroup2 mount point */
};

/* Off, no mounts found yet (mr_ctx_new()); destroy at mr_ctx_free(). */
void mri_hybrid_init(struct mri_hybrid_psi *h);
void mri_hybrid_destroy(struct mri_hybrid_psi *h);

/* Turns hybrid PSI on or off. On: finds, the first time, the v1 memory
 * mount and a cgroup2 mount in `mountinfo` and checks that the cgroup2
 * root's cgroup.controllers lacks "memory"; -ENODEV when either mount is
 * missing or cgroup2 has the memory controller (not a hybrid host), -EIO
 * for an unreadable mountinfo or cgroup.controllers. Off: always 0. */
int mri_hybrid_set(struct mri_hybrid_psi *h, bool enable,
		   const char *mountinfo, struct mri_logger *log);

/* Whether hybrid PSI is on (h may be NULL: off). */
bool mri_hybrid_enabled(const struct mri_hybrid_psi *h);

/* Writes to out (len bytes) the twin of the normalised v1 group path
 * `path`. Returns 0, -EOPNOTSUPP (hybrid PSI off), -ENODEV (path not
 * beneath the v1 memory mount), -ENAMETOOLONG. */
int mri_hybrid_twin_path(const struct mri_hybrid_psi *h, const char *path,
			 char *out, size_t len);

/* Checks before anything is created that the twin `twin` can be made:
 * its parent is a directory (-ENOENT, -ENOTDIR) and it does not exist
 * yet (-EEXIST: a cgroup2 group of that name is someone else's, perhaps
 * a systemd unit's, and is never adopted). Logs why. */
int mri_hybrid_twin_check_new(const char *twin, struct mri_logger *log);

/* Creates the twin directory. Returns 0 or the mkdir's negative errno. */
int mri_hybrid_twin_create(const char *twin, struct mri_logger *log);

/* Removes the empty twin. Returns 1 when removed, 0 when it does not
 * exist (a group created without hybrid PSI), -EBUSY when it holds a process or a child group
 * (cgroup2 rmdir refuses, nothing removed), or the rmdir's errno. */
int mri_hybrid_twin_remove(const char *twin, struct mri_logger *log);

/* 1 if the twin directory exists, 0 if not, or a negative errno. */
int mri_hybrid_twin_exists(const char *twin);

/* Moves process pid into the twin (one write of cgroup.procs, which
 * moves every thread of the process). Returns 0 or the negative errno of
 * the open or the write. */
int mri_hybrid_twin_attach(const char *twin, pid_t pid);

#endif /* MR_HYBRID_H */
