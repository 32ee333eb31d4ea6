/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of backends (lib/core/backend.c) with a backend of its own, as
 * another library registers one: registration checks the table and is
 * idempotent, a registered backend is opened by name only, never by
 * "auto", a context passes it the argument bound for it, and a backend
 * with a virtual clock keeps the worker thread off a context bound to it.
 * Each test runs in a child of its own (fork mode): it starts with no
 * registered backend.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "group.h"

static int probes;               /* calls of fake_probe() */
static void *opened_with;        /* the backend_arg of the last open */

static int fake_probe(const char *path)
{
	(void)path;
	probes++;
	return 1; /* takes every path: "auto" would pick it if it tried */
}

static int fake_open(void *priv, const char *path,
		     const struct mri_open_env *env)
{
	(void)priv;
	(void)path;
	opened_with = env->backend_arg;
	return env->backend_arg ? 0 : -ENODEV;
}

static int fake_close(void *priv)
{
	(void)priv;
	return 0;
}

static int fake_read_usage(void *priv, uint64_t *usage_bytes)
{
	(void)priv;
	*usage_bytes = 0;
	return 0;
}

static int fake_read_limits(void *priv, struct mr_limits *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	return 0;
}

static int fake_read_memstat(void *priv, struct mr_memstat *out)
{
	(void)priv;
	memset(out, 0, sizeof(*out));
	return 0;
}

static void fake_forget(void *priv)
{
	(void)priv;
}

#define FAKE_OPS \
	.priv_size = 8, \
	.probe = fake_probe, \
	.open = fake_open, \
	.close = fake_close, \
	.read_usage = fake_read_usage, \
	.read_limits = fake_read_limits, \
	.read_memstat = fake_read_memstat, \
	.forget = fake_forget

static const struct mri_backend fake = { .name = "fake", FAKE_OPS };
static const struct mri_backend fake_again = { .name = "fake", FAKE_OPS };
static const struct mri_backend clocked = {
	.name = "clocked", .caps = MRI_CAP_VIRTUAL_CLOCK, FAKE_OPS
};

START_TEST(register_checks_the_table)
{
	struct mri_backend bad = { .name = "bad", FAKE_OPS };

	ck_assert_int_eq(mri_backend_register(NULL), -EINVAL);
	bad.name = NULL;
	ck_assert_int_eq(mri_backend_register(&bad), -EINVAL);
	bad.name = "";
	ck_assert_int_eq(mri_backend_register(&bad), -EINVAL);
	bad.name = "auto";
	ck_assert_int_eq(mri_backend_register(&bad), -EINVAL);
	bad.name = "bad";
	bad.read_memstat = NULL;
	ck_assert_int_eq(mri_backend_register(&bad), -EINVAL);
	bad.read_memstat = fake_read_memstat;
	/* Context state is the built-in backends' alone: the core makes it
	 * at mr_ctx_new(), before any library registers. */
	bad.ctx_size = 8;
	ck_assert_int_eq(mri_backend_register(&bad), -EINVAL);
	bad.ctx_size = 0;
	/* A built-in name, then one taken by another table. */
	bad.name = "cgroup1";
	ck_assert_int_eq(mri_backend_register(&bad), -EEXIST);
	ck_assert_int_eq(mri_backend_register(&fake), 0);
	ck_assert_int_eq(mri_backend_register(&fake), 0);
	ck_assert_int_eq(mri_backend_register(&fake_again), -EEXIST);
	ck_assert_ptr_eq(mri_backend_find("fake"), &fake);
	ck_assert_ptr_eq(mri_backend_find("cgroup2"), &mri_backend_cgroup2);
	ck_assert_ptr_null(mri_backend_find("nope"));
	ck_assert_int_eq(mri_backend_slot(&fake), 0);
	ck_assert_int_eq(mri_backend_slot(&mri_backend_cgroup1), -1);
	ck_assert_ptr_eq(mri_backend_at(0), &fake);
	ck_assert_ptr_null(mri_backend_at(1));
	ck_assert_ptr_null(mri_backend_at(MRI_MAX_REGISTERED));
}
END_TEST

