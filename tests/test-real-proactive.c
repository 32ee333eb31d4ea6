/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller (mr_group_set_proactive()) on this machine's
 * cgroup v1 kernel: limit steps for reclaim, PSI from the group's cgroup2
 * twin (mr_ctx_set_hybrid_psi()). A task in a group of its own reads
 * 200 MiB of files once (cold page cache), then re-reads a hot 20 MiB
 * file every 100 ms. With the controller's defaults the group must shrink
 * below 64 MiB within 40 of its intervals, while the hot file stays
 * resident (mincore(): at least 95% of it on the mean of five looks, 10
 * intervals later, and less
 * than half of it refaulted in those intervals); a dry
 * run must reclaim nothing and report a size below 64 MiB within as many
 * intervals. Counts of intervals, not times: the test waits for the
 * controller's own interval count. A group without a twin takes its PSI
 * from the cgroup2 group that holds exactly its tasks.
 *
 * This host runs a DAMON pageout scheme of its own on physical memory
 * (docs/kernels.md), which can take cold cache too: that only helps the
 * shrinking, and nothing here asserts how much of the cold cache is left
 * at any moment.
 *
 * Needs a hybrid host (cgroup v1 memory beside cgroup2): elsewhere it
 * exits 77 (a failure under CI=true).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memreclaim.h"
#include "realcg.h"

#define MiB (1024ULL * 1024)
#define LIMIT (512 * MiB)
#define COLD_BYTES (200 * MiB)
#define HOT_BYTES (20 * MiB)
#define GOAL_BYTES (64 * MiB)
#define MAX_INTERVALS 40
#define RESIDENT_AFTER 10

static char group[PATH_MAX], cold_path[PATH_MAX], hot_path[PATH_MAX];
static mr_ctx_t *ctx;
static pid_t child;

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void read_whole(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		_exit(3);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

/* The workload: once moved (go), the cold file, a byte on done, then the
 * hot file every 100 ms until killed. */
static void workload(int go, int done)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	read_whole(cold_path);
	if (write(done, "c", 1) != 1)
		_exit(2);
	for (;;) {
		read_whole(hot_path);
		sleep_ms(100);
	}
}

static void start_workload(void)
{
	int go[2], done[2];
	char c;

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(done, O_CLOEXEC), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(done[0]);
		workload(go[0], done[1]);
	}
	close(go[0]);
	close(done[1]);
	ck_assert_int_eq(mr_cgroup_attach(ctx, group, child), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	/* The cold read is done: the group holds its cache. */
	ck_assert_int_eq(read(done[0], &c, 1), 1);
	close(done[0]);
}

/* The share of the hot file in the page cache, in ppm (mincore()). */
static uint64_t hot_resident_ppm(void)
{
	size_t pages = HOT_BYTES / 4096, i, in = 0;
	unsigned char *vec = malloc(pages);
	int fd = open(hot_path, O_RDONLY | O_CLOEXEC);
	void *p;

	ck_assert_ptr_nonnull(vec);
	ck_assert_int_ge(fd, 0);
	p = mmap(NULL, HOT_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(mincore(p, HOT_BYTES, vec), 0);
	for (i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(p, HOT_BYTES);
	close(fd);
	free(vec);
	return in * 1000000 / pages;
}

static void log_line(int level, const char *msg, void *userdata)
{
	(void)userdata;
	if (strstr(msg, "proactive"))
		fprintf(stderr, "  log %d: %s\n", level, msg);
}

static void setup(void)
{
	static int seq;

	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_line, NULL, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
	fmt(group, sizeof(group), "%s/memreclaim-test-%d-p%d", parent,
	    (int)getpid(), ++seq);
	ck_assert_int_eq(mr_cgroup_create(ctx, group, LIMIT), 0);
	fmt(cold_path, sizeof(cold_path), "%s/memreclaim-test-%d.cold",
	    data_dir, (int)getpid());
	fmt(hot_path, sizeof(hot_path), "%s/memreclaim-test-%d.hot",
	    data_dir, (int)getpid());
	rc_make_uncached_file(cold_path, COLD_BYTES);
	rc_make_uncached_file(hot_path, HOT_BYTES);
	child = 0;
}

static void teardown(void)
{
	int status;

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	mr_ctx_free(ctx);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 1), 0);
	write_file(group, "memory.force_empty", "0");
	ck_assert_int_eq(mr_cgroup_remove(ctx, group), 0);
	mr_ctx_free(ctx);
	unlink(cold_path);
	unlink(hot_path);
}

