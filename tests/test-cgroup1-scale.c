/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The margin worker with many cgroup v1 groups, on a fake tree: a
 * temporary directory of groups made of regular files named like the
 * cgroup files, and a file-access table (lib/cgroupfs/fileops.h) that plays the
 * kernel's part for the writes: a limit below usage reclaims page cache
 * down to it, or all of it and EBUSY (mm/memcontrol-v1.c,
 * mem_cgroup_resize_max()); a cgroup.event_control write is a threshold
 * registration, which the kernel makes wait for an RCU grace period
 * (__mem_cgroup_usage_register_event(): synchronize_rcu()) and the fake
 * makes wait until the test releases it.
 *
 * - Registrations come after the groups with work: while the worker's
 *   first registration is held, the groups above their mark have been
 *   served; a group that rises above its mark meanwhile is served before
 *   the next registration, which is its own; once released, every group
 *   is registered once.
 * - A group keeps its usage fd and, with a margin, one eventfd.
 * - The safety net runs while events keep the worker busy.
 * - The fd budget: with RLIMIT_NOFILE lowered, opens and margins are
 *   refused with -EMFILE before the fds the worker's passes need are
 *   gone, and the groups already open are served.
 *
 * No timer and no sleep but in safety_net_while_busy, whose events come a
 * millisecond apart: the others wait on the fake's condition.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fileops.h"
#include "group.h"

#define MiB (1024ULL * 1024)
#define PAGE 4096ULL
#define MAX_GROUPS 40
#define MAX_FDS 4096
#define LIMIT (200 * MiB)
#define MARGIN (32 * MiB)
#define ANON ((uint64_t)(60 * MiB))

static char tmp[64];

/* The fake kernel's state, under `lock`: the worker's thread and the
 * test's both reach it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct fgroup {
	uint64_t cache, limit;
	int registrations;
	int stat_reads; /* of memory.stat: a pass read its limits */
} fg[MAX_GROUPS];
static int ngroups;
/* Registrations in the order they were written (group numbers), how
 * many have entered the write, and how many the test let go; `hold`:
 * each waits until released. */
static int reg_order[MAX_GROUPS * 4];
static int nreg, released;
static bool hold;
/* The path each fd was opened by (for the groups' files). */
static char fdpath[MAX_FDS][PATH_MAX];

static char logbuf[16384];

static void log_fn(int level, const char *msg, void *userdata)
{
	size_t n;

	(void)userdata;
	pthread_mutex_lock(&lock);
	n = strlen(logbuf);
	snprintf(logbuf + n, sizeof(logbuf) - n, "%d %s\n", level, msg);
	pthread_mutex_unlock(&lock);
}

static void write_at(int i, const char *name, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/g%d/%s", tmp, i, name);
	f = fopen(p, "we");
	ck_assert_msg(f, "cannot write %s", p);
	fputs(content, f);
	fclose(f);
}

/* Group i's files from its state. Call with `lock` held, or before the
 * worker runs. */
static void sync_group(int i)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", ANON + fg[i].cache);
	write_at(i, "memory.usage_in_bytes", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fg[i].limit);
	write_at(i, "memory.limit_in_bytes", buf);
	snprintf(buf, sizeof(buf),
		 "hierarchical_memory_limit %" PRIu64 "\n"
		 "total_cache %" PRIu64 "\ntotal_rss %" PRIu64 "\n"
		 "total_inactive_file %" PRIu64 "\ntotal_active_file 0\n"
		 "total_dirty 0\ntotal_mapped_file 0\n",
		 fg[i].limit, fg[i].cache, ANON, fg[i].cache);
	write_at(i, "memory.stat", buf);
}

/* The group number of a path under the tree, or -1. */
static int group_of(const char *path)
{
	size_t n = strlen(tmp);
	int i;

	if (strncmp(path, tmp, n) != 0 || sscanf(path + n, "/g%d", &i) != 1 ||
	    i < 0 || i >= ngroups)
		return -1;
	return i;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void remember(int fd, const char *dir, const char *name)
{
	char d[PATH_MAX];

	if (fd < 0 || fd >= MAX_FDS)
		return;
	if (dir) {
		snprintf(d, sizeof(d), "%s", dir);
		snprintf(fdpath[fd], sizeof(fdpath[fd]), "%.2000s/%.1000s",
			 d, name);
	} else {
		snprintf(fdpath[fd], sizeof(fdpath[fd]), "%s", name);
	}
}

static int h_open(const char *path, int flags, mode_t mode)
{
	int fd = mri_file_ops_real.open(path, flags, mode);

	remember(fd, NULL, path);
	return fd;
}

static int h_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int fd = mri_file_ops_real.openat(dirfd, path, flags, mode);

	if (fd >= 0 && dirfd >= 0 && dirfd < MAX_FDS)
		remember(fd, fdpath[dirfd], path);
	return fd;
}

