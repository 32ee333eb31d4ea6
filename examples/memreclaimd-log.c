/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's log (memreclaimd-log.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memreclaim.h>

#include "memreclaimd-log.h"

static bool prefixed;

void mrd_log_init(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	prefixed = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
		   fstat(STDERR_FILENO, &st) == 0 &&
		   (unsigned long long)st.st_dev == dev &&
		   (unsigned long long)st.st_ino == ino;
}

bool mrd_log_prefixed(void)
{
	return prefixed;
}

static void log_line(int level, const char *msg)
{
	char line[4096];
	const char *word = "";
	int n;

	if (level < 0 || level > MR_LOG_DEBUG)
		level = MR_LOG_ERR;
	if (!prefixed && level <= MR_LOG_ERR)
		word = "error: ";
	else if (!prefixed && level == MR_LOG_WARNING)
		word = "warning: ";
	if (prefixed)
		n = snprintf(line, sizeof(line), "<%d>" MRD_PROG ": %s\n",
			     level, msg);
	else
		n = snprintf(line, sizeof(line), MRD_PROG ": %s%s\n", word,
			     msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* One write per line: lines of several threads do not mix. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to say it. */
	}
}

void mrd_log(int level, const char *fmt, ...)
{
	char msg[4000];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_line(level, msg);
}

const char *mrd_log_prefix(char *buf, size_t len, const char *where)
{
	snprintf(buf, len, "%s" MRD_PROG "%s%s", prefixed ? "<3>" : "",
		 where ? ": " : "", where ? where : "");
	return buf;
}

void mrd_log_library(int level, const char *msg, void *userdata)
{
	(void)userdata;
	log_line(level, msg);
}
