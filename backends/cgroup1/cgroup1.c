/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v1 memory controller backend
 * (Documentation/admin-guide/cgroup-v1/memory.rst).
 *
 * v1 has no reclaim file: the only sized reclaim trigger is lowering
 * memory.limit_in_bytes below usage, which makes the kernel reclaim down
 * to the new limit before it takes it (mm/memcontrol-v1.c,
 * mem_cgroup_resize_max()); when it cannot, the write fails with EBUSY and
 * the limit stays, but what could be reclaimed has been. A step therefore
 * lowers the limit to usage - step and puts it back at once: the
 * journaled lowering step of lib/cgroupfs/lowerstep.h, which this file gives the
 * limit file, its "-1" for no limit, and its locked fds. While the limit
 * is lowered, a charge that reclaim cannot cover OOM-kills a task of the
 * group (MRI_CAP_STEP_CAN_OOM): the core sizes the batch for that.
 *
 * Test-only setting: mri_lowerstep_test_pause_ms (lib/cgroupfs/lowerstep.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "backend.h"
#include "cgchildren.h"
#include "cgroup1.h"
#include "fds.h"
#include "fileops.h"
#include "swap.h"

/* Attempts of a limit write interrupted by a pending signal. */
#define WRITE_RETRIES 100

int mri_cgroup1_gone(int err)
{
	/* A kept fd of a removed cgroup's file fails with ENODEV (kernfs
	 * deactivates the node); a lookup by name fails with ENOENT. */
	return err == -ENODEV || err == -ENOENT ? -ENOENT : err;
}

static int read_u64(struct mri_cgroup1 *cg, int fd, const char *name,
		    uint64_t *out)
{
	char buf[64];
	ssize_t n;

	n = mri_read_fd(fd, buf, sizeof(buf));
	if (n < 0)
		return mri_cgroup1_gone((int)n);
	if (mri_parse_u64(buf, out) < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup1: %s/%s: not a number",
			cg->path, name);
		return -EIO;
	}
	return 0;
}

int mri_cgroup1_dir(struct mri_cgroup1 *cg)
{
	int fd, r;

	fd = mri_open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup1_gone(fd);
	r = mri_journal_check_dir(&cg->journal, fd);
	if (r < 0) {
		mri_close(fd);
		return r;
	}
	return fd;
}

int mri_cgroup1_open_file(struct mri_cgroup1 *cg, const char *name,
			  int flags)
{
	int dirfd, fd;

	dirfd = mri_cgroup1_dir(cg);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, name, flags | O_CLOEXEC, 0);
	mri_close(dirfd);
	return mri_cgroup1_gone(fd);
}

