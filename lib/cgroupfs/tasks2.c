/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroup2 group of a v1 group's tasks: lib/cgroupfs/tasks2.h. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileops.h"
#include "tasks2.h"


int mri_tasks2_parse_cgroup(const char *text, char *out, size_t len)
{
	const char *line = text, *end;
	size_t n;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (strncmp(line, "0::", 3) != 0)
			continue;
		n = (size_t)(end - line) - 3;
		if (n + 1 > len)
			return -ENAMETOOLONG;
		memcpy(out, line + 3, n);
		out[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* The pids of a cgroup.procs text, at most max; -E2BIG beyond. */
static int parse_pids(const char *text, long *pids, unsigned max,
		      unsigned *n)
{
	char *end;
	long v;

	*n = 0;
	while (*text) {
		while (*text == '\n' || *text == ' ')
			text++;
		if (!*text)
			break;
		v = strtol(text, &end, 10);
		if (end == text || v <= 0)
			return -EIO;
		if (*n == max)
			return -E2BIG;
		pids[(*n)++] = v;
		text = end;
	}
	return 0;
}

static bool has_pid(const long *pids, unsigned n, long pid)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static int refuse(struct mri_logger *log, const char *why)
{
	mri_log(log, MR_LOG_DEBUG, "cgroup1: no cgroup2 group of the tasks' "
		"own: %s", why);
	return -EOPNOTSUPP;
}

int mri_tasks2_group(const char *v2_mount, const char *v1_procs, char *out,
		     size_t len, struct mri_logger *log)
{
	long pids[MRI_TASKS2_MAX_PIDS], other[MRI_TASKS2_MAX_PIDS];
	char path[PATH_MAX], cg[PATH_MAX], first[PATH_MAX] = "";
	char text[PATH_MAX + 64];
	char *procs = NULL;
	unsigned n, nother, i;
	const char *nd;
	ssize_t got;
	int r;

	r = parse_pids(v1_procs, pids, MRI_TASKS2_MAX_PIDS, &n);
	if (r == -E2BIG)
		return refuse(log, "more tasks than are checked");
	if (r < 0 || n == 0)
		return refuse(log, r < 0 ? "cgroup.procs unreadable" :
			      "the group has no task");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/cgroup", pids[i]);
		got = mri_read_file(path, text, sizeof(text));
		if (got == -ENOENT || got == -ESRCH)
			continue; /* exited meanwhile */
		if (got < 0)
			return (int)got;
		r = mri_tasks2_parse_cgroup(text, cg, sizeof(cg));
		if (r == -ENOENT)
			return refuse(log, "a task has no cgroup2 group");
		if (r < 0)
			return r;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", cg);
		else if (strcmp(first, cg) != 0)
			return refuse(log, "the tasks are in several cgroup2 "
				      "groups");
	}
	if (!first[0])
		return refuse(log, "every task exited");
	if (strcmp(first, "/") == 0)
		return refuse(log, "the tasks are in the cgroup2 root");
	r = snprintf(out, len, "%s%s", strcmp(v2_mount, "/") ? v2_mount : "",
		     first);
	if (r < 0 || (size_t)r >= len)
		return -ENAMETOOLONG;
	/* Its descendants' stalls would count in its pressure. */
	snprintf(path, sizeof(path), "%s/cgroup.stat", out);
	got = mri_read_file(path, text, sizeof(text));
	if (got < 0)
		return (int)got;
	nd = strstr(text, "nr_descendants ");
	if (!nd || strtoul(nd + strlen("nr_descendants "), NULL, 10) != 0)
		return refuse(log, "the cgroup2 group has descendants");
	/* Its other tasks' stalls too. */
	procs = malloc(MRI_TASKS2_PROCS_BYTES);
	if (!procs)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/cgroup.procs", out);
	got = mri_read_file(path, procs, MRI_TASKS2_PROCS_BYTES);
	if (got == -EOVERFLOW)
		r = refuse(log, "the cgroup2 group holds more tasks than are "
			   "checked");
	else if (got < 0)
		r = (int)got;
	else
		r = parse_pids(procs, other, MRI_TASKS2_MAX_PIDS, &nother);
	free(procs);
	if (r == -E2BIG)
		return refuse(log, "the cgroup2 group holds more tasks than "
			      "are checked");
	if (r < 0)
		return r;
	for (i = 0; i < nother; i++)
		if (!has_pid(pids, n, other[i]))
			return refuse(log, "the cgroup2 group holds tasks of "
				      "other groups");
	return 0;
}
