/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim on cgroup v2.
 *
 * memory.reclaim (Linux 5.19, mm/memcontrol.c memory_reclaim()) reclaims
 * up to the bytes written, in SWAP_CLUSTER_MAX steps, and answers EAGAIN
 * when it gave up before freeing as much (MAX_RECLAIM_RETRIES steps that
 * freed nothing): less than asked, often most of it, so not an error here.
 * The bytes freed are memory.current before minus after, clamped at 0
 * (charges made meanwhile count against it; 6.1 also overshoots). A
 * request is one batch of the core's (never "the whole usage") and at
 * most the usage.
 *
 * `swappiness=N` (Linux 6.11, "mm: add swapiness= arg to memory.reclaim")
 * weighs anonymous against file pages for that call; 0 reclaims page
 * cache only. Older kernels answer EINVAL to the argument. Whether the
 * kernel takes it is probed once, with a request for 0 bytes: from 6.11
 * memory_reclaim() parses "0 swappiness=N" (memparse() then the
 * match_token() table) and its loop, while (nr_reclaimed <
 * nr_to_reclaim), does not run, so the probe reclaims nothing; 6.1 answers
 * EINVAL (docs/kernels.md).
 *
 * Without memory.reclaim (before 5.19), a step lowers memory.high to
 * usage - step for a moment, which makes the writer reclaim down to it
 * (memory_high_write()), and puts it back; journaled as cgroup1 journals
 * its limit (lib/journal.h), so that a crash in between is recovered by
 * the next open or step. A lowered high throttles the group's charging
 * tasks rather than OOM-killing them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup2.h"
#include "fileops.h"

unsigned int mri_cgroup2_test_pause_ms;

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Writes a request to memory.reclaim: "BYTES" or "BYTES swappiness=N". */
static int write_reclaim(struct mri_cgroup2 *cg, uint64_t bytes,
			 int swappiness)
{
	char buf[48];
	int fd, r;

	if (swappiness >= 0)
		snprintf(buf, sizeof(buf), "%" PRIu64 " swappiness=%d", bytes,
			 swappiness);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	fd = mri_cgroup2_open_file(cg, "memory.reclaim", O_WRONLY);
	if (fd < 0)
		return fd;
	r = mri_write_fd(fd, buf);
	mri_close(fd);
	return r;
}

int mri_cgroup2_set_swappiness(void *priv, int swappiness)
{
	struct mri_cgroup2 *cg = priv;
	int r;

	if (swappiness < -1 || swappiness > 200)
		return -EINVAL;
	if (!cg->has_reclaim)
		return -EOPNOTSUPP;
	if (swappiness >= 0 && cg->swappiness_ok < 0) {
		r = write_reclaim(cg, 0, swappiness);
		if (r == -EINVAL) {
			cg->swappiness_ok = 0;
			mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s: "
				"memory.reclaim does not take swappiness= "
				"(Linux < 6.11)", cg->path);
		} else if (r < 0) {
			return mri_cgroup2_gone(r);
		} else {
			cg->swappiness_ok = 1;
		}
	}
	if (swappiness >= 0 && !cg->swappiness_ok)
		return -EOPNOTSUPP;
	cg->swappiness = swappiness;
	return 0;
}

/* ---------------------------------------------------------- fallback */

static int read_high(struct mri_cgroup2 *cg, uint64_t *v)
{
	return mri_cgroup2_read_file(cg, MRI_CGROUP2_HIGH_FILE, v);
}

/* Puts back the high of a record, unless someone else has set it since
 * (the rule of cgroup1's restore()). 0, -ENOENT or the write's error. */
static int restore(void *arg, const struct mri_journal_record *rec)
{
	struct mri_cgroup2 *cg = arg;
	uint64_t cur;
	int r;

	r = read_high(cg, &cur);
	if (r == -ENOENT)
		return r;
	if (r == 0 && cur == rec->original)
		return 0;
	if (r == 0 && cur != rec->lowered) {
		mri_log(cg->log, MR_LOG_NOTICE, "cgroup2: %s: memory.high is "
			"%" PRIu64 ", not the %" PRIu64 " written by pid %d: "
			"changed by someone else, left as is", cg->path, cur,
			rec->lowered, (int)rec->pid);
		return 0;
	}
	r = mri_cgroup2_write_file(cg, MRI_CGROUP2_HIGH_FILE, rec->original);
	if (r < 0 && r != -ENOENT)
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: cannot restore "
			"memory.high to %" PRIu64 ": %s; journal kept, every "
			"step retries it", cg->path, rec->original,
			mr_strerror(r));
	return r;
}

/* Under the journal lock: settles a record left behind
 * (mri_journal_settle()). */
static int settle(struct mri_cgroup2 *cg)
{
	return mri_journal_settle(&cg->journal, MRI_CGROUP2_HIGH_FILE, cg->path,
				  restore, cg);
}