int mri_cgroup1_read_at(struct mri_cgroup1 *cg, int dirfd, const char *name,
			uint64_t *out)
{
	int fd, r;

	fd = mri_openat(dirfd, name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup1_gone(fd);
	r = read_u64(cg, fd, name, out);
	mri_close(fd);
	return r;
}

/*
 * A step (a reclaim step, a limit write, the settling of a record at open
 * and close): under the group's step lock, with memory.limit_in_bytes
 * open (run_limit_fd) for the step's reads and writes, opened from the
 * directory the lock is held on. The reclaim steps of one run keep the
 * lock, the journal file, the directories and the limit file from one
 * step to the next (lib/cgroupfs/lowerstep.h, "A run of steps"; then
 * step_end(keep) keeps the directories and the limit file), until
 * cg1_rest() at the end of the run: a step then opens nothing.
 */
static void close_run_fds(struct mri_cgroup1 *cg)
{
	if (cg->run_limit_fd >= 0)
		mri_close(cg->run_limit_fd);
	cg->run_limit_fd = -1;
}

/* struct mri_lowerstep_ops.begin */
static int step_begin(void *arg)
{
	struct mri_cgroup1 *cg = arg;
	int r;

	r = mri_journal_lock(&cg->journal);
	if (r < 0) {
		close_run_fds(cg);
		return r;
	}
	if (cg->run_limit_fd >= 0)
		return 0;
	r = mri_openat(cg->journal.step_fd, MRI_CGROUP1_LIMIT_FILE,
			     O_RDWR | O_CLOEXEC, 0);
	if (r < 0) {
		mri_journal_unlock(&cg->journal);
		return mri_cgroup1_gone(r);
	}
	cg->run_limit_fd = r;
	return 0;
}

/* struct mri_lowerstep_ops.end; keep: the next step of the run comes
 * soon (cg1_reclaim()). */
static void step_end(void *arg, bool keep)
{
	struct mri_cgroup1 *cg = arg;

	if (keep) {
		mri_journal_unlock_keep(&cg->journal);
		return;
	}
	close_run_fds(cg);
	mri_journal_unlock(&cg->journal);
}

/* The end of a run of reclaim steps (struct mri_backend.rest): the run's
 * lock and record go first. */
static void cg1_rest(void *priv)
{
	struct mri_cgroup1 *cg = priv;

	mri_lowerstep_rest(&cg->step);
	close_run_fds(cg);
	mri_journal_rest(&cg->journal);
}

/* struct mri_lowerstep_ops.read: the limit as a value
 * (mri_cgroup1_limit_value()), in a step. */
static int step_read(void *arg, uint64_t *value)
{
	struct mri_cgroup1 *cg = arg;
	uint64_t raw;
	int r;

	r = read_u64(cg, cg->run_limit_fd, MRI_CGROUP1_LIMIT_FILE, &raw);
	if (r == 0)
		*value = mri_cgroup1_limit_value(raw);
	return r;
}

/* Writes a limit in a step (struct mri_lowerstep_ops.write); MR_UNLIMITED
 * as "-1", the kernel's own spelling (page_counter_memparse()). */
static int write_limit(void *arg, uint64_t value)
{
	struct mri_cgroup1 *cg = arg;
	char buf[24];
	int i, r = 0;

	if (value == MR_UNLIMITED)
		strcpy(buf, "-1");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, value);
	/* mem_cgroup_resize_max() answers EINTR when a signal (or io_uring
	 * task work, TIF_NOTIFY_SIGNAL) is pending, even for a write that
	 * raises the limit: a restore must not give up on that. */
	for (i = 0; i < WRITE_RETRIES; i++) {
		r = mri_write_fd(cg->run_limit_fd, buf);
		if (r != -EINTR)
			break;
	}
	return mri_cgroup1_gone(r);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int cg1_probe(const char *path)
{
	static const char *const files[] = {
		"memory.usage_in_bytes", MRI_CGROUP1_LIMIT_FILE,
	};
	struct statfs st;
	int dirfd, fd, r;
	size_t i;

	r = mri_fops->statfs(path, &st);
	if (r < 0)
		return r;
	if (st.f_type != CGROUP_SUPER_MAGIC)
		return 0;
	/* A control file's path (…/memory.limit_in_bytes) is on the cgroup
	 * filesystem too: -ENOTDIR, not "no backend". */
	dirfd = mri_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dirfd < 0)
		return dirfd;
	r = 1;
	for (i = 0; i < sizeof(files) / sizeof(files[0]) && r == 1; i++) {
		fd = mri_openat(dirfd, files[i], O_RDONLY | O_CLOEXEC, 0);
		if (fd >= 0)
			mri_close(fd);
		else
			r = fd == -ENOENT ? 0 : fd;
	}
	mri_close(dirfd);
	return r;
}

static int cg1_read_usage(void *priv, uint64_t *usage_bytes)
{
	struct mri_cgroup1 *cg = priv;

	return read_u64(cg, cg->usage_fd, "memory.usage_in_bytes",
			usage_bytes);
}

/* EINVAL from a restore: the memsw limit was lowered below the limit's
 * original meanwhile (mem_cgroup_resize_max() refuses a limit above it). */
static const char *restore_hint(int err)
{
	return err == -EINVAL ? " (EINVAL: memory.memsw.limit_in_bytes is "
	       "below it now; an administrator must raise it)" : "";
}

/* The lowering step of memory.limit_in_bytes (lib/cgroupfs/lowerstep.h). */
static const struct mri_lowerstep_ops step_ops = {
	.file = MRI_CGROUP1_LIMIT_FILE,
	.name = "cgroup1",
	.begin = step_begin,
	.end = step_end,
	.read = step_read,
	.write = write_limit,
	.read_usage = cg1_read_usage,
	.restore_hint = restore_hint,
	/* Usage above the limit comes from forced charges: lowering from
	 * the limit keeps the write a lowering. */
	.lower_from_value = true,
};