static int h_close(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		fdpath[fd][0] = '\0';
	return mri_file_ops_real.close(fd);
}

/* The kernel's side of a limit write. */
static ssize_t limit_write(int i, const char *buf, size_t len)
{
	uint64_t v, usage;
	char s[32];
	ssize_t r = (ssize_t)len;

	ck_assert_uint_lt(len, sizeof(s));
	memcpy(s, buf, len);
	s[len] = '\0';
	if (strcmp(s, "-1") == 0)
		v = UINT64_MAX / PAGE * PAGE;
	else
		ck_assert_int_eq(mri_parse_u64(s, &v), 0);
	v = v / PAGE * PAGE;
	pthread_mutex_lock(&lock);
	usage = ANON + fg[i].cache;
	if (v < usage && usage - v > fg[i].cache) {
		fg[i].cache = 0;
		r = -EBUSY;
	} else {
		if (v < usage)
			fg[i].cache -= usage - v;
		fg[i].limit = v;
	}
	sync_group(i);
	pthread_mutex_unlock(&lock);
	return r;
}

/* A registration: counted, then held while the test holds them. */
static ssize_t event_control_write(int i, size_t len)
{
	pthread_mutex_lock(&lock);
	fg[i].registrations++;
	ck_assert_int_lt(nreg, (int)(sizeof(reg_order) / sizeof(reg_order[0])));
	reg_order[nreg++] = i;
	pthread_cond_broadcast(&cond);
	while (hold && released < nreg)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return (ssize_t)len;
}

static ssize_t h_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int i = fd >= 0 && fd < MAX_FDS ? group_of(fdpath[fd]) : -1;

	if (i >= 0 && strcmp(base_name(fdpath[fd]),
			     "memory.limit_in_bytes") == 0)
		return limit_write(i, buf, len);
	if (i >= 0 && strcmp(base_name(fdpath[fd]),
			     "cgroup.event_control") == 0)
		return event_control_write(i, len);
	return mri_file_ops_real.pwrite(fd, buf, len, off);
}

static ssize_t h_pread(int fd, void *buf, size_t len, off_t off)
{
	int i = fd >= 0 && fd < MAX_FDS ? group_of(fdpath[fd]) : -1;

	if (i >= 0 && strcmp(base_name(fdpath[fd]), "memory.stat") == 0) {
		pthread_mutex_lock(&lock);
		fg[i].stat_reads++;
		pthread_mutex_unlock(&lock);
	}
	return mri_file_ops_real.pread(fd, buf, len, off);
}

static int h_statfs(const char *path, struct statfs *st)
{
	int r = mri_file_ops_real.statfs(path, st);

	if (r == 0 && strncmp(path, tmp, strlen(tmp)) == 0)
		st->f_type = CGROUP_SUPER_MAGIC;
	return r;
}

static const struct mri_file_ops fake_ops = {
	.open = h_open,
	.openat = h_openat,
	.pread = h_pread,
	.pwrite = h_pwrite,
	.close = h_close,
	.statfs = h_statfs,
};

static mr_ctx_t *ctx;
static mr_group_t *g[MAX_GROUPS];

/* n groups g0 .. g(n-1) at LIMIT with ANON and 40 MiB of cache, but
 * those in `busy` (a -1 terminated list), which hold 130 MiB of cache:
 * 190 MiB, above LIMIT - MARGIN. */
static void make_tree(int n, const int *busy)
{
	char p[PATH_MAX];
	int i;

	ngroups = n;
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/g%d", tmp, i);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		fg[i].cache = 40 * MiB;
		fg[i].limit = LIMIT;
		write_at(i, "memory.failcnt", "0\n");
		write_at(i, "memory.max_usage_in_bytes", "0\n");
		write_at(i, "memory.oom_control",
			 "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
		write_at(i, "cgroup.event_control", "");
	}
	for (; *busy >= 0; busy++)
		fg[*busy].cache = 130 * MiB;
	for (i = 0; i < n; i++)
		sync_group(i);
}