/* Waits for the controller's next interval; returns its statistics. */
static void next_interval(mr_group_t *g, struct mr_proactive_stats *st)
{
	uint64_t was = st->intervals;
	unsigned i;

	/* Each interval is a second of the worker's safety rounds; 30 s
	 * without one is a stuck worker, not a slow machine. */
	for (i = 0; i < 300; i++) {
		ck_assert_int_eq(mr_group_read_proactive_stats(g, st,
							       sizeof(*st)),
				 0);
		if (st->intervals > was)
			return;
		sleep_ms(100);
	}
	ck_abort_msg("no interval of the controller in 30 s");
}

static void print(const struct mr_proactive_stats *st, uint64_t usage)
{
	fprintf(stderr, "interval %" PRIu64 ": usage %.1f MiB, target %.1f "
		"MiB, floor %.1f MiB, step %.1f MiB, stall %.3f/%.3f ms, "
		"refaults %.2f MiB (%u ppm), dry run %.1f MiB, reclaimed "
		"%.1f MiB, pauses %" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n",
		st->intervals, usage / (double)MiB,
		st->target_bytes / (double)MiB, st->floor_bytes / (double)MiB,
		st->step_bytes / (double)MiB, st->stall_ns / 1e6,
		st->target_stall_ns / 1e6, st->refault_bytes / (double)MiB,
		st->refault_ratio_ppm, st->dry_run_bytes / (double)MiB,
		st->reclaimed_bytes / (double)MiB, st->pauses_pressure,
		st->pauses_refaults, st->pauses_io);
}

START_TEST(shrinks_to_the_hot_set)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	struct mr_proactive_stats st = { .size = sizeof(st) };
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };
	uint64_t usage = 0, reached = 0, resident = 0, refaults = 0, look;
	mr_group_t *g;
	int i;

	start_workload();
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
	fprintf(stderr, "after the cold read: %.1f MiB\n",
		usage / (double)MiB);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	while (!reached) {
		next_interval(g, &st);
		ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
		print(&st, usage);
		if (usage < GOAL_BYTES)
			reached = st.intervals;
		ck_assert_msg(reached || st.intervals < MAX_INTERVALS,
			      "still %.1f MiB after %u intervals",
			      usage / (double)MiB, MAX_INTERVALS);
	}
	while (st.intervals < reached + RESIDENT_AFTER) {
		next_interval(g, &st);
		ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
		print(&st, usage);
		refaults += st.refault_bytes;
	}
	/* A probe of the controller may take a part of the hot file for
	 * the 100 ms until the workload reads it again: five looks 200 ms
	 * apart, each after a re-read, and their mean. (Their best would
	 * prove little: the workload reads the whole file every 100 ms, so
	 * one look in five finds it whole unless the controller keeps
	 * taking it.) */
	for (i = 0; i < 5; i++) {
		sleep_ms(200);
		look = hot_resident_ppm();
		fprintf(stderr, "hot file %.1f%% resident\n", look / 1e4);
		resident += look;
	}
	resident /= 5;
	fprintf(stderr, "below %llu MiB at interval %" PRIu64 "; hot file "
		"%.1f%% resident (mean of five) %d intervals later; %.2f MiB "
		"refaulted in them\n", GOAL_BYTES / MiB, reached,
		resident / 1e4, RESIDENT_AFTER, refaults / (double)MiB);
	ck_assert_uint_ge(resident, 950000);
	/* Probes into the hot set are rare and small: less than half of
	 * it came back in those intervals. */
	ck_assert_uint_lt(refaults, HOT_BYTES / 2);
	ck_assert_uint_lt(usage, GOAL_BYTES);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_PROACTIVE,
						     &rs), 0);
	ck_assert_uint_gt(rs.calls, 0);
	ck_assert_uint_gt(st.reclaimed_bytes, 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

START_TEST(dry_run_reclaims_nothing)
{
	struct mr_proactive pro = {
		.size = sizeof(pro),
		.flags = MR_PROACTIVE_DRY_RUN,
	};
	struct mr_proactive_stats st = { .size = sizeof(st) };
	struct mr_reclaim_stats rs = { .size = sizeof(rs) };
	uint64_t usage;
	mr_group_t *g;

	start_workload();
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)), 0);
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	do {
		next_interval(g, &st);
		ck_assert_int_eq(mr_group_read_usage(g, &usage), 0);
		print(&st, usage);
		ck_assert_msg(st.intervals < MAX_INTERVALS,
			      "dry run at %.1f MiB after %u intervals",
			      st.dry_run_bytes / (double)MiB, MAX_INTERVALS);
	} while (st.dry_run_bytes >= GOAL_BYTES);
	ck_assert_int_eq(st.dry_run, 1);
	ck_assert_uint_gt(st.dry_run_bytes, 0);
	ck_assert_uint_eq(st.reclaimed_bytes, 0);
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_PROACTIVE,
						     &rs), 0);
	ck_assert_uint_eq(rs.calls, 0);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* Without a twin there is no PSI: refused, and said why. */
