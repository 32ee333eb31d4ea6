/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 memory controller backend
 * (Documentation/admin-guide/cgroup-v2.rst, "Memory"): probe, open, close
 * and the reads of usage and limits. memory.stat and memory.events are
 * parsed in memstat.c, effective protection walks the tree in protect.c,
 * reclaim is reclaim.c, limit writes limit.c, usage thresholds watch.c.
 *
 * Every control file is kept open from open to close and read with one
 * pread; the ancestors' directories are kept open too, and their files
 * are opened, read and closed per snapshot. A snapshot is assembled in a
 * local struct and copied out whole: a group removed in the middle of one
 * gives -ENOENT and nothing half filled.
 *
 * Test-only settings: mri_cgroup2_mountinfo (cgroup2.h), and the step's
 * mri_lowerstep_test_pause_ms (lib/cgroupfs/lowerstep.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "backend.h"
#include "cgchildren.h"
#include "cgroup2.h"
#include "fds.h"
#include "fileops.h"
#include "mountinfo.h"
#include "psi.h"
#include "swap.h"

const char *mri_cgroup2_mountinfo = "/proc/self/mountinfo";

int mri_cgroup2_gone(int err)
{
	/* A kept fd of a removed cgroup's file fails with ENODEV (kernfs
	 * deactivates the node); a lookup by name fails with ENOENT. */
	return err == -ENODEV || err == -ENOENT ? -ENOENT : err;
}

int mri_cgroup2_parse_value(const char *buf, uint64_t *out)
{
	/* mm/memcontrol.c, seq_puts_memcg_tunable(): "max\n" for
	 * PAGE_COUNTER_MAX, else the bytes. */
	if (strcmp(buf, "max\n") == 0 || strcmp(buf, "max") == 0) {
		*out = MR_UNLIMITED;
		return 0;
	}
	return mri_parse_u64(buf, out) < 0 ? -EIO : 0;
}

int mri_cgroup2_read_value(struct mri_cgroup2 *cg, int fd, const char *name,
			   uint64_t *out)
{
	char buf[64];
	ssize_t n;

	n = mri_read_fd(fd, buf, sizeof(buf));
	if (n < 0)
		return mri_cgroup2_gone((int)n);
	if (mri_cgroup2_parse_value(buf, out) < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s/%s: not a number "
			"nor \"max\"", cg->path, name);
		return -EIO;
	}
	return 0;
}

int mri_cgroup2_read_at(struct mri_cgroup2 *cg, int dirfd, const char *name,
			uint64_t *out)
{
	int fd, r;

	fd = mri_openat(dirfd, name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup2_gone(fd);
	r = mri_cgroup2_read_value(cg, fd, name, out);
	mri_close(fd);
	return r;
}

int mri_cgroup2_write_value(int fd, uint64_t bytes)
{
	char buf[24];

	/* The kernel's own spelling of "no limit" (page_counter_memparse()
	 * takes "max"); a number is plain decimal bytes. */
	if (bytes == MR_UNLIMITED)
		strcpy(buf, "max");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	return mri_cgroup2_gone(mri_write_fd(fd, buf));
}

int mri_cgroup2_dir(struct mri_cgroup2 *cg)
{
	struct stat st;
	int fd;

	fd = mri_open(cg->real, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup2_gone(fd);
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != cg->dev ||
	    (uint64_t)st.st_ino != cg->ino) {
		mri_close(fd);
		return -ENOENT;
	}
	return fd;
}

int mri_cgroup2_open_file(struct mri_cgroup2 *cg, const char *name,
			  int flags)
{
	int dirfd, fd;

	dirfd = mri_cgroup2_dir(cg);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, name, flags | O_CLOEXEC, 0);
	mri_close(dirfd);
	return mri_cgroup2_gone(fd);
}

int mri_cgroup2_read_file(struct mri_cgroup2 *cg, const char *name,
			  uint64_t *out)
{
	int fd, r;

	fd = mri_cgroup2_open_file(cg, name, O_RDONLY);
	if (fd < 0)
		return fd;
	r = mri_cgroup2_read_value(cg, fd, name, out);
	mri_close(fd);
	return r;
}

