/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file-access table. Every file a backend touches under a cgroup mount
 * goes through these calls, so a test can replace the table and make a write
 * fail with EBUSY or EPERM, a read fail with EOPNOTSUPP, or a group vanish
 * between two reads — things a plain file in a temporary tree cannot do for
 * a root process.
 *
 * Each call returns what the syscall returns on success, or a negative
 * errno (never -1 with errno).
 */
#ifndef MR_FILEOPS_H
#define MR_FILEOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/vfs.h>

struct mri_file_ops {
	int (*open)(const char *path, int flags, mode_t mode);
	int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
	ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
	int (*close)(int fd);
	int (*statfs)(const char *path, struct statfs *st);
	/* Creating and removing a cgroup directory (cgroup2 groups,
	 * lib/cgroupfs/cgtree2.c; the twin of a v1 group, lib/cgroupfs/hybrid.c); tables of
	 * tests that never reach them may leave them NULL. */
	int (*mkdir)(const char *path, mode_t mode);
	int (*rmdir)(const char *path);
};

/* The table in use. Defaults to mri_file_ops_real. */
extern const struct mri_file_ops *mri_fops;
extern const struct mri_file_ops mri_file_ops_real;

/* The calls the library makes: the table's open, openat and close, with
 * the fd tracked from the open to the close (lib/core/fds.h: a child of fork()
 * closes every tracked fd, and a close unlocks a flock of the library
 * first). Every file under a cgroup mount is opened and closed through
 * these, never through the table's members directly. Return as the
 * table does; mri_open() and mri_openat() may also fail with -EMFILE
 * (the fd could not be tracked: the table's close closed it). MT-safe. */
int mri_open(const char *path, int flags, mode_t mode);
int mri_openat(int dirfd, const char *path, int flags, mode_t mode);
int mri_close(int fd);

/* Test hook: replaces the table, returns the previous one. Not MT-safe:
 * call it before opening groups. */
const struct mri_file_ops *mri_file_ops_set(const struct mri_file_ops *ops);

/* Reads a whole small file at offset 0 from a kept fd into buf (len - 1
 * bytes at most) and NUL-terminates it. Returns the length or -errno;
 * -EOVERFLOW if the file did not fit. */
ssize_t mri_read_fd(int fd, char *buf, size_t len);

/* Reads the whole small file at path into buf as mri_read_fd() does,
 * through mri_open() (O_RDONLY | O_CLOEXEC) and mri_close(). Returns the
 * length, or the open's or the read's -errno. MT-safe. */
ssize_t mri_read_file(const char *path, char *buf, size_t len);

/* Writes the string s (without its NUL) at offset 0. Returns 0 or -errno;
 * a short write is -EIO. */
int mri_write_fd(int fd, const char *s);

/* Parses a decimal uint64 followed by optional whitespace/newline. Returns
 * 0 or -EIO (not a number, trailing garbage), -ERANGE (overflow). */
int mri_parse_u64(const char *s, uint64_t *out);

/* One line of a flat-keyed file: "KEY VALUE" (memory.stat, memory.events,
 * memory.oom_control). */
struct mri_kv_line {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

/* Splits the next non-empty line at *pos (advanced past it) into *line.
 * Returns 1, 0 at the end of the text, or -EIO for a line without a
 * space. */
int mri_kv_next(const char **pos, struct mri_kv_line *line);

/* Whether the line's key is `key`. */
bool mri_kv_is(const struct mri_kv_line *line, const char *key);

/* Parses the line's value as a decimal uint64: 0, or -EIO. */
int mri_kv_value(const struct mri_kv_line *line, uint64_t *out);

#endif /* MR_FILEOPS_H */
