/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The limit journal (docs/design.md, "Safety"): before a backend lowers a
 * control file to force reclaim, it records the original value here, so
 * that the value can be put back on every path out, including the next
 * open after the manager died in the middle of the step.
 *
 * Files, in a state directory owned by the effective user (root in
 * production: /run/memreclaim) and writable by nobody else:
 *   <hash>.lock     persistent; flock(LOCK_EX) around each lowering step
 *                   serialises the managers of one group (two processes,
 *                   or two handles of one process);
 *   <hash>.journal  the record of the step in progress; empty between
 *                   steps; unlinked at close when empty;
 * where <hash> is the 64-bit FNV-1a hash of the group's absolute path as
 * 16 hex digits. The record repeats the path, so a hash collision is seen
 * and refused, never acted on.
 *
 * Use, per step: mri_journal_lock(); mri_journal_read() (a record left by a
 * dead manager is recovered first); mri_journal_write(); lower; restore;
 * mri_journal_clear(); mri_journal_unlock(). Keeping the lock only around
 * a step lets several managers share a group.
 *
 * No fsync: the journal protects a cgroup limit, which does not survive a
 * reboot either; a process crash leaves the written record in the page
 * cache, where the next open finds it.
 *
 * A journal is used by one thread at a time (the core serialises reclaim
 * per group).
 */
#ifndef MR_JOURNAL_H
#define MR_JOURNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

/* Longest control file name a record holds, NUL included. */
#define MRI_JOURNAL_FILE_MAX 64

/* How long mri_journal_lock() waits for another manager's step. */
#define MRI_JOURNAL_LOCK_WAIT_MS 200

struct mri_journal_record {
	char file[MRI_JOURNAL_FILE_MAX]; /* control file, e.g.
					    "memory.limit_in_bytes" */
	uint64_t original;               /* value before the step; the
					    backend's encoding (cgroup1:
					    MR_UNLIMITED for "-1") */
	uint64_t lowered;                /* value written by the step */
	pid_t pid;                       /* the manager that wrote it */
};

struct mri_journal {
	struct mri_logger *log;
	int dir_fd;                      /* O_PATH fd of the state dir */
	int lock_fd;                     /* <hash>.lock, kept open: the step
					    flock, and the keeper's OFD lock */
	int read_fd;                     /* <hash>.lock again: a second open
					    file description, for readers'
					    shared flock */
	pthread_mutex_t read_mutex;      /* one reader at a time on read_fd */
	int fd;                          /* <hash>.journal, only while locked */
	char dir[PATH_MAX];              /* state dir, for messages */
	char path[PATH_MAX];             /* the group's absolute path */
	char name[32];                   /* "<hash>.journal" */
	char lock_name[32];              /* "<hash>.lock" */
};

/* 64-bit FNV-1a of the NUL-terminated string s. */
uint64_t mri_journal_hash(const char *s);

/* Opens the journal of group_path in state_dir (absolute). Creates
 * state_dir (mode 0700) if it is missing; its parent must exist. Refuses a
 * state_dir that is a symlink (-ELOOP) or not a directory (-ENOTDIR), not
 * owned by the effective user or writable by group or others (-EPERM), and
 * a lock file that is a symlink (-ELOOP) or not a regular file we own
 * (-EPERM). group_path must be absolute and hold no newline (-EINVAL).
 * Errors are logged. On error, j holds nothing to release. */
int mri_journal_open(struct mri_journal *j, const char *state_dir,
		     const char *group_path, struct mri_logger *log);

/* Takes the group's lock: a non-blocking try, then retries for at most
 * MRI_JOURNAL_LOCK_WAIT_MS; -EBUSY if another manager still holds it.
 * Then opens (creating it empty if missing) the journal file: -ELOOP if it
 * is a symlink, -EPERM if it is not a regular file with one link owned by
 * the effective user; the lock is released on error. */
int mri_journal_lock(struct mri_journal *j);

/* Releases the lock taken by mri_journal_lock(). */
void mri_journal_unlock(struct mri_journal *j);

/* Under the lock: reads the record. Returns 1 with *rec filled, 0 if the
 * journal is empty, -EIO if its content is not a valid record or is the
 * record of another group (logged at MR_LOG_ERR; the file is left as it
 * is), or a read error. */
int mri_journal_read(struct mri_journal *j, struct mri_journal_record *rec);

/* Under the lock: replaces the content with rec (rec->file must be a plain
 * file name: letters, digits, '.', '_', '-'). Returns 0, -EINVAL, or a
 * write error. */
int mri_journal_write(struct mri_journal *j,
		      const struct mri_journal_record *rec);

/* Under the lock: empties the journal. Returns 0 or -errno. */
int mri_journal_clear(struct mri_journal *j);

/* Waits until no manager (in any process, this one included) is in a
 * step, and keeps steps out until mri_journal_reads_end(): a shared flock
 * on read_fd, which conflicts with the step's exclusive flock on lock_fd
 * (another open file description). So a reader never takes a limit that a
 * step has lowered for a moment for the group's own. Threads of one
 * process take turns (read_mutex). Returns 0, or -EBUSY when a step held
 * the lock for longer than MRI_JOURNAL_LOCK_WAIT_MS (the mutex is then
 * released). */
int mri_journal_reads_begin(struct mri_journal *j);
void mri_journal_reads_end(struct mri_journal *j);

/* Claims (claim true) or releases the group's keeper lock: an OFD write
 * lock (fcntl F_OFD_SETLK) on byte 0 of the lock file, which Linux keeps
 * apart from flock locks. At most one open group, in any process, holds
 * it: the one keeping a margin. Returns 0, -EBUSY when another holds it,
 * or -errno. Closing the journal releases it. */
int mri_journal_keeper(struct mri_journal *j, bool claim);

/* Not under the lock: takes it, unlinks the journal file if it is empty
 * (a record is kept for the next open), and closes everything. If the
 * lock cannot be had, the file is left for its holder. A no-op when
 * j->dir_fd is -1 (never opened). */
void mri_journal_close(struct mri_journal *j);

#endif /* MR_JOURNAL_H */