int mri_cgroup2_write_file(struct mri_cgroup2 *cg, const char *name,
			   uint64_t bytes)
{
	int fd, r;

	fd = mri_cgroup2_open_file(cg, name, O_WRONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	r = mri_cgroup2_write_value(fd, bytes);
	mri_close(fd);
	return r;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The parent directory of `path` into out; -EINVAL for "/". */
static int parent_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || strlen(path) >= len || strcmp(path, "/") == 0)
		return -EINVAL;
	n = slash == path ? 1 : (size_t)(slash - path);
	memcpy(out, path, n);
	out[n] = '\0';
	return 0;
}

static bool on_cgroup2(const char *path)
{
	struct statfs st;

	return mri_fops->statfs(path, &st) == 0 &&
	       st.f_type == CGROUP2_SUPER_MAGIC;
}

/* Whether the cgroup2 directory `path` has its parent's memory controller:
 * 1 yes, 0 the parent's cgroup.subtree_control lacks "memory" (the group
 * has no memory files), -ENOENT no cgroup2 parent (path is the root), or
 * the errno of reading the parent's file. */
static int parent_enables_memory(const char *path)
{
	char parent[PATH_MAX], buf[512], *tok, *save;
	int fd, dirfd;
	ssize_t n;

	if (parent_of(path, parent, sizeof(parent)) < 0 ||
	    !on_cgroup2(parent))
		return -ENOENT;
	dirfd = mri_open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, "cgroup.subtree_control",
			      O_RDONLY | O_CLOEXEC, 0);
	mri_close(dirfd);
	if (fd < 0)
		return fd;
	n = mri_read_fd(fd, buf, sizeof(buf));
	mri_close(fd);
	if (n < 0)
		return (int)n;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (strcmp(tok, "memory") == 0)
			return 1;
	}
	return 0;
}

/*
 * 1 for a cgroup2 directory with memory.current, and for one whose parent
 * does not enable the memory controller (open then says so); 0 for
 * another filesystem or the root cgroup (no memory.current).
 */
static int cg2_probe(const char *path)
{
	struct statfs st;
	int dirfd, fd, r;

	r = mri_fops->statfs(path, &st);
	if (r < 0)
		return r;
	if (st.f_type != CGROUP2_SUPER_MAGIC)
		return 0;
	dirfd = mri_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dirfd < 0)
		return dirfd;
	fd = mri_openat(dirfd, "memory.current", O_RDONLY | O_CLOEXEC, 0);
	mri_close(dirfd);
	if (fd >= 0) {
		mri_close(fd);
		return 1;
	}
	if (fd != -ENOENT)
		return fd;
	return parent_enables_memory(path) == 0 ? 1 : 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		mri_close(*fd);
	*fd = -1;
}

static void close_files(struct mri_cgroup2 *cg)
{
	close_fd(&cg->current_fd);
	cg->nanc = 0;
}

static void free_paths(struct mri_cgroup2 *cg)
{
	free(cg->path);
	free(cg->real);
	free(cg->root);
	cg->path = cg->real = cg->root = NULL;
}

static void init_fds(struct mri_cgroup2 *cg)
{
	cg->current_fd = cg->watch_events_fd = -1;
	cg->nanc = 0;
}

/* The group's control files. Optional ones arrived after memory.current
 * (4.5): memory.min 4.18, memory.pressure 4.20 (CONFIG_PSI),
 * memory.events.local 5.2, memory.reclaim and memory.peak 5.19; the
 * swap files exist with swap accounting only. A mandatory file that is
 * missing, or an optional one that fails otherwise, fails the open.
 * memory.max and memory.high are opened O_NONBLOCK: on kernels that
 * honour it (docs/kernels.md), a write then skips the synchronous
 * reclaim and OOM kill in the writer's context. */
