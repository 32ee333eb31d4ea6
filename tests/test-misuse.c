/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Misuse of the public API returns exact error codes and changes nothing. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memreclaim.h"

static mr_ctx_t *ctx;

static void setup(void)
{
	unsetenv("MEMRECLAIM_BACKEND");
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
}

static void teardown(void)
{
	mr_ctx_free(ctx);
	ctx = NULL;
}

START_TEST(ctx_misuse)
{
	ck_assert_int_eq(mr_ctx_new(NULL), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_log(NULL, NULL, NULL, MR_LOG_INFO), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, -1), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, 8), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, MR_LOG_DEBUG), 0);
	mr_ctx_free(NULL);
}
END_TEST

START_TEST(open_bad_paths)
{
	char longpath[PATH_MAX + 16];
	mr_group_t *g = (mr_group_t *)&g;

	ck_assert_int_eq(mr_group_open(NULL, "/sys/fs/cgroup/memory", NULL, &g),
			 -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, NULL, NULL, &g), -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "sys/fs/cgroup/memory", NULL, &g),
			 -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "", NULL, &g), -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory/../memory",
				       NULL, &g), -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/./memory", NULL, &g),
			 -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory/..", NULL,
				       &g), -EINVAL);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	ck_assert_int_eq(mr_group_open(ctx, longpath, NULL, &g), -EINVAL);
	/* Nothing was written on failure. */
	ck_assert_ptr_eq(g, (mr_group_t *)&g);
}
END_TEST

START_TEST(open_bad_backends)
{
	mr_group_t *g = NULL;

	/* Unknown names, and names of backends not built in this version. */
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", "cgroup3",
				       &g), -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", "sim", &g),
			 -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", "", &g),
			 -EINVAL);
	setenv("MEMRECLAIM_BACKEND", "bogus", 1);
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", NULL, &g),
			 -EINVAL);
	/* An explicit name wins over the environment. */
	ck_assert_int_eq(mr_group_open(ctx, "/nonexistent-memreclaim", "auto",
				       &g), -ENOENT);
	unsetenv("MEMRECLAIM_BACKEND");
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(open_not_a_cgroup)
{
	mr_group_t *g = NULL;

	ck_assert_int_eq(mr_group_open(ctx, "/nonexistent-memreclaim", NULL,
				       &g), -ENOENT);
	ck_assert_int_eq(mr_group_open(ctx, "/nonexistent-memreclaim",
				       "cgroup1", &g), -ENOENT);
	/* A real directory that is no memory cgroup: no backend takes it. */
	ck_assert_int_eq(mr_group_open(ctx, "/", NULL, &g), -ENODEV);
	ck_assert_int_eq(mr_group_open(ctx, "/", "cgroup1", &g), -ENODEV);
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(null_group)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat m = { .size = sizeof(m) };
	struct mr_reclaim_stats s = { .size = sizeof(s) };
	uint64_t u = 7;

	ck_assert_int_eq(mr_group_close(NULL), 0);
	ck_assert_ptr_null(mr_group_path(NULL));
	ck_assert_ptr_null(mr_group_backend(NULL));
	ck_assert_int_eq(mr_group_read_usage(NULL, &u), -EINVAL);
	ck_assert_int_eq(mr_group_read_limits(NULL, &l), -EINVAL);
	ck_assert_int_eq(mr_group_read_memstat(NULL, &m), -EINVAL);
	ck_assert_int_eq(mr_group_read_reclaim_stats(NULL, MR_REASON_MARGIN,
						     &s), -EINVAL);
	ck_assert_int_eq(mr_group_reclaim(NULL, 4096, 0, &u), -EINVAL);
	ck_assert_int_eq(mr_group_set_margin(NULL, 4096, 0, 0), -EINVAL);
	ck_assert_int_eq(mr_group_set_batch_fixed(NULL, 4096), -EINVAL);
	ck_assert_int_eq(mr_group_set_batch_proportional(NULL, 1, 1 << 20, 0),
			 -EINVAL);
	ck_assert_uint_eq(u, 7);
}
END_TEST

START_TEST(worker_misuse)
{
	ck_assert_int_eq(mr_ctx_worker_start(NULL), -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_stop(NULL), -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), -ESRCH);
	ck_assert_int_eq(mr_ctx_set_worker_sched(NULL, MR_SCHED_IDLE, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, 7, 0), -EINVAL);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_NICE, 20),
			 -EINVAL);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_NICE, -21),
			 -EINVAL);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_IDLE, 5),
			 -EINVAL);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_NICE, 5), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), -EALREADY);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_IDLE, 0),
			 -EBUSY);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), -ESRCH);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_IDLE, 0), 0);
}
END_TEST

START_TEST(after_fork)
{
	mr_group_t *g = NULL;
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		bad |= mr_group_open(ctx, "/sys/fs/cgroup/memory", NULL, &g) !=
		       -ECHILD;
		bad |= mr_ctx_worker_start(ctx) != -ECHILD;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(strerror_texts)
{
	ck_assert_str_eq(mr_strerror(0), "success");
	ck_assert_str_eq(mr_strerror(-ENOENT), "cgroup is gone (or no such file)");
	ck_assert_str_eq(mr_strerror(ENOENT), mr_strerror(-ENOENT));
	ck_assert_str_eq(mr_strerror(-EAGAIN), "nothing could be reclaimed");
	ck_assert_str_eq(mr_strerror(-ECHILD),
			 "handle used in a child process after fork");
	ck_assert_str_eq(mr_strerror(-ENOMEM), "Cannot allocate memory");
	ck_assert_str_eq(mr_strerror(-123456), "unknown error");
	ck_assert_str_eq(mr_strerror(INT_MIN), "unknown error");
	ck_assert_ptr_nonnull(mr_version());
	ck_assert_str_eq(mr_version(), PACKAGE_VERSION);
	{
		char v[32];

		snprintf(v, sizeof(v), "%d.%d.%d", MR_VERSION_MAJOR,
			 MR_VERSION_MINOR, MR_VERSION_MICRO);
		ck_assert_str_eq(v, PACKAGE_VERSION);
	}
	ck_assert_str_eq(mr_strerror(-ERANGE),
			 "the margin does not fit below the limit");
	ck_assert_str_eq(mr_strerror(-EBUSY), "another manager holds the group");
}
END_TEST

static Suite *misuse_suite(void)
{
	Suite *s = suite_create("misuse");
	TCase *tc = tcase_create("api");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ctx_misuse);
	tcase_add_test(tc, open_bad_paths);
	tcase_add_test(tc, open_bad_backends);
	tcase_add_test(tc, open_not_a_cgroup);
	tcase_add_test(tc, null_group);
	tcase_add_test(tc, worker_misuse);
	tcase_add_test(tc, after_fork);
	tcase_add_test(tc, strerror_texts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(misuse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