START_TEST(no_psi_refused)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	mr_group_t *g;

	ck_assert_int_eq(mr_ctx_set_hybrid_psi(ctx, 0), 0);
	ck_assert_int_eq(mr_group_open(ctx, group, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)),
			 -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_close(g), 0);
}
END_TEST

/* A sleeper this test starts, for the tasks2 test. */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static void write_pid(const char *dir, pid_t pid)
{
	char v[32];

	fmt(v, sizeof(v), "%d\n", (int)pid);
	write_file(dir, "cgroup.procs", v);
}

/* A v1 group the library made without a twin (a runtime's group, as it
 * were), its task in a cgroup2 group of another name that this test
 * makes: the group's PSI is that group's while it holds the v1 group's
 * tasks alone, so the controller takes it; once it holds another task,
 * it is refused. */
START_TEST(tasks_own_cgroup2_group)
{
	struct mr_proactive pro = { .size = sizeof(pro) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	char v1[PATH_MAX], c2[PATH_MAX], tp[PATH_MAX];
	pid_t a, b;
	mr_ctx_t *c;
	mr_group_t *g;

	ck_assert(rc_twin_parent(tp, sizeof(tp)));
	fmt(v1, sizeof(v1), "%s/memreclaim-test-%d-u1", parent, (int)getpid());
	fmt(c2, sizeof(c2), "%s/memreclaim-test-%d-u2", tp, (int)getpid());
	ck_assert_int_eq(mr_ctx_new(&c), 0);
	ck_assert_int_eq(mr_cgroup_create(c, v1, LIMIT), 0);
	ck_assert_int_eq(mkdir(c2, 0755), 0);
	a = start_sleeper();
	ck_assert_int_eq(mr_cgroup_attach(c, v1, a), 0);
	write_pid(c2, a);
	ck_assert_int_eq(mr_ctx_set_hybrid_psi(c, 1), 0);
	ck_assert_int_eq(mr_group_open(c, v1, "cgroup1", &g), 0);
	ck_assert_int_eq(mr_group_read_pressure(g, &pr), 0);
	ck_assert_uint_eq(pr.present & MR_PRESSURE_SOME, MR_PRESSURE_SOME);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)), 0);
	/* Another task in the cgroup2 group: its PSI is no longer the v1
	 * group's. */
	b = start_sleeper();
	write_pid(c2, b);
	ck_assert_int_eq(mr_group_read_pressure(g, &pr), -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_set_proactive(g, &pro, sizeof(pro)),
			 -EOPNOTSUPP);
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	ck_assert_int_eq(mr_group_close(g), 0);
	ck_assert_msg(rmdir(c2) == 0, "rmdir %s: %s", c2, strerror(errno));
	write_file(v1, "memory.force_empty", "0");
	ck_assert_int_eq(mr_cgroup_remove(c, v1), 0);
	mr_ctx_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("real-proactive");
	TCase *tc = tcase_create("kernel");
	mr_ctx_t *c;
	int r;

	r = rc_find_places("-proactive");
	if (r)
		return r;
	/* cgroup v1 has PSI only through a cgroup2 twin. */
	r = mr_ctx_new(&c);
	if (r == 0) {
		r = mr_ctx_set_hybrid_psi(c, 1);
		mr_ctx_free(c);
	}
	if (r < 0)
		return rc_skip("not a hybrid host: cgroup v1 groups have no "
			       "PSI for the controller");
	rc_sweep_stale();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, shrinks_to_the_hot_set);
	tcase_add_test(tc, dry_run_reclaims_nothing);
	tcase_add_test(tc, no_psi_refused);
	tcase_add_test(tc, tasks_own_cgroup2_group);
	suite_add_tcase(s, tc);
	return rc_run(s);
}
