/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Programs that manage their own group, on a real cgroup2 (Debian's 6.1):
 *
 *  - mr_cgroup_create/attach on cgroup2 keep the "no internal processes"
 *    rule in both directions: a parent holding a process gets no child
 *    (-EBUSY, nothing created, +memory not enabled) unless the caller named
 *    a leaf for its processes, and a group that enables memory for its
 *    children takes no process;
 *  - examples/selfmanage (its own source, linked in with its main renamed)
 *    run by the test inside a group the test created: it finds the group
 *    as its own, prints it as cgroup2 with its binding limit, arms a PSI
 *    trigger, and shrinks its pool under pressure before any OOM kill.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "memreclaim.h"

int selfmanage_main(int argc, char **argv);

#define PARENT "mr-deleg"
#define SM_GROUP "mr-selfmanage"

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

/* Runs selfmanage in SM_GROUP until it reports pressure (then SIGTERM),
 * its output into out. Returns its wait status, or -1. */
static int run_selfmanage(char *out, size_t size, int *pressured)
{
	char file[PATH_MAX], *p;
	int go[2], res[2], status;
	double end;
	size_t len = 0;
	struct pollfd pfd;
	ssize_t n;
	pid_t pid;
	char c;

	snprintf(file, sizeof(file), "%s/selfmanage.data", scratch_dir());
	if (pipe(go) < 0 || pipe(res) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static const char *const args[] = {
			"selfmanage", "--file", NULL, "--file-size", "80M",
			"--pool", "64M", "--margin", "4M", "--duration", "90",
		};
		char *argv[12];
		size_t i;

		for (i = 0; i < 11; i++)
			argv[i] = strdup(args[i] ? args[i] : file);
		argv[11] = NULL;

		close(go[1]);
		close(res[0]);
		if (read(go[0], &c, 1) != 1 || dup2(res[1], 1) < 0 ||
		    dup2(res[1], 2) < 0)
			_exit(2);
		_exit(selfmanage_main(11, argv));
	}
	close(go[0]);
	close(res[1]);
	ok(mr_cgroup_attach(ctx, CG_ROOT "/" SM_GROUP, pid) == 0,
	   "attach selfmanage's process");
	if (write(go[1], "g", 1) != 1)
		return -1;
	close(go[1]);
	*pressured = 0;
	end = now_s() + 100;
	while (len < size - 1 && now_s() < end) {
		pfd = (struct pollfd){ .fd = res[0], .events = POLLIN };
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = read(res[0], out + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		out[len] = '\0';
		for (p = strstr(out, "pressure events "); p && !*pressured;
		     p = strstr(p + 16, "pressure events "))
			*pressured = strtoul(p + 16, NULL, 10) > 0;
		if (*pressured)
			kill(pid, SIGTERM);
	}
	kill(pid, SIGTERM);
	while (read(res[0], out + len, size - 1 - len) > 0)
		;
	close(res[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	unlink(file);
	return status;
}

static void selfmanage(void)
{
	static char out[65536];
	char want[256];
	uint64_t kills = 1;
	int status, pressured, r;

	cg_remove(SM_GROUP);
	r = mr_cgroup_create(ctx, CG_ROOT "/" SM_GROUP, 48 * MiB);
	if (!ok(r == 0, "create " SM_GROUP " (%s)", mr_strerror(r)))
		return;
	status = run_selfmanage(out, sizeof(out), &pressured);
	diag("selfmanage said:\n%s", out);
	ok(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "selfmanage exited 0 (status %#x)", status);
	ok(strstr(out, "backend cgroup2, group " CG_ROOT "/" SM_GROUP "\n")
	   != NULL, "it found the group as its own, on cgroup2");
	snprintf(want, sizeof(want), "binding limit %llu bytes, set by "
		 CG_ROOT "/" SM_GROUP " (the group itself)",
		 (unsigned long long)(48 * MiB));
	ok(strstr(out, want) != NULL, "it names the binding group");
	ok(strstr(out, "pressure: PSI trigger") != NULL,
	   "it armed a PSI trigger");
	ok(pressured, "it reported pressure and shrank its pool");
	cg_read_key(SM_GROUP, "memory.events", "oom_kill", &kills);
	ok(kills == 0, "no OOM kill (%llu)", (unsigned long long)kills);
	ok(mr_cgroup_remove(ctx, CG_ROOT "/" SM_GROUP) == 0, "remove it");
}

int main(void)
{
	if (mr_ctx_new(&ctx) < 0)
		bail("mr_ctx_new");
	no_internal_processes();
	selfmanage();
	mr_ctx_free(ctx);
	return done_testing();
}
