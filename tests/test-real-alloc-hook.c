/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * examples/alloc-hook on the running kernel: programs run under the hook
 * (LD_PRELOAD) inside cgroup v1 memory groups this test creates, beneath
 * $MEMRECLAIM_TEST_PARENT (default: the v1 memory controller's mount
 * root), and removes. Each program runs once without the hook and once
 * with it, in the same group: the outputs must be identical, and the
 * hook's statistics at exit (MEMRECLAIM_HOOK_VERBOSE=1) must show charges
 * and THP advice applied. Exits 77 with the reason where no writable v1
 * memory controller exists; with CI=true that is a failure instead.
 *
 * A failed check ends its test's process before the teardown: groups and
 * data files are named as tests/test-real-cgroup1 names its own
 * (memreclaim-test-PID-..., memreclaim-test-PID....), so that its sweep
 * of those whose PID is gone removes what a failed run left.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memreclaim.h"
#include "realcg.h"

#define MiB (1024ULL * 1024)
static char group[PATH_MAX];
static char hook[PATH_MAX], prog[PATH_MAX];
static mr_ctx_t *ctx;
static int seq;

/* ------------------------------------------------------------ helpers */

static void new_group(uint64_t limit)
{
	fmt(group, sizeof(group), "%s/memreclaim-test-%d-hook-%d", parent,
	    (int)getpid(), ++seq);
	ck_assert_int_eq(mr_cgroup_create(ctx, group, limit), 0);
}

/* A program's stderr, whole. */
struct run {
	int status;
	char err[1 << 20];
};

/* Runs argv in `group`, moved there before it execs, with stdout to
 * out_path; with the hook preloaded when hooked (followed by the objects
 * of `after`, a space-separated list, when not NULL), plus env (NULL-ended
 * "KEY=VALUE" strings). */
static void run_after(bool hooked, const char *after, const char *const *env,
		      const char *const *argv, const char *out_path,
		      struct run *r)
{
	char hook_group[PATH_MAX + 32], preload[2 * PATH_MAX + 16];
	int go[2], err[2], fd;
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	fmt(hook_group, sizeof(hook_group), "MEMRECLAIM_HOOK_GROUP=%s", group);
	fmt(preload, sizeof(preload), "LD_PRELOAD=%s%s%s", hook,
	    after ? " " : "", after ? after : "");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(go[1]);
		close(err[0]);
		fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0600);
		if (fd < 0 || read(go[0], &c, 1) != 1 ||
		    dup2(fd, STDOUT_FILENO) < 0 ||
		    dup2(err[1], STDERR_FILENO) < 0)
			_exit(120);
		if (hooked && (putenv(preload) || putenv(hook_group) ||
			       putenv((char *)"MEMRECLAIM_HOOK_VERBOSE=1")))
			_exit(121);
		for (; env && *env; env++)
			if (putenv((char *)*env))
				_exit(122);
		execv(argv[0], (char *const *)argv);
		_exit(123);
	}
	close(go[0]);
	close(err[1]);
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, pid), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	/* Read to the end, so that no writer meets a closed pipe; what does
	 * not fit is dropped (and fails the test below). */
	while ((n = read(err[0], len < sizeof(r->err) - 1 ? r->err + len : &c,
			 len < sizeof(r->err) - 1 ?
			 sizeof(r->err) - 1 - len : 1)) > 0)
		len += len < sizeof(r->err) - 1 ? (size_t)n : 0;
	r->err[len] = '\0';
	ck_assert_msg(len < sizeof(r->err) - 1, "stderr beyond %zu bytes",
		      sizeof(r->err) - 1);
	close(err[0]);
	ck_assert_int_eq(waitpid(pid, &r->status, 0), pid);
	fprintf(stderr, "--- %s%s%s%s: status %#x\n%s",
		hooked ? "hooked " : "", after ? after : "", after ? " " : "",
		argv[0], r->status, r->err);
}

static void run_in_group(bool hooked, const char *const *env,
			 const char *const *argv, const char *out_path,
			 struct run *r)
{
	run_after(hooked, NULL, env, argv, out_path, r);
}

static void assert_exit_0(const struct run *r)
{
	ck_assert_msg(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
		      "status %#x", r->status);
}

/* The sum of `key` over the hook's statistics lines (one per process
 * that exited under it). Fails when there is none. */
