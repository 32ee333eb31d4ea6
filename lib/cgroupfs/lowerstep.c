/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The journaled lowering step; see lowerstep.h for the rule. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "lowerstep.h"

unsigned int mri_lowerstep_test_pause_ms;

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void mri_lowerstep_init(struct mri_lowerstep *s,
			const struct mri_lowerstep_ops *ops, void *arg,
			struct mri_journal *j, struct mri_logger *log,
			const char *path, uint64_t page_bytes)
{
	*s = (struct mri_lowerstep){
		.ops = ops,
		.arg = arg,
		.journal = j,
		.log = log,
		.path = path,
		.page_bytes = page_bytes,
	};
	snprintf(s->rec.file, sizeof(s->rec.file), "%s", ops->file);
}

/* The restore rule (lowerstep.h), for a record of this group: 0 (nothing
 * left lowered), -ENOENT (group gone) or the write's error. */
static int restore(void *arg, const struct mri_journal_record *rec)
{
	struct mri_lowerstep *s = arg;
	const struct mri_lowerstep_ops *ops = s->ops;
	uint64_t cur;
	int r;

	r = ops->read(s->arg, &cur);
	if (r == -ENOENT)
		return r;
	/* A read that fails otherwise cannot tell an administrator's value
	 * from ours: the original is written all the same, since a value
	 * left lowered can OOM-kill the group's tasks (v1), while an
	 * administrator's change racing a failed read is the lesser risk.
	 * Already the original (the lowering write failed, or the crash
	 * came after the restore): writing it again would make the kernel
	 * reclaim to it, and v1 answer EBUSY where usage is above it
	 * (forced charges). */
	if (r == 0 && cur == rec->original)
		return 0;
	if (r == 0 && (cur < rec->lowest || cur > rec->highest)) {
		mri_log(s->log, MR_LOG_NOTICE, "%s: %s: %s is %" PRIu64
			", not within %" PRIu64 "..%" PRIu64 " written by pid "
			"%d: changed by someone else, left as is", ops->name,
			s->path, ops->file, cur, rec->lowest, rec->highest,
			(int)rec->pid);
		return 0;
	}
	r = ops->write(s->arg, rec->original);
	if (r < 0 && r != -ENOENT)
		mri_log(s->log, MR_LOG_ERR, "%s: %s: cannot restore %s to %"
			PRIu64 ": %s; journal kept, every step retries it%s",
			ops->name, s->path, ops->file, rec->original,
			mr_strerror(r),
			ops->restore_hint ? ops->restore_hint(r) : "");
	return r;
}

int mri_lowerstep_settle(struct mri_lowerstep *s)
{
	int r;

	r = mri_journal_settle(s->journal, s->ops->file, s->path, restore, s);
	if (r == 0)
		s->restore_failed = false;
	return r;
}

int mri_lowerstep_recover(struct mri_lowerstep *s)
{
	int r;

	r = s->ops->begin(s->arg);
	if (r == -EBUSY) {
		/* A step holds the lock (its holder is logged): a record
		 * there is its own, and a stale one is settled at the start
		 * of every step. */
		mri_log(s->log, MR_LOG_INFO, "%s: %s: the reclaim lock is "
			"held; recovery left to the next step", s->ops->name,
			s->path);
		return 0;
	}
	if (r < 0)
		return r;
	r = mri_lowerstep_settle(s);
	s->ops->end(s->arg, false);
	return r;
}

int mri_lowerstep_finish(struct mri_lowerstep *s)
{
	int r;

	mri_lowerstep_rest(s);
	r = s->ops->begin(s->arg);
	if (r == 0) {
		r = mri_lowerstep_settle(s);
		s->ops->end(s->arg, false);
		if (r == -ENOENT)
			r = 0;
	} else if (r == -ENOENT || (r == -EBUSY && !s->restore_failed)) {
		/* Gone: nothing to restore. Held elsewhere with nothing of
		 * ours lowered: its holder removes the empty journal. */
		r = 0;
	}
	return r;
}

