/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd under systemd's protocols, with no cgroup (a configuration
 * without [group] sections): a test NOTIFY_SOCKET listener receives
 * READY=1 once it runs, WATCHDOG=1 at half of WATCHDOG_USEC, RELOADING=1
 * then READY=1 around a reload (also a refused one), STOPPING=1 at
 * SIGTERM; with JOURNAL_STREAM naming its stderr, every log line starts
 * with its syslog priority ("<3>" for the refused reload); a reload that
 * changes the worker's class restarts the worker with it.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemonproc.h"

#define WAIT_MS 15000

static struct daemonproc d;
static char dir[64], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char conf[256];
static int fd = -1;

static void put_conf(const char *text)
{
	FILE *f = fopen(conf, "we");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(dir, sizeof(dir), "/tmp/memreclaimd-notify-%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(sock, sizeof(sock), "%s/notify", dir);
	snprintf(conf, sizeof(conf), "%s/m.conf", dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	strcpy(sa.sun_path, sock);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	d.pid = 0;
}

static void teardown(void)
{
	char cmd[256];

	if (d.pid > 0 && kill(d.pid, 0) == 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* The next notification, pumping the daemon's output meanwhile. */
static const char *next_message(void)
{
	static char buf[4096];
	unsigned long long end = dp_mono_ms() + WAIT_MS;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, 0) == 1) {
			n = recv(fd, buf, sizeof(buf) - 1, 0);
			ck_assert_int_gt(n, 0);
			buf[n] = '\0';
			return buf;
		}
		ck_assert_msg(dp_mono_ms() < end, "no notification; stderr:\n%s",
			      dp_tail(d.ebuf));
		dp_wait_for(&d, 20, false, 0, NULL);
	}
}

/* Waits for a notification holding the line `want`, and returns it;
 * WATCHDOG=1 pings met on the way are counted in *pings. */
static const char *expect(const char *want, int *pings)
{
	const char *m;

	for (;;) {
		m = next_message();
		if (strstr(m, want))
			return m;
		if (strcmp(m, "WATCHDOG=1") == 0) {
			if (pings)
				(*pings)++;
			continue;
		}
		ck_abort_msg("'%s' while waiting for '%s'", m, want);
	}
}

START_TEST(notify_ready_watchdog_reload_stopping)
{
	char env_notify[sizeof(sock) + 16], env_state[192];
	char prog[] = "memreclaimd", opt[] = "--config";
	char *argv[] = { prog, opt, conf, NULL };
	char wd[] = "WATCHDOG_USEC=200000";
	char *env[] = { env_notify, wd, env_state, NULL };
	const char *m, *line;
	int pings = 0, status;

	put_conf("[daemon]\nstats-interval = 0\n");
	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", sock);
	snprintf(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s/state",
		 dir);
	d.journal = true;
	dp_start(&d, argv, env);
	m = expect("READY=1", &pings);
	ck_assert_msg(strstr(m, "STATUS=keeping the margin of 0 groups"),
		      "%s", m);
	/* The watchdog at 100 ms: pings keep coming while it runs. */
	while (pings < 3)
		expect("WATCHDOG=1", NULL), pings++;

	/* A reload: RELOADING=1, then READY=1. */
	put_conf("[daemon]\nstats-interval = 5\n");
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	expect("RELOADING=1", NULL);
	expect("READY=1", NULL);
	/* A refused one says so too, at error priority. */
	put_conf("[daemon]\nstats-interval = later\n");
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	expect("RELOADING=1", NULL);
	expect("READY=1", NULL);
	ck_assert_msg(dp_wait_for(&d, WAIT_MS, true, 0,
				  "<3>memreclaimd: reload refused"), "%s",
		      dp_tail(d.ebuf));
	ck_assert_ptr_nonnull(strstr(d.ebuf, "<3>memreclaimd: "));
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	expect("STOPPING=1", NULL);
	status = dp_exit(&d);
	d.pid = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "wait status %#x", status);
	/* Every line of the log carries its priority. */
	for (line = d.ebuf; *line; line = strchr(line, '\n') + 1) {
		ck_assert_msg(line[0] == '<' && line[1] >= '0' &&
			      line[1] <= '7' && line[2] == '>', "%s", line);
		if (!strchr(line, '\n'))
			break;
	}
	ck_assert_ptr_nonnull(strstr(d.ebuf, "<5>memreclaimd: reloaded "));
	ck_assert_ptr_nonnull(strstr(d.ebuf, "<5>memreclaimd: Terminated, "
				     "stopping"));
}
END_TEST

