/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file-access table: real syscalls, and the helpers built on it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fds.h"
#include "fileops.h"

static int real_open(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);

	return fd < 0 ? -errno : fd;
}

static int real_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int fd = openat(dirfd, path, flags, mode);

	return fd < 0 ? -errno : fd;
}

static ssize_t real_pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	return n < 0 ? -errno : n;
}

static ssize_t real_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);

	return n < 0 ? -errno : n;
}

static int real_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}

static int real_statfs(const char *path, struct statfs *st)
{
	return statfs(path, st) < 0 ? -errno : 0;
}

static int real_mkdir(const char *path, mode_t mode)
{
	return mkdir(path, mode) < 0 ? -errno : 0;
}

static int real_rmdir(const char *path)
{
	return rmdir(path) < 0 ? -errno : 0;
}

const struct mri_file_ops mri_file_ops_real = {
	.open = real_open,
	.openat = real_openat,
	.pread = real_pread,
	.pwrite = real_pwrite,
	.close = real_close,
	.statfs = real_statfs,
	.mkdir = real_mkdir,
	.rmdir = real_rmdir,
};

const struct mri_file_ops *mri_fops = &mri_file_ops_real;

const struct mri_file_ops *mri_file_ops_set(const struct mri_file_ops *ops)
{
	const struct mri_file_ops *old = mri_fops;

	mri_fops = ops ? ops : &mri_file_ops_real;
	return old;
}

int mri_open(const char *path, int flags, mode_t mode)
{
	mri_fd_begin();
	return mri_fd_end_by(mri_fops->open(path, flags, mode),
			     mri_fops->close);
}

int mri_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	mri_fd_begin();
	return mri_fd_end_by(mri_fops->openat(dirfd, path, flags, mode),
			     mri_fops->close);
}

int mri_close(int fd)
{
	int r;

	mri_fd_close_begin(fd);
	r = mri_fops->close(fd);
	mri_fd_close_end();
	return r;
}

ssize_t mri_read_fd(int fd, char *buf, size_t len)
{
	ssize_t n;
	char extra;

	if (len == 0)
		return -EINVAL;
	/* One pread: a short read is the whole file, for a regular file
	 * as for a cgroup control file (seq_file hands a single_open()
	 * file's whole show() output to one large enough read). */
	n = mri_fops->pread(fd, buf, len - 1, 0);
	if (n < 0)
		return n;
	buf[n] = '\0';
	if ((size_t)n == len - 1) {
		n = mri_fops->pread(fd, &extra, 1, (off_t)(len - 1));
		if (n < 0)
			return n;
		if (n > 0)
			return -EOVERFLOW;
		return (ssize_t)(len - 1);
	}
	return n;
}

ssize_t mri_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = mri_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	n = mri_read_fd(fd, buf, len);
	mri_close(fd);
	return n;
}

int mri_write_fd(int fd, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;

	n = mri_fops->pwrite(fd, s, len, 0);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

int mri_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int d;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EIO;
	for (; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned int)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	for (; *p; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\n')
			return -EIO;
	}
	*out = v;
	return 0;
}

int mri_kv_next(const char **pos, struct mri_kv_line *line)
{
	const char *p = *pos, *end, *sp;

	while (*p == '\n')
		p++;
	if (!*p) {
		*pos = p;
		return 0;
	}
	end = strchrnul(p, '\n');
	*pos = *end ? end + 1 : end;
	sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp)
		return -EIO;
	line->key = p;
	line->key_len = (size_t)(sp - p);
	line->value = sp + 1;
	line->value_len = (size_t)(end - sp - 1);
	return 1;
}

bool mri_kv_is(const struct mri_kv_line *line, const char *key)
{
	return strlen(key) == line->key_len &&
	       memcmp(key, line->key, line->key_len) == 0;
}

int mri_kv_value(const struct mri_kv_line *line, uint64_t *out)
{
	char num[24];

	if (line->value_len == 0 || line->value_len >= sizeof(num))
		return -EIO;
	memcpy(num, line->value, line->value_len);
	num[line->value_len] = '\0';
	return mri_parse_u64(num, out) < 0 ? -EIO : 0;
}
