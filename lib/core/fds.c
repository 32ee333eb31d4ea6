/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library's fds across fork(): the fork lock and the tracked fds
 * (fds.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fds.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
/* ThreadSanitizer cannot see a lock made new by assignment: told that the
 * child's copy of fork_lock is released, it does not take every later
 * read lock in the child for one of a write-locked lock. */
#define FORK_LOCK_RENEWED(l) \
	(__tsan_mutex_pre_unlock((l), 0), __tsan_mutex_post_unlock((l), 0))
#else
#define FORK_LOCK_RENEWED(l) ((void)(l))
#endif

/* The tracked fds: a bit per fd number, static so that tracking never
 * allocates (the fork lock is held across it, and an allocator may call
 * into the library or take locks of its own). Zero-filled BSS: of the
 * 4 MiB only the pages of fd numbers in use are ever touched. top is the
 * number of words below which every tracked fd is (a walk stops there). */
#define WORD_FDS 64
#define WORDS (MRI_FDS_MAX / WORD_FDS)

static _Atomic uint64_t open_bits[WORDS];   /* tracked */
static _Atomic uint64_t locked_bits[WORDS]; /* holding a library flock */
static atomic_size_t top;

/* Writers first: opens cannot starve a fork. */
static pthread_rwlock_t fork_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

/* This thread's state, initial-exec: no allocation on first use.
 * holds: its nested holds (a nested rdlock would deadlock behind a
 * waiting writer); held: the outermost hold got the read side; forking:
 * the thread is between the prepare handler and the parent's or child's,
 * where holds are no-ops (it may hold the write side, or none);
 * fork_locked: its prepare handler took the write side. */
#define MRI_TLS __thread __attribute__((tls_model("initial-exec")))
static MRI_TLS unsigned holds;
static MRI_TLS bool held;
static MRI_TLS bool forking;
static MRI_TLS bool fork_locked;

/* holds is raised before the rdlock and lowered after the unlock: a
 * signal handler that interrupts either nests, and one that forks then
 * does not wait for the write side behind this thread's own read side.
 * held is stored after the rdlock and after the unlock, so a child forked
 * inside either call sees the state before it: its new lock is then held
 * for reading exactly when the resumed call or the release will unlock
 * it, and a resumed rdlock takes it (mri_fds_child()). */
void mri_fork_hold(void)
{
	if (forking || holds++ > 0)
		return;
	/* EAGAIN (the count of readers is full) or EDEADLK: the fds are
	 * then made and closed unguarded, and release unlocks nothing. */
	held = pthread_rwlock_rdlock(&fork_lock) == 0;
}

void mri_fork_release(void)
{
	if (forking)
		return;
	if (holds == 1 && held) {
		pthread_rwlock_unlock(&fork_lock);
		held = false;
	}
	holds--;
}

bool mri_fork_held_by_me(void)
{
	return holds > 0 && !forking;
}

static uint64_t bit(int fd)
{
	return 1ULL << (fd % WORD_FDS);
}

static size_t word(int fd)
{
	return (size_t)fd / WORD_FDS;
}

void mri_fd_begin(void)
{
	mri_fork_hold();
}

/* Under the fork lock: 0, or -EMFILE (fd >= MRI_FDS_MAX: not tracked). */
static int track(int fd)
{
	size_t w = word(fd), t = atomic_load(&top);

	if (fd >= MRI_FDS_MAX)
		return -EMFILE;
	while (t <= w && !atomic_compare_exchange_weak(&top, &t, w + 1))
		;
	atomic_fetch_or(&open_bits[w], bit(fd));
	return 0;
}

int mri_fd_end_by(int r, int (*close_fd)(int fd))
{
	int t;

	if (r >= 0) {
		t = track(r);
		if (t < 0) {
			if (close_fd)
				close_fd(r);
			else
				close(r);
			r = t;
		}
	}
	mri_fork_release();
	return r;
}

int mri_fd_end(int r)
{
	return mri_fd_end_by(r, NULL);
}

/* open(path, flags | O_CLOEXEC), tracked: the fd or -errno. */
static int open_tracked(const char *path, int flags)
{
	int fd;

	mri_fd_begin();
	fd = open(path, flags | O_CLOEXEC);
	return mri_fd_end(fd < 0 ? -errno : fd);
}

/* A FILE of mri_fopen() reads its fd through these: fclose() calls the
 * close here, between the frees it does before and after, so the fd is
 * closed and untracked under the fork lock and the stream's memory is
 * freed outside it. */
static ssize_t stream_read(void *cookie, char *buf, size_t len)
{
	ssize_t n = read((int)(intptr_t)cookie, buf, len);

	return n < 0 ? -1 : n;
}

static int stream_close(void *cookie)
{
	int r = mri_fd_close((int)(intptr_t)cookie);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

FILE *mri_fopen(const char *path)
{
	cookie_io_functions_t io = { .read = stream_read,
				     .close = stream_close };
	FILE *f;
	int fd, e;

	fd = open_tracked(path, O_RDONLY);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fopencookie((void *)(intptr_t)fd, "r", io);
	if (!f) {
		e = errno;
		mri_fd_close(fd);
		errno = e;
	}
	return f;
}

int mri_fclose(FILE *f)
{
	return fclose(f) < 0 ? -errno : 0;
}

DIR *mri_opendir(const char *path)
{
	DIR *d;
	int fd, e;

	fd = open_tracked(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		mri_fd_close(fd);
		errno = e;
	}
	return d;
}

static void untrack(int fd)
{
	if (fd < 0 || fd >= MRI_FDS_MAX)
		return;
	atomic_fetch_and(&open_bits[word(fd)], ~bit(fd));
	atomic_fetch_and(&locked_bits[word(fd)], ~bit(fd));
}

/* Outside the fork lock: flock(LOCK_UN) does not wait. */
static void unlock_if_locked(int fd)
{
	if (fd >= 0 && fd < MRI_FDS_MAX &&
	    (atomic_load(&locked_bits[word(fd)]) & bit(fd)))
		mri_flock(fd, LOCK_UN);
}

int mri_closedir(DIR *d)
{
	int fd = dirfd(d);

	/* closedir() frees the DIR before it closes its fd (glibc), so it
	 * runs outside the fork lock, after the fd is unlocked and
	 * untracked: a fork() between the two gives its child a copy that
	 * holds no lock and is not closed there (fds.h). */
	unlock_if_locked(fd);
	untrack(fd);
	return closedir(d) < 0 ? -errno : 0;
}

void mri_fd_close_begin(int fd)
{
	unlock_if_locked(fd);
	mri_fork_hold();
	untrack(fd);
}

void mri_fd_close_end(void)
{
	mri_fork_release();
}

int mri_fd_close(int fd)
{
	int r;

	mri_fd_close_begin(fd);
	r = close(fd) < 0 ? -errno : 0;
	mri_fd_close_end();
	return r;
}

void mri_fd_give(int fd)
{
	untrack(fd);
}

int mri_flock(int fd, int op)
{
	if (flock(fd, op) < 0)
		return -errno;
	if (fd >= MRI_FDS_MAX)
		return 0;
	if ((op & ~LOCK_NB) == LOCK_UN)
		atomic_fetch_and(&locked_bits[word(fd)], ~bit(fd));
	else
		atomic_fetch_or(&locked_bits[word(fd)], bit(fd));
	return 0;
}

unsigned mri_fds_locking(uint64_t dev, uint64_t ino)
{
	size_t k, n_words = atomic_load(&top);
	unsigned n = 0;
	struct stat st;
	uint64_t w;
	int fd;

	for (k = 0; k < n_words; k++) {
		for (w = atomic_load(&locked_bits[k]); w; w &= w - 1) {
			fd = (int)(k * WORD_FDS) + __builtin_ctzll(w);
			if (fstat(fd, &st) == 0 &&
			    (uint64_t)st.st_dev == dev &&
			    (uint64_t)st.st_ino == ino)
				n++;
		}
	}
	return n;
}

void mri_fds_prepare(void)
{
	/* A thread that holds the read side (a fork() from a signal handler
	 * or a file-access hook inside an open or a close) cannot have the
	 * write side: the fork goes on unguarded (fds.h). */
	fork_locked = holds == 0 && pthread_rwlock_wrlock(&fork_lock) == 0;
	forking = true;
}

void mri_fds_parent(void)
{
	forking = false;
	if (fork_locked)
		pthread_rwlock_unlock(&fork_lock);
	fork_locked = false;
}

atomic_ulong mri_fork_gen;

void mri_fds_child(void)
{
	size_t k, n_words = atomic_load(&top);
	uint64_t w;

	atomic_fetch_add(&mri_fork_gen, 1);
	/* The only thread: nothing opens or closes meanwhile. No LOCK_UN:
	 * the open file descriptions, and their locks, are the parent's. */
	for (k = 0; k < n_words; k++) {
		for (w = atomic_load(&open_bits[k]); w; w &= w - 1)
			close((int)(k * WORD_FDS) + __builtin_ctzll(w));
		atomic_store(&open_bits[k], 0);
		atomic_store(&locked_bits[k], 0);
	}
	/* Not unlocked: glibc would take the child's thread, whose id is not
	 * the parent's writer's, for a reader (and after an unguarded fork
	 * it holds the read sides of threads the child does not have). Made
	 * new instead, held for reading if the forking thread was inside a
	 * hold that had the read side (after an unguarded fork): its
	 * release, or its interrupted unlock, unlocks that. */
	fork_lock = (pthread_rwlock_t)
		PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	FORK_LOCK_RENEWED(&fork_lock);
	forking = false;
	fork_locked = false;
	held = held && pthread_rwlock_rdlock(&fork_lock) == 0;
}