/* Without JOURNAL_STREAM (or with one naming another file), the lines
 * name errors and warnings in words. */
START_TEST(no_priorities_off_the_journal)
{
	char prog[] = "memreclaimd", opt[] = "--config", check[] = "--check-config";
	char *argv[] = { prog, opt, conf, check, NULL };
	char other[] = "JOURNAL_STREAM=1:1";
	char *env[] = { other, NULL };
	int status;

	put_conf("[daemon]\nbogus = 1\n");
	d.journal = false;
	dp_start(&d, argv, env);
	status = dp_exit(&d);
	d.pid = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2,
		      "wait status %#x", status);
	ck_assert_msg(strstr(d.ebuf, "memreclaimd: error: ") == d.ebuf &&
		      strstr(d.ebuf, "m.conf:2: [daemon] has no key 'bogus'"),
		      "%s", dp_tail(d.ebuf));
}
END_TEST

/* The scheduling policy and nice level of memreclaimd's worker thread
 * (comm "memreclaim"), from /proc/PID/task/TID/stat; false while it has
 * none. */
static bool worker_sched(pid_t pid, int *policy, int *nice)
{
	char path[320], buf[1024], *p;
	struct dirent *e;
	bool found = false;
	FILE *f;
	DIR *dp;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dp = opendir(path);
	ck_assert_ptr_nonnull(dp);
	while (!found && (e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid,
			 e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) &&
		    strstr(buf, "(memreclaim) ") &&
		    (p = strrchr(buf, ')'))) {
			/* v[i] is field i + 3 of proc(5)'s stat (the
			 * 3rd, state, follows the name): nice is the 19th,
			 * policy the 41st. */
			int i;
			long v[40];

			for (i = 0; i < 39 && p; i++) {
				p = strchr(p + 1, ' ');
				if (p && i >= 1)
					v[i] = strtol(p + 1, NULL, 10);
			}
			if (p) {
				*nice = (int)v[16];
				*policy = (int)v[38];
				found = true;
			}
		}
		fclose(f);
	}
	closedir(dp);
	return found;
}

/* The worker's class is the daemon's setting: taken at start, and a
 * reload that changes it restarts the worker with the new one. */
START_TEST(reload_changes_the_worker_class)
{
	char prog[] = "memreclaimd", opt[] = "--config";
	char *argv[] = { prog, opt, conf, NULL };
	char env_notify[sizeof(sock) + 16], env_state[192];
	char *env[] = { env_notify, env_state, NULL };
	int policy = -1, nice = -100, status;
	unsigned long long end;

	put_conf("[daemon]\nstats-interval = 0\nworker-sched = nice:5\n");
	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", sock);
	snprintf(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s/state",
		 dir);
	d.journal = false;
	dp_start(&d, argv, env);
	expect("READY=1", NULL);
	ck_assert_msg(worker_sched(d.pid, &policy, &nice), "no worker thread");
	ck_assert_int_eq(policy, SCHED_OTHER);
	ck_assert_int_eq(nice, 5);
	put_conf("[daemon]\nstats-interval = 0\nworker-sched = idle\n");
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	expect("RELOADING=1", NULL);
	expect("READY=1", NULL);
	/* The new worker takes its class as it starts. */
	end = dp_mono_ms() + WAIT_MS;
	while (!worker_sched(d.pid, &policy, &nice) || policy != SCHED_IDLE) {
		ck_assert_msg(dp_mono_ms() < end, "worker policy %d, nice %d",
			      policy, nice);
		dp_wait_for(&d, 20, false, 0, NULL);
	}
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	status = dp_exit(&d);
	d.pid = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "wait status %#x", status);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memreclaimd-notify");
	TCase *tc = tcase_create("notify");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, notify_ready_watchdog_reload_stopping);
	tcase_add_test(tc, no_priorities_off_the_journal);
	tcase_add_test(tc, reload_changes_the_worker_class);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