static int open_files(struct mri_cgroup2 *cg, int dirfd)
{
	const struct {
		const char *name;
		int flags;
		bool *present; /* NULL: mandatory */
	} files[] = {
		/* O_RDWR: a refusal is retried read-only (below). */
		{ "memory.max", O_RDWR | O_NONBLOCK, NULL },
		{ "memory.high", O_RDWR | O_NONBLOCK, NULL },
		{ "memory.low", O_RDONLY, NULL },
		{ "memory.stat", O_RDONLY, NULL },
		{ "memory.events", O_RDONLY, NULL },
		{ "memory.min", O_RDONLY, &cg->has_min },
		{ "memory.peak", O_RDONLY, &cg->has_peak },
		{ "memory.swap.current", O_RDONLY, &cg->has_swap },
		{ "memory.swap.max", O_RDONLY, &cg->has_swap },
		{ "memory.events.local", O_RDONLY, &cg->has_events_local },
		{ "memory.pressure", O_RDONLY, &cg->has_pressure },
		{ "memory.reclaim", O_WRONLY, &cg->has_reclaim },
	};
	size_t i;
	int r;

	cg->has_swap = true; /* both swap files, or neither counts */
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		r = mri_openat(dirfd, files[i].name,
				     files[i].flags | O_CLOEXEC, 0);
		if ((r == -EACCES || r == -EPERM) &&
		    (files[i].flags & O_ACCMODE) == O_RDWR) {
			if (!cg->limits_write_err)
				mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s/%s: "
					"not writable (%s): the group's limits "
					"are read only", cg->path,
					files[i].name, mr_strerror(r));
			cg->limits_write_err = r;
			r = mri_openat(dirfd, files[i].name,
					     O_RDONLY | O_NONBLOCK | O_CLOEXEC,
					     0);
		}
		if (r == -ENOENT && files[i].present) {
			*files[i].present = false;
			continue;
		}
		if (r < 0) {
			mri_log(cg->log, MR_LOG_ERR,
				"cgroup2: cannot open %s/%s: %s", cg->path,
				files[i].name, mr_strerror(r));
			return mri_cgroup2_gone(r);
		}
		mri_close(r);
		if (files[i].present && files[i].present != &cg->has_swap)
			*files[i].present = true;
	}
	return 0;
}

int mri_cgroup2_open_ancestor(struct mri_cgroup2 *cg, size_t i)
{
	char p[PATH_MAX];
	char *slash;
	size_t k;
	int fd;

	if (i >= cg->nanc)
		return -EINVAL;
	strcpy(p, cg->real);
	for (k = 0; k <= i; k++) {
		slash = strrchr(p, '/');
		if (!slash)
			return -EINVAL;
		slash[slash == p ? 1 : 0] = '\0';
	}
	fd = mri_open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	return fd < 0 ? mri_cgroup2_gone(fd) : fd;
}

/* Counts the ancestors up to the highest directory of the cgroup2 mount
 * (cg->root) and learns whether that is the real root. No fd is kept:
 * mri_cgroup2_open_ancestor() opens one when used. */
static int find_ancestors(struct mri_cgroup2 *cg)
{
	char p[PATH_MAX], up[PATH_MAX];
	uint64_t v;
	int fd, r;

	strcpy(p, cg->real);
	while (parent_of(p, up, sizeof(up)) == 0 && on_cgroup2(up)) {
		if (cg->nanc == MRI_CGROUP2_MAX_DEPTH) {
			mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: more than "
				"%d ancestors", cg->path,
				MRI_CGROUP2_MAX_DEPTH);
			return -EINVAL;
		}
		cg->nanc++;
		strcpy(p, up);
	}
	cg->root = strdup(p);
	if (!cg->root)
		return -ENOMEM;
	/* The real root has no memory.current; a namespace's or a bind
	 * mount's top is a group like any other. */
	cg->root_visible = false;
	if (cg->nanc) {
		fd = mri_cgroup2_open_ancestor(cg, cg->nanc - 1);
		if (fd < 0)
			return fd;
		r = mri_cgroup2_read_at(cg, fd, "memory.current", &v);
		mri_close(fd);
		if (r < 0 && r != -ENOENT)
			return r;
		cg->root_visible = r == -ENOENT;
	}
	return 0;
}

static void read_mount_options(struct mri_cgroup2 *cg)
{
	struct mri_cgroup_mount *m = malloc(sizeof(*m));
	int r;

	cg->recursiveprot = false;
	if (!m)
		return;
	r = mri_mount_find(mri_cgroup2_mountinfo, cg->real, m);
	if (r == 0 && m->version == 2)
		cg->recursiveprot = m->memory_recursiveprot;
	else
		mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s: no cgroup2 mount "
			"found in %s (%s); effective protection computed "
			"without memory_recursiveprot", cg->path,
			mri_cgroup2_mountinfo,
			r < 0 ? mr_strerror(r) : "another filesystem");
	free(m);
}

