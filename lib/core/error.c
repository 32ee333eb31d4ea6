/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "memreclaim.h"

MR_EXPORT const char *mr_version(void)
{
	return PACKAGE_VERSION;
}

MR_EXPORT const char *mr_strerror(int err)
{
	const char *s;

	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	/* The library's fixed meanings first, then the C library's text. */
	switch (err) {
	case 0:
		return "success";
	case ENOENT:
		return "no such cgroup, or it was removed";
	case EAGAIN:
		return "nothing could be reclaimed";
	case EOPNOTSUPP:
		return "the backend cannot do this";
	case ENODEV:
		return "no usable backend for this path";
	case ECHILD:
		return "handle used in a child process after fork";
	case EINVAL:
		return "invalid argument";
	case EBUSY:
		return "the group is busy: a lock of it is held (by a reclaim "
		       "step, a reader or the keeper of its margin, in this "
		       "process or another; for a step or a reader that waited, "
		       "the log names the holder), or it "
		       "holds processes or groups that stand in the way";
	case ERANGE:
		return "the margin does not fit below the limit";
	case EALREADY:
		return "the worker already runs";
	case ESRCH:
		return "the worker does not run";
	case EEXIST:
		return "the cgroup already exists";
	case EREMOTE:
		return "the cgroup is outside what this process can see";
	case E2BIG:
		return "a field of a later version of the struct is set, which "
		       "this library does not know";
	default:
		break;
	}
	s = strerrordesc_np(err);
	return s ? s : "unknown error";
}
