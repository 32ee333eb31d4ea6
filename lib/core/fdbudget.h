/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fd budget: what an open or a margin may keep, below RLIMIT_NOFILE. */
#ifndef MR_FDBUDGET_H
#define MR_FDBUDGET_H

#include "log.h"

/*
 * Whether `need` more fds can be kept with MRI_FD_RESERVE (lib/core/backend.h)
 * still free after them below the process's soft RLIMIT_NOFILE, the fds a
 * worker pass and a registration open for a moment: were the last fds
 * kept by groups, every group's next pass would fail with EMFILE, those
 * already open included. Counts the free fds by duplicating probe_fd (an
 * fd of the caller's, open) need + MRI_FD_RESERVE times and closing the
 * copies, so it holds that many more fds for a moment. Returns 0, or
 * -EMFILE with a warning naming `path` and `what` (what was refused), or
 * the errno of another failed duplication. A snapshot: fds other threads
 * open at the same time are not held back. MT-safe.
 */
int mri_fd_budget(struct mri_logger *log, int probe_fd, unsigned int need,
		  const char *path, const char *what);

#endif /* MR_FDBUDGET_H */
