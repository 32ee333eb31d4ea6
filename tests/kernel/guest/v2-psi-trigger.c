/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A PSI trigger on a group's memory.pressure fires under memory.high
 * pressure: a child touches an anonymous working set twice memory.high,
 * with no swap for the group, so the kernel can only throttle it (a
 * memory stall). The trigger is written with a terminating newline (the
 * kernel overwrites the last byte of the write); its window is a multiple
 * of 2 s, as an unprivileged caller's must be.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define GROUP "mr-psi"
#define HIGH (32 * MiB)
#define WORKING_SET (2 * HIGH)
#define TRIGGER "some 150000 2000000\n"
#define WAIT_MS 60000

/* The child: joins the group and touches its working set until killed. */
static void __attribute__((noreturn)) hog(void)
{
	volatile char *p;
	size_t i;

	if (cg_enter(GROUP) < 0)
		_exit(2);
	p = mmap(NULL, WORKING_SET, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	for (;;)
		for (i = 0; i < WORKING_SET; i += 4096)
			p[i]++;
}

int main(void)
{
	char path[128], buf[512];
	struct pollfd pfd;
	uint64_t high_events = 0, total = 0;
	double t0;
	pid_t pid;
	int r, fd, status;

	cg_remove(GROUP);
	r = cg_create(GROUP);
	if (!ok(r == 0, "create the group (%s)", strerror(-r)))
		bail("no group");
	ok(cg_write(GROUP, "memory.high", "32M") == 0, "memory.high = 32M");
	ok(cg_write(GROUP, "memory.swap.max", "0") == 0, "memory.swap.max = 0");

	snprintf(path, sizeof(path), CG_ROOT "/" GROUP "/memory.pressure");
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (!ok(fd >= 0, "open memory.pressure read-write"))
		bail("no pressure file");
	r = write(fd, TRIGGER, strlen(TRIGGER));
	if (!ok(r == (int)strlen(TRIGGER), "arm the trigger \"%.*s\" (%s)",
		(int)strlen(TRIGGER) - 1, TRIGGER,
		r < 0 ? strerror(errno) : "ok"))
		bail("no trigger");
	/* As root (CAP_SYS_RESOURCE) any window from 0.5 s to 10 s is
	 * accepted; a 1 s window is what an unprivileged caller cannot have. */
	{
		int fd2 = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		const char *one_s = "some 100000 1000000\n";

		r = fd2 < 0 ? -1 : (int)write(fd2, one_s, strlen(one_s));
		ok(r == (int)strlen(one_s),
		   "as root a 1 s window is accepted too (%s)",
		   r < 0 ? strerror(errno) : "ok");
		if (fd2 >= 0)
			close(fd2);
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	r = poll(&pfd, 1, 0);
	ok(r == 0, "no event before there is pressure");

	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (pid == 0)
		hog();

	t0 = now_s();
	r = poll(&pfd, 1, WAIT_MS);
	ok(r == 1 && (pfd.revents & POLLPRI),
	   "the trigger fires under memory.high pressure (after %.1f s)",
	   now_s() - t0);
	ok(!(pfd.revents & POLLERR), "no POLLERR");

	r = cg_read_key(GROUP, "memory.events", "high", &high_events);
	ok(r == 0 && high_events > 0, "memory.events counts high (%" PRIu64 ")",
	   high_events);
	if (cg_read(GROUP, "memory.pressure", buf, sizeof(buf)) > 0) {
		char *t = strstr(buf, "total=");

		if (t)
			total = strtoull(t + 6, NULL, 10);
		diag("memory.pressure: %s", strtok(buf, "\n"));
	}
	ok(total > 0, "memory.pressure some total grew (%" PRIu64 " us)", total);

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "the child was still running (it was throttled, not failed)");
	close(fd);
	r = cg_remove(GROUP);
	ok(r == 0, "remove the group (%s)", strerror(-r));
	return done_testing();
}
