/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Misuse of the public API returns exact error codes and changes nothing. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments.h"
#include "memreclaim.h"
#include "memreclaim-sim.h"

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
	/* The state directory: an absolute path, or unset or empty (the
	 * default). */
	{
		mr_ctx_t *c = NULL;

		setenv("MEMRECLAIM_STATE_DIR", "relative/dir", 1);
		ck_assert_int_eq(mr_ctx_new(&c), -EINVAL);
		ck_assert_ptr_null(c);
		setenv("MEMRECLAIM_STATE_DIR", "", 1);
		ck_assert_int_eq(mr_ctx_new(&c), 0);
		mr_ctx_free(c);
		unsetenv("MEMRECLAIM_STATE_DIR");
	}
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

/* The last message of the context's log. */
static void last_message(int level, const char *msg, void *userdata)
{
	(void)level;
	snprintf(userdata, 512, "%s", msg);
}

START_TEST(open_bad_backends)
{
	mr_group_t *g = NULL;
	char msg[512] = "";

	ck_assert_int_eq(mr_ctx_set_log(ctx, last_message, msg, MR_LOG_DEBUG),
			 0);
	/* Unknown names, and names of backends not built in this version;
	 * the debug log says which name, and where "sim" comes from. */
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", "cgroup3",
				       &g), -EINVAL);
	ck_assert_msg(strstr(msg, "no backend named \"cgroup3\"") &&
		      strstr(msg, "libmemreclaim-sim"), "log: %s", msg);
	/* A directory that is not the named backend's: the log names it. */
	ck_assert_int_eq(mr_group_open(ctx, "/tmp", "cgroup2", &g), -ENODEV);
	ck_assert_msg(strstr(msg, "/tmp: not a group of the backend cgroup2"),
		      "log: %s", msg);
	/* The simulator, on a context bound to none. */
	ck_assert_int_eq(mr_group_open(ctx, "/sys/fs/cgroup/memory", "sim", &g),
			 -ENODEV);
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, MR_LOG_DEBUG), 0);
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
	struct mr_protection p = { .size = sizeof(p) };
	uint64_t u = 7;

	ck_assert_int_eq(mr_group_close(NULL), 0);
	ck_assert_ptr_null(mr_group_path(NULL));
	ck_assert_ptr_null(mr_group_backend(NULL));
	ck_assert_int_eq(mr_group_read_usage(NULL, &u), -EINVAL);
	ck_assert_int_eq(mr_group_read_limits(NULL, &l), -EINVAL);
	ck_assert_int_eq(mr_group_read_protection(NULL, MR_RECLAIM_ROOT_TOP,
						  &p), -EINVAL);
	ck_assert_int_eq(mr_group_read_memstat(NULL, &m), -EINVAL);
	ck_assert_int_eq(mr_group_read_reclaim_stats(NULL, MR_REASON_MARGIN,
						     &s), -EINVAL);
	ck_assert_int_eq(mr_group_reclaim(NULL, 4096, 0, &u), -EINVAL);
	ck_assert_int_eq(mr_group_set_margin(NULL, 4096, 0, 0), -EINVAL);
	ck_assert_int_eq(mr_group_set_margin_adaptive(NULL, NULL), -EINVAL);
	ck_assert_int_eq(mr_group_read_margin_stats(NULL, NULL), -EINVAL);
	ck_assert_int_eq(mr_group_set_batch_fixed(NULL, 4096), -EINVAL);
	ck_assert_int_eq(mr_group_set_batch_proportional(NULL, 1, 1 << 20, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_group_set_soft_limit(NULL, 4096), -EINVAL);
	ck_assert_int_eq(mr_group_set_soft_limit(NULL, MR_UNLIMITED), -EINVAL);
	ck_assert_int_eq(mr_group_read_soft_limit(NULL, &u), -EINVAL);
	ck_assert_uint_eq(u, 7);
	ck_assert_int_eq(mr_group_shrink_fd(NULL, 0), -EINVAL);
	ck_assert_int_eq(mr_group_shrink_done(NULL), -EINVAL);
	ck_assert_int_eq(mr_group_read_shrink_stats(NULL, NULL), -EINVAL);
}
END_TEST


/* A valid simulator configuration, as the test changes it. */
static struct mr_sim_config sim_config(void)
{
	struct mr_sim_config c = {
		.size = sizeof(c),
		.seed = 1,
		.ram_bytes = 64ULL << 20,
	};

