/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Debian's Apache, privately configured, for bench-httpd (httpd-server.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "httpd-server.h"

#define PROG "bench-httpd"
#define MODULES "/usr/lib/apache2/modules"
/* Debian's /etc/apache2/envvars: APACHE_PID_FILE. */
#define DISTRO_PID_FILE "/run/apache2/apache2.pid"
#define START_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS 10000

/* How the distribution's instance was stopped, to start it again the
 * same way; NULL: it was not running, or the bench's install started
 * it. */
static const char *const *distro_restart;

/* Runs argv (a PATH search), apt-get's frontend noninteractive, its
 * output on stderr (stdout is the bench's results); its exit status, or
 * -1 when it did not exit. */
static int run(const char *const *argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		setenv("DEBIAN_FRONTEND", "noninteractive", 1);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, PROG ": running %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The pid in Debian's pid file when that process lives, else 0. */
static pid_t distro_pid(void)
{
	FILE *f = fopen(DISTRO_PID_FILE, "re");
	long pid = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1 || pid <= 0 || kill((pid_t)pid, 0))
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

static bool have_systemd(void)
{
	return access("/run/systemd/system", F_OK) == 0;
}

static bool distro_running(void)
{
	static const char *const is_active[] = { "systemctl", "is-active",
		"--quiet", "apache2", NULL };

	if (have_systemd() && run(is_active) == 0)
		return true;
	return distro_pid() != 0;
}

/* Stops the distribution's instance and waits until it is gone. */
static int stop_distro(const char *const **restart)
{
	static const char *const sd_stop[] = { "systemctl", "stop", "apache2",
		NULL };
	static const char *const sd_start[] = { "systemctl", "start",
		"apache2", NULL };
	static const char *const ctl_stop[] = { "apache2ctl", "stop", NULL };
	static const char *const ctl_start[] = { "apache2ctl", "start", NULL };
	int waited = 0;

	fprintf(stderr, PROG ": stopping the distribution's apache2\n");
	if (have_systemd() && run(sd_stop) == 0) {
		*restart = sd_start;
	} else {
		run(ctl_stop);
		*restart = ctl_start;
	}
	while (distro_running() && (waited += 100) < STOP_TIMEOUT_MS)
		bench_sleep_ms(100);
	if (distro_running()) {
		fprintf(stderr, PROG ": the distribution's apache2 still "
			"runs\n");
		return -1;
	}
	return 0;
}

int httpd_server_prepare(void)
{
	static const char *const update[] = { "apt-get", "update", NULL };
	static const char *const install[] = { "apt-get", "install", "-y",
		"--no-install-recommends", "apache2", NULL };
	const char *const *restart = NULL;
	bool ran_before = false;

	if (access(HTTPD_APACHE, X_OK)) {
		fprintf(stderr, PROG ": installing apache2\n");
		if (run(update) != 0 || run(install) != 0 ||
		    access(HTTPD_APACHE, X_OK)) {
			fprintf(stderr, PROG ": apt-get could not install "
				"apache2\n");
			return -1;
		}
	} else {
		ran_before = distro_running();
	}
	if (distro_running() && stop_distro(&restart))
		return -1;
	distro_restart = ran_before ? restart : NULL;
	return 0;
}

void httpd_server_restore_distro(void)
{
	if (!distro_restart)
		return;
	fprintf(stderr, PROG ": starting the distribution's apache2 again\n");
	if (run(distro_restart) != 0)
		fprintf(stderr, PROG ": could not start the distribution's "
			"apache2 again\n");
	distro_restart = NULL;
}

/* A port of 127.0.0.1 free now; 0 when none could be had. */
static uint16_t free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	uint16_t port = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static bool accepts(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd >= 0)
		close(fd);
	return ok;
}

