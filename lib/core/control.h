/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the library may write, learnt per control on its first real write
 * and kept: a refusal (EACCES, EPERM — which cgroup2's nsdelegate gives at
 * write(), not at open() — or EROFS) reaches the caller unchanged and is
 * answered from here afterwards, so no loop of the library's retries it
 * against the kernel. A group whose reclaim is refused is left to
 * statistics and events (advisory mode).
 */
#ifndef MR_CONTROL_H
#define MR_CONTROL_H

#include "memreclaim.h"

struct mr_group;

/* Before a write of `control` (enum mr_control): 0 to go on, or the
 * refusal learnt before (a negative errno). */
int mri_control_check(struct mr_group *g, int control);

/* After a write of `control` that returned r: learns from it and returns
 * r. 0 marks the control writable; a refusal is kept (and logged once);
 * other errors (the group gone, EBUSY, EINVAL) teach nothing. */
int mri_control_learn(struct mr_group *g, int control, int r);

/* Whether r is a refusal of the write itself. */
int mri_control_refusal(int r);

#endif /* MR_CONTROL_H */