	return c;
}

START_TEST(sim_new_misuse)
{
	mr_sim_t *sim = (mr_sim_t *)&sim;
	struct mr_sim_config c;

	c = sim_config();
	ck_assert_int_eq(mr_sim_new(NULL, &sim), -EINVAL);
	ck_assert_int_eq(mr_sim_new(&c, NULL), -EINVAL);
	c.size = offsetof(struct mr_sim_config, costs);
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c = sim_config();
	c.ram_bytes = (16ULL << 20) - 4096;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.ram_bytes = (8ULL << 40) + 4096;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	/* 16 TiB is 2^32 pages: beyond the page numbers (was -ENOMEM). */
	c.ram_bytes = 16ULL << 40;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c = sim_config();
	c.cpus = 4097;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c = sim_config();
	c.costs = "1999";
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.costs = "";
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	/* Swap needs both a size and a kind. */
	c = sim_config();
	c.swap_bytes = 16ULL << 20;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.swap_bytes = 0;
	c.swap_kind = MR_SIM_SWAP_DISK;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.swap_bytes = 4095; /* less than a page */
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.swap_bytes = MR_UNLIMITED;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.swap_bytes = 16ULL << 20;
	c.swap_kind = MR_SIM_SWAP_ZSWAP + 1;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	c.swap_kind = -1;
	ck_assert_int_eq(mr_sim_new(&c, &sim), -EINVAL);
	/* Nothing was written on failure. */
	ck_assert_ptr_eq(sim, (mr_sim_t *)&sim);
	ck_assert_int_eq(mr_sim_free(NULL), 0);
	ck_assert_uint_eq(mr_sim_now_ns(NULL), 0);
	/* The smallest machine, with defaults (1 GiB) and with swap. */
	c = sim_config();
	c.ram_bytes = 16ULL << 20;
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_uint_eq(mr_sim_now_ns(sim), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
	c = (struct mr_sim_config){ .size = sizeof(c) };
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
	c = sim_config();
	c.swap_bytes = 16ULL << 20;
	c.swap_kind = MR_SIM_SWAP_ZSWAP;
	c.costs = "2011";
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

START_TEST(sim_group_misuse)
{
	struct mr_sim_config c = sim_config();
	mr_sim_t *sim;
	char path[32];
	int i;

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(NULL, "/a"), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, NULL), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, "/"), -EEXIST);
	ck_assert_int_eq(mr_sim_create_group(sim, ""), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, "a"), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/"), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, "//a"), -EINVAL);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/b"), -ENOENT);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), -EEXIST);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a/b"), 0);

	ck_assert_int_eq(mr_sim_set_knob(NULL, "/a", MR_SIM_MAX, 1 << 20),
			 -EINVAL);
	ck_assert_int_eq(mr_sim_set_knob(sim, NULL, MR_SIM_MAX, 1 << 20),
			 -EINVAL);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/a", -1, 1 << 20), -EINVAL);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/a", MR_SIM_SOFT + 1, 1 << 20),
			 -EINVAL);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/nope", MR_SIM_MAX, 1 << 20),
			 -ENOENT);
	for (i = MR_SIM_MAX; i <= MR_SIM_SOFT; i++) {
		ck_assert_int_eq(mr_sim_set_knob(sim, "/a/b", i, 1 << 20), 0);
		ck_assert_int_eq(mr_sim_set_knob(sim, "/a/b", i, MR_UNLIMITED),
				 0);
	}
	/* 16384 groups a machine, the root included. */
	for (i = 0; i < 16384 - 3; i++) {
		snprintf(path, sizeof(path), "/g%d", i);
		ck_assert_int_eq(mr_sim_create_group(sim, path), 0);
	}
	ck_assert_int_eq(mr_sim_create_group(sim, "/last"), -ENOSPC);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

/* The shrink request: its bad arguments, one fd for the group's life,
 * an answer with none asked standing for the next request, and a child
 * of fork() that can neither use the calls nor read the parent's fd. */
