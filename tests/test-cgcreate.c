/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Group creation through libcgroup, without a kernel: the table that turns
 * libcgroup's ECG* codes into negative errno values, the path check, and
 * the arguments mr_cgroup_create/attach/remove refuse before touching
 * anything.
 */
#include <check.h>
#include <errno.h>
#include <libcgroup.h>
#include <limits.h>
#include <string.h>

#include "cgcreate.h"
#include "memreclaim.h"
#include "path.h"

START_TEST(ecg_codes_translate)
{
	static const struct {
		int ecg;
		int err;
	} cases[] = {
		{ 0, 0 },
		{ ECGROUPNOTEXIST, -ENOENT },
		{ ECGROUPVALUENOTEXIST, -ENOENT },
		{ ECGROUPNOTMOUNTED, -ENODEV },
		{ ECGROUPSUBSYSNOTMOUNTED, -ENODEV },
		{ ECGROUPNOTINITIALIZED, -ENODEV },
		{ ECGROUPNOTOWNER, -EPERM },
		{ ECGROUPNOTALLOWED, -EPERM },
		{ ECGINVAL, -EINVAL },
		{ ECGVALUEEXISTS, -EEXIST },
		{ ECGCONTROLLEREXISTS, -EEXIST },
		{ ECGNONEMPTY, -EBUSY },
		{ ECGROUPUNSUPP, -EOPNOTSUPP },
		{ ECGMAXVALUESEXCEEDED, -E2BIG },
		{ ECGCONTROLLERCREATEFAILED, -ENOMEM },
		{ ECGROUPNOTCOMPILED, -ENOSYS },
		{ ECGFAIL, -EIO },
		/* A plain positive errno passes through, negated. */
		{ ENOMEM, -ENOMEM },
		{ EACCES, -EACCES },
		/* Unknown values are an I/O error, never success. */
		{ -1, -EIO },
		{ 49999 + 100, -EIO },
		{ ECGNONEMPTY + 1, -EIO },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(mri_cgroup_errno(cases[i].ecg) == cases[i].err,
			      "ECG %d: got %d, want %d", cases[i].ecg,
			      mri_cgroup_errno(cases[i].ecg), cases[i].err);
}
END_TEST

START_TEST(every_ecg_code_is_an_error)
{
	int ecg;

	for (ecg = ECGROUPNOTCOMPILED; ecg <= ECGNONEMPTY; ecg++)
		ck_assert_msg(mri_cgroup_errno(ecg) < 0, "ECG %d -> %d", ecg,
			      mri_cgroup_errno(ecg));
}
END_TEST

START_TEST(ecgother_without_errno_is_eio)
{
	/* A fresh process: libcgroup's thread-local errno is still 0. */
	ck_assert_int_eq(cgroup_get_last_errno(), 0);
	ck_assert_int_eq(mri_cgroup_errno(ECGOTHER), -EIO);
}
END_TEST

static void check_norm(const char *in, int want, const char *out)
{
	char buf[PATH_MAX];
	int r = mri_path_normalize(in, buf, sizeof(buf));

	ck_assert_msg(r == want, "'%s': got %d, want %d", in, r, want);
	if (want == 0)
		ck_assert_str_eq(buf, out);
}

START_TEST(paths_normalize)
{
	check_norm("/sys/fs/cgroup/memory/a", 0, "/sys/fs/cgroup/memory/a");
	check_norm("/sys/fs/cgroup/memory/a/", 0, "/sys/fs/cgroup/memory/a");
	check_norm("//sys//fs/cgroup///memory/a//", 0,
		   "/sys/fs/cgroup/memory/a");
	check_norm("/", 0, "/");
	check_norm("///", 0, "/");
	check_norm("/a/.b/..c/...", 0, "/a/.b/..c/...");
}
END_TEST

START_TEST(paths_refused)
{
	static char long_path[PATH_MAX + 8];
	char small[8];

	check_norm("", -EINVAL, NULL);
	check_norm("relative/a", -EINVAL, NULL);
	check_norm("/sys/fs/cgroup/memory/../etc", -EINVAL, NULL);
	check_norm("/sys/fs/cgroup/memory/..", -EINVAL, NULL);
	check_norm("/sys/fs/cgroup/memory/./a", -EINVAL, NULL);
	check_norm("/sys/fs/cgroup/memory/.", -EINVAL, NULL);
	check_norm("/./", -EINVAL, NULL);
	ck_assert_int_eq(mri_path_normalize(NULL, small, sizeof(small)),
			 -EINVAL);
	ck_assert_int_eq(mri_path_normalize("/abc", NULL, 8), -EINVAL);
	/* Too long for the output buffer, or for PATH_MAX. */
	ck_assert_int_eq(mri_path_normalize("/abcdefgh", small,
						   sizeof(small)), -EINVAL);
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	check_norm(long_path, -EINVAL, NULL);
}
END_TEST

START_TEST(public_calls_refuse_bad_arguments)
{
	mr_ctx_t *ctx;

	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_cgroup_create(NULL, "/sys/fs/cgroup/memory/x",
					  64 << 20), -EINVAL);
	ck_assert_int_eq(mr_cgroup_create(ctx, NULL, 64 << 20), -EINVAL);
	ck_assert_int_eq(mr_cgroup_create(ctx, "memory/x", 64 << 20), -EINVAL);
	ck_assert_int_eq(mr_cgroup_create(ctx, "/sys/fs/cgroup/memory/../x",
					  64 << 20), -EINVAL);
	ck_assert_int_eq(mr_cgroup_create(ctx, "/sys/fs/cgroup/memory/x",
					  4095), -EINVAL);
	ck_assert_int_eq(mr_cgroup_create(ctx, "/sys/fs/cgroup/memory/x", 0),
			 -EINVAL);
	ck_assert_int_eq(mr_cgroup_attach(ctx, "/sys/fs/cgroup/memory/x", 0),
			 -EINVAL);
	ck_assert_int_eq(mr_cgroup_attach(ctx, "/sys/fs/cgroup/memory/x", -1),
			 -EINVAL);
	ck_assert_int_eq(mr_cgroup_attach(NULL, "/sys/fs/cgroup/memory/x", 1),
			 -EINVAL);
	ck_assert_int_eq(mr_cgroup_attach(ctx, "/sys/./x", 1), -EINVAL);
	ck_assert_int_eq(mr_cgroup_remove(NULL, "/sys/fs/cgroup/memory/x"),
			 -EINVAL);
	ck_assert_int_eq(mr_cgroup_remove(ctx, NULL), -EINVAL);
	ck_assert_int_eq(mr_cgroup_remove(ctx, "x"), -EINVAL);
	mr_ctx_free(ctx);
}
END_TEST

START_TEST(paths_outside_a_memory_mount_are_enodev)
{
	mr_ctx_t *ctx;

	/* /proc is never a cgroup mount: no backend for it, whether or not
	 * a memory controller is mounted elsewhere. */
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_cgroup_create(ctx, "/proc/memreclaim-x", 64 << 20),
			 -ENODEV);
	ck_assert_int_eq(mr_cgroup_attach(ctx, "/proc/memreclaim-x", 1),
			 -ENODEV);
	ck_assert_int_eq(mr_cgroup_remove(ctx, "/proc/memreclaim-x"), -ENODEV);
	mr_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgcreate");
	TCase *tc = tcase_create("table");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, ecg_codes_translate);
	tcase_add_test(tc, every_ecg_code_is_an_error);
	tcase_add_test(tc, ecgother_without_errno_is_eio);
	tcase_add_test(tc, paths_normalize);
	tcase_add_test(tc, paths_refused);
	tcase_add_test(tc, public_calls_refuse_bad_arguments);
	tcase_add_test(tc, paths_outside_a_memory_mount_are_enodev);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
