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
 * Nothing is allocated under the fork lock (an allocator interposed by
 * the program may call into the library or take locks its own fork
 * handlers hold): the tracking is a static bitmap, and a FILE or a DIR
 * is made from its tracked fd outside the lock.
 *
 * What a fork() is not guaranteed:
 *  - one from a thread that holds the read side (from a signal handler or
 *    a file-access hook inside an open or a close) cannot have the write
 *    side and goes on unguarded: an fd any thread is opening or closing at
 *    that moment (between the syscall and its tracking, or between its
 *    untracking and the close) is copied into the child untracked, and
 *    holds no lock there (a flock is taken on a tracked fd only, and
 *    dropped before the untracking); the other fds are closed as ever.
 *    The child's new lock takes over the interrupted hold: read-held
 *    for it if the hold had the read side (its release, or its
 *    interrupted unlock, unlocks it), taken by an interrupted rdlock
 *    itself; a signal that lands between such a call and the store of
 *    its outcome leaves the child's lock unbalanced (its next fork() may
 *    hang, or a release unlock a free lock);
 *  - a DIR is untracked before closedir(), which frees it before it
 *    closes the fd (glibc): a fork() between the two leaves a copy of that
 *    fd, unlocked, in the child.
 *
 * fds up to MRI_FDS_MAX - 1 are tracked; an fd above is closed at once and
 * its open fails with -EMFILE.
 */
#ifndef MR_FDS_H
#define MR_FDS_H

#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Highest fd number the library can track, plus one. Above fs.nr_open's
 * default (2^20, fs/file.c sysctl_nr_open), which bounds RLIMIT_NOFILE;
 * a bit per number, two bitmaps of 2 MiB of address space. */
#define MRI_FDS_MAX (1 << 24)

/* The fork lock's read side: nested holds of one thread are counted (the
 * second takes nothing). Held across an open and its tracking, a close and
 * its untracking; never across a wait or an allocation. No-ops for the
 * forking thread between mri_fds_prepare() and mri_fds_parent() or
 * mri_fds_child() (another fork handler may call the library). A signal
 * handler's hold inside a hold of the thread it interrupted nests.
 * MT-safe. */
void mri_fork_hold(void);
void mri_fork_release(void);

/* Whether this thread holds the read side (tests: nothing allocates under
 * it). MT-safe. */
bool mri_fork_held_by_me(void);

/* Around a syscall that makes an fd (open, eventfd, epoll_create1):
 * mri_fd_begin(); r = the syscall's fd or -errno; r = mri_fd_end(r).
 * mri_fd_end() tracks an fd (r >= 0) and returns it, or closes it with
 * close() and returns -EMFILE (beyond MRI_FDS_MAX); a negative r is
 * returned as it is. mri_fd_end_by() closes such an fd with close_fd
 * instead (the file-access table's close for an fd its open made; NULL:
 * close()). MT-safe. */
void mri_fd_begin(void);
int mri_fd_end(int r);
int mri_fd_end_by(int r, int (*close_fd)(int fd));

/* fopen(path, "re") and opendir(path), tracked: a tracked open() with
 * O_CLOEXEC, then the stream (fopencookie(), so that fclose() closes the
 * fd through mri_fd_close(); fileno() of it is -1) or fdopendir(), made
 * outside the fork lock. NULL with errno on failure (EMFILE when the fd
 * could not be tracked); closed with mri_fclose() and mri_closedir()
 * only, which return 0 or -errno. A DIR from fdopendir() of a tracked fd
 * is closed with mri_closedir() too. MT-safe. */
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

/* The fork handlers (lib/core/context.c): before fork(), take the write side
 * (unless this thread holds the read side: see above); in the parent,
 * release it; in the child, close every tracked fd without unlocking it,
 * untrack them all and make the lock new (held for reading if the
 * forking thread was inside a hold that had it). */
void mri_fds_prepare(void);
void mri_fds_parent(void);
void mri_fds_child(void);

/* Bumped in the child of every fork() (by mri_fds_child()): a context
 * made before it answers -ECHILD there (mri_ctx_check_fork(); the
 * worker thread did not survive the fork). */
extern atomic_ulong mri_fork_gen;

#endif /* MR_FDS_H */