static int cg2_open(void *priv, const char *path,
		    const struct mri_open_env *env)
{
	struct mri_cgroup2 *cg = priv;
	char parent[PATH_MAX], real[PATH_MAX];
	struct stat st;
	uint64_t usage;
	long ps;
	int dirfd, r;

	init_fds(cg);
	cg->log = env->log;
	cg->swappiness = -1;
	cg->swappiness_ok = -1;
	cg->threshold_bytes = MR_UNLIMITED;
	if (strlen(path) >= PATH_MAX)
		return -EINVAL;
	ps = sysconf(_SC_PAGESIZE);
	cg->page_size = ps > 0 ? (uint64_t)ps : 4096;
	if (!realpath(path, real))
		return mri_cgroup2_gone(-errno);
	cg->path = strdup(path);
	cg->real = strdup(real);
	if (!cg->path || !cg->real) {
		free_paths(cg);
		return -ENOMEM;
	}

	dirfd = mri_open(cg->real, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       0);
	if (dirfd < 0) {
		free_paths(cg);
		return mri_cgroup2_gone(dirfd);
	}
	/* Every file opened later is checked to be of this directory. */
	if (fstat(dirfd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	cg->dev = (uint64_t)st.st_dev;
	cg->ino = (uint64_t)st.st_ino;
	r = mri_openat(dirfd, "memory.current", O_RDONLY | O_CLOEXEC,
			     0);
	if (r == -ENOENT && parent_enables_memory(cg->real) == 0) {
		parent_of(cg->real, parent, sizeof(parent));
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s: no memory "
			"controller: its parent does not enable it (no "
			"\"memory\" in %s/cgroup.subtree_control)", cg->path,
			parent);
		r = -ENODEV;
		goto fail;
	}
	if (r < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: cannot open "
			"%s/memory.current: %s", cg->path, mr_strerror(r));
		r = r == -ENOENT ? -ENODEV : mri_cgroup2_gone(r);
		goto fail;
	}
	cg->current_fd = r;
	r = open_files(cg, dirfd);
	if (r == 0)
		r = mri_cgroup2_read_value(cg, cg->current_fd,
					   "memory.current", &usage);
	if (r == 0)
		r = find_ancestors(cg);
	if (r < 0)
		goto fail;
	read_mount_options(cg);
	r = mri_cgroup2_watch_init(cg, dirfd, &env->events);
	if (r < 0)
		goto fail;
	/* Without memory.reclaim (before 5.19), reclaim lowers memory.high
	 * for a moment: journaled, and recovered here. */
	if (!cg->has_reclaim) {
		mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s: no memory.reclaim "
			"(Linux < 5.19): reclaim lowers memory.high for a "
			"moment", cg->path);
		r = mri_cgroup2_journal_open(cg, env->state_dir);
		if (r < 0)
			goto fail;
	}
	mri_close(dirfd);
	return 0;
fail:
	mri_close(dirfd);
	mri_cgroup2_watch_fini(cg);
	close_files(cg);
	free_paths(cg);
	return r;
}

static int cg2_close(void *priv)
{
	struct mri_cgroup2 *cg = priv;
	int r = 0;

	mri_cgroup2_watch_fini(cg);
	if (cg->journaled)
		r = mri_cgroup2_journal_close(cg);
	close_files(cg);
	free_paths(cg);
	return r;
}

/* In a child after fork(): close everything, touch nothing. */
static void cg2_forget(void *priv)
{
	struct mri_cgroup2 *cg = priv;

	if (cg->journaled)
		mri_journal_forget(&cg->journal);
	cg->journaled = false;
	mri_cgroup2_watch_forget(cg);
	init_fds(cg);
	free_paths(cg);
}

static int cg2_read_usage(void *priv, uint64_t *usage_bytes)
{
	struct mri_cgroup2 *cg = priv;

	return mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				      usage_bytes);
}