START_TEST(shrink_request_misuse)
{
	struct mr_sim_config c = sim_config();
	struct mr_shrink_stats st = { .size = sizeof(st) };
	mr_group_t *g;
	mr_sim_t *sim;
	int fd, status;
	pid_t pid;

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), 0);
	ck_assert_int_eq(mr_group_shrink_done(g), -EBADF);
	ck_assert_int_eq(mr_group_shrink_fd(g, MR_SHRINK_GRACE_MAX_NS + 1),
			 -EINVAL);
	st.size = sizeof(size_t);
	ck_assert_int_eq(mr_group_read_shrink_stats(g, &st), -EINVAL);
	st.size = sizeof(st);
	fd = mr_group_shrink_fd(g, MR_SHRINK_GRACE_MAX_NS);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(mr_group_shrink_fd(g, 0), fd);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ck_assert_int_eq(mr_group_shrink_done(g), 0);
	ck_assert_int_eq(mr_group_read_shrink_stats(g, &st), 0);
	ck_assert_uint_eq(st.requests, 0);
	ck_assert_uint_eq(st.answered, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		bad |= mr_group_shrink_fd(g, 0) != -ECHILD;
		bad |= mr_group_shrink_done(g) != -ECHILD;
		/* Closed by the library's fork handler. */
		bad |= fcntl(fd, F_GETFD) != -1 || errno != EBADF;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_ge(fcntl(fd, F_GETFD), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

START_TEST(sim_ctx_misuse)
{
	struct mr_sim_config c = sim_config();
	mr_sim_t *sim, *other;
	mr_group_t *g = NULL, *g2 = NULL;

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_new(&c, &other), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_attach(sim, NULL), -EINVAL);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), -ENODEV);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/nope", "sim", &g), -ENOENT);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), 0);
	ck_assert_str_eq(mr_group_backend(g), "sim");
	/* A margin in bytes below a page. */
	ck_assert_int_eq(mr_group_set_margin(g, 1, 0, 0), -EINVAL);
	ck_assert_int_eq(mr_group_set_margin(g, MR_MARGIN_MIN_BYTES - 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(mr_group_set_margin(g, MR_MARGIN_MIN_BYTES, 0, 0), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 0, 0, 0), 0);
	/* The simulator is chosen by name only, never by auto: "/proc"
	 * is a group of the simulator and no cgroup on this machine. */
	ck_assert_int_eq(mr_sim_create_group(sim, "/proc"), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/proc", "auto", &g2), -ENODEV);
	setenv("MEMRECLAIM_BACKEND", "auto", 1);
	ck_assert_int_eq(mr_group_open(ctx, "/proc", NULL, &g2), -ENODEV);
	unsetenv("MEMRECLAIM_BACKEND");
	ck_assert_ptr_null(g2);
	/* Its groups are open: neither unbound nor freed. */
	ck_assert_int_eq(mr_sim_attach(other, ctx), -EBUSY);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), -EBUSY);
	ck_assert_int_eq(mr_sim_free(sim), -EBUSY);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_sim_attach(other, ctx), 0);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
	ck_assert_int_eq(mr_sim_free(other), 0);
}
END_TEST

static void no_figure(const char *policy, const char *figure, double value,
		      void *userdata)
{
	(void)policy;
	(void)figure;
	(void)value;
	++*(int *)userdata;
}

/* mr_group_set_margin_adaptive(): each bad field is refused and leaves
 * the margin in force as it was; a good call replaces a fixed margin and
 * the reverse. */