static void close_fds(struct mri_cgroup1 *cg)
{
	close_run_fds(cg);
	mri_cgroup1_threshold_fini(cg);
	if (cg->usage_fd >= 0)
		mri_close(cg->usage_fd);
	cg->usage_fd = -1;
}

static void free_paths(struct mri_cgroup1 *cg)
{
	free(cg->path);
	free(cg->real_path);
	free(cg->root);
	cg->path = cg->real_path = cg->root = NULL;
}

/*
 * Opens the kept usage fd, checks that every file the backend uses later
 * opens with the access it needs (a v1 memory group has them all; a
 * missing one, or no write access to the limit, fails the open as when
 * they were kept open), and learns whether the memsw files exist. Only
 * the usage fd stays open.
 */
static int open_files(struct mri_cgroup1 *cg)
{
	static const struct {
		const char *name;
		int flags;
	} files[] = {
		{ MRI_CGROUP1_LIMIT_FILE, O_RDWR },
		{ "memory.stat", O_RDONLY },
		{ "memory.failcnt", O_RDONLY },
		{ "memory.max_usage_in_bytes", O_RDONLY },
		{ "memory.oom_control", O_RDONLY },
		{ "cgroup.event_control", O_WRONLY },
	};
	int dirfd, fd, r = 0;
	size_t i;

	dirfd = mri_cgroup1_dir(cg);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, "memory.usage_in_bytes",
			      O_RDONLY | O_CLOEXEC, 0);
	if (fd >= 0)
		cg->usage_fd = fd;
	for (i = 0; i < sizeof(files) / sizeof(files[0]) && fd >= 0; i++) {
		fd = mri_openat(dirfd, files[i].name,
				      files[i].flags | O_CLOEXEC, 0);
		if (fd >= 0)
			mri_close(fd);
	}
	if (fd < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup1: cannot open %s/%s: %s",
			cg->path, i ? files[i - 1].name :
			"memory.usage_in_bytes", mr_strerror(fd));
		r = mri_cgroup1_gone(fd);
		goto out;
	}
	fd = mri_openat(dirfd, "memory.memsw.usage_in_bytes",
			      O_RDONLY | O_CLOEXEC, 0);
	cg->memsw = fd >= 0;
	if (fd >= 0)
		mri_close(fd);
	else if (fd != -ENOENT)
		r = mri_cgroup1_gone(fd);
out:
	mri_close(dirfd);
	return r;
}

/* The root of the group's hierarchy as this process sees it: the highest
 * directory of the same cgroup filesystem above (or at) path. */
static int hierarchy_root(const char *path, char *root, size_t len)
{
	char p[PATH_MAX];
	struct statfs st;
	char *slash;

	if (strlen(path) >= sizeof(p) || strlen(path) >= len)
		return -EINVAL;
	strcpy(p, path);
	strcpy(root, path);
	for (;;) {
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			return 0;
		*slash = '\0';
		if (mri_fops->statfs(p, &st) < 0 ||
		    st.f_type != CGROUP_SUPER_MAGIC)
			return 0;
		strcpy(root, p);
	}
}

