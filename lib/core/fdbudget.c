/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The fd budget (lib/core/fdbudget.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "fdbudget.h"
#include "fds.h"

/* Large enough for any backend's kept fds plus the reserve. */
#define PROBE_MAX 64

int mri_fd_budget(struct mri_logger *log, int probe_fd, unsigned int need,
		  const char *path, const char *what)
{
	unsigned int n = need + MRI_FD_RESERVE, i, got = 0;
	struct rlimit rl = { 0 };
	int fds[PROBE_MAX], err = 0;

	if (n > PROBE_MAX)
		return -EINVAL;
	/* Under the fork lock: a child never gets a copy of the probe's fds
	 * (no wait is done under it; lib/core/fds.h). */
	mri_fork_hold();
	for (i = 0; i < n; i++) {
		fds[i] = fcntl(probe_fd, F_DUPFD_CLOEXEC, 0);
		if (fds[i] < 0) {
			err = errno;
			break;
		}
		got++;
	}
	for (i = 0; i < got; i++)
		close(fds[i]);
	mri_fork_release();
	if (!err)
		return 0;
	if (err != EMFILE)
		return -err;
	getrlimit(RLIMIT_NOFILE, &rl);
	mri_log(log, MR_LOG_WARNING,
		"%s: %s refused: it keeps %u fd%s and %u must stay free for "
		"the worker's passes, but only %u of RLIMIT_NOFILE %llu are "
		"free", path, what, need, need == 1 ? "" : "s",
		(unsigned int)MRI_FD_RESERVE, got,
		(unsigned long long)rl.rlim_cur);
	return -EMFILE;
}
