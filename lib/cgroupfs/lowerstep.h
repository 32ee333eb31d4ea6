/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journaled lowering step (docs/design.md, "Safety"), shared by the
 * real backends whose kernel has no reclaim file: a control is lowered
 * below usage, which makes the writer reclaim down to it, and put back at
 * once. cgroup v1 lowers memory.limit_in_bytes (mm/memcontrol-v1.c,
 * mem_cgroup_resize_max(): the kernel reclaims down to the new limit
 * before it takes it, or reclaims what it can and answers EBUSY keeping
 * the old one); cgroup v2 before 5.19 lowers memory.high (mm/memcontrol.c,
 * memory_high_write(): the value is set, then the writer reclaims down to
 * it). The backend says which file, how its value is read, written and
 * spelled, how usage is read, and how the group's step lock is taken with
 * the fds its reads and writes need (struct mri_lowerstep_ops); the step,
 * its journal record (lib/cgroupfs/journal.h) and the restore rule are here.
 *
 * The restore rule, the one for every path out of a step (its own
 * restore, the settling of a record left behind at the start of every
 * step, at open and at close): the original value is written back only
 * while the control holds the lowered value, or cannot be read (a
 * value left lowered can cost the group's tasks more than an
 * administrator's change racing a failed read); a control that holds the
 * original already is not written again (v1 would reclaim to it and
 * answer EBUSY where usage is above it), and one that holds any other
 * value was changed by someone else and is left as it is. A restore that
 * fails keeps the record in the journal, so that every later step, the
 * close and the next open retry it (close then answers the error); a
 * group gone (-ENOENT) has nothing left to restore, and its record is
 * dropped. A manager that dies between the lowering write and the
 * restore leaves its record, and the next manager's open or step
 * restores by the same rule.
 *
 * While the value is lowered the group's own tasks charge against it
 * (v1: a charge reclaim cannot cover OOM-kills one of them, which is why
 * the core caps the batch of such a backend, MRI_CAP_STEP_CAN_OOM in
 * lib/core/backend.h; v2: they are throttled). So the step is short: usage is
 * read last, just before the lowering write, the restore follows at
 * once, and every signal the thread can block is blocked for the step (a
 * pending one would make a restore write answer EINTR; v1 retries that
 * as well).
 *
 * A run of steps (mri_lowerstep_plan(), the steps of one reclaim call of
 * the core, until mri_lowerstep_rest()) takes the lock and writes its
 * record once, at its first step, and keeps both from one step to the
 * next: each step still restores the value before it returns, so between
 * two steps nothing is lowered, and the lock only keeps other managers'
 * steps and every reader of the limits waiting for the run (the core
 * does nothing between two steps but read usage and memory.stat, and a
 * limits snapshot only after mri_lowerstep_rest()). Signals are blocked
 * for each step only, not between steps. The run's record covers every
 * value its steps may write: from usage at the first step less the
 * run's bytes (at least a page) to the original less one; a step is
 * recorded again only where that does not cover it (the value is no
 * longer the record's original, someone else having changed it between
 * two steps, or usage fell for other reasons than the run and the step
 * lowers below the record's lowest). So the restore rule of a record left
 * by a run (the manager died in one of its steps) takes any value of
 * that range for the run's: an administrator's change to such a value,
 * made after the manager died and before the record was settled, is
 * undone; one made while the manager lives is seen by its next step or
 * its own restore, which knows the one value the step wrote. A step that
 * fails ends its run (what is left of the call steps alone).
 *
 * Not MT-safe per step: the calls of one struct mri_lowerstep are
 * serialised by the caller (the core's reclaim lock; open and close), and
 * the step lock keeps other managers, in this process or another, out.
 */
#ifndef MR_LOWERSTEP_H
#define MR_LOWERSTEP_H

#include <stdbool.h>
#include <stdint.h>

#include "journal.h"
#include "log.h"

/* Tests only: when not 0, every step sleeps this many ms between the
 * lowering write and the restore, so that a test can kill the process
 * while the value is lowered and check the recovery of the next open, or
 * meet the step's lock. Hidden in the shared library (no program can
 * turn it on); tests that link the convenience library set it before the
 * step. */
extern unsigned int mri_lowerstep_test_pause_ms;

/* What differs between the backends' steps. Every op gets `arg`. */
struct mri_lowerstep_ops {
	const char *file;  /* the control, as journal records name it */
	const char *name;  /* the backend, first word of its log lines */
	/* Takes the group's step lock (mri_journal_lock()) and opens what
	 * read and write need: 0, -EBUSY (another manager held it for
	 * MRI_JOURNAL_LOCK_WAIT_MS), -ENOENT, or an open's error. */
	int (*begin)(void *arg);
	/* Releases what begin took. keep: a reclaim step, whose run of
	 * steps goes on; the backend may keep fds open until its rest op
	 * (struct mri_backend.rest). */
	void (*end)(void *arg, bool keep);
	/* Under the lock: the control's value in the records' encoding
	 * (MR_UNLIMITED for none, in whatever spelling the kernel prints
	 * it): 0, -ENOENT (group gone), or another negative errno. */
	int (*read)(void *arg, uint64_t *value);
	/* Under the lock: writes value (MR_UNLIMITED: none, in the
	 * kernel's spelling): 0, -ENOENT, or the kernel's answer. */
	int (*write)(void *arg, uint64_t value);
	/* The group's usage in bytes: 0, -ENOENT, -EIO. */
	int (*read_usage)(void *arg, uint64_t *bytes);
	/* Optional: words appended to the log line of a restore that
	 * failed with err (say what an administrator must do), or "". */
	const char *(*restore_hint)(int err);
	/* Usage above the value (cgroup v1: forced charges) lowers from the
	 * value, so that the write stays a lowering, and the kernel
	 * reclaims more than the step. false: a step lowers from usage,
	 * and only where that is below the value (cgroup v2: a group above
	 * memory.high is already throttled towards it). */
	bool lower_from_value;
};

/* One group's step: set by mri_lowerstep_init(), then owned by it. */
struct mri_lowerstep {
	const struct mri_lowerstep_ops *ops;
	void *arg;
	struct mri_journal *journal;
	struct mri_logger *log;
	const char *path;     /* the group, for messages */
	uint64_t page_bytes;  /* the kernel's page size */
	/* A restore failed: its record is kept, and a close that cannot
	 * have the lock to retry it answers -EBUSY. */
	bool restore_failed;
	/* The run planned (mri_lowerstep_plan()): the most it means to
	 * free, 0 for none (every step is a run of its own). */
	uint64_t run_bytes;
	bool held;      /* between a planned run's first step and its end:
			   the lock is held, the backend's fds open */
	bool recorded;  /* the journal holds rec, this run's record */
	struct mri_journal_record rec;
};

/* Sets up s for the group at `path` (kept, not copied: valid until the
 * group is closed) whose journal j is open; page_bytes is the kernel's
 * page size (sysconf(_SC_PAGESIZE)). Pure. */
void mri_lowerstep_init(struct mri_lowerstep *s,
			const struct mri_lowerstep_ops *ops, void *arg,
			struct mri_journal *j, struct mri_logger *log,
			const char *path, uint64_t page_bytes);

/*
 * One step asking the kernel for `bytes` (0 .. MR_UNLIMITED; below a page
 * asks for one page): takes the lock and settles a record left behind
 * (mri_lowerstep_settle()) unless its run holds them, reads the value and
 * usage, records the step unless its run's record covers it, lowers the
 * value to floor_page(base - step), where base is usage (or, with
 * lower_from_value, the value when usage is above it) and step is
 * `bytes` in whole pages, at most base less one page, restores it by the
 * rule, and, unless a planned run goes on, clears the record and
 * releases the lock (ops->end with keep: the backend's fds may stay until
 * its rest op). The backend's batch sizing is the core's: no cap here.
 *
 * *asked_bytes receives the step, *freed_bytes the fall in usage across
 * it (clamped at 0); both 0 on error. Returns 0 (an EBUSY or EINTR of the
 * lowering write is a partial step: the kernel kept the old value after
 * reclaiming what it could), -EAGAIN when no page can be asked (base
 * below two pages, or the value already at or below base - step), -EBUSY
 * (the lock), -ENOENT, the journal's error (nothing lowered), the
 * lowering write's error (restored), or the restore's error (record kept,
 * restore_failed set).
 */
int mri_lowerstep_reclaim(struct mri_lowerstep *s, uint64_t bytes,
			  uint64_t *asked_bytes, uint64_t *freed_bytes);

/* The steps from now until mri_lowerstep_rest() are one run that means to
 * free at most run_bytes (1 .. MR_UNLIMITED) from usage at its first
 * step: one lock and one record for them all (see above). Pure: nothing
 * is taken before the first step. */
void mri_lowerstep_plan(struct mri_lowerstep *s, uint64_t run_bytes);

/* The end of a run: clears its record and releases the lock a planned run
 * held (ops->end with keep), and forgets the plan. Nothing is lowered
 * then; a clear that fails is logged, and the record, which holds the
 * original value, is settled by the next step or open as a no-op. */
void mri_lowerstep_rest(struct mri_lowerstep *s);

/* Under the lock (ops->begin): settles a record a dead manager or a
 * failed restore left (mri_journal_settle() with the restore rule), and
 * clears restore_failed once nothing is left lowered. Returns 0, -ENOENT,
 * -EIO (a record refused, kept) or the restore's error. For a backend's
 * own writes of the control, which must not be undone by a record's
 * restore (cgroup1's write_limit). */
int mri_lowerstep_settle(struct mri_lowerstep *s);

/* A reclaim call the core sized to nothing (no step): takes the lock,
 * settles a record left behind as a step does first (a failed restore is
 * retried), and releases it (the run goes on), signals blocked as for a
 * step; 0 at once while a planned run holds the lock (it left nothing
 * lowered). Returns 0, -EBUSY (the lock), -ENOENT, -EIO or the restore's
 * error (record kept). */
int mri_lowerstep_retry(struct mri_lowerstep *s);

/* At open: settles a record left behind, under the lock. A lock held by
 * another manager's step is not waited for (that step settles at its
 * start; logged at MR_LOG_INFO): 0. Returns 0, -ENOENT, -EIO or the
 * restore's error (the open fails). Signals as the caller has them. */
int mri_lowerstep_recover(struct mri_lowerstep *s);

/* At close: ends a run still held (mri_lowerstep_rest()), then settles a
 * record left behind, under the lock. Returns 0 when
 * nothing of this handle is left lowered (the group gone included, and a
 * lock held elsewhere when no restore of ours failed), else the
 * restore's error, or -EBUSY (the lock held elsewhere with a record of
 * ours kept): the journal keeps the record for the next open. */
int mri_lowerstep_finish(struct mri_lowerstep *s);

#endif /* MR_LOWERSTEP_H */