START_TEST(adaptive_margin_misuse)
{
	struct mr_sim_config c = sim_config();
	struct mr_margin_adaptive a, bad[] = {
		{ .size = sizeof(a) - 1 },
		{ .size = sizeof(a), .max_bytes = 1 << 20, .max_ppm = 1000 },
		{ .size = sizeof(a), .max_ppm = 1000000 },
		{ .size = sizeof(a), .min_bytes = MR_MARGIN_MIN_BYTES - 1 },
		{ .size = sizeof(a), .min_bytes = 2 << 20, .max_bytes = 1 << 20 },
		{ .size = sizeof(a), .safety_ppm = 999999 },
		{ .size = sizeof(a), .safety_ppm = 100000001 },
		{ .size = sizeof(a), .hysteresis_ppm = 1000001 },
		{ .size = sizeof(a), .interval_ns = 60000000001ULL },
		{ .size = sizeof(a), .min_strength_ppm = 1000001 },
		{ .size = sizeof(a), .min_strength_ppm = 62499 },
		{ .size = sizeof(a), .min_strength_ppm = 1 },
	};
	struct mr_margin_stats st = { .size = sizeof(st) };
	char msg[512] = "";
	mr_sim_t *sim;
	mr_group_t *g;
	size_t i;

	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/a", MR_SIM_MAX, 32 << 20),
			 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 1 << 20, 0, 1 << 19), 0);
	/* The log names the field. */
	ck_assert_int_eq(mr_ctx_set_log(ctx, last_message, msg, MR_LOG_DEBUG),
			 0);
	ck_assert_int_eq(mr_group_set_margin_adaptive(g, &bad[1]), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "both max_bytes and max_ppm"));
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, MR_LOG_DEBUG), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(mr_group_set_margin_adaptive(g, &bad[i]),
				 -EINVAL);
		ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
		ck_assert_int_eq(st.adaptive, 0);
		ck_assert_uint_eq(st.margin_bytes, 1 << 20);
		ck_assert_uint_eq(st.hysteresis_bytes, 1 << 19);
	}
	/* A floor at or above the limit. */
	a = (struct mr_margin_adaptive){ .size = sizeof(a),
					 .min_bytes = 32 << 20,
					 .max_bytes = 64 << 20 };
	ck_assert_int_eq(mr_group_set_margin_adaptive(g, &a), -ERANGE);
	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
	ck_assert_int_eq(st.adaptive, 0);
	/* Too small a stats struct. */
	st.size = offsetof(struct mr_margin_stats, adaptive);
	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), -EINVAL);
	st.size = sizeof(st);
	ck_assert_int_eq(mr_group_set_margin_adaptive(g, NULL), 0);
	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
	ck_assert_int_eq(st.adaptive, 1);
	/* A caller built against a later, larger struct: accepted while
	 * what lies past this one is zero, -E2BIG (nothing changed) once a
	 * field there is set. */
	{
		struct {
			struct mr_margin_adaptive a;
			uint64_t later;
		} big = { .a = { .size = sizeof(big) } };

		ck_assert_int_eq(mr_group_set_margin_adaptive(g, &big.a), 0);
		big.later = 1;
		big.a.safety_ppm = 5000000;
		ck_assert_int_eq(mr_group_set_margin_adaptive(g, &big.a),
				 -E2BIG);
		ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
		ck_assert_int_eq(st.adaptive, 1);
	}
	ck_assert_int_eq(mr_group_set_margin(g, 2 << 20, 0, 0), 0);
	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
	ck_assert_int_eq(st.adaptive, 0);
	ck_assert_uint_eq(st.margin_bytes, 2 << 20);
	ck_assert_int_eq(mr_group_set_margin(g, 0, 0, 0), 0);
	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
	ck_assert_uint_eq(st.margin_bytes, 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

/* mr_group_set_proactive(): each bad setting is refused and leaves the
 * controller as it was; a larger struct is taken while its tail is zero;
 * NULL turns it off. */
START_TEST(proactive_misuse)
{
	struct mr_sim_config c = sim_config();
	struct mr_proactive p, bad[] = {
		{ .size = sizeof(p), .interval_ns = MR_WORKER_SAFETY_NS - 1 },
		{ .size = sizeof(p), .interval_ns = 60000000001ULL },
		{ .size = sizeof(p), .window_ns = 999999999ULL },
		{ .size = sizeof(p), .window_ns = 600000000001ULL },
		{ .size = sizeof(p), .stall_ns = 999 },
		{ .size = sizeof(p), .stall_ns = 7000000000ULL },
		{ .size = sizeof(p), .step_ppm = 1000001 },
		{ .size = sizeof(p), .refault_ppm = 1000001 },
		{ .size = sizeof(p), .io_stall_ppm = 1000001 },
		{ .size = sizeof(p), .flags = 2 },
	};
	struct mr_proactive_stats st = { .size = sizeof(st) };
	char msg[512] = "";
	mr_sim_t *sim;
	mr_group_t *g;
	size_t i;

	ck_assert_int_eq(mr_group_set_proactive(NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(mr_group_read_proactive_stats(NULL, &st, sizeof(st)),
			 -EINVAL);
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/a"), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/a", "sim", &g), 0);
	ck_assert_int_eq(mr_group_read_proactive_stats(g, NULL, sizeof(st)),
			 -EINVAL);
	ck_assert_int_eq(mr_group_read_proactive_stats(g, &st,
						       sizeof(st) - 1),
			 -EINVAL);
	p = (struct mr_proactive){ .size = sizeof(p),
				   .flags = MR_PROACTIVE_DRY_RUN };
	ck_assert_int_eq(mr_group_set_proactive(g, &p, sizeof(p)), 0);
	/* The log names the field. */
	ck_assert_int_eq(mr_ctx_set_log(ctx, last_message, msg, MR_LOG_DEBUG),
			 0);
	ck_assert_int_eq(mr_group_set_proactive(g, &bad[4], sizeof(p)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "stall_ns"));
	ck_assert_int_eq(mr_ctx_set_log(ctx, NULL, NULL, MR_LOG_DEBUG), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(mr_group_set_proactive(g, &bad[i], sizeof(p)) ==
			      -EINVAL, "case %zu", i);
		ck_assert_int_eq(mr_group_read_proactive_stats(g, &st,
							       sizeof(st)), 0);
		ck_assert_int_eq(st.enabled, 1);
		ck_assert_int_eq(st.dry_run, 1);
	}
	/* A size that is not the struct's size field, or too small. */
	ck_assert_int_eq(mr_group_set_proactive(g, &p, sizeof(p) - 1),
			 -EINVAL);
	p.size = sizeof(p) + 8;
	ck_assert_int_eq(mr_group_set_proactive(g, &p, sizeof(p)), -EINVAL);
	{
		struct {
			struct mr_proactive p;
			uint64_t later;
		} big = { .p = { .size = sizeof(big) } };

		ck_assert_int_eq(mr_group_set_proactive(g, &big.p,
							sizeof(big)), 0);
		ck_assert_int_eq(mr_group_read_proactive_stats(g, &st,
							       sizeof(st)), 0);
		ck_assert_int_eq(st.dry_run, 0);
		big.later = 1;
		big.p.flags = MR_PROACTIVE_DRY_RUN;
		ck_assert_int_eq(mr_group_set_proactive(g, &big.p,
							sizeof(big)), -E2BIG);
		ck_assert_int_eq(mr_group_read_proactive_stats(g, &st,
							       sizeof(st)), 0);
		ck_assert_int_eq(st.dry_run, 0);
	}
	/* A larger stats struct: its tail zeroed. */
	{
		struct {
			struct mr_proactive_stats st;
			uint64_t later;
		} big = { .later = 7 };

		ck_assert_int_eq(mr_group_read_proactive_stats(g, &big.st,
							       sizeof(big)), 0);
		ck_assert_uint_eq(big.later, 0);
		ck_assert_uint_eq(big.st.size, sizeof(big));
	}
	ck_assert_int_eq(mr_group_set_proactive(g, NULL, 0), 0);
	ck_assert_int_eq(mr_group_read_proactive_stats(g, &st, sizeof(st)),
			 0);
	ck_assert_int_eq(st.enabled, 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_int_eq(mr_sim_attach(NULL, ctx), 0);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}
END_TEST

START_TEST(sim_scenario_misuse)
{
	const char *first = mr_sim_scenario_name(0);
	char *table = (char *)&table;
	int verdict = 7, calls = 0;

	ck_assert_ptr_null(mr_sim_scenario_name(1000));
	ck_assert_ptr_null(mr_sim_scenario_name(UINT32_MAX));
	ck_assert_ptr_null(mr_sim_scenario_title(NULL));
	ck_assert_ptr_null(mr_sim_scenario_title("S9"));
	ck_assert_ptr_null(mr_sim_scenario_title("s4"));
	ck_assert_ptr_null(mr_sim_scenario_costs(NULL));
	ck_assert_ptr_null(mr_sim_scenario_costs(""));
	ck_assert_int_eq(mr_sim_run_scenario(NULL, 1, NULL, no_figure, &calls,
					     &table, &verdict), -EINVAL);
	ck_assert_int_eq(mr_sim_run_scenario("S9", 1, NULL, no_figure, &calls,
					     &table, &verdict), -EINVAL);
	if (first)
		ck_assert_int_eq(mr_sim_run_scenario(first, 1, "1999",
						     no_figure, &calls,
						     &table, &verdict),
				 -EINVAL);
	/* Nothing was written or called on failure. */
	ck_assert_ptr_eq(table, (char *)&table);
	ck_assert_int_eq(verdict, 7);
	ck_assert_int_eq(calls, 0);
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

START_TEST(ctx_reclaim_misuse)
{
	uint64_t freed = 7;

	ck_assert_int_eq(mr_ctx_reclaim(NULL, 4096, 0, &freed), -EINVAL);
	ck_assert_int_eq(mr_ctx_reclaim(NULL, 0, 0, NULL), -EINVAL);
	ck_assert_uint_eq(freed, 7);
	/* No group: nothing could be freed; nothing asked: done. */
	ck_assert_int_eq(mr_ctx_reclaim(ctx, 4096, 0, &freed), -EAGAIN);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(mr_ctx_reclaim(ctx, MR_UNLIMITED, MR_UNLIMITED, NULL),
			 -EAGAIN);
	freed = 7;
	ck_assert_int_eq(mr_ctx_reclaim(ctx, 0, 0, &freed), 0);
	ck_assert_uint_eq(freed, 0);
}
END_TEST

START_TEST(dispatch_misuse)
{
	int fd;

	ck_assert_int_eq(mr_ctx_worker_fd(NULL), -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_dispatch(NULL, 0), -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_dispatch(NULL, MR_DISPATCH_ALL),
			 -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 1u << 1), -EINVAL);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, ~0u), -EINVAL);
	fd = mr_ctx_worker_fd(ctx);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(mr_ctx_worker_fd(ctx), fd);
	/* A context without groups: nothing to serve. */
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	/* One worker per context. */
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), -EBUSY);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert_int_eq(mr_ctx_worker_fd(ctx), fd);
}
END_TEST

