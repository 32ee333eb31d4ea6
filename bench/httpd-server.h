/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Debian's Apache for bench-httpd: installed with apt-get when missing,
 * the distribution's own instance stopped, and a private instance run
 * from a private configuration (ServerRoot, PidFile, ErrorLog and mutexes
 * in its own directory; Listen on a free port of 127.0.0.1; mpm_event
 * with one child process of 16 threads; no access log; keep-alive with
 * no request limit; sendfile), started in the server's groups.
 */
#ifndef MEMRECLAIM_BENCH_HTTPD_SERVER_H
#define MEMRECLAIM_BENCH_HTTPD_SERVER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "httpd-group.h"

#define HTTPD_APACHE "/usr/sbin/apache2"
#define HTTPD_THREADS 16

/* Installs apache2 when HTTPD_APACHE is missing and stops the
 * distribution's instance when it runs. 0, or -1 said on stderr. */
int httpd_server_prepare(void);

/* Starts the distribution's instance again if it ran before
 * httpd_server_prepare() stopped it and was not started by the install
 * it made: the bench restores what it changed, and only that. */
void httpd_server_restore_distro(void);

struct httpd_server {
	pid_t pid;             /* Apache's main process; 0: none */
	uint16_t port;         /* on 127.0.0.1 */
	char dir[PATH_MAX];    /* the private ServerRoot */
};

/* Writes the configuration into dir (an existing, empty directory),
 * serving docroot, and runs Apache in the foreground in g's server
 * groups, from its first instruction on; returns once it accepts
 * connections. 0, or -1 said on stderr (with Apache's own messages),
 * with nothing left running. */
int httpd_server_start(struct httpd_server *s, const char *dir,
		       const char *docroot, const struct httpd_group *g);

/* Stops Apache (SIGTERM, then SIGKILL after 10 s) and waits for it; its
 * error log is copied to keep_log unless that is NULL. Does nothing when
 * nothing runs. */
void httpd_server_stop(struct httpd_server *s, const char *keep_log);

#endif
