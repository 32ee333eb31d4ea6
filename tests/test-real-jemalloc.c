/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * examples/jemalloc-extents in a real cgroup v1 group of 128 MiB the test
 * creates: jemalloc's extent hooks charge the group through the fast
 * path, the margin worker's shrink request is answered with the arena's
 * purge (the freed burst goes back, and the pass is not run), charges
 * above the throttle high are delayed, and allocations past what the
 * limit holds are refused by the hooks (mallocx() returns NULL) instead
 * of meeting the kernel's limit with nothing to reclaim (no swap here:
 * the OOM killer). The hooks' own counters match the library's. A
 * purger whose answer comes after the grace has its burst made again.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memreclaim.h"
#include "realcg.h"

#define MiB (1024ULL * 1024)
#define LIMIT_BYTES (128 * MiB)
#define MARGIN_BYTES (32 * MiB)

static mr_ctx_t *ctx;
static char group[PATH_MAX];
static char prog[PATH_MAX];

static void setup(void)
{
	const char *top = getenv("top_builddir");

	fmt(prog, sizeof(prog), "%s/examples/jemalloc-extents",
	    top && *top ? top : ".");
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	fmt(group, sizeof(group), "%s/memreclaim-test-%d-jemalloc", parent,
	    (int)getpid());
	ck_assert_int_eq(mr_cgroup_create(ctx, group, LIMIT_BYTES), 0);
}

static void teardown(void)
{
	mr_cgroup_remove(ctx, group);
	mr_ctx_free(ctx);
}

/* Runs the example in the group (moved there before it execs); its
 * stdout into out (NUL-terminated). Returns its wait status. */
static int run(const char *const *argv, char *out, size_t len)
{
	int go[2], o[2], status;
	size_t n = 0;
	ssize_t r;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1 || dup2(o[1], STDOUT_FILENO) < 0)
			_exit(120);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(go[0]);
	close(o[1]);
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	while ((r = read(o[0], out + n, len - 1 - n)) > 0) {
		n += (size_t)r;
		ck_assert_uint_lt(n, len - 1);
	}
	out[n] = '\0';
	close(o[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static uint64_t field(json_object *o, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
	return (uint64_t)json_object_get_int64(v);
}

static bool flag(json_object *o, const char *key)
{
	json_object *v;

	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
	return json_object_get_boolean(v);
}

/* Runs the example with its first `late` answers after the grace, and
 * checks what it did. */
static void run_and_check(const char *late)
{
	const char *argv[] = { prog, "--margin", "32M", "--grace", "50",
			       "--live", "32M", "--burst", "72M",
			       "--throttle-high", "112M", "--late-answers",
			       late, NULL };
	static char out[65536];
	json_object *o;
	uint64_t oom_kills = 0;
	const char *oc, *line;
	int status;

	status = run(argv, out, sizeof(out));
	oc = read_text(group, "memory.oom_control");
	line = strstr(oc, "oom_kill ");
	if (line)
		oom_kills = strtoull(line + 9, NULL, 10);
	fprintf(stderr, "%sfailcnt %s", out,
		read_text(group, "memory.failcnt"));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "status %#x (oom_kill %" PRIu64 ")", status, oom_kills);
	ck_assert_uint_eq(oom_kills, 0);
	o = json_tokener_parse(out);
	ck_assert_msg(o != NULL, "not JSON: %s", out);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(o,
			 "cgroup")), group);
	ck_assert_uint_eq(field(o, "margin_bytes"), MARGIN_BYTES);
	/* The burst took usage above limit - margin; the worker asked, the
	 * purger purged and answered, and usage came back under the mark
	 * with no pass of the worker. */
	ck_assert_uint_eq(field(o, "live_bytes"), 32 * MiB);
	ck_assert_uint_eq(field(o, "burst_bytes"), 72 * MiB);
	ck_assert_uint_gt(field(o, "usage_peak_bytes"),
			  LIMIT_BYTES - MARGIN_BYTES);
	ck_assert(flag(o, "answered_in_time"));
	ck_assert_uint_ge(field(o, "shrink_avoided"), 1);
	/* An answer after the grace purged all the same, but did not
	 * avoid the pass: the burst was made again, and its request waited
	 * for again. */
	if (strcmp(late, "0") != 0) {
		ck_assert_uint_ge(field(o, "shrink_timeouts"), 1);
		ck_assert_uint_ge(field(o, "bursts"), 2);
	}
	ck_assert_uint_ge(field(o, "shrink_answered"), 1);
	ck_assert_uint_ge(field(o, "purges"), 1);
	ck_assert_uint_le(field(o, "usage_after_answer_bytes"),
			  LIMIT_BYTES - MARGIN_BYTES);
	/* Charges above the throttle high were delayed, and the hooks
	 * refused what the limit could not hold. */
	ck_assert_uint_ge(field(o, "delays"), 1);
	ck_assert_uint_ge(field(o, "refusals"), 1);
	ck_assert_uint_le(field(o, "refused_after_bytes"), LIMIT_BYTES);
	ck_assert_uint_eq(field(o, "charge_errors"), 0);
	/* What the hooks counted is what the library counted, and what is
	 * still charged is mapped (the arena's metadata and the extents it
	 * retains). */
	ck_assert_uint_eq(field(o, "hook_charged_bytes"),
			  field(o, "lib_charged_bytes"));
	ck_assert_uint_eq(field(o, "hook_uncharged_bytes"),
			  field(o, "lib_uncharged_bytes"));
	ck_assert_uint_le(field(o, "hook_charged_bytes") -
			  field(o, "hook_uncharged_bytes"),
			  field(o, "mapped_bytes"));
	json_object_put(o);
}

START_TEST(extents_charged_purged_and_refused)
{
	run_and_check("0");
}
END_TEST

/* The purger's first answer comes after the grace (a loaded machine). */
START_TEST(late_answer_burst_again)
{
	run_and_check("1");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("real-jemalloc");
	TCase *tc = tcase_create("extents");
	int r;

	r = rc_find_places("-jemalloc");
	if (r)
		return r;
	rc_sweep_stale();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, extents_charged_purged_and_refused);
	tcase_add_test(tc, late_answer_burst_again);
	suite_add_tcase(s, tc);
	return rc_run(s);
}
