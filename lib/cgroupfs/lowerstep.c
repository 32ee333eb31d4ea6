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
	if (r == 0 && cur != rec->lowered) {
		mri_log(s->log, MR_LOG_NOTICE, "%s: %s: %s is %" PRIu64
			", not the %" PRIu64 " written by pid %d: changed by "
			"someone else, left as is", ops->name, s->path,
			ops->file, cur, rec->lowered, (int)rec->pid);
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

/* Under the lock, with the record rec names the file in: reads the value
 * and usage, sizes the step, lowers, restores. */
static int step(struct mri_lowerstep *s, uint64_t bytes,
		struct mri_journal_record *rec, uint64_t *asked_bytes,
		uint64_t *freed_bytes)
{
	const struct mri_lowerstep_ops *ops = s->ops;
	const uint64_t page = s->page_bytes;
	uint64_t value, usage, usage2, base, want, stepb;
	int r, w, c;

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

	rec->original = value;
	rec->lowered = (base - stepb) / page * page;
	rec->pid = getpid();
	r = mri_journal_write(s->journal, rec);
	if (r < 0) {
		mri_log(s->log, MR_LOG_ERR, "%s: %s: cannot write the journal: "
			"%s; %s left alone", ops->name, s->path,
			mr_strerror(r), ops->file);
		return r;
	}
	w = ops->write(s->arg, rec->lowered);
	/* EBUSY: the kernel reclaimed what it could but not down to the new
	 * value, and kept the old one (v1, mem_cgroup_resize_max()): a
	 * partial step, not an error. EINTR after the backend's retries:
	 * the same, the value was not changed. */
	if (w == -EBUSY || w == -EINTR)
		w = 0;
	if (mri_lowerstep_test_pause_ms)
		pause_lowered(mri_lowerstep_test_pause_ms);
	r = restore(s, rec);
	if (r < 0 && r != -ENOENT) {
		s->restore_failed = true;
		return r;
	}
	c = mri_journal_clear(s->journal);
	if (r == 0)
		r = c;
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

int mri_lowerstep_retry(struct mri_lowerstep *s)
{
	sigset_t all, old;
	int r;

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

int mri_lowerstep_reclaim(struct mri_lowerstep *s, uint64_t bytes,
			  uint64_t *asked_bytes, uint64_t *freed_bytes)
{
	struct mri_journal_record rec = { .file = "" };
	sigset_t all, old;
	int r;

	*asked_bytes = 0;
	*freed_bytes = 0;
	snprintf(rec.file, sizeof(rec.file), "%s", s->ops->file);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = s->ops->begin(s->arg);
	if (r == 0) {
		r = mri_lowerstep_settle(s);
		if (r == 0)
			r = step(s, bytes, &rec, asked_bytes, freed_bytes);
		s->ops->end(s->arg, true);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}
