/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PSI of a v1 memory group, read from its cgroup2 twin on hybrid hosts
 * (lib/cgroupfs/hybrid.c explains the twin; mr_ctx_set_hybrid_psi() turns it on).
 * cgroup v1 has no memory.pressure of its own (memory.pressure_level is
 * another, deprecated, interface).
 *
 * The twin's memory.pressure is opened for each read and closed: no fd
 * stays open for it (the group's fd budget). The switch is read at each
 * call, since the context may turn it on or off while the group is open.
 * A twin that is missing, or removed under a kept fd, is "no PSI"
 * (-EOPNOTSUPP) while the v1 group itself lives; -ENOENT only when the
 * v1 group is gone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>

#include "cgroup1.h"
#include "context.h"
#include "fileops.h"
#include "hybrid.h"
#include "mountinfo.h"
#include "psi.h"

/* The answer when the twin cannot be reached: -ENOENT if the v1 group is
 * gone (its kept usage fd fails with ENODEV), else -EOPNOTSUPP. */
static int no_twin(struct mri_cgroup1 *cg)
{
	char buf[32];
	ssize_t n = mri_read_fd(cg->usage_fd, buf, sizeof(buf));

	return mri_cgroup1_gone(n < 0 ? (int)n : 0) == -ENOENT ? -ENOENT :
								 -EOPNOTSUPP;
}

/* Opens the twin directory: the fd, or what no_twin() answers. */
static int open_twin_dir(struct mri_cgroup1 *cg)
{
	char twin[PATH_MAX];
	int r;

	r = mri_hybrid_twin_path(cg->hybrid, cg->real_path, twin,
				 sizeof(twin));
	if (r == -ENODEV || r == -ENAMETOOLONG) {
		mri_log(cg->log, MR_LOG_DEBUG, "cgroup1: %s has no twin: %s",
			cg->path, mr_strerror(r));
		return -EOPNOTSUPP;
	}
	if (r < 0)
		return r;
	r = mri_open(twin, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (r == -ENOENT || r == -ENODEV)
		return no_twin(cg);
	return r;
}

/* Opens the twin's pressure file `name` (memory.pressure, io.pressure):
 * the fd, or what no_twin() answers. */
static int open_twin_pressure(struct mri_cgroup1 *cg, const char *name)
{
	int dirfd, fd;

	dirfd = open_twin_dir(cg);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, name, O_RDONLY | O_CLOEXEC, 0);
	mri_close(dirfd);
	/* A cgroup2 group without memory.pressure: a kernel without
	 * CONFIG_PSI (kernel/cgroup/cgroup.c adds the file with PSI). */
	if (fd == -ENOENT)
		return -EOPNOTSUPP;
	if (fd == -ENODEV)
		return no_twin(cg);
	return fd;
}

static int read_twin_pressure(struct mri_cgroup1 *cg, const char *name,
			      struct mr_pressure *out)
{
	int fd, r;

	if (!mri_hybrid_enabled(cg->hybrid))
		return -EOPNOTSUPP;
	fd = open_twin_pressure(cg, name);
	if (fd < 0)
		return fd;
	r = mri_psi_read(fd, out);
	mri_close(fd);
	/* The twin removed between the open and the read. */
	if (r == -ENOENT)
		r = no_twin(cg);
	return r;
}

int mri_cgroup1_read_pressure(void *priv, struct mr_pressure *out)
{
	return read_twin_pressure(priv, "memory.pressure", out);
}

int mri_cgroup1_read_io_pressure(void *priv, struct mr_pressure *out)
{
	return read_twin_pressure(priv, "io.pressure", out);
}

int mri_cgroup1_psi_trigger_open(void *priv, int kind, uint64_t stall_us,
				 uint64_t window_us)
{
	struct mri_cgroup1 *cg = priv;
	int dirfd, r;

	if (!mri_hybrid_enabled(cg->hybrid))
		return -EOPNOTSUPP;
	dirfd = open_twin_dir(cg);
	if (dirfd < 0)
		return dirfd;
	r = mri_psi_trigger_open(dirfd, "memory.pressure", kind, stall_us,
				 window_us);
	mri_close(dirfd);
	if (r == -ENOENT)
		r = no_twin(cg);
	if (r < 0 && r != -EOPNOTSUPP)
		mri_log(cg->log, MR_LOG_ERR,
			"cgroup1: %s: arming a PSI trigger on its twin: %s",
			cg->path, mr_strerror(r));
	return r;
}

MR_EXPORT int mr_ctx_set_hybrid_psi(mr_ctx_t *ctx, int enable)
{
	int r;

	if (!ctx)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	/* The switch and the mounts are the context's cgroup1 state. */
	return mri_hybrid_set(mri_ctx_backend_state(ctx, &mri_backend_cgroup1),
			      enable != 0, MRI_MOUNTINFO, &ctx->log);
}
