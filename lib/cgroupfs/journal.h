/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lowering a control file safely (docs/design.md, "Safety"): the group's
 * step lock, and the journal that records the original value, so that the
 * value is put back on every path out, including the next open after the
 * manager died in the middle of the step.
 *
 * The locks belong to the cgroup itself, not to a name for it: flock() on
 * fds of the cgroup's directory. Every manager of the group takes the same
 * lock whatever path it opened the group by (a symlink, another mount of
 * the hierarchy, a container's view) and whatever its state directory.
 *  - A step holds flock(LOCK_EX) on step_fd: two managers, in this process
 *    or another, never lower one group's limit at once.
 *  - Readers of a limit take flock(LOCK_SH) on their own fds (other open
 *    file descriptions) of the group's directory and of each ancestor's up
 *    to the root of the hierarchy as this process sees it, all or none:
 *    they wait out any step that could have lowered the group's limit or
 *    a hierarchical one. (Ancestors above a container's view cannot be
 *    reached by path; a manager outside the container stepping on them
 *    is not waited for.)
 *
 * The journal is a file in the state directory (owned by the effective
 * user, writable by nobody else: /run/memreclaim by default), named after
 * the cgroup directory's device and inode, "<dev>-<ino>.journal" in hex,
 * so that every spelling of the group finds it. It exists only while a
 * step is in progress (the lock's holder creates it) or while a record is
 * left (a dead manager, a failed restore): every unlock removes it when it
 * holds no record. The record names the device and inode (checked) and the path
 * (for people).
 *
 * Use, per step: mri_journal_lock(); mri_journal_read() (a record left by a
 * dead manager is recovered first); mri_journal_write(); lower; restore;
 * mri_journal_clear(); mri_journal_unlock(). A run of steps
 * (lib/cgroupfs/lowerstep.h) takes the lock and writes its record once,
 * lowers and restores at every step, and clears and unlocks at its end.
 *
 * The record's format 2 ("memreclaim-journal 2"): the cgroup's device and
 * inode, the path, the file, the original value, the lowest and highest
 * values written, the pid; format 1, which names the one value written
 * ("lowered"), is read as lowest = highest = that value.
 *
 * No fsync: the journal protects a cgroup limit, which does not survive a
 * reboot either; a process crash leaves the written record in the page
 * cache, where the next open finds it.
 *
 * Steps of one journal are serialised by the caller (the core's reclaim
 * lock); readers may run concurrently with them and with each other.
 * After fork(), the child's handler closes every fd of the library
 * (lib/core/fds.h: their copies would keep a step's lock held for as long as
 * it lives), and mri_journal_forget() drops their numbers.
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
/* How long a reader waits for steps to end. */
#define MRI_JOURNAL_READ_WAIT_MS 1000

/* Ancestors whose steps a reader waits out, at most. */
#define MRI_JOURNAL_MAX_DEPTH 32

struct mri_journal_record {
	char file[MRI_JOURNAL_FILE_MAX]; /* control file, e.g.
					    "memory.limit_in_bytes" */
	uint64_t original;               /* value before the step; the
					    backend's encoding (cgroup1:
					    MR_UNLIMITED for "-1") */
	/* The values the step, or the run of steps, may have written:
	 * lowest .. highest, both included (one step: the value it
	 * writes; a run, lib/cgroupfs/lowerstep.h: its floor .. original
	 * - 1). A format 1 record names one value ("lowered"). */
	uint64_t lowest, highest;
	pid_t pid;                       /* the manager that wrote it */
};

/*
 * A group's journal. It keeps no fd between runs of steps (the group's fd
 * budget, docs/design.md): a step opens the group's directory (checked to
 * be the cgroup opened), the state directory and the journal file, and
 * closes them at its end, or, in a run (lib/cgroupfs/lowerstep.h), at the
 * run's end; readers open their directories for each read.
 */
struct mri_journal {
	struct mri_logger *log;
	/* The caller's strings, valid until mri_journal_close(): the state
	 * directory and the group's and the hierarchy root's symlink-free
	 * paths. */
	const char *dir;
	const char *path;
	const char *root;
	bool opened;                     /* between open and close/forget */
	/* During a step or a run of steps (mri_journal_lock() to
	 * _unlock()), else -1. */
	int step_fd;                     /* the group's directory: flock EX */
	int dir_fd;                      /* O_PATH fd of the state dir */
	int fd;                          /* the journal file */
	uint64_t dev, ino;               /* the cgroup directory's identity */
	char name[48];                   /* "<dev>-<ino>.journal" */
};

/* A reader's fds (mri_journal_reads_begin()): the group's directory, then
 * its ancestors below the hierarchy root. */
struct mri_journal_reads {
	int fds[MRI_JOURNAL_MAX_DEPTH];
	size_t n;
};

/* The journal file's name for the cgroup directory at group_path, as
 * "<dev>-<ino>.journal" (hex), into out (len >= 48). Returns 0 or -errno of
 * stat(). */
int mri_journal_name(const char *group_path, char *out, size_t len);

/* Opens the journal of the cgroup directory group_path, beneath the
 * hierarchy root `root` (both absolute and free of symlinks; group_path
 * equal to root or below it), in state_dir (absolute); the three strings
 * must stay valid until mri_journal_close(). Keeps no fd open. Creates state_dir (mode 0700) if it is
 * missing; its parent must exist. Refuses a state_dir that is a symlink
 * (-ELOOP) or not a directory (-ENOTDIR), not owned by the effective user
 * or writable by group or others (-EPERM). group_path must hold no newline
 * (-EINVAL). Errors are logged. On error, j holds nothing to release. */
int mri_journal_open(struct mri_journal *j, const char *state_dir,
		     const char *group_path, const char *root,
		     struct mri_logger *log);

/* Takes the group's step lock: a non-blocking try, then retries for at
 * most MRI_JOURNAL_LOCK_WAIT_MS; -EBUSY if another manager still holds it.
 * Then opens (creating it empty if missing) the journal file: -ELOOP if it
 * is a symlink, -EPERM if it is not a regular file with one link owned by
 * the effective user; the lock is released on error. */
int mri_journal_lock(struct mri_journal *j);

/* Removes the journal file if it holds no record, releases the lock
 * taken by mri_journal_lock() and closes its fds. */
void mri_journal_unlock(struct mri_journal *j);

/* Removes the journal file if it holds no record and releases the
 * lock, but keeps the group's and the state directory's fds
 * for the next mri_journal_lock() of a run of steps, until
 * mri_journal_rest() (or an mri_journal_unlock()) closes them. */
void mri_journal_unlock_keep(struct mri_journal *j);
void mri_journal_rest(struct mri_journal *j);

/* Under the lock: reads the record. Returns 1 with *rec filled, 0 if the
 * journal is empty, -EIO if its content is not a valid record or is the
 * record of another cgroup (logged at MR_LOG_ERR; the file is left as it
 * is), or a read error. */
int mri_journal_read(struct mri_journal *j, struct mri_journal_record *rec);

/* Under the lock: replaces the content with rec (rec->file must be a plain
 * file name: letters, digits, '.', '_', '-'). Returns 0, -EINVAL, or a
 * write error. */
int mri_journal_write(struct mri_journal *j,
		      const struct mri_journal_record *rec);

/* Under the lock: empties the journal (its file is removed at the
 * unlock). Returns 0 or -errno. */
int mri_journal_clear(struct mri_journal *j);

/* Under the lock: settles a record left by a dead manager or by a failed
 * restore of this one. A record naming a file other than `file` (the one
 * the calling backend lowers) is refused (-EIO, logged, kept). Otherwise
 * restore(arg, rec) puts the value back (it decides whether the value
 * still holds what the record lowered it to), then the record is cleared
 * and the recovery logged, naming `path`. Returns 0 (nothing left
 * lowered), -ENOENT (the group is gone; record dropped), -EIO, or the
 * restore's error (record kept). Shared by every backend that lowers a
 * control for a moment (cgroup1's limit, cgroup2's memory.high). */
int mri_journal_settle(struct mri_journal *j, const char *file,
		       const char *path,
		       int (*restore)(void *arg,
				      const struct mri_journal_record *rec),
		       void *arg);

/* Waits until no manager (in any process, this one included) is in a step
 * on the group or an ancestor, and keeps steps out until
 * mri_journal_reads_end(), through the directory fds it opens in *rd.
 * Returns 0, -EBUSY when steps held on for longer than
 * MRI_JOURNAL_READ_WAIT_MS, -ENOENT when the group is gone, or an open's
 * error (nothing is then held or open). Readers may run concurrently. */
int mri_journal_reads_begin(struct mri_journal *j,
			    struct mri_journal_reads *rd);
void mri_journal_reads_end(struct mri_journal_reads *rd);

/* Whether dirfd is the journal's cgroup directory (by device and inode):
 * 0, -ENOENT when it is another (the group was removed and a new one made
 * under its name), or fstat()'s error. */
int mri_journal_check_dir(const struct mri_journal *j, int dirfd);

/* Not under the lock: takes it, unlinks the journal file if it is empty
 * (a record is kept for the next open). If the lock cannot be had, the
 * file is left for its holder. A no-op when not opened (a zeroed struct)
 * or forgotten. */
void mri_journal_close(struct mri_journal *j);

/* In a child after fork(), whose handler closed every fd of the library
 * (lib/core/fds.h): drops the numbers of a step's fds without closing,
 * unlocking or touching anything (the parent's step keeps its lock). */
void mri_journal_forget(struct mri_journal *j);

#endif /* MR_JOURNAL_H */
