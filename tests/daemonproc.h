/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd from the build tree as a child of a test, its stdout and
 * stderr collected into buffers while the test waits for what it expects
 * to read there.
 */
#ifndef MEMRECLAIM_TESTS_DAEMONPROC_H
#define MEMRECLAIM_TESTS_DAEMONPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct daemonproc {
	bool journal;        /* set before dp_start(): JOURNAL_STREAM names
				the stderr pipe, as systemd's does */
	pid_t pid;
	int out, err;
	char obuf[1 << 18], ebuf[1 << 18];
	size_t olen, elen;
};

/* $top_builddir/examples/memreclaimd (or ./examples/memreclaimd). */
const char *dp_program(void);

/* Starts memreclaimd with argv (argv[0] included, NULL-terminated) and
 * env ("NAME=value" strings set over the test's environment, NULL-
 * terminated, may be NULL); asserts it. The child dies with the test. */
void dp_start(struct daemonproc *d, char *const argv[], char *const env[]);

/* Collects output for up to ms, or until stdout (on_err false) or stderr
 * (on_err true) holds `until` at or after offset `from`. Returns whether
 * it does (true when until is NULL and the time ran out). */
bool dp_wait_for(struct daemonproc *d, unsigned ms, bool on_err,
		 size_t from, const char *until);

/* Waits up to 10 s for the daemon to exit (asserts it does), collects
 * the rest of its output, prints its stderr on the test's, and returns
 * its wait status. */
int dp_exit(struct daemonproc *d);

/* How many `event` records ("event":"EVENT", with stats-format = json)
 * of the daemon's stdout so far name the group path ("cgroup":"PATH"). */
int dp_count_records(const struct daemonproc *d, const char *event,
		     const char *path);

/* Collects output until stdout holds n `event` records for path
 * (asserts it does within ms). */
void dp_wait_records(struct daemonproc *d, const char *event,
		     const char *path, int n, unsigned ms);

/* The last 1500 bytes of buf (Check's messages are bounded). */
const char *dp_tail(const char *buf);

/* Milliseconds of CLOCK_MONOTONIC. */
unsigned long long dp_mono_ms(void);

/* Sleeps ms. */
void dp_sleep_ms(unsigned ms);

#endif