static uint64_t stat_sum(const char *err, const char *key)
{
	char want[64];
	const char *line, *p, *eol;
	uint64_t sum = 0;
	int lines = 0;

	fmt(want, sizeof(want), " %s=", key);
	for (line = err; (line = strstr(line, "]: stats: group=")); line++) {
		eol = strchr(line, '\n');
		p = strstr(line, want);
		ck_assert_msg(p && (!eol || p < eol), "no %s in %s", key, line);
		sum += strtoull(p + strlen(want), NULL, 10);
		lines++;
	}
	ck_assert_msg(lines > 0, "no statistics line");
	return sum;
}

/* How many processes printed statistics. */
static int stat_lines(const char *err)
{
	int n = 0;

	for (; (err = strstr(err, "]: stats: group=")); err++)
		n++;
	return n;
}

static void assert_same_files(const char *a, const char *b)
{
	char buf_a[65536], buf_b[65536];
	size_t na, nb, total = 0;
	FILE *fa = fopen(a, "re"), *fb = fopen(b, "re");

	ck_assert_ptr_nonnull(fa);
	ck_assert_ptr_nonnull(fb);
	do {
		na = fread(buf_a, 1, sizeof(buf_a), fa);
		nb = fread(buf_b, 1, sizeof(buf_b), fb);
		ck_assert_msg(na == nb && memcmp(buf_a, buf_b, na) == 0,
			      "%s and %s differ after %zu bytes", a, b, total);
		total += na;
	} while (na);
	fclose(fa);
	fclose(fb);
	ck_assert_uint_gt(total, 0);
}

static bool thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

/* Lines of pseudo-random numbers (a fixed LCG): `bytes` of them. */
static void make_numbers(const char *path, uint64_t bytes)
{
	uint64_t x = 12345, done = 0;
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	while (done < bytes) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		done += (uint64_t)fprintf(f, "%" PRIu64 " line\n", x >> 20);
	}
	ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	group[0] = '\0';
}

/* Removes the test's group, if it made one. */
static void teardown_group(void)
{
	if (group[0]) {
		/* Charges of exited programs stay; force_empty drops them so
		 * the group can go (it holds no task). */
		write_file(group, "memory.force_empty", "0");
		ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
		group[0] = '\0';
	}
}

static void teardown(void)
{
	teardown_group();
	mr_ctx_free(ctx);
}

/* -------------------------------------------------------------- tests */

/* A case whose program is missing here is not run (Check cannot skip one
 * case); under CI=true, where scripts/lib.sh installs them all, it fails. */
static void not_run(const char *what)
{
	const char *ci = getenv("CI");

	ck_assert_msg(!ci || strcmp(ci, "true") != 0, "%s is not installed",
		      what);
	fprintf(stderr, "no %s: not run\n", what);
}
/* Every wrapped call, three threads and a forked child: the same output
 * as without the hook; charges made and given back, the child's group
 * opened again after fork, THP advice applied to the 2 MiB-aligned
 * mapping and, where THP is on, huge pages behind it. */
START_TEST(mix_same_output_charged_thp_applied)
{
	const char *argv[] = { prog, "mix", NULL };
	char plain[PATH_MAX], hooked[PATH_MAX];
	static struct run r;
	const char *p;

	new_group(256 * MiB);
	fmt(plain, sizeof(plain), "%s/memreclaim-test-%d.hook-plain",
	    data_dir, (int)getpid());
	fmt(hooked, sizeof(hooked), "%s/memreclaim-test-%d.hook-hooked",
	    data_dir, (int)getpid());
	run_in_group(false, NULL, argv, plain, &r);
	assert_exit_0(&r);
	run_in_group(true, NULL, argv, hooked, &r);
	assert_exit_0(&r);
	assert_same_files(plain, hooked);
	unlink(plain);
	unlink(hooked);
	ck_assert_uint_ge(stat_sum(r.err, "charged_bytes"), 16 * MiB);
	ck_assert_uint_gt(stat_sum(r.err, "uncharged_bytes"), 16 * MiB);
	ck_assert_uint_ge(stat_sum(r.err, "reopens"), 1);
	ck_assert_uint_ge(stat_sum(r.err, "madvise_hugepage"), 1);
	ck_assert_uint_eq(stat_sum(r.err, "madvise_errors"), 0);
	ck_assert_uint_eq(stat_sum(r.err, "refused_enomem"), 0);
	ck_assert_uint_eq(stat_sum(r.err, "errors"), 0);
	ck_assert_uint_eq(stat_sum(r.err, "untracked_maps"), 0);
	if (thp_enabled()) {
		p = strstr(r.err, "map_anon_huge_kb=");
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(strtol(p + 17, NULL, 10) > 0,
			      "no huge page behind the advised mapping");
	}
	ck_assert_ptr_nonnull(strstr(read_text(group, "memory.oom_control"),
				     "oom_kill 0"));
}
END_TEST

