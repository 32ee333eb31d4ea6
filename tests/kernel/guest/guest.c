/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The guest tests' harness and cgroup v2 helpers (guest.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

static int checks, failures;

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	char prefix[48];

	checks++;
	if (!cond)
		failures++;
	snprintf(prefix, sizeof(prefix), "%sok %d - ", cond ? "" : "not ",
		 checks);
	va_start(ap, fmt);
	vline(prefix, fmt, ap);
	va_end(ap);
	return cond;
}

void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("# ", fmt, ap);
	va_end(ap);
}

static void tally(void)
{
	printf("1..%d\n%d passed, %d failed\n", checks, checks - failures,
	       failures);
	fflush(stdout);
}

void bail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("Bail out! ", fmt, ap);
	va_end(ap);
	failures++;
	tally();
	exit(1);
}

int done_testing(void)
{
	tally();
	return failures == 0 && checks > 0 ? 0 : 1;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *scratch_dir(void)
{
	const char *d = getenv("MR_SCRATCH");

	return d && *d ? d : "/mnt/scratch";
}

int file_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	err = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return err;
}

ssize_t file_read_str(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

static void cg_path(char *out, size_t size, const char *group,
		    const char *file)
{
	int n = snprintf(out, size, "%s%s%s%s%s", CG_ROOT, *group ? "/" : "",
			 group, file ? "/" : "", file ? file : "");

	if (n < 0 || (size_t)n >= size)
		bail("path too long: %s/%s", group, file ? file : "");
}

int cg_create(const char *group)
{
	char p[PATH_MAX];

	cg_path(p, sizeof(p), group, NULL);
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

int cg_write(const char *group, const char *file, const char *s)
{
	char p[PATH_MAX];

	cg_path(p, sizeof(p), group, file);
	return file_write_str(p, s);
}

ssize_t cg_read(const char *group, const char *file, char *buf, size_t size)
{
	char p[PATH_MAX];

	cg_path(p, sizeof(p), group, file);
	return file_read_str(p, buf, size);
}

int cg_read_u64(const char *group, const char *file, uint64_t *v)
{
	char buf[64], *end;
	ssize_t n = cg_read(group, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (strncmp(buf, "max", 3) == 0) {
		*v = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

int cg_read_key(const char *group, const char *file, const char *key,
		uint64_t *v)
{
	char buf[16384], *line, *save = NULL;
	size_t klen = strlen(key);
	ssize_t n = cg_read(group, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			*v = strtoull(line + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

int cg_enter(const char *group)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return cg_write(group, "cgroup.procs", pid);
}

int cg_remove(const char *group)
{
	char p[PATH_MAX];
	int i;

	cg_path(p, sizeof(p), group, NULL);
	cg_write(group, "cgroup.kill", "1");
	/* Killed tasks leave the group once they have exited: a moment. */
	for (i = 0; i < 200; i++) {
		if (rmdir(p) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(50 * 1000);
	}
	return -EBUSY;
}

int file_fill(const char *path, uint64_t size)
{
	static char chunk[1 << 20];
	uint64_t done = 0;
	size_t i;
	int fd, err = 0;

	for (i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 131 + 7);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < size) {
		size_t len = size - done < sizeof(chunk) ? size - done
							 : sizeof(chunk);
		ssize_t n = write(fd, chunk, len);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += n;
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}