static int cg1_open(void *priv, const char *path,
		    const struct mri_open_env *env)
{
	struct mri_cgroup1 *cg = priv;
	char root[PATH_MAX], real[PATH_MAX];
	uint64_t usage;
	long ps;
	int r;

	cg->usage_fd = cg->run_limit_fd = -1;
	cg->log = env->log;
	cg->hybrid = env->ctx_state;
	mri_cgroup1_threshold_init(cg, &env->events);
	if (strlen(path) >= PATH_MAX)
		return -EINVAL;
	ps = sysconf(_SC_PAGESIZE);
	cg->page_size = ps > 0 ? (uint64_t)ps : 4096;
	/* The ancestors are those of the real directory, not of a symlink's
	 * parent. */
	if (!realpath(path, real))
		return mri_cgroup1_gone(-errno);
	r = hierarchy_root(real, root, sizeof(root));
	if (r < 0)
		return r;
	cg->path = strdup(path);
	cg->real_path = strdup(real);
	cg->root = strdup(root);
	if (!cg->path || !cg->real_path || !cg->root) {
		free_paths(cg);
		return -ENOMEM;
	}
	/* The journal learns the directory's identity, which every file
	 * opened later is checked against. */
	r = mri_journal_open(&cg->journal, env->state_dir, cg->real_path,
			     cg->root, env->log);
	if (r < 0)
		goto fail;
	mri_lowerstep_init(&cg->step, &step_ops, cg, &cg->journal, cg->log,
			   cg->path, cg->page_size);
	r = open_files(cg);
	if (r == 0)
		r = read_u64(cg, cg->usage_fd, "memory.usage_in_bytes", &usage);
	if (r == 0)
		r = mri_lowerstep_recover(&cg->step);
	if (r < 0) {
		mri_journal_close(&cg->journal);
		goto fail;
	}
	return 0;
fail:
	close_fds(cg);
	free_paths(cg);
	return r;
}

static int cg1_close(void *priv)
{
	struct mri_cgroup1 *cg = priv;
	int r;

	mri_cgroup1_threshold_fini(cg);
	r = mri_lowerstep_finish(&cg->step);
	mri_journal_close(&cg->journal);
	close_fds(cg);
	free_paths(cg);
	return r;
}

/* Swap from the memsw ("memory+swap") counters, read beside usage and
 * limit: swap charged is memsw usage - usage, the swap allowed memsw
 * limit - limit (Documentation/admin-guide/cgroup-v1/memory.rst, 2.4 and
 * 2.5), clamped at 0 (the two files are read at different instants). */
static void swap_from_memsw(struct mr_limits *l, uint64_t memsw_usage,
			    uint64_t memsw_limit_raw)
{
	uint64_t memsw_limit = mri_cgroup1_limit_value(memsw_limit_raw);

	l->swap_usage_bytes = memsw_usage > l->usage_bytes ?
			      memsw_usage - l->usage_bytes : 0;
	if (memsw_limit == MR_UNLIMITED)
		l->swap_limit_bytes = MR_UNLIMITED;
	else
		l->swap_limit_bytes = memsw_limit > l->own_limit_bytes ?
				      memsw_limit - l->own_limit_bytes : 0;
	l->present |= MR_LIMITS_HAS_SWAP;
}

/* A group's memsw counters, as values (mri_cgroup1_limit_value()), and
 * hierarchical_memsw_limit of its memory.stat. */
struct memsw {
	uint64_t usage, limit, hier_limit;
};

/*
 * Whether a limit reclaim of the group may swap, and how much (lib/core/policy.h):
 * the host's free swap, the group's memory.swappiness (mm/memcontrol-v1.c,
 * mem_cgroup_swappiness()), and with memsw accounting (m not NULL) the
 * room a swap-out makes. A swap-out moves a charge from memory to swap and
 * leaves memsw usage as it was; when the memsw counter is the one a charge
 * fails on, the kernel reclaims without swapping (mm/memcontrol.c,
 * try_charge_memcg(): MEMCG_RECLAIM_MAY_SWAP cleared). So swapping helps a
 * charge only as far as the memsw headroom exceeds the memory headroom,
 * each the smallest over the group and the visible ancestors that bind:
 * memory own_limit_bytes - usage_bytes and headroom_bytes (when
 * MR_LIMITS_HAS_BINDING), memsw mri_cgroup1_memsw_headroom(). For the
 * group alone that is swap limit - swap usage. A file unreadable:
 * MR_LIMITS_HAS_SWAP_FREE stays clear (the rest of the snapshot holds).
 */
