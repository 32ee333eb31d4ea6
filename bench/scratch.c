/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmarks' scratch directories: bench/scratch.h. */
#define _GNU_SOURCE
#include "scratch.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int scratch_mkdir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: creating %s: %s\n",
			program_invocation_short_name, path, strerror(errno));
		return -1;
	}
	return 0;
}

int scratch_mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = strchr(buf + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (scratch_mkdir(buf))
			return -1;
		*p = '/';
	}
	return scratch_mkdir(buf);
}

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	if (remove(path))
		fprintf(stderr, "%s: removing %s: %s\n",
			program_invocation_short_name, path, strerror(errno));
	return 0;
}

void scratch_remove(const char *path)
{
	if (path[0])
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
