/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim on cgroup v2.
 *
 * memory.reclaim (Linux 5.19, mm/memcontrol.c memory_reclaim()) reclaims
 * up to the bytes written, in SWAP_CLUSTER_MAX steps, and answers EAGAIN
 * when it gave up before freeing as much (MAX_RECLAIM_RETRIES steps that
 * freed nothing): less than asked, often most of it, so not an error here.
 * The bytes freed are memory.current before minus after, clamped at 0
 * (charges made meanwhile count against it), never the request: a write
 * may free far more than it asked. A request is one batch of the core's
 * (never "the whole usage"), at most the usage, and at most
 * MRI_CGROUP2_RECLAIM_CHUNK_BYTES (16 MiB).
 *
 * Why the chunk. memory_reclaim() loops in the writer's context until it
 * has reclaimed the request, or MAX_RECLAIM_RETRIES (16) rounds in a row
 * reclaimed nothing, or a signal is pending; nothing else ends it. Its
 * rounds asked the whole remainder before Linux 6.6, which reclaimed
 * 1.7 GiB for a request of 1 GiB on a group of 20 GiB of anonymous
 * memory (0388536ac291 "mm:vmscan: fix inaccurate reclaim during
 * proactive reclaim", whose message has the figures; 6.1 freed 11.4 MB
 * for "8M" here, docs/kernels.md); 6.6 asked SWAP_CLUSTER_MAX per round
 * and 6.9 a quarter of the remainder (287d5fedb377 "mm: memcg: use
 * larger batches for proactive reclaim"). The kernel puts no bound on
 * the overshoot: 6.1 freed 22.7 to 29.1 MB for a write of 16 MiB here
 * (docs/kernels.md), and the core counts what was freed, not what was
 * asked. A write lasts what the kernel takes to reclaim at most 16 MiB
 * and its overshoot, plus at most 16 rounds that reclaim nothing, each
 * of which may scan the group's whole LRUs (priorities down to 0): its
 * time is bounded by the chunk and the group's size, no longer by what
 * the caller asked. A larger batch is written as 16 MiB chunks by the
 * core's loop (lib/core/reclaim.c), which measures each chunk's fall in
 * usage, asks the next one only what is still missing (the over-reclaim
 * of one chunk is carried into the next), and stops at its deadline
 * between two chunks: a call lasts its deadline plus at most one chunk.
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
 * (memory_high_write()), and puts it back: the journaled lowering step
 * of lib/cgroupfs/lowerstep.h, which cgroup1 takes for its limit, with "max" for
 * no high. A lowered high throttles the group's charging tasks
 * (mem_cgroup_handle_over_high()) rather than OOM-killing them, so the
 * core does not cap its batches (no MRI_CAP_STEP_CAN_OOM).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup2.h"
#include "fileops.h"

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

/* struct mri_lowerstep_ops of the memory.high step. */
static int high_begin(void *arg)
{
	struct mri_cgroup2 *cg = arg;

	return mri_journal_lock(&cg->journal);
}

/* No fd is kept between steps: cgroup2 has no rest op. */
static void high_end(void *arg, bool keep)
{
	struct mri_cgroup2 *cg = arg;

	(void)keep;
	mri_journal_unlock(&cg->journal);
}

static int high_read(void *arg, uint64_t *value)
{
	return mri_cgroup2_read_file(arg, MRI_CGROUP2_HIGH_FILE, value);
}

static int high_write(void *arg, uint64_t value)
{
	return mri_cgroup2_write_file(arg, MRI_CGROUP2_HIGH_FILE, value);
}

static int high_usage(void *arg, uint64_t *bytes)
{
	struct mri_cgroup2 *cg = arg;

	return mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				      bytes);
}

static const struct mri_lowerstep_ops high_ops = {
	.file = MRI_CGROUP2_HIGH_FILE,
	.name = "cgroup2",
	.begin = high_begin,
	.end = high_end,
	.read = high_read,
	.write = high_write,
	.read_usage = high_usage,
	/* Usage above memory.high is a group being throttled towards it:
	 * a step lowers from usage, and only below the high. */
	.lower_from_value = false,
};

int mri_cgroup2_journal_open(struct mri_cgroup2 *cg, const char *state_dir)
{
	int r;

	r = mri_journal_open(&cg->journal, state_dir, cg->real, cg->root,
			     cg->log);
	if (r < 0)
		return r;
	mri_lowerstep_init(&cg->step, &high_ops, cg, &cg->journal, cg->log,
			   cg->path, cg->page_size);
	cg->journaled = true;
	r = mri_lowerstep_recover(&cg->step);
	if (r < 0) {
		mri_journal_close(&cg->journal);
		cg->journaled = false;
	}
	return r;
}

int mri_cgroup2_journal_close(struct mri_cgroup2 *cg)
{
	int r;

	r = mri_lowerstep_finish(&cg->step);
	mri_journal_close(&cg->journal);
	cg->journaled = false;
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
		return mri_lowerstep_reclaim(&cg->step, bytes, asked_bytes,
					     freed_bytes);
	r = mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				   &before);
	if (r < 0)
		return r;
	/* Whole pages (the kernel rounds down: a request below a page
	 * would ask for nothing), at most the usage and a chunk. */
	ask = min_u64((bytes < page ? page : bytes) / page * page,
		      before / page * page);
	ask = min_u64(ask, MRI_CGROUP2_RECLAIM_CHUNK_BYTES);
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

int mri_cgroup2_read_swap_usage(void *priv, uint64_t *swap_bytes)
{
	struct mri_cgroup2 *cg = priv;

	if (!cg->has_swap)
		return -EOPNOTSUPP;
	return mri_cgroup2_read_file(cg, "memory.swap.current", swap_bytes);
}
