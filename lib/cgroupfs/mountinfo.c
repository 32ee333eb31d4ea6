/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/self/mountinfo parsing (format: Documentation/filesystems/proc.rst,
 * "/proc/<pid>/mountinfo"):
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=c
 *   (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)      (11)
 *
 * (7) is zero or more optional fields ended by the single "-" field (8).
 * The kernel escapes space, tab, newline and backslash in paths as \ooo
 * (fs/proc_namespace.c, show_mountinfo() with mangle()).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fds.h"
#include "mountinfo.h"

enum { F_ROOT = 3, F_MOUNT_POINT = 4, F_FIRST_OPTIONAL = 6 };

/* Decodes the \ooo escapes of src into dst (size PATH_MAX). */
static int unescape(const char *src, char *dst)
{
	size_t n = 0;
	unsigned int v;
	int i;

	while (*src) {
		if (n + 1 >= PATH_MAX)
			return -EIO;
		if (*src != '\\') {
			dst[n++] = *src++;
			continue;
		}
		v = 0;
		for (i = 1; i <= 3; i++) {
			if (src[i] < '0' || src[i] > '7')
				return -EIO;
			v = v * 8 + (unsigned int)(src[i] - '0');
		}
		if (v == 0 || v > 0xff)
			return -EIO;
		dst[n++] = (char)v;
		src += 4;
	}
	dst[n] = '\0';
	return 0;
}

/* True if `token` is one of the comma-separated tokens of `list`. */
static bool has_token(const char *list, const char *token)
{
	size_t len = strlen(token);
	const char *p = list;

	while (p) {
		if (strncmp(p, token, len) == 0 &&
		    (p[len] == ',' || p[len] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/*
 * Parses one line (modified in place). Returns 1 and fills *out for a
 * cgroup or cgroup2 mount, 0 for another filesystem, -EIO if malformed.
 */
static int parse_line(char *line, struct mri_cgroup_mount *out)
{
	char *fields[F_FIRST_OPTIONAL];
	char *fstype, *super_opts, *tok, *save;
	int i, r;

	tok = strtok_r(line, " \n", &save);
	for (i = 0; i < F_FIRST_OPTIONAL; i++) {
		if (!tok)
			return -EIO;
		fields[i] = tok;
		tok = strtok_r(NULL, " \n", &save);
	}
	while (tok && strcmp(tok, "-") != 0)
		tok = strtok_r(NULL, " \n", &save);
	if (!tok)
		return -EIO;
	fstype = strtok_r(NULL, " \n", &save);
	if (!fstype || !strtok_r(NULL, " \n", &save))
		return -EIO;  /* no source field */
	super_opts = strtok_r(NULL, " \n", &save);
	if (!super_opts || strtok_r(NULL, " \n", &save))
		return -EIO;

	if (strcmp(fstype, "cgroup") == 0)
		out->version = 1;
	else if (strcmp(fstype, "cgroup2") == 0)
		out->version = 2;
	else
		return 0;
	r = unescape(fields[F_ROOT], out->root);
	if (r < 0)
		return r;
	r = unescape(fields[F_MOUNT_POINT], out->mount_point);
	if (r < 0)
		return r;
	if (out->mount_point[0] != '/' || out->root[0] != '/')
		return -EIO;
	out->has_memory = out->version == 1 && has_token(super_opts, "memory");
	out->memory_recursiveprot = out->version == 2 &&
		has_token(super_opts, "memory_recursiveprot");
	return 1;
}

/* Length of mount point mp if it contains path, else 0. */
static size_t contains(const char *mp, const char *path)
{
	size_t len = strlen(mp);

	if (strcmp(mp, "/") == 0)
		return 1;
	if (strncmp(mp, path, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'))
		return len;
	return 0;
}

enum match { MATCH_PATH, MATCH_MEMORY_V1, MATCH_V2 };

static int find(const char *mountinfo, enum match how, const char *path,
		struct mri_cgroup_mount *out)
{
	struct mri_cgroup_mount *cur;
	size_t best = 0, len, cap = 0;
	char *line = NULL;
	bool found = false;
	FILE *f;
	int r = 0;

	cur = malloc(sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	f = mri_fopen(mountinfo);
	if (!f) {
		r = -errno;
		free(cur);
		return r;
	}
	while (getline(&line, &cap, f) > 0) {
		r = parse_line(line, cur);
		if (r < 0)
			break;
		if (r == 0)
			continue;
		r = 0;
		if (how != MATCH_PATH) {
			/* A bind mount of a subtree has a root other than
			 * "/"; the whole hierarchy is preferred. */
			if ((how == MATCH_MEMORY_V1 && !cur->has_memory) ||
			    (how == MATCH_V2 && cur->version != 2) ||
			    (found && strcmp(out->root, "/") == 0))
				continue;
			*out = *cur;
			found = true;
			continue;
		}
		/* Of two mounts on one mount point, the later line is the
		 * one on top: it wins a tie. */
		len = contains(cur->mount_point, path);
		if (len > 0 && len >= best) {
			best = len;
			*out = *cur;
			found = true;
		}
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	mri_fclose(f);
	free(line);
	free(cur);
	if (r < 0)
		return r;
	return found ? 0 : -ENODEV;
}

int mri_mount_find(const char *mountinfo, const char *path,
		   struct mri_cgroup_mount *out)
{
	return find(mountinfo, MATCH_PATH, path, out);
}

int mri_mount_find_memory_v1(const char *mountinfo,
			     struct mri_cgroup_mount *out)
{
	return find(mountinfo, MATCH_MEMORY_V1, NULL, out);
}

int mri_mount_each(const char *mountinfo,
		   int (*fn)(const struct mri_cgroup_mount *m, void *arg),
		   void *arg)
{
	struct mri_cgroup_mount *cur;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;
	int r = 0;

	cur = malloc(sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	f = mri_fopen(mountinfo);
	if (!f) {
		r = -errno;
		free(cur);
		return r;
	}
	while (getline(&line, &cap, f) > 0) {
		r = parse_line(line, cur);
		if (r < 0)
			break;
		r = r > 0 ? fn(cur, arg) : 0;
		if (r != 0)
			break;
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	mri_fclose(f);
	free(line);
	free(cur);
	return r;
}

int mri_mount_find_v2(const char *mountinfo, struct mri_cgroup_mount *out)
{
	return find(mountinfo, MATCH_V2, NULL, out);
}