int mri_cgroup2_journal_open(struct mri_cgroup2 *cg, const char *state_dir)
{
	int r;

	r = mri_journal_open(&cg->journal, state_dir, cg->real, cg->root,
			     cg->log);
	if (r < 0)
		return r;
	cg->journaled = true;
	r = mri_journal_lock(&cg->journal);
	if (r == -EBUSY) {
		/* A step holds the lock (its holder is logged): the record
		 * is its own; a stale one is settled at the start of every
		 * step. */
		mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s: the reclaim lock "
			"is held; recovery left to the next step", cg->path);
		return 0;
	}
	if (r == 0) {
		r = settle(cg);
		mri_journal_unlock(&cg->journal);
	}
	if (r < 0) {
		mri_journal_close(&cg->journal);
		cg->journaled = false;
	}
	return r;
}

int mri_cgroup2_journal_close(struct mri_cgroup2 *cg)
{
	int r;

	r = mri_journal_lock(&cg->journal);
	if (r == 0) {
		r = settle(cg);
		mri_journal_unlock(&cg->journal);
		if (r == -ENOENT)
			r = 0;
	} else if (r == -EBUSY && !cg->restore_failed) {
		r = 0;
	}
	mri_journal_close(&cg->journal);
	cg->journaled = false;
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

/* One step of the fallback, under the group's lock with every signal
 * blocked (a restore must not be interrupted). */
static int high_step(struct mri_cgroup2 *cg, uint64_t bytes, uint64_t *asked,
		     uint64_t *freed)
{
	const uint64_t page = cg->page_size;
	struct mri_journal_record rec = { .file = MRI_CGROUP2_HIGH_FILE };
	uint64_t usage, usage2, high, step;
	sigset_t all, old;
	int r, w, c;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = mri_journal_lock(&cg->journal);
	if (r < 0)
		goto out;
	r = settle(cg);
	if (r < 0)
		goto unlock;
	cg->restore_failed = false;
	r = read_high(cg, &high);
	if (r == 0)
		r = mri_cgroup2_read_value(cg, cg->current_fd,
					   "memory.current", &usage);
	if (r < 0)
		goto unlock;
	/* At least one page stays; the new high must be a lowering. */
	step = min_u64(bytes < page ? page : bytes, usage > page ?
		       usage - page : 0) / page * page;
	if (step < page || (high != MR_UNLIMITED && high <= usage - step)) {
		r = -EAGAIN;
		goto unlock;
	}
	rec.original = high;
	rec.lowered = (usage - step) / page * page;
	rec.pid = getpid();
	r = mri_journal_write(&cg->journal, &rec);
	if (r < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: cannot write the "
			"journal: %s; memory.high left alone", cg->path,
			mr_strerror(r));
		goto unlock;
	}
	w = mri_cgroup2_write_file(cg, MRI_CGROUP2_HIGH_FILE, rec.lowered);
	if (mri_cgroup2_test_pause_ms)
		pause_lowered(mri_cgroup2_test_pause_ms);
	r = restore(cg, &rec);
	if (r < 0 && r != -ENOENT) {
		cg->restore_failed = true;
		goto unlock;
	}
	c = mri_journal_clear(&cg->journal);
	if (r == 0)
		r = c;
	if (r == 0)
		r = w;
	if (r == 0)
		r = mri_cgroup2_read_value(cg, cg->current_fd,
					   "memory.current", &usage2);
	if (r < 0)
		goto unlock;
	*asked = step;
	*freed = usage > usage2 ? usage - usage2 : 0;
unlock:
	mri_journal_unlock(&cg->journal);
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* ---------------------------------------------------------- reclaim */

int mri_cgroup2_reclaim(void *priv, uint64_t bytes, uint64_t *asked_bytes,
			uint64_t *freed_bytes)
{
	struct mri_cgroup2 *cg = priv;
	const uint64_t page = cg->page_size;
	uint64_t before, after, ask;
	int r, w;

	*asked_bytes = 0;
	*freed_bytes = 0;
	if (!cg->has_reclaim && cg->limits_write_err)
		return cg->limits_write_err;
	if (!cg->has_reclaim)
		return high_step(cg, bytes, asked_bytes, freed_bytes);
	r = mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				   &before);
	if (r < 0)
		return r;
	/* Whole pages (the kernel rounds down: a request below a page
	 * would ask for nothing), at most the usage. */
	ask = min_u64((bytes < page ? page : bytes) / page * page,
		      before / page * page);
	if (ask == 0)
		return -EAGAIN;
	w = write_reclaim(cg, ask, cg->swappiness);
	/* EAGAIN: less than asked; EINTR: a signal ended the loop
	 * (memory_reclaim() checks signal_pending()): what was freed
	 * stands. */
	if (w == -EAGAIN || w == -EINTR)
		w = 0;
	if (w < 0) {
		w = mri_cgroup2_gone(w);
		if (w != -ENOENT)
			mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: "
				"memory.reclaim %" PRIu64 ": %s", cg->path,
				ask, mr_strerror(w));
		return w;
	}
	r = mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				   &after);
	if (r < 0)
		return r;
	*asked_bytes = ask;
	*freed_bytes = before > after ? before - after : 0;
	return 0;
}