/* The group's own files of a snapshot. */
static int read_own(struct mri_cgroup2 *cg, struct mr_limits *l)
{
	struct mr_events ev = { .size = sizeof(ev) };
	int dirfd, r;

	r = mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				   &l->usage_bytes);
	if (r < 0)
		return r;
	dirfd = mri_cgroup2_dir(cg);
	if (dirfd < 0)
		return dirfd;
	if (r == 0)
		r = mri_cgroup2_read_at(cg, dirfd, "memory.max",
					&l->own_limit_bytes);
	if (r == 0)
		r = mri_cgroup2_read_at(cg, dirfd, "memory.high",
					&l->own_high_bytes);
	if (r == 0)
		r = mri_cgroup2_read_at(cg, dirfd, "memory.low",
					&l->low_bytes);
	if (r == 0 && cg->has_min)
		r = mri_cgroup2_read_at(cg, dirfd, "memory.min",
					&l->min_bytes);
	if (r == 0 && cg->has_peak) {
		r = mri_cgroup2_read_at(cg, dirfd, "memory.peak",
					&l->peak_bytes);
		l->present |= MR_LIMITS_HAS_PEAK;
	}
	if (r == 0 && cg->has_swap) {
		r = mri_cgroup2_read_at(cg, dirfd, "memory.swap.current",
					&l->swap_usage_bytes);
		if (r == 0)
			r = mri_cgroup2_read_at(cg, dirfd,
						"memory.swap.max",
						&l->swap_limit_bytes);
		l->present |= MR_LIMITS_HAS_SWAP;
	}
	mri_close(dirfd);
	if (r < 0)
		return r;
	/* Charges that met memory.max: the group's own (events.local, 5.2),
	 * the subtree's on older kernels. */
	r = mri_cgroup2_read_events_at(cg, cg->has_events_local ?
				       "memory.events.local" :
				       "memory.events", &ev);
	if (r < 0)
		return r;
	l->limit_hits = ev.max;
	return 0;
}

/* The swap a group may still charge under its own memory.swap.max
 * (MR_UNLIMITED: none, or no swap accounting). */
static uint64_t swap_headroom(uint64_t max, uint64_t current)
{
	if (max == MR_UNLIMITED)
		return MR_UNLIMITED;
	return max > current ? max - current : 0;
}

/* The binding limit and high: the lowest over the group and its
 * ancestors (the root has neither file). The binding group is the
 * nearest with the lowest limit; its usage gives the headroom. The swap
 * headroom, too, is the lowest over them (mm/memcontrol.c,
 * mem_cgroup_get_nr_swap_pages()), in swap_free_bytes until the host's
 * free swap bounds it (cg2_read_limits()). */
/* Lowers *free_bytes to an ancestor's swap headroom. An ancestor
 * without the swap files (the top of a fake or odd tree) bounds nothing;
 * a removed one is caught by the snapshot's last read of the group. */
static int read_swap_headroom(struct mri_cgroup2 *cg, int fd,
			      uint64_t *free_bytes)
{
	uint64_t max, current;
	int r;

	r = mri_cgroup2_read_at(cg, fd, "memory.swap.max", &max);
	if (r == 0)
		r = mri_cgroup2_read_at(cg, fd, "memory.swap.current",
					&current);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		*free_bytes = min_u64(*free_bytes,
				      swap_headroom(max, current));
	return r;
}

static int read_ancestors(struct mri_cgroup2 *cg, struct mr_limits *l)
{
	uint64_t v;
	size_t i;
	int fd, r;

	l->limit_bytes = l->own_limit_bytes;
	l->high_bytes = l->own_high_bytes;
	l->swap_free_bytes = cg->has_swap ?
			     swap_headroom(l->swap_limit_bytes,
					   l->swap_usage_bytes) : MR_UNLIMITED;
	l->binding_level = 0;
	l->binding_usage_bytes = l->usage_bytes;
	for (i = 0; i < cg->nanc; i++) {
		if (cg->root_visible && i == cg->nanc - 1)
			break;
		fd = mri_cgroup2_open_ancestor(cg, i);
		if (fd < 0)
			return fd;
		r = mri_cgroup2_read_at(cg, fd, "memory.max", &v);
		if (r == 0 && v < l->limit_bytes) {
			l->limit_bytes = v;
			l->binding_level = (uint32_t)(i + 1);
			r = mri_cgroup2_read_at(cg, fd, "memory.current",
						&l->binding_usage_bytes);
		}
		if (r == 0)
			r = mri_cgroup2_read_at(cg, fd, "memory.high", &v);
		if (r == 0)
			l->high_bytes = min_u64(l->high_bytes, v);
		if (r == 0 && cg->has_swap)
			r = read_swap_headroom(cg, fd, &l->swap_free_bytes);
		mri_close(fd);
		if (r < 0)
			return r;
	}
	if (!cg->root_visible)
		l->flags |= MR_LIMITS_PARTIAL_VIEW;
	if (l->limit_bytes == MR_UNLIMITED)
		l->headroom_bytes = MR_UNLIMITED;
	else if (l->binding_usage_bytes < l->limit_bytes)
		l->headroom_bytes = l->limit_bytes - l->binding_usage_bytes;
	l->present |= MR_LIMITS_HAS_BINDING;
	return 0;
}

