/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's fds across fork() (docs/design.md, "Signals and fork").
 *
 * Linux has no O_CLOFORK: a child of fork() gets a copy of every fd, and a
 * copy of an fd holding a flock() keeps the lock of the shared open file
 * description (fs/locks.c: a flock belongs to the struct file) after the
 * parent closed its own, for as long as the child lives. So:
 *  - every fd the library opens, kept for a group's life or for one read,
 *    is tracked here from the syscall that made it to the one that closes
 *    it, both done under the read side of the fork lock (no wait for a
 *    file lock is ever done under it): fork() takes its write side, so the
 *    child's handler finds every fd of the library tracked, and closes
 *    them all (mri_fds_child());
 *  - every flock() of the library goes through mri_flock(), and the close
 *    of a locked fd unlocks it first (LOCK_UN acts on the open file
 *    description, so a copy in a child that has not closed it yet, or in
 *    one that runs no fork handler, such as posix_spawn()'s before its
 *    exec, then holds nothing). A child never unlocks: that would drop the
 *    parent's lock.
 *
 * fds up to MRI_FDS_MAX - 1 are tracked; an fd above is closed at once and
 * its open fails with -EMFILE.
 */
#ifndef MR_FDS_H
#define MR_FDS_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Highest fd number the library can track, plus one. */
#define MRI_FDS_MAX (1 << 24)

/* The fork lock's read side: nested holds of one thread are counted (the
 * second takes nothing). Held across an open and its tracking, a close and
 * its untracking; never across a wait. MT-safe. */
void mri_fork_hold(void);
void mri_fork_release(void);

/* Around a syscall that makes an fd (open, eventfd, epoll_create1):
 * mri_fd_begin(); r = the syscall's fd or -errno; r = mri_fd_end(r).
 * mri_fd_end() tracks an fd (r >= 0) and returns it, or closes it and
 * returns -EMFILE (beyond MRI_FDS_MAX) or -ENOMEM; a negative r is
 * returned as it is. MT-safe. */
void mri_fd_begin(void);
int mri_fd_end(int r);

/* fopen(path, "re") and opendir(path), tracked: NULL with errno on
 * failure (EMFILE, ENOMEM when the fd could not be tracked); closed with
 * mri_fclose() and mri_closedir() only, which return 0 or -errno. A DIR
 * from fdopendir() of a tracked fd is closed with mri_closedir() too.
 * MT-safe. */
FILE *mri_fopen(const char *path);
int mri_fclose(FILE *f);
DIR *mri_opendir(const char *path);
int mri_closedir(DIR *d);

/* Around the close of a tracked fd: mri_fd_close_begin() unlocks it if
 * it holds a library flock, holds the fork lock and untracks it; the
 * caller closes it; mri_fd_close_end() releases the lock. MT-safe. */
void mri_fd_close_begin(int fd);
void mri_fd_close_end(void);

/* close() of a tracked fd made by a syscall (not through the file-access
 * table, whose fds mri_close() closes). Returns 0 or -errno. MT-safe. */
int mri_fd_close(int fd);

/* The fd goes to the caller (a PSI trigger's fd): no longer tracked, so a
 * child keeps it as it keeps the caller's other fds. MT-safe. */
void mri_fd_give(int fd);

/* flock(fd, op) of a tracked fd, op LOCK_SH, LOCK_EX or LOCK_UN, with or
 * without LOCK_NB; notes whether the fd now holds a lock. Returns 0 or
 * -errno (-EWOULDBLOCK for a LOCK_NB try that met a lock). MT-safe per
 * fd. */
int mri_flock(int fd, int op);

/* How many tracked fds of this process hold a library flock on the file
 * whose device and inode are dev and ino (fstat()); for a message naming
 * a lock's holder. MT-safe. */
unsigned mri_fds_locking(uint64_t dev, uint64_t ino);

/* The fork handlers (lib/context.c): before fork(), take the write side;
 * in the parent, release it; in the child, close every tracked fd without
 * unlocking it, untrack them all and make the lock new. */
void mri_fds_prepare(void);
void mri_fds_parent(void);
void mri_fds_child(void);

#endif /* MR_FDS_H */