/* GNU sort over 48 MiB of lines in a 192 MiB group: the same output with
 * the hook, charges, and THP advice applied to its buffer (it allocates
 * it with malloc: the huge-page interior of the block is advised). Then
 * again with a small buffer and gzip-compressed temporary files, so that
 * sort forks and execs its compressor under the hook.
 *
 * The reference run has a bounded buffer (-S 32M): sort sizes its default
 * buffer from the machine's RAM, not the group's limit, and without the
 * hook the kernel OOM-kills it here; under the hook the buffer it cannot
 * have is refused, and sort retries with half (its initbuf() loop). */
START_TEST(sort_same_output_charged_thp_applied)
{
	char in[PATH_MAX], plain[PATH_MAX], hooked[PATH_MAX];
	char tmpdir[PATH_MAX], tflag[PATH_MAX + 4];
	const char *env[] = { "LC_ALL=C", NULL };
	const char *argv_plain[] = { "/usr/bin/sort", "-S", "32M", in, NULL };
	const char *argv[] = { "/usr/bin/sort", in, NULL };
	const char *argv_small[] = { "/usr/bin/sort", "-S", "4M",
		"--compress-program=gzip", tflag, in, NULL };
	static struct run r;

	if (access(argv[0], X_OK) < 0) {
		not_run(argv[0]);
		return;
	}
	new_group(192 * MiB);
	fmt(in, sizeof(in), "%s/memreclaim-test-%d.hook-in", data_dir,
	    (int)getpid());
	fmt(plain, sizeof(plain), "%s.plain", in);
	fmt(hooked, sizeof(hooked), "%s.hooked", in);
	fmt(tmpdir, sizeof(tmpdir), "%s.tmp", in);
	fmt(tflag, sizeof(tflag), "-T%s", tmpdir);
	ck_assert_int_eq(mkdir(tmpdir, 0700), 0);
	make_numbers(in, 48 * MiB);
	run_in_group(false, env, argv_plain, plain, &r);
	assert_exit_0(&r);
	run_in_group(true, env, argv, hooked, &r);
	assert_exit_0(&r);
	assert_same_files(plain, hooked);
	ck_assert_uint_ge(stat_sum(r.err, "charged_bytes"), 48 * MiB);
	ck_assert_uint_ge(stat_sum(r.err, "madvise_hugepage"), 1);
	ck_assert_uint_eq(stat_sum(r.err, "errors"), 0);
	ck_assert_ptr_nonnull(strstr(read_text(group, "memory.oom_control"),
				     "oom_kill 0"));

	run_in_group(true, env, argv_small, hooked, &r);
	assert_exit_0(&r);
	assert_same_files(plain, hooked);
	/* sort's and at least one compressor's. */
	ck_assert_int_ge(stat_lines(r.err), 2);
	ck_assert_uint_eq(stat_sum(r.err, "errors"), 0);
	unlink(in);
	unlink(plain);
	unlink(hooked);
	ck_assert_int_eq(rmdir(tmpdir), 0);
}
END_TEST

/* Another allocator preloaded after the hook (README: the hook forwards
 * to it): GNU sort, with a fixed buffer, over 25 MiB of lines under
 * glibc's malloc, jemalloc and mimalloc, each run in a group of its own.
 * The blocks the allocator hands out are charged by the malloc wrappers;
 * the mappings it makes for them while it serves those calls must not be
 * charged again by the mmap wrapper (they were: jemalloc 2.1x and mimalloc
 * 2.2x glibc's charged bytes). Bound: 1.4x glibc's, since a block is
 * charged at its usable size and the allocators' size classes round a
 * large block up by at most a quarter (jemalloc: four classes per
 * doubling); double charging is 2x and more. No refusal, no reclaim: 192
 * MiB is thrice what sort needs. An allocator that is not installed
 * (ld.so cannot preload it) is not run; under CI=true that fails. */