static int cg2_read_limits(void *priv, struct mr_limits *out)
{
	struct mri_cgroup2 *cg = priv;
	struct mr_limits l = { .size = sizeof(l) };
	struct mri_journal_reads rd;
	uint64_t usage, host_free;
	int r;

	/* Where reclaim lowers memory.high for a moment, wait for steps on
	 * the group and its ancestors (this or another manager's) so that
	 * a transient high is never reported. */
	if (cg->journaled) {
		r = mri_journal_reads_begin(&cg->journal, &rd);
		if (r < 0)
			return r;
	}
	r = read_own(cg, &l);
	if (r == 0)
		r = read_ancestors(cg, &l);
	if (cg->journaled)
		mri_journal_reads_end(&rd);
	if (r < 0)
		return r;
	if (l.limit_bytes < l.own_limit_bytes)
		l.flags |= MR_LIMITS_ANCESTOR_BINDS;
	r = mri_cgroup2_effective_protection(cg, mri_cgroup2_top_level(cg),
					     l.usage_bytes, l.low_bytes,
					     l.min_bytes,
					     &l.effective_low_bytes,
					     &l.effective_min_bytes);
	if (r < 0)
		return r;
	/* The walk read other groups by name: the group itself must still
	 * be there for the snapshot to be one. */
	r = cg2_read_usage(cg, &usage);
	if (r < 0)
		return r;
	l.present |= MR_LIMITS_HAS_HIGH | MR_LIMITS_HAS_PROTECTION;
	/* Whether a limit reclaim may swap (lib/core/policy.h): v2 has no
	 * memory.swappiness, memcg reclaim uses vm.swappiness. Either file
	 * unreadable: MR_LIMITS_HAS_SWAP_FREE stays clear. */
	if (mri_swap_host_free(&host_free) == 0 &&
	    mri_swap_vm(&l.swappiness) == 0) {
		l.swap_free_bytes = min_u64(l.swap_free_bytes, host_free);
		l.present |= MR_LIMITS_HAS_SWAP_FREE;
	} else {
		l.swap_free_bytes = 0;
		l.swappiness = 0;
	}
	*out = l;
	return 0;
}

/* Effective protection as a reclaim rooted root_level levels above the
 * group sees it (MR_RECLAIM_ROOT_TOP: the top, as read_limits()). */
static int cg2_read_protection(void *priv, uint32_t root_level,
			       struct mr_protection *out)
{
	struct mri_cgroup2 *cg = priv;
	struct mr_protection p = { .size = sizeof(p) };
	uint64_t usage;
	int dirfd, r;

	if (root_level == MR_RECLAIM_ROOT_TOP)
		root_level = mri_cgroup2_top_level(cg);
	if (root_level > mri_cgroup2_top_level(cg))
		return -EINVAL;
	r = cg2_read_usage(cg, &usage);
	if (r < 0)
		return r;
	dirfd = mri_cgroup2_dir(cg);
	if (dirfd < 0)
		return dirfd;
	r = mri_cgroup2_read_at(cg, dirfd, "memory.low", &p.low_bytes);
	if (r == 0 && cg->has_min)
		r = mri_cgroup2_read_at(cg, dirfd, "memory.min", &p.min_bytes);
	mri_close(dirfd);
	if (r == 0)
		r = mri_cgroup2_effective_protection(cg, root_level, usage,
						     p.low_bytes, p.min_bytes,
						     &p.effective_low_bytes,
						     &p.effective_min_bytes);
	/* The walk read other groups by name: the group itself must still
	 * be there. */
	if (r == 0)
		r = cg2_read_usage(cg, &usage);
	if (r < 0)
		return r;
	p.root_level = root_level;
	*out = p;
	return 0;
}

/* The keeper's lock belongs to the cgroup: flock(LOCK_EX) on its
 * memory.current through the kept fd (flock needs no write access; no
 * step or reader locks that file). A group whose limits are read only
 * and that has no memory.reclaim cannot be kept: its refusal. */
