/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The child groups of a cgroup directory the caller owns (see
 * cgchildren.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgchildren.h"
#include "fds.h"

int mri_cgroup_list_children(const char *path,
			     int (*fn)(void *arg, const char *child_path),
			     void *arg)
{
	char child[PATH_MAX];
	struct dirent *de;
	struct stat st;
	uid_t uid = geteuid();
	DIR *dir;
	int r = 0;

	dir = mri_opendir(path);
	if (!dir)
		return -errno;
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			r = -errno;
			break;
		}
		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path,
			     de->d_name) >= (int)sizeof(child))
			continue;
		if (stat(child, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != uid)
			continue;
		r = fn(arg, child);
		if (r < 0)
			break;
	}
	mri_closedir(dir);
	return r;
}
