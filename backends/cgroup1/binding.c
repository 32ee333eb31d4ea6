/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which group's limit binds a v1 group, and the headroom under it.
 *
 * The kernel reports the binding limit itself, ancestors the process cannot
 * see included: hierarchical_memory_limit in memory.stat, the smallest
 * limit on the path to the real root (mm/memcontrol-v1.c,
 * memcg1_stat_format()). Which group sets it, and that group's usage, take
 * a walk up the visible directories, reading each one's
 * memory.limit_in_bytes and memory.usage_in_bytes. When no visible group
 * has the kernel's limit, one above the visible top binds: the snapshot
 * says so (MR_LIMITS_BINDING_HIDDEN) rather than name a wrong group.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup1.h"
#include "fileops.h"

/* Reads a number from dir/name. */
static int read_at(const char *dir, const char *name, uint64_t *out)
{
	char path[PATH_MAX], buf[64];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	n = mri_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return mri_cgroup1_gone((int)n);
	return mri_parse_u64(buf, out);
}

int mri_cgroup1_binding(struct mri_cgroup1 *cg, struct mr_limits *l)
{
	char dir[PATH_MAX], *slash;
	uint64_t limit, usage;
	uint32_t level = 0;
	int r;

	l->binding_level = 0;
	l->binding_usage_bytes = l->usage_bytes;
	if (l->limit_bytes == MR_UNLIMITED) {
		l->headroom_bytes = MR_UNLIMITED;
		l->present |= MR_LIMITS_HAS_BINDING;
		return 0;
	}
	if (l->own_limit_bytes == l->limit_bytes)
		goto found;
	strcpy(dir, cg->real_path);
	while (strcmp(dir, cg->root) != 0) {
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		level++;
		r = read_at(dir, "memory.limit_in_bytes", &limit);
		if (r < 0)
			return r;
		if (mri_cgroup1_limit_value(limit) != l->limit_bytes)
			continue;
		r = read_at(dir, "memory.usage_in_bytes", &usage);
		if (r < 0)
			return r;
		l->binding_level = level;
		l->binding_usage_bytes = usage;
		goto found;
	}
	/* Changed between the two reads, or set above what is visible. */
	l->flags |= MR_LIMITS_BINDING_HIDDEN;
	return 0;
found:
	l->headroom_bytes = l->binding_usage_bytes < l->limit_bytes ?
			    l->limit_bytes - l->binding_usage_bytes : 0;
	l->present |= MR_LIMITS_HAS_BINDING;
	return 0;
}
