/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See daemonproc.h. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemonproc.h"

unsigned long long dp_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 +
	       (unsigned long long)ts.tv_nsec / 1000000;
}

void dp_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *dp_tail(const char *buf)
{
	size_t len = strlen(buf);

	return len > 1500 ? buf + len - 1500 : buf;
}

const char *dp_program(void)
{
	static char prog[PATH_MAX];
	const char *top = getenv("top_builddir");

	snprintf(prog, sizeof(prog), "%s/examples/memreclaimd",
		 top && *top ? top : ".");
	return prog;
}

void dp_start(struct daemonproc *d, char *const argv[], char *const env[])
{
	const char *prog = dp_program();
	static char journal[64];
	int o[2], e[2], i;

	ck_assert_msg(access(prog, X_OK) == 0, "%s: %s", prog,
		      strerror(errno));
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	d->olen = d->elen = 0;
	d->obuf[0] = d->ebuf[0] = '\0';
	if (d->journal) {
		struct stat st;

		ck_assert_int_eq(fstat(e[1], &st), 0);
		snprintf(journal, sizeof(journal), "JOURNAL_STREAM=%llu:%llu",
			 (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
	}
	d->pid = fork();
	ck_assert_int_ge(d->pid, 0);
	if (d->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(o[1], 1) < 0 || dup2(e[1], 2) < 0)
			_exit(126);
		if (d->journal)
			putenv(journal);
		else
			unsetenv("JOURNAL_STREAM");
		for (i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(prog, argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	d->out = o[0];
	d->err = e[0];
}

static void pump_fd(int *fd, char *buf, size_t *len, size_t size)
{
	ssize_t n = read(*fd, buf + *len, size - 1 - *len);

	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	*len += (size_t)n;
	buf[*len] = '\0';
	ck_assert_msg(*len < size - 1, "the daemon wrote more than %zu bytes",
		      size);
}

bool dp_wait_for(struct daemonproc *d, unsigned ms, bool on_err,
		 size_t from, const char *until)
{
	unsigned long long end = dp_mono_ms() + ms;
	const char *buf = on_err ? d->ebuf : d->obuf;
	size_t len;
	struct pollfd p[2];

	for (;;) {
		len = on_err ? d->elen : d->olen;
		if (until && from <= len && strstr(buf + from, until))
			return true;
		if (dp_mono_ms() >= end)
			return !until;
		if (d->out < 0 && d->err < 0) {
			dp_sleep_ms(10);
			continue;
		}
		p[0] = (struct pollfd){ .fd = d->out, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = d->err, .events = POLLIN };
		if (poll(p, 2, 10) <= 0)
			continue;
		if (d->out >= 0 && p[0].revents)
			pump_fd(&d->out, d->obuf, &d->olen, sizeof(d->obuf));
		if (d->err >= 0 && p[1].revents)
			pump_fd(&d->err, d->ebuf, &d->elen, sizeof(d->ebuf));
	}
}

int dp_exit(struct daemonproc *d)
{
	int status = 0, i;
	pid_t r = 0;

	for (i = 0; i < 100 && r == 0; i++) {
		dp_wait_for(d, 100, false, 0, NULL);
		r = waitpid(d->pid, &status, WNOHANG);
	}
	if (r == 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, &status, 0);
		fprintf(stderr, "memreclaimd stderr:\n%s", d->ebuf);
		ck_abort_msg("memreclaimd did not stop");
	}
	ck_assert_int_eq(r, d->pid);
	for (i = 0; i < 50 && (d->out >= 0 || d->err >= 0); i++)
		dp_wait_for(d, 100, false, 0, NULL);
	fprintf(stderr, "memreclaimd stderr:\n%s", d->ebuf);
	return status;
}

int dp_count_records(const struct daemonproc *d, const char *event,
		     const char *path)
{
	char want[PATH_MAX + 32], ev[64];
	const char *line = d->obuf, *nl;
	int n = 0;

	snprintf(want, sizeof(want), "\"cgroup\":\"%s\",", path);
	snprintf(ev, sizeof(ev), "\"event\":\"%s\",", event);
	for (; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		if (memmem(line, (size_t)(nl - line), ev, strlen(ev)) &&
		    memmem(line, (size_t)(nl - line), want, strlen(want)))
			n++;
		if (!*nl)
			break;
	}
	return n;
}

void dp_wait_records(struct daemonproc *d, const char *event,
		     const char *path, int n, unsigned ms)
{
	unsigned long long end = dp_mono_ms() + ms;

	while (dp_count_records(d, event, path) < n) {
		ck_assert_msg(dp_mono_ms() < end,
			      "no %s record for %s; stderr:\n%s", event, path,
			      dp_tail(d->ebuf));
		dp_wait_for(d, 50, false, 0, NULL);
	}
}
