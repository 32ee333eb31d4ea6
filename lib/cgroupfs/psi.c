/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memory.pressure: parsing, trigger validation and arming.
 *
 * The file (kernel/sched/psi.c, psi_show()) holds one line per kind:
 *
 *   some avg10=0.12 avg60=0.05 avg300=0.00 total=81234
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=9115
 *
 * averages printed as LOAD_INT.LOAD_FRAC percent (two decimals), total in
 * microseconds. "full" arrived for memory with the file itself (4.20), but
 * a file without it is read as "full absent", not as an error. A kernel
 * without PSI (psi=0, or cgroup.pressure set to 0 since 6.5) fails the
 * read with EOPNOTSUPP; some kernels answer an empty file instead.
 *
 * A trigger is "some|full STALL_US WINDOW_US" written to the opened file
 * (psi_trigger_create(), parsed with sscanf "%u %u"); the fd then polls
 * POLLPRI. /proc/pressure's writer replaces the write's last byte with
 * the terminating NUL (psi_write(): buf[buf_size - 1] = '\0'), and the
 * same text is written to every pressure file, so it ends with a newline
 * that may be lost rather than with the window's last digit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fds.h"
#include "fileops.h"
#include "psi.h"

#define PPM_PER_PERCENT 10000u
#define PPM_MAX 1000000u

/* One key=value token of a some/full line: [s, s + len). */
static bool token_is(const char *s, size_t len, const char *key)
{
	return strlen(key) == len && memcmp(s, key, len) == 0;
}

/* Parses a decimal u64 filling exactly [s, s + len). -EIO, -ERANGE. */
static int parse_u64_span(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int d;
	size_t i;

	if (len == 0)
		return -EIO;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EIO;
		d = (unsigned int)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Parses a percentage "I" or "I.F" filling [s, s + len) into ppm: one
 * percent is 10000 ppm, so four decimals are exact; further decimals are
 * rounded to the nearest ppm, halves up. Above 100 % is -EIO: the kernel
 * caps each sample at its period (calc_avgs()). */
static int parse_percent_ppm(const char *s, size_t len, uint32_t *out)
{
	const char *dot = memchr(s, '.', len);
	size_t int_len = dot ? (size_t)(dot - s) : len;
	uint64_t ppm, whole;
	uint32_t frac = 0, scale = PPM_PER_PERCENT / 10;
	bool round_up = false;
	size_t i;
	int r;

	r = parse_u64_span(s, int_len, &whole);
	if (r < 0)
		return -EIO;
	if (whole > 100)
		return -EIO;
	if (dot) {
		if (int_len + 1 == len)
			return -EIO;
		for (i = int_len + 1; i < len; i++) {
			if (s[i] < '0' || s[i] > '9')
				return -EIO;
			if (scale) {
				frac += (uint32_t)(s[i] - '0') * scale;
				scale /= 10;
			} else if (i == int_len + 5) {
				round_up = s[i] >= '5';
			}
		}
	}
	ppm = whole * PPM_PER_PERCENT + frac + (round_up ? 1 : 0);
	if (ppm > PPM_MAX)
		return -EIO;
	*out = (uint32_t)ppm;
	return 0;
}

enum { K_AVG10 = 1 << 0, K_AVG60 = 1 << 1, K_AVG300 = 1 << 2,
       K_TOTAL = 1 << 3, K_ALL = (1 << 4) - 1 };

/* Parses the tokens after "some"/"full" in [s, end): every known key
 * exactly once; unknown keys skipped. */
static int parse_stat_line(const char *s, const char *end,
			   struct mr_psi_stat *st)
{
	unsigned int seen = 0, bit;
	const char *tok, *eq;
	size_t len;
	uint32_t *ppm;
	int r;

	while (s < end) {
		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		tok = s;
		while (s < end && *s != ' ' && *s != '\t')
			s++;
		eq = memchr(tok, '=', (size_t)(s - tok));
		if (!eq)
			return -EIO;
		len = (size_t)(eq - tok);
		ppm = NULL;
		if (token_is(tok, len, "avg10")) {
			bit = K_AVG10;
			ppm = &st->avg10_ppm;
		} else if (token_is(tok, len, "avg60")) {
			bit = K_AVG60;
			ppm = &st->avg60_ppm;
		} else if (token_is(tok, len, "avg300")) {
			bit = K_AVG300;
			ppm = &st->avg300_ppm;
		} else if (token_is(tok, len, "total")) {
			bit = K_TOTAL;
		} else {
			continue;
		}
		if (seen & bit)
			return -EIO;
		seen |= bit;
		eq++;
		if (ppm)
			r = parse_percent_ppm(eq, (size_t)(s - eq), ppm);
		else
			r = parse_u64_span(eq, (size_t)(s - eq), &st->total_us);
		if (r < 0)
			return -EIO;
	}
	return seen == K_ALL ? 0 : -EIO;
}

int mri_psi_parse(const char *buf, struct mr_pressure *out)
{
	struct mr_pressure p;
	const char *line = buf, *end, *word;
	struct mr_psi_stat *st;
	uint32_t bit;
	bool empty = true;
	int r;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	while (*line) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		word = line;
		while (word < end && (*word == ' ' || *word == '\t'))
			word++;
		if (word < end)
			empty = false;
		st = NULL;
		if (end - word >= 5 && memcmp(word, "some", 4) == 0 &&
		    (word[4] == ' ' || word[4] == '\t')) {
			st = &p.some;
			bit = MR_PRESSURE_SOME;
		} else if (end - word >= 5 && memcmp(word, "full", 4) == 0 &&
			   (word[4] == ' ' || word[4] == '\t')) {
			st = &p.full;
			bit = MR_PRESSURE_FULL;
		} else if (token_is(word, (size_t)(end - word), "some") ||
			   token_is(word, (size_t)(end - word), "full")) {
			return -EIO;
		}
		if (st) {
			if (p.present & bit)
				return -EIO;
			r = parse_stat_line(word + 4, end, st);
			if (r < 0)
				return r;
			p.present |= bit;
		}
		line = *end ? end + 1 : end;
	}
	if (empty)
		return -EOPNOTSUPP;
	/* Text without a some line is not a pressure file: every kernel
	 * with PSI prints it first. */
	if (!(p.present & MR_PRESSURE_SOME))
		return -EIO;
	*out = p;
	return 0;
}

int mri_psi_read(int fd, struct mr_pressure *out)
{
	/* Two lines of at most ~80 bytes; room for keys a later kernel
	 * adds. */
	char buf[1024];
	ssize_t n;

	n = mri_read_fd(fd, buf, sizeof(buf));
	if (n == -ENODEV || n == -ENOENT)
		return -ENOENT;
	if (n < 0)
		return (int)n;
	return mri_psi_parse(buf, out);
}

int mri_psi_trigger_open(int dirfd, const char *name, int kind,
			 uint64_t stall_us, uint64_t window_us)
{
	char text[64];
	int fd, r;

	if (kind != MR_PSI_SOME && kind != MR_PSI_FULL)
		return -EINVAL;
	snprintf(text, sizeof(text), "%s %" PRIu64 " %" PRIu64 "\n",
		 kind == MR_PSI_SOME ? "some" : "full", stall_us, window_us);
	fd = mri_openat(dirfd, name, O_RDWR | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd == -ENODEV || fd == -ENOENT)
		return -ENOENT;
	if (fd < 0)
		return fd;
	r = mri_write_fd(fd, text);
	if (r < 0) {
		mri_close(fd);
		return r == -ENODEV ? -ENOENT : r;
	}
	mri_fd_give(fd); /* the caller's, kept by a child like its others */
	return fd;
}
