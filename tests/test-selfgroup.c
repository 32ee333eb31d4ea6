/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding a process's own memory cgroup from /proc/PID/cgroup and
 * /proc/PID/mountinfo pairs: hosts, containers with and without a cgroup
 * namespace, nested containers, bind-mounted subtrees, paths with colons
 * and escapes, paths outside the namespace, malformed lines; and
 * mr_group_open_pid() on a child of the test.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memreclaim.h"
#include "selfgroup.h"

/* The mount lines the cases combine (fields 1-3 do not matter here). */
#define M_V1_MEMORY \
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
#define M_V1_CPU \
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
#define M_V1_CPUSET \
	"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
#define M_V2_UNIFIED \
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
#define M_V2_ROOT \
	"30 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
#define M_EXT4 "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"

struct self_case {
	const char *name;
	const char *cgroup;
	const char *mountinfo;
	int ret;                /* expected return */
	const char *dir;        /* expected directory when ret is 0 */
	int version;
	unsigned bad_line;      /* expected when ret is -EIO */
};

static const struct self_case cases[] = {
	{ "this machine: v1 memory beside a hybrid cgroup2",
	  "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/a263\n"
	  "3:cpuset:/\n1:cpu:/\n0::/\n",
	  M_EXT4 M_V1_CPU M_V1_CPUSET M_V1_MEMORY M_V2_UNIFIED,
	  0, "/sys/fs/cgroup/memory/process_api/a263", 1, 0 },
	{ "v2-only host, a systemd session",
	  "0::/user.slice/user-1000.slice/session-3.scope\n",
	  M_EXT4 M_V2_ROOT,
	  0, "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope", 2,
	  0 },
	{ "hybrid host with memory on cgroup2 (v1 memory not mounted)",
	  "3:cpuset:/\n1:cpu:/\n0::/app.slice/db.service\n",
	  M_V1_CPU M_V1_CPUSET
	  "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
	  0, "/sys/fs/cgroup/unified/app.slice/db.service", 2, 0 },
	{ "a v1 memory line whose hierarchy is not mounted here",
	  "4:memory:/docker/abc\n0::/\n", M_V1_CPU M_V2_ROOT,
	  0, "/sys/fs/cgroup", 2, 0 },
	{ "container with its own cgroup namespace",
	  "0::/\n", M_V2_ROOT, 0, "/sys/fs/cgroup", 2, 0 },
	{ "container without a namespace: the mount is a bind of its subtree",
	  "0::/docker/0123abcd/sub\n",
	  "700 690 0:27 /docker/0123abcd /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
	  0, "/sys/fs/cgroup/sub", 2, 0 },
	{ "the path equal to the mount's root",
	  "0::/docker/0123abcd\n",
	  "700 690 0:27 /docker/0123abcd /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
	  0, "/sys/fs/cgroup", 2, 0 },
	{ "a root that is a prefix but not a path component",
	  "0::/docker/0123abcdef/x\n",
	  "700 690 0:27 /docker/0123abcd /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
	  -EREMOTE, NULL, 0, 0 },
	{ "nested containers: the longest root wins",
	  "0::/docker/A/inner/B\n",
	  "700 690 0:27 / /host/cgroup rw - cgroup2 cgroup2 rw\n"
	  "701 690 0:27 /docker/A /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
	  "702 690 0:27 /docker /mnt/docker rw - cgroup2 cgroup2 rw\n",
	  0, "/sys/fs/cgroup/inner/B", 2, 0 },
	{ "two mounts of one root: the later line is on top",
	  "0::/a\n",
	  "700 690 0:27 / /first rw - cgroup2 cgroup2 rw\n"
	  "701 690 0:27 / /second rw - cgroup2 cgroup2 rw\n",
	  0, "/second/a", 2, 0 },
	{ "v1: a process moved to a subgroup",
	  "4:memory:/db/workers/w3\n0::/\n", M_V1_MEMORY M_V2_UNIFIED,
	  0, "/sys/fs/cgroup/memory/db/workers/w3", 1, 0 },
	{ "v1: a bind-mounted subtree of the memory hierarchy",
	  "4:memory:/lxc/c1/app\n",
	  "50 40 0:31 /lxc/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
	  0, "/sys/fs/cgroup/memory/app", 1, 0 },
	{ "v1: memory co-mounted with other controllers",
	  "6:hugetlb,memory:/x\n",
	  "50 40 0:31 / /cg/mem rw - cgroup cgroup rw,hugetlb,memory\n",
	  0, "/cg/mem/x", 1, 0 },
	{ "a path with colons is kept whole",
	  "0::/kubepods-burstable-podU.slice:cri-containerd:ID\n", M_V2_ROOT,
	  0, "/sys/fs/cgroup/kubepods-burstable-podU.slice:cri-containerd:ID",
	  2, 0 },
	{ "a path with backslashes is kept verbatim",
	  "0::/system.slice/foo\\x2dbar.service\n", M_V2_ROOT,
	  0, "/sys/fs/cgroup/system.slice/foo\\x2dbar.service", 2, 0 },
	{ "a mount point with an escaped space",
	  "0::/a\n",
	  "700 690 0:27 / /mnt/cg\\040v2 rw - cgroup2 cgroup2 rw\n",
	  0, "/mnt/cg v2/a", 2, 0 },
	{ "a mount root with an escaped space",
	  "0::/my group/b\n",
	  "700 690 0:27 /my\\040group /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
	  0, "/sys/fs/cgroup/b", 2, 0 },
	{ "outside the cgroup namespace",
	  "0::/../../system.slice/other.service\n", M_V2_ROOT,
	  -EREMOTE, NULL, 0, 0 },
	{ "exactly /..", "0::/..\n", M_V2_ROOT, -EREMOTE, NULL, 0, 0 },
	{ "a name that merely begins with two dots is inside",
	  "0::/..hidden\n", M_V2_ROOT, 0, "/sys/fs/cgroup/..hidden", 2, 0 },
	{ "cpu is not cpuset, name=memoryx is not memory",
	  "5:name=memoryx:/n\n3:cpuset:/x\n1:cpu,cpuacct:/y\n0::/z\n",
	  M_V1_CPU M_V1_CPUSET M_V2_ROOT,
	  0, "/sys/fs/cgroup/z", 2, 0 },
	{ "no memory controller anywhere",
	  "1:cpu:/\n", M_V1_CPU, -ENODEV, NULL, 0, 0 },
	{ "a cgroup2 line but no cgroup2 mount",
	  "0::/a\n", M_V1_CPU, -ENODEV, NULL, 0, 0 },
	{ "the last line without a newline",
	  "1:cpu:/\n0::/tail", M_V2_ROOT, 0, "/sys/fs/cgroup/tail", 2, 0 },
	{ "a controller list with a colon-free path is malformed",
	  "1:cpu:/\n4memory/x\n", M_V2_ROOT, -EIO, NULL, 0, 2 },
	{ "a non-numeric hierarchy id",
	  "x:memory:/a\n", M_V1_MEMORY, -EIO, NULL, 0, 1 },
	{ "a relative path",
	  "0::/\n4:memory:a/b\n", M_V1_MEMORY, -EIO, NULL, 0, 2 },
	{ "an empty hierarchy id",
	  ":memory:/a\n", M_V1_MEMORY, -EIO, NULL, 0, 1 },
	{ "a malformed mountinfo line",
	  "0::/a\n", "700 690 0:27 / /x rw cgroup2\n", -EIO, NULL, 0, 0 },
};

