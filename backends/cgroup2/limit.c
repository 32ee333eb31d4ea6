/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Limit writes on cgroup v2: memory.max and memory.high, "max" for no
 * limit. Each write opens its file with O_NONBLOCK (cgroup2.c): from the
 * kernel's "memcg: introduce non-blocking limit setting option" (Linux
 * 6.16, docs/kernels.md) such a write sets the value and returns, leaving
 * reclaim, throttling or an OOM kill to the group's next charge, instead
 * of reclaiming down to it in the writer's context
 * (memory_max_write(), memory_high_write()). Older kernels ignore the
 * flag. The core reclaims first (lib/core/limit.c), so the write finds usage
 * below the new value either way.
 */
#include "config.h"

#include <errno.h>

#include "backend.h"
#include "cgroup2.h"

int mri_cgroup2_write_limit(void *priv, int which, uint64_t bytes)
{
	struct mri_cgroup2 *cg = priv;
	int r;

	if (which != MRI_LIMIT_MAX && which != MRI_LIMIT_HIGH)
		return -EINVAL;
	if (cg->limits_write_err)
		return cg->limits_write_err;
	r = mri_cgroup2_write_file(cg, which == MRI_LIMIT_MAX ? "memory.max" :
				   "memory.high", bytes);
	if (r < 0 && r != -ENOENT)
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: writing %s: %s",
			cg->path, which == MRI_LIMIT_MAX ? "memory.max" :
			"memory.high", mr_strerror(r));
	return r;
}
