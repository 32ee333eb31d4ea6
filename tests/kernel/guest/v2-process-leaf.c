/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Groups for programs that manage their own, on a real cgroup2 (Debian's
 * 6.1): mr_cgroup_create/attach keep the "no internal processes" rule in
 * both directions: a parent holding a process gets no child (-EBUSY,
 * nothing created, +memory not enabled) unless the caller named a leaf
 * for its processes, and a group that enables memory for its children
 * takes no process. (examples/selfmanage itself, the ordinary build, runs
 * in tests/kernel/host/examples-selfmanage.)
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "memreclaim.h"

#define PARENT "mr-deleg"

static mr_ctx_t *ctx;

/* A child that sleeps until killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int exists(const char *group)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CG_ROOT "/%s", group);
	return access(path, F_OK) == 0;
}

static void no_internal_processes(void)
{
	char buf[256];
	pid_t pid;
	int r;

	cg_remove(PARENT "/leaf");
	cg_remove(PARENT "/child");
	cg_remove(PARENT);
	r = mr_cgroup_create(ctx, CG_ROOT "/" PARENT, MR_UNLIMITED);
	if (!ok(r == 0, "create " PARENT " (%s)", mr_strerror(r)))
		return;
	pid = sleeper();
	r = mr_cgroup_attach(ctx, CG_ROOT "/" PARENT, pid);
	ok(r == 0, "attach a process the test started (%s)", mr_strerror(r));

	r = mr_cgroup_create(ctx, CG_ROOT "/" PARENT "/child", 64 * MiB);
	ok(r == -EBUSY, "a child of a populated group: %s", mr_strerror(r));
	ok(!exists(PARENT "/child"), "nothing created");
	cg_read(PARENT, "cgroup.subtree_control", buf, sizeof(buf));
	ok(strstr(buf, "memory") == NULL, "+memory not enabled (\"%s\")",
	   strtok(buf, "\n") ? buf : "");

	ok(mr_ctx_set_process_leaf(ctx, "leaf") == 0, "name a leaf");
	r = mr_cgroup_create(ctx, CG_ROOT "/" PARENT "/child", 64 * MiB);
	ok(r == 0, "with the leaf named: created (%s)", mr_strerror(r));
	cg_read(PARENT "/leaf", "cgroup.procs", buf, sizeof(buf));
	ok(atoi(buf) == pid, "the process moved into the leaf (%s)",
	   strtok(buf, "\n") ? buf : "");
	cg_read(PARENT, "cgroup.procs", buf, sizeof(buf));
	ok(buf[0] == '\0', "the parent holds no process");
	mr_ctx_set_process_leaf(ctx, NULL);

	r = mr_cgroup_attach(ctx, CG_ROOT "/" PARENT, pid);
	ok(r == -EBUSY, "no process joins a group that enables memory "
	   "for its children: %s", mr_strerror(r));
	cg_read(PARENT "/leaf", "cgroup.procs", buf, sizeof(buf));
	ok(atoi(buf) == pid, "the process stayed in the leaf");

	r = mr_cgroup_remove(ctx, CG_ROOT "/" PARENT "/leaf");
	ok(r == -EBUSY, "a populated group is not removed: %s",
	   mr_strerror(r));
	reap(pid);
	ok(mr_cgroup_remove(ctx, CG_ROOT "/" PARENT "/child") == 0,
	   "remove the child");
	cg_remove(PARENT "/leaf");
	cg_remove(PARENT);
}

int main(void)
{
	if (mr_ctx_new(&ctx) < 0)
		bail("mr_ctx_new");
	no_internal_processes();
	mr_ctx_free(ctx);
	return done_testing();
}
