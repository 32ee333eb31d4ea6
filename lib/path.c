/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "path.h"

int mri_path_normalize(const char *path, char *out, size_t out_len)
{
	const char *p, *start;
	size_t n = 0, len;

	if (!path || !out || out_len < 2 || path[0] != '/' ||
	    strnlen(path, PATH_MAX) >= PATH_MAX)
		return -EINVAL;
	for (p = path; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - start);
		if ((len == 1 && start[0] == '.') ||
		    (len == 2 && start[0] == '.' && start[1] == '.'))
			return -EINVAL;
		if (n + 1 + len >= out_len)
			return -EINVAL;
		out[n++] = '/';
		memcpy(out + n, start, len);
		n += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}