static int cg2_claim_keeper(void *priv, bool claim)
{
	struct mri_cgroup2 *cg = priv;
	int r;

	if (!cg->has_reclaim && cg->limits_write_err)
		return cg->limits_write_err;
	r = mri_flock(cg->current_fd, (claim ? LOCK_EX : LOCK_UN) | LOCK_NB);
	return r == -EWOULDBLOCK ? -EBUSY : r;
}

/* What a pressure file that cannot be found means: -ENOENT when the group
 * is gone, else -EOPNOTSUPP. A living group lacks them on a kernel
 * without CONFIG_PSI, and, from Linux 6.2, while its cgroup.pressure is 0
 * (kernel/cgroup/cgroup.c, cgroup_pressure_write() hides the group's
 * pressure files with cgroup_file_show()): no PSI, not a group gone. */
static int pressure_absent(struct mri_cgroup2 *cg)
{
	int dirfd = mri_cgroup2_dir(cg);

	if (dirfd < 0)
		return dirfd;
	mri_close(dirfd);
	return -EOPNOTSUPP;
}

/* Reads the group's pressure file `name` (memory.pressure, io.pressure;
 * 4.20, CONFIG_PSI: kernel/cgroup/cgroup.c gives every group the
 * pressure files, whichever controllers it has): absent, empty or
 * EOPNOTSUPP is -EOPNOTSUPP (lib/cgroupfs/psi.h, pressure_absent()). */
static int read_pressure_file(struct mri_cgroup2 *cg, const char *name,
			      struct mr_pressure *out)
{
	int fd, r;

	if (!cg->has_pressure)
		return -EOPNOTSUPP;
	fd = mri_cgroup2_open_file(cg, name, O_RDONLY);
	if (fd == -ENOENT)
		return pressure_absent(cg);
	if (fd < 0)
		return fd;
	r = mri_psi_read(fd, out);
	mri_close(fd);
	return r;
}

static int cg2_read_pressure(void *priv, struct mr_pressure *out)
{
	return read_pressure_file(priv, "memory.pressure", out);
}

static int cg2_read_io_pressure(void *priv, struct mr_pressure *out)
{
	return read_pressure_file(priv, "io.pressure", out);
}

/* A trigger needs a file of its own (one trigger per open file,
 * kernel/sched/psi.c psi_trigger_create()): a new fd each time. */
static int cg2_psi_trigger_open(void *priv, int kind, uint64_t stall_us,
				uint64_t window_us)
{
	struct mri_cgroup2 *cg = priv;
	int dirfd, r;

	if (!cg->has_pressure)
		return -EOPNOTSUPP;
	dirfd = mri_cgroup2_dir(cg);
	if (dirfd < 0)
		return dirfd;
	r = mri_psi_trigger_open(dirfd, "memory.pressure", kind, stall_us,
				 window_us);
	mri_close(dirfd);
	if (r == -ENOENT)
		return pressure_absent(cg);
	return r;
}

const struct mri_backend mri_backend_cgroup2 = {
	.name = "cgroup2",
	.caps = MRI_CAP_RECLAIM | MRI_CAP_THRESHOLD,
	.priv_size = sizeof(struct mri_cgroup2),
	.open_fds = 2,
	.probe = cg2_probe,
	.open = cg2_open,
	.close = cg2_close,
	.read_usage = cg2_read_usage,
	.read_limits = cg2_read_limits,
	.read_memstat = mri_cgroup2_read_memstat,
	.reclaim = mri_cgroup2_reclaim,
	.claim_keeper = cg2_claim_keeper,
	.forget = cg2_forget,
	.set_usage_threshold = mri_cgroup2_set_usage_threshold,
	.event_ack = mri_cgroup2_event_ack,
	.read_swap_usage = mri_cgroup2_read_swap_usage,
	.read_events = mri_cgroup2_read_events,
	.read_pressure = cg2_read_pressure,
	.read_io_pressure = cg2_read_io_pressure,
	.psi_trigger_open = cg2_psi_trigger_open,
	.write_limit = mri_cgroup2_write_limit,
	.set_swappiness = mri_cgroup2_set_swappiness,
	.read_protection = cg2_read_protection,
	.list_children = mri_cgroup_list_children,
};