static void pause_lowered(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Under the lock: the run's record (s->rec), written before the first
 * lowering of the run and again where this step's would not be covered
 * by it: the value is not the record's original (someone else changed
 * it between two steps) or the step lowers below the record's lowest
 * (usage fell for other reasons than the run's steps). A run's record
 * covers every value from usage at its first step less the run's bytes
 * (at least a page) to the original less one; a lone step's, the one
 * value it writes. */
static int record(struct mri_lowerstep *s, uint64_t value, uint64_t base,
		  uint64_t lowered)
{
	struct mri_journal_record *rec = &s->rec;
	const uint64_t page = s->page_bytes;
	uint64_t floor;
	int r;

	if (s->recorded && value == rec->original && lowered >= rec->lowest)
		return 0;
	rec->original = value;
	rec->lowest = rec->highest = lowered;
	if (s->run_bytes) {
		floor = base > s->run_bytes + page ?
			(base - s->run_bytes) / page * page : page;
		rec->lowest = min_u64(floor, lowered);
		rec->highest = value - 1;
	}
	rec->pid = getpid();
	r = mri_journal_write(s->journal, rec);
	if (r < 0) {
		mri_log(s->log, MR_LOG_ERR, "%s: %s: cannot write the journal: "
			"%s; %s left alone", s->ops->name, s->path,
			mr_strerror(r), s->ops->file);
		return r;
	}
	s->recorded = true;
	return 0;
}

/* Under the lock: reads the value and usage, sizes the step, records it
 * (record()), lowers, restores. */
static int step(struct mri_lowerstep *s, uint64_t bytes,
		uint64_t *asked_bytes, uint64_t *freed_bytes)
{
	const struct mri_lowerstep_ops *ops = s->ops;
	const uint64_t page = s->page_bytes;
	struct mri_journal_record mine;
	uint64_t value, usage, usage2, base, want, stepb;
	int r, w;

	/* Read under the lock: another manager's lowered value must never
	 * be taken for the original. Usage last, just before the write, so
	 * that little is charged in between. */
	r = ops->read(s->arg, &value);
	if (r == 0)
		r = ops->read_usage(s->arg, &usage);
	if (r < 0)
		return r;
	base = ops->lower_from_value ? min_u64(usage, value) : usage;
	/* At least one page stays. A request below a page asks for one page
	 * (64 KiB pages exist). */
	want = bytes < s->page_bytes ? s->page_bytes : bytes;
	if (base < 2 * page)
		return -EAGAIN;
	stepb = min_u64(want, base - page) / page * page;
	/* The write must be a lowering. */
	if (stepb < page || (value != MR_UNLIMITED && value <= base - stepb))
		return -EAGAIN;

	r = record(s, value, base, (base - stepb) / page * page);
	if (r < 0)
		return r;
	/* The step's own restore knows the one value it writes. */
	mine = s->rec;
	mine.lowest = mine.highest = (base - stepb) / page * page;
	w = ops->write(s->arg, mine.lowest);
	/* EBUSY: the kernel reclaimed what it could but not down to the new
	 * value, and kept the old one (v1, mem_cgroup_resize_max()): a
	 * partial step, not an error. EINTR after the backend's retries:
	 * the same, the value was not changed. */
	if (w == -EBUSY || w == -EINTR)
		w = 0;
	if (mri_lowerstep_test_pause_ms)
		pause_lowered(mri_lowerstep_test_pause_ms);
	r = restore(s, &mine);
	if (r < 0 && r != -ENOENT) {
		s->restore_failed = true;
		return r;
	}
	if (r == 0)
		r = w;
	if (r == 0)
		r = ops->read_usage(s->arg, &usage2);
	if (r < 0)
		return r;
	*asked_bytes = stepb;
	*freed_bytes = usage > usage2 ? usage - usage2 : 0;
	return 0;
}

/* The end of a run (of one step, or of a planned run): the record is
 * cleared unless a restore failed (it is then kept for the next step,
 * the close and the next open), and the lock released (the backend may
 * keep its fds until its rest op). Returns 0 or the clear's error. */
static int end_run(struct mri_lowerstep *s)
{
	int r = 0;

	if (s->recorded && !s->restore_failed)
		r = mri_journal_clear(s->journal);
	s->recorded = s->held = false;
	s->ops->end(s->arg, true);
	return r;
}

int mri_lowerstep_retry(struct mri_lowerstep *s)
{
	sigset_t all, old;
	int r;

	/* A held run left nothing lowered: a step whose restore failed
	 * ends its run. */
	if (s->held)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = s->ops->begin(s->arg);
	if (r == 0) {
		r = mri_lowerstep_settle(s);
		s->ops->end(s->arg, true);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

void mri_lowerstep_plan(struct mri_lowerstep *s, uint64_t run_bytes)
{
	s->run_bytes = run_bytes;
}

void mri_lowerstep_rest(struct mri_lowerstep *s)
{
	int r;

	if (s->held) {
		r = end_run(s);
		if (r < 0)
			mri_log(s->log, MR_LOG_ERR, "%s: %s: cannot clear the "
				"journal: %s; %s is restored, and the next "
				"step or open finds it so", s->ops->name,
				s->path, mr_strerror(r), s->ops->file);
	}
	s->run_bytes = 0;
}

int mri_lowerstep_reclaim(struct mri_lowerstep *s, uint64_t bytes,
			  uint64_t *asked_bytes, uint64_t *freed_bytes)
{
	sigset_t all, old;
	int r = 0, c;

	*asked_bytes = 0;
	*freed_bytes = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!s->held) {
		r = s->ops->begin(s->arg);
		if (r < 0)
			goto out;
		r = mri_lowerstep_settle(s);
		if (r < 0) {
			s->ops->end(s->arg, true);
			goto out;
		}
	}
	r = step(s, bytes, asked_bytes, freed_bytes);
	if (r == 0 && s->run_bytes) {
		/* The run goes on: its lock and record are kept. */
		s->held = true;
		goto out;
	}
	c = end_run(s);
	if (r == 0)
		r = c;
	if (r < 0) {
		*asked_bytes = 0;
		*freed_bytes = 0;
		/* What is left of the call steps alone. */
		s->run_bytes = 0;
	}
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}