START_TEST(after_fork)
{
	mr_group_t *g = NULL;
	int status;
	pid_t pid;

	/* The parent's worker runs: the child must not think it can stop
	 * (or join) it. */
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		bad |= mr_group_open(ctx, "/sys/fs/cgroup/memory", NULL, &g) !=
		       -ECHILD;
		bad |= mr_ctx_worker_start(ctx) != -ECHILD;
		bad |= mr_ctx_worker_stop(ctx) != -ECHILD;
		bad |= mr_ctx_worker_fd(ctx) != -ECHILD;
		bad |= mr_ctx_worker_dispatch(ctx, 0) != -ECHILD;
		bad |= mr_ctx_reclaim(ctx, 4096, 0, NULL) != -ECHILD;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
}
END_TEST

START_TEST(strerror_texts)
{
	ck_assert_str_eq(mr_strerror(0), "success");
	ck_assert_str_eq(mr_strerror(-ENOENT), "no such cgroup, or it was removed");
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
	ck_assert_str_eq(mr_strerror(-EBUSY), "the group is busy: a lock of it "
			 "is held (by a reclaim step, a reader or the keeper of "
			 "its margin, in this process or another; for a step or "
			 "a reader that waited, the log names the holder), or "
			 "it holds processes or groups that "
			 "stand in the way");
}
END_TEST

