/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "path.h"

/* Walks the len bytes of path component by component: absolute, no "."
 * or ".." component, shorter than PATH_MAX. Writes the normal form to out
 * (out_len bytes) unless out is NULL. Returns the normal form's length,
 * or -EINVAL. */
static int walk(const char *path, size_t len, char *out, size_t out_len)
{
	const char *p = path, *end = path + len, *start;
	size_t n = 0, clen;

	if (len == 0 || path[0] != '/' || len >= PATH_MAX ||
	    (out && out_len < 2))
		return -EINVAL;
	while (p < end) {
		while (p < end && *p == '/')
			p++;
		if (p == end)
			break;
		start = p;
		while (p < end && *p != '/')
			p++;
		clen = (size_t)(p - start);
		if ((clen == 1 && start[0] == '.') ||
		    (clen == 2 && start[0] == '.' && start[1] == '.'))
			return -EINVAL;
		if (out) {
			if (n + 1 + clen >= out_len)
				return -EINVAL;
			out[n] = '/';
			memcpy(out + n + 1, start, clen);
		}
		n += 1 + clen;
	}
	if (n == 0) {
		if (out)
			out[0] = '/';
		n = 1;
	}
	if (out)
		out[n] = '\0';
	return (int)n;
}

int mri_path_normalize(const char *path, char *out, size_t out_len)
{
	int r;

	if (!path || !out)
		return -EINVAL;
	r = walk(path, strnlen(path, PATH_MAX), out, out_len);
	return r < 0 ? r : 0;
}

bool mri_path_is_normal(const char *path, size_t len)
{
	/* The normal form only drops slashes: the same length, the same
	 * bytes. */
	return path && memchr(path, '\0', len) == NULL &&
	       walk(path, len, NULL, 0) == (int)len;
}