static void read_swap(struct mri_cgroup1 *cg, int dirfd,
		      const struct memsw *m, struct mr_limits *l)
{
	uint64_t swappiness, mem_room, memsw_room;

	if (mri_swap_host_free(&l->swap_free_bytes) < 0 ||
	    mri_cgroup1_read_at(cg, dirfd, "memory.swappiness",
				&swappiness) < 0 || swappiness > 200)
		return;
	if (m) {
		if (mri_cgroup1_memsw_headroom(cg, m->usage, m->limit,
					       m->hier_limit,
					       &memsw_room) < 0)
			return;
		mem_room = l->own_limit_bytes == MR_UNLIMITED ? MR_UNLIMITED :
			   l->usage_bytes < l->own_limit_bytes ?
			   l->own_limit_bytes - l->usage_bytes : 0;
		if (l->present & MR_LIMITS_HAS_BINDING)
			mem_room = min_u64(mem_room, l->headroom_bytes);
		if (memsw_room != MR_UNLIMITED)
			l->swap_free_bytes = min_u64(l->swap_free_bytes,
				memsw_room > mem_room ?
				memsw_room - mem_room : 0);
	}
	l->swappiness = (uint32_t)swappiness;
	l->present |= MR_LIMITS_HAS_SWAP_FREE;
}

static int cg1_read_limits(void *priv, struct mr_limits *out)
{
	struct mri_cgroup1 *cg = priv;
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_journal_reads rd;
	struct mr_memstat ms;
	struct memsw m;
	uint64_t raw, hier, memsw_usage = 0, memsw_raw = 0;
	int r, dirfd;

	r = mri_journal_reads_begin(&cg->journal, &rd);
	if (r < 0)
		return r;
	dirfd = rd.fds[0]; /* the group's directory, checked */
	/* Usage after the wait for steps, so that it is fresh; memsw usage
	 * right after it. */
	r = read_u64(cg, cg->usage_fd, "memory.usage_in_bytes",
		     &l.usage_bytes);
	if (r == 0 && cg->memsw)
		r = mri_cgroup1_read_at(cg, dirfd,
					"memory.memsw.usage_in_bytes",
					&memsw_usage);
	if (r == 0)
		r = mri_cgroup1_read_at(cg, dirfd, MRI_CGROUP1_LIMIT_FILE,
					&raw);
	if (r == 0 && cg->memsw)
		r = mri_cgroup1_read_at(cg, dirfd,
					"memory.memsw.limit_in_bytes",
					&memsw_raw);
	if (r == 0)
		r = mri_cgroup1_read_stat(cg, dirfd, &ms, &hier,
					  &m.hier_limit);
	if (r == 0) {
		/* hierarchical_memory_limit is the smallest limit on the
		 * path to the root, the group's own included
		 * (mm/memcontrol-v1.c, memcg1_stat_format()); the min guards
		 * a file read between two changes. The walk to the group
		 * that sets it reads the ancestors while steps are kept
		 * out, like the rest. */
		l.own_limit_bytes = mri_cgroup1_limit_value(raw);
		l.limit_bytes = min_u64(l.own_limit_bytes, hier);
		r = mri_cgroup1_binding(cg, &l);
	}
	if (r == 0)
		r = mri_cgroup1_read_at(cg, dirfd, "memory.failcnt",
					&l.limit_hits);
	if (r == 0)
		r = mri_cgroup1_read_at(cg, dirfd, "memory.max_usage_in_bytes",
					&l.peak_bytes);
	if (r == 0) {
		m.usage = memsw_usage;
		m.limit = mri_cgroup1_limit_value(memsw_raw);
		read_swap(cg, dirfd, cg->memsw ? &m : NULL, &l);
	}
	mri_journal_reads_end(&rd);
	if (r < 0)
		return r;
	l.present |= MR_LIMITS_HAS_PEAK;
	/* v1 has no memory.high, low or min: absent. */
	l.high_bytes = l.own_high_bytes = MR_UNLIMITED;
	if (l.limit_bytes < l.own_limit_bytes)
		l.flags |= MR_LIMITS_ANCESTOR_BINDS;
	if (cg->memsw)
		swap_from_memsw(&l, memsw_usage, memsw_raw);
	*out = l;
	return 0;
}

int mri_cgroup1_parse_oom_kill(const char *buf, uint64_t *oom_kill)
{
	struct mri_kv_line line;
	const char *pos = buf;
	int r;

	while ((r = mri_kv_next(&pos, &line)) > 0) {
		if (mri_kv_is(&line, "oom_kill"))
			return mri_kv_value(&line, oom_kill) < 0 ? -EIO : 1;
	}
	return r;
}