START_TEST(register_until_full)
{
	static const char *const names[] = { "b0", "b1", "b2", "b3", "b4" };
	struct mri_backend be[5];
	unsigned i;

	ck_assert_uint_eq(MRI_MAX_REGISTERED, 4);
	for (i = 0; i < 5; i++) {
		be[i] = fake;
		be[i].name = names[i];
	}
	for (i = 0; i < MRI_MAX_REGISTERED; i++)
		ck_assert_int_eq(mri_backend_register(&be[i]), 0);
	ck_assert_int_eq(mri_backend_register(&be[4]), -ENOSPC);
	ck_assert_int_eq(mri_backend_register(&be[3]), 0);
	ck_assert_ptr_null(mri_backend_find("b4"));
}
END_TEST

static char last_log[512];

static void keep_log(int level, const char *msg, void *userdata)
{
	(void)level;
	(void)userdata;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

START_TEST(open_by_name_with_the_bound_arg)
{
	mr_group_t *g = NULL, *g2 = NULL;
	mr_ctx_t *ctx;
	int token, other;

	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	/* Unknown before it registers, as any name. */
	ck_assert_int_eq(mr_group_open(ctx, "/a", "fake", &g), -EINVAL);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &token),
			 -EINVAL);
	ck_assert_int_eq(mri_backend_register(&fake), 0);
	ck_assert_int_eq(mri_ctx_set_backend_arg(NULL, &fake, &token),
			 -EINVAL);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, NULL, &token), -EINVAL);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &mri_backend_cgroup1,
						 &token), -EINVAL);
	/* Nothing bound: the backend gets NULL. */
	ck_assert_int_eq(mr_group_open(ctx, "/a", "fake", &g), -ENODEV);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &token), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "fake", &g), 0);
	ck_assert_ptr_eq(opened_with, &token);
	ck_assert_str_eq(mr_group_backend(g), "fake");
	/* "auto" never tries it: "/proc" is no memory cgroup of this
	 * machine, and fake_probe() would take it. */
	probes = 0;
	ck_assert_int_eq(mr_ctx_set_log(ctx, keep_log, NULL, MR_LOG_INFO), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/proc", "auto", &g2), -ENODEV);
	/* With the reason, which the error alone does not give. */
	ck_assert_ptr_nonnull(strstr(last_log, "/proc: no backend takes it"));
	ck_assert_ptr_nonnull(strstr(last_log, "cgroup v1 memory hierarchy"));
	ck_assert_int_eq(mr_group_open(ctx, "/proc", NULL, &g2), -ENODEV);
	ck_assert_ptr_null(g2);
	ck_assert_int_eq(probes, 0);
	/* Its group is open: the same argument again, but no other. */
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &token), 0);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &other), -EBUSY);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, NULL), -EBUSY);
	/* No virtual clock: the worker thread may run. */
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &other), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "fake", &g), 0);
	ck_assert_ptr_eq(opened_with, &other);
	ck_assert_int_eq(mr_group_close(g), 0);
	mr_ctx_free(ctx);
}
END_TEST

START_TEST(virtual_clock_keeps_the_worker_thread_off)
{
	mr_ctx_t *ctx;
	int token;

	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mri_backend_register(&fake), 0);
	ck_assert_int_eq(mri_backend_register(&clocked), 0);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &clocked, &token), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), -EOPNOTSUPP);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &clocked, NULL), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	/* Not while the thread runs; a backend without the clock may. */
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &clocked, &token),
			 -EBUSY);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &fake, &token), 0);
	ck_assert_int_eq(mri_ctx_set_backend_arg(ctx, &clocked, NULL), 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	mr_ctx_free(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend-registry");
	TCase *tc = tcase_create("registry");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, register_checks_the_table);
	tcase_add_test(tc, register_until_full);
	tcase_add_test(tc, open_by_name_with_the_bound_arg);
	tcase_add_test(tc, virtual_clock_keeps_the_worker_thread_off);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