static char tmpdir[PATH_MAX];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(find_table)
{
	const struct self_case *c = &cases[_i];
	char cg[PATH_MAX + 16], mi[PATH_MAX + 16];
	struct mri_self_group out;
	unsigned bad = 99;
	int r;

	snprintf(cg, sizeof(cg), "%s/cgroup", tmpdir);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	write_file(cg, c->cgroup);
	write_file(mi, c->mountinfo);
	memset(&out, 0, sizeof(out));
	r = mri_self_group_find(cg, mi, &out, &bad);
	ck_assert_msg(r == c->ret, "%s: returned %d, expected %d", c->name, r,
		      c->ret);
	if (r == 0) {
		ck_assert_msg(strcmp(out.dir, c->dir) == 0,
			      "%s: found %s, expected %s", c->name, out.dir,
			      c->dir);
		ck_assert_msg(out.version == c->version, "%s: version %d",
			      c->name, out.version);
	}
	if (r == -EIO)
		ck_assert_msg(bad == c->bad_line, "%s: bad line %u, expected %u",
			      c->name, bad, c->bad_line);
}
END_TEST

START_TEST(missing_files)
{
	struct mri_self_group out;
	unsigned bad;

	ck_assert_int_eq(mri_self_group_find("/nonexistent/cgroup",
					     "/proc/self/mountinfo", &out,
					     &bad), -ENOENT);
}
END_TEST