/*
 * v1 has no memory.events: `max` is memory.failcnt (charges that met
 * this group's limit, mm/page_counter.c, page_counter_try_charge()) and
 * `oom_kill` the oom_kill line of memory.oom_control (Linux 4.13,
 * mm/memcontrol-v1.c, mem_cgroup_oom_control_read()); v1 counts both on
 * the group alone (memcg_memory_event() stops at the group when memory is
 * not on the default hierarchy), so `local` changes nothing. The other
 * counters have no v1 source and are absent.
 */
static int cg1_read_events(void *priv, bool local, struct mr_events *out)
{
	struct mri_cgroup1 *cg = priv;
	struct mr_events ev = { .size = sizeof(ev) };
	char buf[256];
	ssize_t n;
	int r, dirfd, fd;

	(void)local;
	dirfd = mri_cgroup1_dir(cg);
	if (dirfd < 0)
		return dirfd;
	r = mri_cgroup1_read_at(cg, dirfd, "memory.failcnt", &ev.max);
	fd = r < 0 ? r : mri_openat(dirfd, "memory.oom_control",
					  O_RDONLY | O_CLOEXEC, 0);
	mri_close(dirfd);
	if (fd < 0)
		return mri_cgroup1_gone(fd);
	ev.present = 1ULL << MR_EVENT_MAX;
	n = mri_read_fd(fd, buf, sizeof(buf));
	mri_close(fd);
	if (n < 0)
		return mri_cgroup1_gone((int)n);
	r = mri_cgroup1_parse_oom_kill(buf, &ev.oom_kill);
	if (r < 0) {
		mri_log(cg->log, MR_LOG_ERR,
			"cgroup1: %s/memory.oom_control: oom_kill is not a "
			"number", cg->path);
		return r;
	}
	if (r == 1)
		ev.present |= 1ULL << MR_EVENT_OOM_KILL;
	*out = ev;
	return 0;
}

/*
 * One write of memory.limit_in_bytes, under the group's step lock and
 * after settling a record a dead manager left (as every step does), so it
 * never races a step of another manager nor is undone by that step's
 * restore: restore() leaves a limit that is neither the step's original
 * nor its lowered value alone. The kernel reclaims down to the new limit
 * or refuses with EBUSY leaving the old one (mem_cgroup_resize_max());
 * EINVAL when memory.memsw.limit_in_bytes is below it. v1 has no high.
 */