/* The policy, real-time priority and nice level (fields 41, 40 and 19 of
 * /proc/<pid>/task/<tid>/stat) of this process's thread named "memreclaim".
 * Returns the number of such threads. */
static int worker_sched(int *policy, int *rtprio, int *nice)
{
	char path[PATH_MAX], buf[1024];
	struct dirent *e;
	int found = 0, field;
	DIR *d = opendir("/proc/self/task");
	FILE *f;
	char *p;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (!p || strcmp(buf, "memreclaim\n") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 e->d_name);
		f = fopen(path, "re");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		fclose(f);
		/* Fields after the command, which ends at the last ')'. */
		p = strrchr(buf, ')');
		ck_assert_ptr_nonnull(p);
		for (field = 3, p = strtok(p + 2, " "); p;
		     field++, p = strtok(NULL, " ")) {
			if (field == 19)
				*nice = atoi(p);
			else if (field == 40)
				*rtprio = atoi(p);
			else if (field == 41)
				*policy = atoi(p);
		}
		found++;
	}
	closedir(d);
	return found;
}

/* Waits up to 2 s for the worker to reach `policy` (and `nice`). */
static void wait_worker_sched(int policy, int nice)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int p = -1, rt = -1, n = -100, i;

	for (i = 0; i < 200; i++) {
		ck_assert_int_eq(worker_sched(&p, &rt, &n), 1);
		if (p == policy && n == nice)
			break;
		nanosleep(&ts, NULL);
	}
	ck_assert_msg(p == policy && rt == 0 && n == nice,
		      "worker: policy %d, rt priority %d, nice %d; expected "
		      "policy %d, priority 0, nice %d", p, rt, n, policy, nice);
}