/* This process's own group, found on the machine that runs the test: a
 * directory that exists. */
START_TEST(this_process)
{
	struct mri_self_group out;
	unsigned bad;
	int r;

	r = mri_self_group_find("/proc/self/cgroup", "/proc/self/mountinfo",
				&out, &bad);
	if (r == -ENODEV)
		return; /* no memory controller mounted here */
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(access(out.dir, F_OK), 0);
}
END_TEST

static _Atomic pid_t thread_tid;
static atomic_bool thread_done;

/* Tells its id and stays until told to go. */
static void *thread_main(void *arg)
{
	(void)arg;
	atomic_store(&thread_tid, gettid());
	while (!atomic_load(&thread_done))
		usleep(1000);
	return NULL;
}

/* mr_group_open_pid(): a child's group is the caller's (it was forked
 * there), found through /proc/PID/cgroup; a reaped child is -ESRCH; bad
 * arguments are -EINVAL; a thread's id is -ESRCH. */
START_TEST(open_pid)
{
	mr_group_t *self = NULL, *child = NULL, *g = NULL;
	mr_ctx_t *ctx;
	pthread_t th;
	pid_t pid, tid;
	int r;

	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_group_open_pid(NULL, getpid(), &g), -EINVAL);
	ck_assert_int_eq(mr_group_open_pid(ctx, 0, &g), -EINVAL);
	ck_assert_int_eq(mr_group_open_pid(ctx, -1, &g), -EINVAL);
	ck_assert_int_eq(mr_group_open_pid(ctx, getpid(), NULL), -EINVAL);
	ck_assert_ptr_null(g);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	r = mr_group_open_self(ctx, &self);
	if (r == -ENODEV || r == -EACCES || r == -EPERM) {
		/* No memory controller here, or its files are not ours to
		 * open: the pid's answer is the same. */
		ck_assert_int_eq(mr_group_open_pid(ctx, pid, &child), r);
	} else {
		ck_assert_int_eq(r, 0);
		ck_assert_int_eq(mr_group_open_pid(ctx, pid, &child), 0);
		ck_assert_str_eq(mr_group_path(child), mr_group_path(self));
		ck_assert_str_eq(mr_group_backend(child),
				 mr_group_backend(self));
	}
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	/* A thread's id names no process: -ESRCH, where pidfd_open(2)
	 * tells (the kernel said -EINVAL or -ENOENT, this call's
	 * "bad argument" and "group gone"). */
	if (syscall(SYS_pidfd_open, getpid(), 0) >= 0) {
		ck_assert_int_eq(pthread_create(&th, NULL, thread_main, NULL),
				 0);
		while (!(tid = atomic_load(&thread_tid)))
			sched_yield();
		ck_assert_int_eq(mr_group_open_pid(ctx, tid, &g), -ESRCH);
		ck_assert_ptr_null(g);
		atomic_store(&thread_done, true);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
	}
	/* Reaped: its pid names no process (until the kernel gives it to
	 * another, which a test this short does not meet). */
	ck_assert_int_eq(mr_group_open_pid(ctx, pid, &g), -ESRCH);
	ck_assert_ptr_null(g);
	mr_group_close(child);
	mr_group_close(self);
	mr_ctx_free(ctx);
}
END_TEST

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/mr-self-XXXXXX", t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/cgroup", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/mountinfo", tmpdir);
	unlink(p);
	rmdir(tmpdir);
}

int main(void)
{
	Suite *s = suite_create("selfgroup");
	TCase *tc = tcase_create("find");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, find_table, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, missing_files);
	tcase_add_test(tc, this_process);
	suite_add_tcase(s, tc);
	tc = tcase_create("pid");
	tcase_add_test(tc, open_pid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