static int cg1_write_limit(void *priv, int which, uint64_t bytes)
{
	struct mri_cgroup1 *cg = priv;
	sigset_t all, old;
	int r;

	if (which == MRI_LIMIT_HIGH)
		return -EOPNOTSUPP;
	if (which != MRI_LIMIT_MAX)
		return -EINVAL;
	/* As in a step: a settle's restore must not meet EINTR. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = step_begin(cg);
	if (r < 0)
		goto out;
	r = mri_lowerstep_settle(&cg->step);
	if (r == 0)
		r = write_limit(cg, bytes);
	step_end(cg, false);
	if (r < 0 && r != -ENOENT)
		mri_log(cg->log, MR_LOG_ERR,
			"cgroup1: %s: writing the limit %" PRIu64 ": %s",
			cg->path, bytes, mr_strerror(r));
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* v1 reclaim lowers the limit for a moment (cg1_reclaim()): there is no
 * per-call argument to pass. memory.swappiness exists, but it is the
 * group's setting for every reclaim, the administrator's, not a call's. */
static int cg1_set_swappiness(void *priv, int swappiness)
{
	(void)priv;
	(void)swappiness;
	return -EOPNOTSUPP;
}

/* The keeper's lock belongs to the cgroup: flock(LOCK_EX) on its
 * memory.usage_in_bytes through the kept usage fd (flock needs no write
 * access), apart from the flock()s of steps and readers, which are taken
 * on directories. A keeper holds its threshold's eventfd from the claim
 * on (threshold.c). */
static int cg1_claim_keeper(void *priv, bool claim)
{
	struct mri_cgroup1 *cg = priv;
	int r;

	if (!claim) {
		mri_cgroup1_threshold_spare(cg, false);
		return mri_flock(cg->usage_fd, LOCK_UN);
	}
	r = mri_flock(cg->usage_fd, LOCK_EX | LOCK_NB);
	if (r < 0)
		return r == -EWOULDBLOCK ? -EBUSY : r;
	r = mri_cgroup1_threshold_spare(cg, true);
	if (r < 0)
		mri_flock(cg->usage_fd, LOCK_UN);
	return r;
}

/* In a child after fork(), whose handler closed every fd (lib/core/fds.h):
 * drop their numbers, touch nothing. */
static void cg1_forget(void *priv)
{
	struct mri_cgroup1 *cg = priv;

	mri_journal_forget(&cg->journal);
	mri_cgroup1_threshold_forget(cg);
	cg->run_limit_fd = cg->usage_fd = -1;
	free_paths(cg);
}

static int cg1_read_memstat(void *priv, struct mr_memstat *out)
{
	uint64_t hier;
	int dirfd, r;

	dirfd = mri_cgroup1_dir(priv);
	if (dirfd < 0)
		return dirfd;
	r = mri_cgroup1_read_stat(priv, dirfd, out, &hier, NULL);
	mri_close(dirfd);
	return r;
}

/* One step of lib/cgroupfs/lowerstep.h; the core sizes the batch
 * (MRI_CAP_STEP_CAN_OOM). */
static int cg1_reclaim(void *priv, uint64_t bytes, uint64_t *asked_bytes,
		       uint64_t *freed_bytes)
{
	struct mri_cgroup1 *cg = priv;

	return mri_lowerstep_reclaim(&cg->step, bytes, asked_bytes,
				     freed_bytes);
}

/* The steps until cg1_rest() are one run of lib/cgroupfs/lowerstep.h
 * (struct mri_backend.plan). */
static void cg1_plan(void *priv, uint64_t run_bytes)
{
	struct mri_cgroup1 *cg = priv;

	mri_lowerstep_plan(&cg->step, run_bytes);
}

/* The core sized a step to nothing: a failed restore is retried all the
 * same (struct mri_backend.settle). */
static int cg1_settle(void *priv)
{
	struct mri_cgroup1 *cg = priv;

	return mri_lowerstep_retry(&cg->step);
}

/* The context's hybrid PSI state (lib/cgroupfs/hybrid.h): off, no mounts found
 * yet, until mr_ctx_set_hybrid_psi(). */
static int cg1_ctx_init(void *ctx_state)
{
	mri_hybrid_init(ctx_state);
	return 0;
}

static void cg1_ctx_fini(void *ctx_state)
{
	mri_hybrid_destroy(ctx_state);
}

const struct mri_backend mri_backend_cgroup1 = {
	.name = "cgroup1",
	.caps = MRI_CAP_RECLAIM | MRI_CAP_THRESHOLD | MRI_CAP_SLOW_THRESHOLD |
		MRI_CAP_STEP_CAN_OOM,
	.priv_size = sizeof(struct mri_cgroup1),
	.open_fds = 1,
	.margin_fds = 1,
	.probe = cg1_probe,
	.open = cg1_open,
	.close = cg1_close,
	.read_usage = cg1_read_usage,
	.read_limits = cg1_read_limits,
	.read_memstat = cg1_read_memstat,
	.reclaim = cg1_reclaim,
	.plan = cg1_plan,
	.settle = cg1_settle,
	.rest = cg1_rest,
	.claim_keeper = cg1_claim_keeper,
	.forget = cg1_forget,
	.set_usage_threshold = mri_cgroup1_set_usage_threshold,
	.event_ack = mri_cgroup1_event_ack,
	.read_events = cg1_read_events,
	.read_pressure = mri_cgroup1_read_pressure,
	.read_io_pressure = mri_cgroup1_read_io_pressure,
	.psi_trigger_open = mri_cgroup1_psi_trigger_open,
	.write_limit = cg1_write_limit,
	.set_swappiness = cg1_set_swappiness,
	.list_children = mri_cgroup_list_children,
	.ctx_size = sizeof(struct mri_hybrid_psi),
	.ctx_init = cg1_ctx_init,
	.ctx_fini = cg1_ctx_fini,
};