static int write_config(const char *path, const char *dir,
			const char *docroot, uint16_t port)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fprintf(f,
		"# bench-httpd's private Apache: nothing of /etc/apache2.\n"
		"ServerRoot \"%s\"\n"
		"DefaultRuntimeDir \"%s\"\n"
		"PidFile \"%s/apache2.pid\"\n"
		"Mutex file:%s default\n"
		"ErrorLog \"%s/error.log\"\n"
		"LogLevel warn\n"
		"LoadModule mpm_event_module " MODULES "/mod_mpm_event.so\n"
		"LoadModule authz_core_module " MODULES "/mod_authz_core.so\n"
		"User www-data\n"
		"Group www-data\n"
		"Listen 127.0.0.1:%u\n"
		"ServerName 127.0.0.1\n"
		"# One child process of %d threads.\n"
		"StartServers 1\n"
		"ServerLimit 1\n"
		"ThreadLimit %d\n"
		"ThreadsPerChild %d\n"
		"MaxRequestWorkers %d\n"
		"MinSpareThreads 1\n"
		"MaxSpareThreads %d\n"
		"MaxConnectionsPerChild 0\n"
		"KeepAlive On\n"
		"MaxKeepAliveRequests 0\n"
		"KeepAliveTimeout 5\n"
		"EnableSendfile On\n"
		"DocumentRoot \"%s\"\n"
		"<Directory />\n"
		"\tRequire all denied\n"
		"\tAllowOverride None\n"
		"</Directory>\n"
		"<Directory \"%s\">\n"
		"\tRequire all granted\n"
		"</Directory>\n",
		dir, dir, dir, dir, dir, (unsigned)port, HTTPD_THREADS,
		HTTPD_THREADS, HTTPD_THREADS, HTTPD_THREADS, HTTPD_THREADS,
		docroot, docroot);
	return fclose(f) ? -1 : 0;
}

static void print_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  %s", line);
	fclose(f);
}

/* Waits up to ms for pid; true when it was reaped. */
static bool reap(pid_t pid, long ms)
{
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return true;
		if (ms <= 0)
			return false;
		bench_sleep_ms(10);
		ms -= 10;
	}
}

int httpd_server_start(struct httpd_server *s, const char *dir,
		       const char *docroot, const struct httpd_group *g)
{
	char conf[PATH_MAX + 32], console[PATH_MAX + 32];
	int waited = 0, fd;

	s->pid = 0;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	snprintf(conf, sizeof(conf), "%s/httpd.conf", dir);
	snprintf(console, sizeof(console), "%s/console.log", dir);
	s->port = free_port();
	if (!s->port || write_config(conf, dir, docroot, s->port)) {
		fprintf(stderr, PROG ": no free port or no configuration in "
			"%s: %s\n", dir, strerror(errno));
		return -1;
	}
	s->pid = fork();
	if (s->pid < 0) {
		s->pid = 0;
		return -1;
	}
	if (s->pid == 0) {
		/* Apache leaves with the bench, should the bench die. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		fd = open(console, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
		    dup2(fd, STDERR_FILENO) < 0 ||
		    httpd_group_enter_server(g))
			_exit(126);
		execl(HTTPD_APACHE, HTTPD_APACHE, "-f", conf, "-DFOREGROUND",
		      (char *)NULL);
		fprintf(stderr, PROG ": running " HTTPD_APACHE ": %s\n",
			strerror(errno));
		_exit(127);
	}
	while (!accepts(s->port)) {
		if (reap(s->pid, 0) || (waited += 50) >= START_TIMEOUT_MS) {
			fprintf(stderr, PROG ": apache2 did not start; its "
				"output and error log:\n");
			httpd_server_stop(s, NULL);
			print_file(console);
			snprintf(conf, sizeof(conf), "%s/error.log", dir);
			print_file(conf);
			return -1;
		}
		bench_sleep_ms(50);
	}
	return 0;
}

static void copy_file(const char *from, const char *to)
{
	char buf[8192];
	FILE *in = fopen(from, "re"), *out;
	size_t n;

	if (!in)
		return;
	out = fopen(to, "we");
	while (out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (out)
		fclose(out);
	fclose(in);
}

void httpd_server_stop(struct httpd_server *s, const char *keep_log)
{
	char log[PATH_MAX + 32];

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		if (!reap(s->pid, STOP_TIMEOUT_MS)) {
			kill(s->pid, SIGKILL);
			reap(s->pid, STOP_TIMEOUT_MS);
		}
		s->pid = 0;
	}
	if (keep_log) {
		snprintf(log, sizeof(log), "%s/error.log", s->dir);
		copy_file(log, keep_log);
	}
}
