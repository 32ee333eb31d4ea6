/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library's fds across fork(): the fork lock and the tracked fds
 * (fds.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fds.h"

/* The tracked fds: a bit per fd in leaves of LEAF_FDS fds, made on first
 * use, never freed (1 KiB per 4096 fd numbers). */
#define LEAF_FDS 4096
#define WORD_FDS 64
#define LEAF_WORDS (LEAF_FDS / WORD_FDS)
#define LEAVES (MRI_FDS_MAX / LEAF_FDS)

struct leaf {
	_Atomic uint64_t open[LEAF_WORDS];   /* tracked */
	_Atomic uint64_t locked[LEAF_WORDS]; /* holding a library flock */
};

static struct leaf *_Atomic leaves[LEAVES];

/* Writers first: opens cannot starve a fork. */
static pthread_rwlock_t fork_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
/* This thread's holds of the read side (a nested rdlock would deadlock
 * behind a waiting writer). initial-exec: no allocation on first use. */
static __thread __attribute__((tls_model("initial-exec"))) unsigned holds;

void mri_fork_hold(void)
{
	if (holds++ == 0)
		pthread_rwlock_rdlock(&fork_lock);
}

void mri_fork_release(void)
{
	if (--holds == 0)
		pthread_rwlock_unlock(&fork_lock);
}

static struct leaf *leaf_of(int fd, bool make)
{
	struct leaf *l, *n = NULL;

	if (fd < 0 || fd >= MRI_FDS_MAX)
		return NULL;
	l = atomic_load(&leaves[fd / LEAF_FDS]);
	if (l || !make)
		return l;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (!atomic_compare_exchange_strong(&leaves[fd / LEAF_FDS], &l, n)) {
		free(n); /* another thread made it: l is that one */
		return l;
	}
	return n;
}

static uint64_t bit(int fd)
{
	return 1ULL << (fd % WORD_FDS);
}

static size_t word(int fd)
{
	return (size_t)(fd % LEAF_FDS) / WORD_FDS;
}

void mri_fd_begin(void)
{
	mri_fork_hold();
}

/* Under the fork lock: 0, or -EMFILE, -ENOMEM (not tracked). */
static int track(int fd)
{
	struct leaf *l = leaf_of(fd, true);

	if (!l)
		return fd >= MRI_FDS_MAX ? -EMFILE : -ENOMEM;
	atomic_fetch_or(&l->open[word(fd)], bit(fd));
	return 0;
}

int mri_fd_end(int r)
{
	int t;

	if (r >= 0) {
		t = track(r);
		if (t < 0) {
			close(r);
			r = t;
		}
	}
	mri_fork_release();
	return r;
}

FILE *mri_fopen(const char *path)
{
	FILE *f;
	int t;

	mri_fork_hold();
	f = fopen(path, "re");
	if (f) {
		t = track(fileno(f));
		if (t < 0) {
			fclose(f);
			f = NULL;
			errno = -t;
		}
	}
	mri_fork_release();
	return f;
}

int mri_fclose(FILE *f)
{
	int r;

	mri_fd_close_begin(fileno(f));
	r = fclose(f) < 0 ? -errno : 0;
	mri_fd_close_end();
	return r;
}

DIR *mri_opendir(const char *path)
{
	DIR *d;
	int t;

	mri_fork_hold();
	d = opendir(path);
	if (d) {
		t = track(dirfd(d));
		if (t < 0) {
			closedir(d);
			d = NULL;
			errno = -t;
		}
	}
	mri_fork_release();
	return d;
}

int mri_closedir(DIR *d)
{
	int r;

	mri_fd_close_begin(dirfd(d));
	r = closedir(d) < 0 ? -errno : 0;
	mri_fd_close_end();
	return r;
}

static void untrack(int fd)
{
	struct leaf *l = leaf_of(fd, false);

	if (!l)
		return;
	atomic_fetch_and(&l->open[word(fd)], ~bit(fd));
	atomic_fetch_and(&l->locked[word(fd)], ~bit(fd));
}

void mri_fd_close_begin(int fd)
{
	struct leaf *l = leaf_of(fd, false);

	/* Outside the fork lock: flock(LOCK_UN) does not wait. */
	if (l && (atomic_load(&l->locked[word(fd)]) & bit(fd)))
		mri_flock(fd, LOCK_UN);
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
	struct leaf *l;

	if (flock(fd, op) < 0)
		return -errno;
	l = leaf_of(fd, false);
	if (!l)
		return 0;
	if ((op & ~LOCK_NB) == LOCK_UN)
		atomic_fetch_and(&l->locked[word(fd)], ~bit(fd));
	else
		atomic_fetch_or(&l->locked[word(fd)], bit(fd));
	return 0;
}

unsigned mri_fds_locking(uint64_t dev, uint64_t ino)
{
	unsigned n = 0;
	struct leaf *l;
	struct stat st;
	uint64_t w;
	size_t i, k;
	int fd;

	for (i = 0; i < LEAVES; i++) {
		l = atomic_load(&leaves[i]);
		for (k = 0; l && k < LEAF_WORDS; k++) {
			for (w = atomic_load(&l->locked[k]); w; w &= w - 1) {
				fd = (int)(i * LEAF_FDS + k * WORD_FDS) +
				     __builtin_ctzll(w);
				if (fstat(fd, &st) == 0 &&
				    (uint64_t)st.st_dev == dev &&
				    (uint64_t)st.st_ino == ino)
					n++;
			}
		}
	}
	return n;
}

void mri_fds_prepare(void)
{
	pthread_rwlock_wrlock(&fork_lock);
}

void mri_fds_parent(void)
{
	pthread_rwlock_unlock(&fork_lock);
}

void mri_fds_child(void)
{
	struct leaf *l;
	uint64_t w;
	size_t i, k;

	/* The only thread: nothing opens or closes meanwhile. No LOCK_UN:
	 * the open file descriptions, and their locks, are the parent's. */
	for (i = 0; i < LEAVES; i++) {
		l = atomic_load(&leaves[i]);
		for (k = 0; l && k < LEAF_WORDS; k++) {
			for (w = atomic_load(&l->open[k]); w; w &= w - 1)
				close((int)(i * LEAF_FDS + k * WORD_FDS) +
				      __builtin_ctzll(w));
			atomic_store(&l->open[k], 0);
			atomic_store(&l->locked[k], 0);
		}
	}
	/* Not unlocked: glibc would take the child's thread, whose id is not
	 * the parent's writer's, for a reader. Made new instead. */
	fork_lock = (pthread_rwlock_t)
		PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	holds = 0;
}