START_TEST(other_allocator_mappings_not_charged_twice)
{
	static const char *const allocators[] = { "libjemalloc.so.2",
		"libmimalloc.so.2" };
	char in[PATH_MAX], plain[PATH_MAX], out[PATH_MAX];
	const char *env[] = { "LC_ALL=C", NULL };
	const char *argv[] = { "/usr/bin/sort", "-S", "32M", in, NULL };
	uint64_t glibc_bytes, bytes;
	static struct run r;
	size_t i;

	if (access(argv[0], X_OK) < 0) {
		not_run(argv[0]);
		return;
	}
	fmt(in, sizeof(in), "%s/memreclaim-test-%d.hook-alloc-in", data_dir,
	    (int)getpid());
	fmt(plain, sizeof(plain), "%s.glibc", in);
	fmt(out, sizeof(out), "%s.other", in);
	make_numbers(in, 25 * MiB);
	new_group(192 * MiB);
	run_in_group(true, env, argv, plain, &r);
	assert_exit_0(&r);
	glibc_bytes = stat_sum(r.err, "charged_bytes");
	ck_assert_uint_ge(glibc_bytes, 25 * MiB);
	ck_assert_uint_eq(stat_sum(r.err, "refused"), 0);
	for (i = 0; i < sizeof(allocators) / sizeof(*allocators); i++) {
		teardown_group();
		new_group(192 * MiB);
		run_after(true, allocators[i], env, argv, out, &r);
		if (strstr(r.err, "cannot be preloaded")) {
			not_run(allocators[i]);
			continue;
		}
		assert_exit_0(&r);
		assert_same_files(plain, out);
		bytes = stat_sum(r.err, "charged_bytes");
		fprintf(stderr, "%s: charged %" PRIu64 " bytes, glibc %" PRIu64
			"\n", allocators[i], bytes, glibc_bytes);
		ck_assert_msg(bytes * 10 <= glibc_bytes * 14,
			      "%s: charged %" PRIu64 " bytes, glibc's malloc %"
			      PRIu64, allocators[i], bytes, glibc_bytes);
		ck_assert_uint_eq(stat_sum(r.err, "refused"), 0);
		ck_assert_uint_eq(stat_sum(r.err, "refused_enomem"), 0);
		ck_assert_uint_eq(stat_sum(r.err, "reclaims"), 0);
		ck_assert_uint_eq(stat_sum(r.err, "errors"), 0);
	}
	unlink(in);
	unlink(plain);
	unlink(out);
}
END_TEST

/* A malloc larger than the group's limit, never touched: without the hook
 * it succeeds (the kernel charges at fault), with it the fast path
 * refuses it (nothing reclaimable covers it) and malloc fails with
 * ENOMEM; with MEMRECLAIM_HOOK_REFUSE=allow it goes through, counted. */
START_TEST(refused_malloc_fails_with_enomem_or_is_allowed)
{
	const char *argv[] = { prog, "big", "256", NULL };
	const char *allow[] = { "MEMRECLAIM_HOOK_REFUSE=allow", NULL };
	char out[PATH_MAX];
	static struct run r;

	new_group(64 * MiB);
	fmt(out, sizeof(out), "%s/memreclaim-test-%d.hook-out", data_dir,
	    (int)getpid());
	run_in_group(false, NULL, argv, out, &r);
	assert_exit_0(&r);
	ck_assert_ptr_nonnull(strstr(r.err, "big=ok"));
	run_in_group(true, NULL, argv, out, &r);
	assert_exit_0(&r);
	ck_assert_ptr_nonnull(strstr(r.err, "big=enomem"));
	ck_assert_uint_ge(stat_sum(r.err, "refused_enomem"), 1);
	ck_assert_uint_ge(stat_sum(r.err, "refused"), 1);
	run_in_group(true, allow, argv, out, &r);
	assert_exit_0(&r);
	ck_assert_ptr_nonnull(strstr(r.err, "big=ok"));
	ck_assert_uint_ge(stat_sum(r.err, "refused_allowed"), 1);
	ck_assert_uint_eq(stat_sum(r.err, "refused_enomem"), 0);
	unlink(out);
}
END_TEST