static void setup(void)
{
	char state[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "/tmp/mr-scale-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(state, sizeof(state), "%s/state", tmp);
	setenv("MEMRECLAIM_STATE_DIR", state, 1);
	memset(fg, 0, sizeof(fg));
	memset(g, 0, sizeof(g));
	nreg = released = 0;
	hold = false;
	logbuf[0] = '\0';
	mri_file_ops_set(&fake_ops);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG), 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	mr_ctx_free(ctx);
	mri_file_ops_set(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static int open_group(int i)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/g%d", tmp, i);
	return mr_group_open(ctx, p, "cgroup1", &g[i]);
}

/* Margin reclaim calls of group i so far. */
static uint64_t margin_calls(int i)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(mr_group_read_reclaim_stats(g[i], MR_REASON_MARGIN,
						     &st), 0);
	return st.calls;
}

/* Waits until the n-th registration has entered its write. */
static void wait_registrations(int n)
{
	pthread_mutex_lock(&lock);
	while (nreg < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void release(int n, bool all)
{
	pthread_mutex_lock(&lock);
	released = n;
	if (all)
		hold = false;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* Whether group i's threshold is armed at its mark, on its own eventfd
 * in the worker's set. Call with the worker stopped. */
static bool registered(int i)
{
	return g[i]->armed_threshold_bytes == LIMIT - MARGIN &&
	       g[i]->event_fd >= 0 && g[i]->polled;
}

#define NREG 8

START_TEST(registration_after_service)
{
	static const int busy[] = { 2, 5, -1 };
	int i, second;

	make_tree(NREG, busy);
	for (i = 0; i < NREG; i++) {
		ck_assert_int_eq(open_group(i), 0);
		ck_assert_int_eq(mr_group_set_margin(g[i], MARGIN, 0, 0), 0);
	}
	hold = true;
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);

	/* The first registration is held: the groups above their mark were
	 * served before it, and it is one of theirs. */
	wait_registrations(1);
	ck_assert_uint_ge(margin_calls(2), 1);
	ck_assert_uint_ge(margin_calls(5), 1);
	ck_assert_msg(reg_order[0] == 2 || reg_order[0] == 5,
		      "first registration for g%d, not a busy group",
		      reg_order[0]);
	for (i = 0; i < NREG; i++) {
		if (i != 2 && i != 5)
			ck_assert_uint_eq(margin_calls(i), 0);
	}

	/* Group 6 rises above its mark while the worker waits in the
	 * kernel: it is served before the next registration, which is its
	 * own. */
	pthread_mutex_lock(&lock);
	fg[6].cache = 130 * MiB;
	sync_group(6);
	pthread_mutex_unlock(&lock);
	release(1, false);
	wait_registrations(2);
	ck_assert_uint_ge(margin_calls(6), 1);
	second = reg_order[1];
	ck_assert_msg(second == 6, "second registration for g%d, not g6",
		      second);

	/* Every group registered once. */
	release(2, true);
	wait_registrations(NREG);
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
	ck_assert_int_eq(nreg, NREG);
	for (i = 0; i < NREG; i++) {
		ck_assert_int_eq(fg[i].registrations, 1);
		ck_assert_msg(registered(i), "g%d not registered", i);
	}
}
END_TEST

/* A group whose registration waits is closed, or its margin turned off:
 * its registration is dropped. */
START_TEST(registration_dropped)
{
	static const int none[] = { -1 };
	int i;

	make_tree(4, none);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(open_group(i), 0);
		ck_assert_int_eq(mr_group_set_margin(g[i], MARGIN, 0, 0), 0);
	}
	/* The round serves them all and registers g0; g1 .. g3 wait. */
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 1);
	ck_assert_int_eq(nreg, 1);
	ck_assert_int_eq(mr_group_close(g[1]), 0);
	g[1] = NULL;
	ck_assert_int_eq(mr_group_set_margin(g[2], 0, 0, 0), 0);
	while (mr_ctx_worker_dispatch(ctx, 0) == 1)
		ck_assert_int_le(nreg, 4);
	ck_assert_int_eq(nreg, 2);
	ck_assert_int_eq(reg_order[1], 3);
	ck_assert(registered(0) && registered(3));
	ck_assert(g[2]->event_fd < 0);
}
END_TEST

static int count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* Drains the worker's rounds: every group served, every threshold
 * registered. */
