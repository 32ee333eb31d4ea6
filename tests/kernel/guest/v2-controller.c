/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 memory controller is there and complete: the root offers
 * it to children, a child group has the interface files the cgroup2
 * backend uses, limits written read back, and bad writes are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest.h"

#define GROUP "mr-controller"

/* Does the space-separated list in a file name the word? */
static int has_word(const char *group, const char *file, const char *word)
{
	char buf[1024], *w, *save = NULL;

	if (cg_read(group, file, buf, sizeof(buf)) < 0)
		return 0;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (strcmp(w, word) == 0)
			return 1;
	return 0;
}

static void check_files(void)
{
	static const char *const files[] = {
		"memory.current", "memory.max", "memory.high", "memory.low",
		"memory.min", "memory.peak", "memory.reclaim", "memory.events",
		"memory.events.local", "memory.pressure", "memory.stat",
		"memory.swap.current", "memory.swap.max", "memory.oom.group",
	};
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), CG_ROOT "/" GROUP "/%s", files[i]);
		ok(access(p, F_OK) == 0, "the child group has %s", files[i]);
	}
}

/* A limit file takes bytes, a size with a suffix and "max", and reads
 * back bytes or "max". */
static void check_limit(const char *file)
{
	uint64_t v = 0;
	int r;

	r = cg_write(GROUP, file, "67108864");
	ok(r == 0, "%s: write 67108864 (%s)", file, strerror(-r));
	r = cg_read_u64(GROUP, file, &v);
	ok(r == 0 && v == 64 * MiB, "%s reads back 67108864 (%" PRIu64 ")",
	   file, v);
	r = cg_write(GROUP, file, "32M");
	if (r == 0)
		r = cg_read_u64(GROUP, file, &v);
	ok(r == 0 && v == 32 * MiB,
	   "%s: \"32M\" reads back as 33554432 (%" PRIu64 ")", file, v);
	r = cg_write(GROUP, file, "max");
	if (r == 0)
		r = cg_read_u64(GROUP, file, &v);
	ok(r == 0 && v == UINT64_MAX, "%s: \"max\" reads back as max", file);
	r = cg_write(GROUP, file, "lots");
	ok(r == -EINVAL, "%s: garbage is EINVAL (%s)", file, strerror(-r));
}

static void check_keys(const char *file, const char *const *keys)
{
	uint64_t v;

	for (; *keys; keys++)
		ok(cg_read_key(GROUP, file, *keys, &v) == 0, "%s has %s", file,
		   *keys);
}

int main(void)
{
	static const char *const events[] = {
		"low", "high", "max", "oom", "oom_kill", NULL,
	};
	static const char *const stat[] = {
		"anon", "file", "shmem", "file_dirty", "file_writeback",
		"active_file", "inactive_file", "active_anon", "inactive_anon",
		"pgscan", "pgsteal", "workingset_refault_file", NULL,
	};
	char buf[4096];
	uint64_t v;
	int r;

	ok(has_word("", "cgroup.controllers", "memory"),
	   "the root offers the memory controller");
	ok(has_word("", "cgroup.subtree_control", "memory"),
	   "the memory controller is enabled for children");
	cg_remove(GROUP);
	r = cg_create(GROUP);
	if (!ok(r == 0, "create a child group (%s)", strerror(-r)))
		bail("no child group");
	check_files();
	check_limit("memory.max");
	check_limit("memory.high");
	check_keys("memory.events", events);
	check_keys("memory.stat", stat);
	if (cg_read_key(GROUP, "memory.events", "oom_group_kill", &v) < 0)
		diag("memory.events has no oom_group_kill");
	if (cg_read_key(GROUP, "memory.stat", "kernel", &v) < 0)
		diag("memory.stat has no \"kernel\" key");

	r = cg_read(GROUP, "memory.pressure", buf, sizeof(buf));
	ok(r > 0 && strncmp(buf, "some avg10=", 11) == 0 &&
		   strstr(buf, "\nfull avg10=") != NULL,
	   "memory.pressure has some and full lines (PSI on)");
	r = cg_read_u64(GROUP, "memory.current", &v);
	ok(r == 0, "memory.current reads (%" PRIu64 ")", v);
	r = cg_write(GROUP, "memory.reclaim", "0");
	ok(r == 0, "memory.reclaim \"0\" is accepted (%s)", strerror(-r));
	r = cg_write(GROUP, "memory.reclaim", "garbage");
	ok(r == -EINVAL, "memory.reclaim garbage is EINVAL (%s)",
	   strerror(-r));
	r = cg_write(GROUP, "memory.reclaim", "1M swappiness=0");
	diag("memory.reclaim with swappiness= answers %s (EINVAL before 6.11)",
	     r == 0 ? "success" : strerror(-r));
	ok(cg_read_u64("", "memory.current", &v) == -ENOENT,
	   "the root group has no memory.current");

	r = cg_remove(GROUP);
	ok(r == 0, "remove the child group (%s)", strerror(-r));
	return done_testing();
}
