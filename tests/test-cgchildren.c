/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child groups of a cgroup directory the caller owns
 * (lib/cgroupfs/cgchildren.c), on a temporary directory: directories owned by the
 * caller are listed, those of another uid (root only can make one),
 * regular files and dot names are not; fn's negative return stops the
 * walk and is returned; the directory's fd is closed either way and is
 * not under the fork lock while fn runs.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgchildren.h"
#include "fds.h"

/* A uid no file of the test has: nobody's. */
#define OTHER_UID 65534

static char root[PATH_MAX];

static struct {
	char seen[8][PATH_MAX];
	int n;
	int stop_at;          /* fn's call that stops the walk (1-based), 0 */
	bool held;            /* fn ran under the fork lock */
} got;

static int collect(void *arg, const char *child_path)
{
	(void)arg;
	got.held |= mri_fork_held_by_me();
	ck_assert_int_lt(got.n, 8);
	snprintf(got.seen[got.n], PATH_MAX, "%s", child_path);
	got.n++;
	return got.n == got.stop_at ? -ECANCELED : 0;
}

static void path_of(char *out, const char *name)
{
	ck_assert_int_lt(snprintf(out, PATH_MAX, "%s/%s", root, name),
			 PATH_MAX);
}

static bool seen(const char *name)
{
	char p[PATH_MAX];
	int i;

	path_of(p, name);
	for (i = 0; i < got.n; i++)
		if (strcmp(got.seen[i], p) == 0)
			return true;
	return false;
}

static void mkdir_in(const char *name)
{
	char p[PATH_MAX];

	path_of(p, name);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

/* The number of fds the process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	char p[PATH_MAX];
	FILE *f;

	memset(&got, 0, sizeof(got));
	snprintf(root, sizeof(root), "%s/mr-cgchildren-XXXXXX", t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	mkdir_in("c1");
	mkdir_in("c2");
	mkdir_in(".hidden");
	path_of(p, "memory.reclaim");
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	if (geteuid() == 0) {
		mkdir_in("theirs");
		path_of(p, "theirs");
		ck_assert_int_eq(chown(p, OTHER_UID, OTHER_UID), 0);
	}
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* The owned directories, each once, and nothing else. */
START_TEST(owned_directories_only)
{
	int fds = open_fds();

	ck_assert_int_eq(mri_cgroup_list_children(root, collect, NULL), 0);
	ck_assert_int_eq(got.n, 2);
	ck_assert(seen("c1"));
	ck_assert(seen("c2"));
	ck_assert(!seen("theirs"));
	ck_assert(!seen(".hidden"));
	ck_assert(!seen("memory.reclaim"));
	ck_assert(!got.held);
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* fn's negative return stops the walk at once and is returned. */
START_TEST(fn_stops_the_walk)
{
	int fds = open_fds();

	got.stop_at = 1;
	ck_assert_int_eq(mri_cgroup_list_children(root, collect, NULL),
			 -ECANCELED);
	ck_assert_int_eq(got.n, 1);
	ck_assert(seen("c1") || seen("c2"));
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* No children: 0 and no call; a directory that is not there or not a
 * directory: the open's errno and no call. */
START_TEST(empty_missing_and_not_a_directory)
{
	char p[PATH_MAX];

	path_of(p, "c1");
	ck_assert_int_eq(mri_cgroup_list_children(p, collect, NULL), 0);
	path_of(p, "gone");
	ck_assert_int_eq(mri_cgroup_list_children(p, collect, NULL), -ENOENT);
	path_of(p, "memory.reclaim");
	ck_assert_int_eq(mri_cgroup_list_children(p, collect, NULL),
			 -ENOTDIR);
	ck_assert_int_eq(got.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgchildren");
	TCase *tc = tcase_create("tmpdir");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, owned_directories_only);
	tcase_add_test(tc, fn_stops_the_walk);
	tcase_add_test(tc, empty_missing_and_not_a_directory);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