/* A throttle high of 4 MiB on cgroup v1 (which has none of its own) and
 * the kernel's curve: the 16 MiB malloc draws far above the high and is
 * delayed (the curve's 2 s clamp), slept, and goes through; the small
 * draws below the high are not delayed. Counts only: timings are not
 * asserted. */
START_TEST(throttled_above_high_sleeps)
{
	const char *argv[] = { prog, "big", "16", NULL };
	const char *env[] = { "MEMRECLAIM_HOOK_HIGH=4M",
		"MEMRECLAIM_HOOK_THROTTLE=kernel", NULL };
	char out[PATH_MAX];
	static struct run r;

	new_group(256 * MiB);
	fmt(out, sizeof(out), "%s/memreclaim-test-%d.hook-out", data_dir,
	    (int)getpid());
	run_in_group(true, env, argv, out, &r);
	assert_exit_0(&r);
	unlink(out);
	ck_assert_ptr_nonnull(strstr(r.err, "big=ok"));
	ck_assert_ptr_nonnull(strstr(r.err, " high_bytes=4194304 "));
	ck_assert_uint_ge(stat_sum(r.err, "delayed"), 1);
	ck_assert_uint_eq(stat_sum(r.err, "sleeps"),
			  stat_sum(r.err, "delayed"));
	ck_assert_uint_gt(stat_sum(r.err, "slept_ns"), 0);
	ck_assert_uint_eq(stat_sum(r.err, "refused"), 0);
}
END_TEST

/* The fast path never reads the limit itself: the hook refreshes it
 * (MEMRECLAIM_HOOK_REFRESH_MS, checked at each charge of a huge page or
 * more). A 96 MiB malloc fits under 256 MiB; the program lowers the limit
 * to 64 MiB; the same malloc 20 ms later is refused. */
START_TEST(lowered_limit_seen_by_the_periodic_refresh)
{
	const char *env[] = { "MEMRECLAIM_HOOK_REFRESH_MS=1", NULL };
	const char *argv[] = { prog, "relimit", group, "67108864", "96",
		NULL };
	char out[PATH_MAX];
	static struct run r;
	const char *first;

	new_group(256 * MiB);
	fmt(out, sizeof(out), "%s/memreclaim-test-%d.hook-out", data_dir,
	    (int)getpid());
	run_in_group(true, env, argv, out, &r);
	assert_exit_0(&r);
	unlink(out);
	first = strstr(r.err, "big=ok\n");
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_nonnull(strstr(first, "big=enomem\n"));
	ck_assert_uint_ge(stat_sum(r.err, "refreshes"), 1);
}
END_TEST

/* ------------------------------------------------------------- main */

/* The shared places (tests/realcg.h), then the hook and its test program,
 * which `make` builds: a missing one is a broken build, not a skip. */
static int find_places(void)
{
	const char *top = getenv("top_builddir");
	int r = rc_find_places("-hook");

	if (r)
		return r;
	fmt(hook, sizeof(hook), "%s/examples/.libs/alloc-hook.so",
	    top && *top ? top : ".");
	fmt(prog, sizeof(prog), "%s/tests/alloc-hook-prog",
	    top && *top ? top : ".");
	if (access(hook, R_OK) < 0 || access(prog, X_OK) < 0) {
		printf("FAIL: %s or %s is missing\n", hook, prog);
		return 1;
	}
	if (mkdir(state_dir, 0700) < 0)
		return rc_skip("cannot create the state directory");
	return 0;
}

int main(void)
{
	Suite *s = suite_create("real-alloc-hook");
	TCase *tc = tcase_create("kernel");
	int r;

	r = find_places();
	if (r)
		return r;
	rc_sweep_stale();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, mix_same_output_charged_thp_applied);
	tcase_add_test(tc, sort_same_output_charged_thp_applied);
	tcase_add_test(tc, other_allocator_mappings_not_charged_twice);
	tcase_add_test(tc, refused_malloc_fails_with_enomem_or_is_allowed);
	tcase_add_test(tc, throttled_above_high_sleeps);
	tcase_add_test(tc, lowered_limit_seen_by_the_periodic_refresh);
	suite_add_tcase(s, tc);
	return rc_run(s);
}