static void *start_worker(void *arg)
{
	return (void *)(intptr_t)mr_ctx_worker_start(arg);
}

/* Starts ctx's worker from a new SCHED_FIFO thread; false if this process
 * may not make one. */
static bool start_from_fifo(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t attr;
	pthread_t t;
	void *ret;
	int r;

	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setinheritsched(&attr,
						      PTHREAD_EXPLICIT_SCHED),
			 0);
	ck_assert_int_eq(pthread_attr_setschedpolicy(&attr, SCHED_FIFO), 0);
	ck_assert_int_eq(pthread_attr_setschedparam(&attr, &sp), 0);
	r = pthread_create(&t, &attr, start_worker, ctx);
	pthread_attr_destroy(&attr);
	if (r == EPERM)
		return false;
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, 0);
	return true;
}

/* The worker does not inherit the starting thread's scheduling (a
 * SCHED_FIFO worker would take a CPU from everything else while it
 * reclaims): SCHED_OTHER, then its own class. It is named "memreclaim". */
START_TEST(worker_sched_not_inherited)
{
	/* The worker is made SCHED_OTHER at real-time priority 0; its nice
	 * is the starting thread's, as for every thread Linux creates (a
	 * suite run under nice(1) starts its workers at that nice). */
	int p, rt, n, base;

	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	ck_assert_int_eq(errno, 0);
	/* Default: SCHED_OTHER, named. */
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	ck_assert_int_eq(worker_sched(&p, &rt, &n), 1);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(worker_sched(&p, &rt, &n), 0);
	if (!start_from_fifo()) {
		fprintf(stderr, "worker_sched_not_inherited: SCHED_FIFO not "
			"permitted, part skipped\n");
		return;
	}
	wait_worker_sched(SCHED_OTHER, base);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_IDLE, 0), 0);
	ck_assert(start_from_fifo());
	wait_worker_sched(SCHED_IDLE, base);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_ctx_set_worker_sched(ctx, MR_SCHED_NICE, 5), 0);
	ck_assert(start_from_fifo());
	wait_worker_sched(SCHED_OTHER, 5);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
}
END_TEST

static void count_warning(int level, const char *msg, void *userdata)
{
	(void)msg;
	if (level == MR_LOG_WARNING)
		++*(int *)userdata;
}

/* An unprivileged SCHED_IDLE caller may not create a SCHED_OTHER thread:
 * the worker still starts (inheriting SCHED_IDLE), with a warning. */
START_TEST(worker_start_from_unprivileged_idle)
{
	int status;
	pid_t pid;

	if (geteuid() != 0)
		return; /* needs to drop privileges it has */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sched_param sp = { .sched_priority = 0 };
		struct rlimit rl = { 0, 0 };
		int warnings = 0, p = -1, rt = -1, n = -100;
		mr_ctx_t *c;

		if (setrlimit(RLIMIT_NICE, &rl) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0 ||
		    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
			_exit(10);
		if (mr_ctx_new(&c) < 0 ||
		    mr_ctx_set_log(c, count_warning, &warnings,
				   MR_LOG_DEBUG) < 0)
			_exit(11);
		if (mr_ctx_worker_start(c) != 0)
			_exit(12);
		if (worker_sched(&p, &rt, &n) != 1 || p != SCHED_IDLE)
			_exit(13);
		if (mr_ctx_worker_stop(c) != 0 || warnings != 1)
			_exit(14);
		mr_ctx_free(c);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
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
	tcase_add_test(tc, sim_new_misuse);
	tcase_add_test(tc, sim_group_misuse);
	tcase_add_test(tc, sim_ctx_misuse);
	tcase_add_test(tc, adaptive_margin_misuse);
	tcase_add_test(tc, proactive_misuse);
	tcase_add_test(tc, sim_scenario_misuse);
	tcase_add_test(tc, worker_misuse);
	tcase_add_test(tc, dispatch_misuse);
	tcase_add_test(tc, ctx_reclaim_misuse);
	tcase_add_test(tc, worker_sched_not_inherited);
	tcase_add_test(tc, worker_start_from_unprivileged_idle);
	tcase_add_test(tc, after_fork);
	tcase_add_test(tc, shrink_request_misuse);
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