static void drain_rounds(void)
{
	int r, rounds = 0;

	ck_assert_int_ge(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
	while ((r = mr_ctx_worker_dispatch(ctx, 0)) == 1)
		ck_assert_int_lt(++rounds, 4 * MAX_GROUPS);
	ck_assert_int_eq(r, 0);
}

/* The margin's eventfd is opened when the margin is set (the fd budget
 * is met there), taken by the registration, and not opened again when
 * the margin is turned off and on before the worker disarmed: a group
 * keeps its usage fd and one eventfd. */
START_TEST(margin_fds)
{
	static const int none[] = { -1 };
	int base;

	make_tree(1, none);
	base = count_fds();
	ck_assert_int_eq(open_group(0), 0);
	ck_assert_int_eq(count_fds(), base + 1);
	ck_assert_int_eq(mr_group_set_margin(g[0], MARGIN, 0, 0), 0);
	ck_assert_int_eq(count_fds(), base + 2);
	drain_rounds();
	ck_assert(registered(0));
	ck_assert_int_eq(count_fds(), base + 2);
	ck_assert_int_eq(mr_group_set_margin(g[0], 0, 0, 0), 0);
	ck_assert_int_eq(mr_group_set_margin(g[0], MARGIN, 0, 0), 0);
	ck_assert_int_eq(count_fds(), base + 2);
	drain_rounds();
	ck_assert_int_eq(count_fds(), base + 2);
	ck_assert(registered(0));
	ck_assert_int_eq(mr_group_close(g[0]), 0);
	g[0] = NULL;
	ck_assert_int_eq(count_fds(), base);
}
END_TEST

/* The safety net runs while events keep the worker busy: a group whose
 * limit someone else lowered below its usage (no threshold fires for
 * that) is served while another group's event fd keeps signalling. The
 * bound is generous, not a timing: the net comes every
 * MR_WORKER_SAFETY_NS. */
START_TEST(safety_net_while_busy)
{
	static const int none[] = { -1 };
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t one = 1;
	int i, efd, reads;

	make_tree(2, none);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(open_group(i), 0);
		ck_assert_int_eq(mr_group_set_margin(g[i], MARGIN, 0, 0), 0);
	}
	drain_rounds();
	ck_assert(registered(0) && registered(1));
	efd = g[0]->event_fd;
	reads = fg[1].stat_reads;
	ck_assert_int_eq(mr_ctx_worker_start(ctx), 0);
	/* Events from now on; once the thread's first round (over every
	 * group) has read g1's limits, someone else lowers it: mark 78 MiB,
	 * usage 100 MiB, and no threshold fires for that. */
	for (i = 0; ; i++) {
		ck_assert_msg(i < 30000, "no first round in 30000 events");
		ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&lock);
		if (fg[1].stat_reads > reads) {
			fg[1].limit = 110 * MiB;
			sync_group(1);
			pthread_mutex_unlock(&lock);
			break;
		}
		pthread_mutex_unlock(&lock);
	}
	for (i = 0; margin_calls(1) == 0; i++) {
		ck_assert_msg(i < 30000, "g1 not served in 30000 events");
		ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
		nanosleep(&ms, NULL);
	}
	ck_assert_int_eq(mr_ctx_worker_stop(ctx), 0);
}
END_TEST

#define NBUDGET MAX_GROUPS
#define SPARE_FDS 40

/* Runs in its own process (Check's fork mode): RLIMIT_NOFILE is lowered
 * to SPARE_FDS above what is open, so the groups' fds meet it. */
START_TEST(fd_budget)
{
	static const int busy[] = { 0, -1 };
	struct rlimit rl;
	int i, n, r = 0, fds;

	make_tree(NBUDGET, busy);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)(count_fds() + SPARE_FDS);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (n = 0; n < NBUDGET; n++) {
		fds = count_fds();
		r = open_group(n);
		if (r == 0) {
			r = mr_group_set_margin(g[n], MARGIN, 0, 0);
			if (r < 0) {
				ck_assert_int_eq(mr_group_close(g[n]), 0);
				g[n] = NULL;
			}
		}
		if (r < 0)
			break;
	}
	/* Refused before the fds ran out, with nothing left open. */
	ck_assert_int_eq(r, -EMFILE);
	ck_assert_int_lt(n, NBUDGET);
	ck_assert_int_ge(n, 2);
	ck_assert_int_eq(count_fds(), fds);
	ck_assert_ptr_nonnull(strstr(logbuf, "refused"));
	ck_assert_ptr_nonnull(strstr(logbuf, "RLIMIT_NOFILE"));

	/* The groups open are served: the busy one reclaimed, every one
	 * registered. */
	drain_rounds();
	ck_assert_uint_ge(margin_calls(0), 1);
	for (i = 0; i < n; i++)
		ck_assert_msg(registered(i), "g%d not registered", i);
	ck_assert_ptr_null(strstr(logbuf, "Too many open files"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup1-scale");
	TCase *tc = tcase_create("worker");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	/* safety_net_while_busy waits for the net, 1 s at least. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, registration_after_service);
	tcase_add_test(tc, registration_dropped);
	tcase_add_test(tc, margin_fds);
	tcase_add_test(tc, safety_net_while_busy);
	tcase_add_test(tc, fd_budget);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* fd_budget lowers RLIMIT_NOFILE for its own process alone. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
