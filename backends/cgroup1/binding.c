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
 * The memory+swap (memsw) counters are walked the same way, from
 * hierarchical_memsw_limit.
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

/* The nearest visible ancestor whose limit_file reads `limit`: returns 1
 * with its number of levels above the group and its usage_file's value,
 * 0 when none has it (changed between two reads, or set above what is
 * visible), or a negative errno. */
static int find_setter(struct mri_cgroup1 *cg, const char *limit_file,
		       const char *usage_file, uint64_t limit,
		       uint32_t *level_out, uint64_t *usage_out)
{
	char dir[PATH_MAX], *slash;
	uint64_t v;
	uint32_t level = 0;
	int r;

	strcpy(dir, cg->real_path);
	while (strcmp(dir, cg->root) != 0) {
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		level++;
		r = read_at(dir, limit_file, &v);
		if (r < 0)
			return r;
		if (mri_cgroup1_limit_value(v) != limit)
			continue;
		r = read_at(dir, usage_file, usage_out);
		if (r < 0)
			return r;
		*level_out = level;
		return 1;
	}
	return 0;
}

int mri_cgroup1_binding(struct mri_cgroup1 *cg, struct mr_limits *l)
{
	int r;

	l->binding_level = 0;
	l->binding_usage_bytes = l->usage_bytes;
	if (l->limit_bytes == MR_UNLIMITED) {
		l->headroom_bytes = MR_UNLIMITED;
		l->present |= MR_LIMITS_HAS_BINDING;
		return 0;
	}
	if (l->own_limit_bytes != l->limit_bytes) {
		r = find_setter(cg, "memory.limit_in_bytes",
				"memory.usage_in_bytes", l->limit_bytes,
				&l->binding_level, &l->binding_usage_bytes);
		if (r < 0)
			return r;
		if (r == 0) {
			l->flags |= MR_LIMITS_BINDING_HIDDEN;
			return 0;
		}
	}
	l->headroom_bytes = l->binding_usage_bytes < l->limit_bytes ?
			    l->limit_bytes - l->binding_usage_bytes : 0;
	l->present |= MR_LIMITS_HAS_BINDING;
	return 0;
}

int mri_cgroup1_memsw_headroom(struct mri_cgroup1 *cg, uint64_t usage,
			       uint64_t own_limit, uint64_t hier_limit,
			       uint64_t *headroom)
{
	uint64_t anc_usage;
	uint32_t level;
	int r;

	*headroom = own_limit == MR_UNLIMITED ? MR_UNLIMITED :
		    usage < own_limit ? own_limit - usage : 0;
	if (hier_limit >= own_limit)
		return 0;
	r = find_setter(cg, "memory.memsw.limit_in_bytes",
			"memory.memsw.usage_in_bytes", hier_limit, &level,
			&anc_usage);
	if (r <= 0)
		return r;
	anc_usage = anc_usage < hier_limit ? hier_limit - anc_usage : 0;
	if (anc_usage < *headroom)
		*headroom = anc_usage;
	return 0;
}
