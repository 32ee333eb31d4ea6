/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals of the cgroup v2 memory controller backend, shared by its
 * files and reached by its tests. */
#ifndef MR_CGROUP2_H
#define MR_CGROUP2_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "journal.h"
#include "log.h"
#include "lowerstep.h"
#include "memreclaim.h"

/* The control file the fallback reclaim step lowers (kernels without
 * memory.reclaim), as named in journal records. */
#define MRI_CGROUP2_HIGH_FILE "memory.high"

/* The most one memory.reclaim write asks (backends/cgroup2/reclaim.c):
 * the bound of a write's time and of its over-reclaim. */
#define MRI_CGROUP2_RECLAIM_CHUNK_BYTES (16ULL << 20)

/* Ancestors of a group the backend reads (limits, protection), at most. */
#define MRI_CGROUP2_MAX_DEPTH 32

/* An armed usage threshold is watched at the context's tick
 * (MRI_TICK_NS, lib/core/backend.h): one tick is one pread of memory.current
 * (1.5 us on the development machine), so a group costs about 0.02 % of
 * a CPU while its threshold is armed. Between ticks, memory.events wakes
 * the worker at once (kernfs notifies its modifications: a high or max
 * event). */

/* Where the backend reads mount options (memory_recursiveprot); tests
 * point it at a fixture. */
extern const char *mri_cgroup2_mountinfo;

/* A group's private data (struct mri_backend.priv). */
struct mri_cgroup2 {
	struct mri_logger *log;
	/* Strings of their own (not PATH_MAX buffers: a group's memory). */
	char *path;              /* as opened, for messages */
	char *real;              /* without symlinks: the walks' start */
	char *root;              /* the highest directory of the mount */
	bool recursiveprot;      /* the mount's memory_recursiveprot */
	uint64_t page_size;
	/* Kept open: memory.current, read at every tick, which holds the
	 * keeper's lock (and memory.events, watch.c). Every other file is
	 * opened when used, from the directory checked against the device
	 * and inode learnt at open (mri_cgroup2_dir()). */
	int current_fd;
	uint64_t dev, ino;
	/* Optional files the kernel has (learnt at open). */
	bool has_min, has_peak, has_swap, has_events_local, has_pressure;
	bool has_reclaim;
	/* 0, or the error (-EACCES, -EPERM) that refused memory.max and
	 * memory.high for writing: a delegated group's own limits are its
	 * parent's to set (cgroup-v2.rst, "Delegation"), while
	 * memory.reclaim may be delegated. Writes of them answer it. */
	int limits_write_err;
	/* The number of ancestors, the group's parent to root included
	 * (mri_cgroup2_open_ancestor() opens one). */
	size_t nanc;
	/* The real root cgroup is the last ancestor (it has no
	 * memory.current); false under a cgroup namespace or a bind mount
	 * of a subtree, whose top is taken as a child of the root. */
	bool root_visible;
	/* Reclaim: the swappiness passed with each memory.reclaim write
	 * (-1: none), and whether the kernel takes it (-1: not probed). */
	int swappiness;
	int swappiness_ok;
	/* Kernels without memory.reclaim: the journal and the lowering step
	 * of memory.high (lib/cgroupfs/lowerstep.h; open only then). */
	bool journaled;
	struct mri_journal journal;
	struct mri_lowerstep step;
	/* Usage threshold (watch.c): the context's tick while armed, and a
	 * memory.events fd of its own, the event fd (POLLPRI) when
	 * watch_polled. */
	struct mri_event_sink events;
	int watch_events_fd;
	bool watch_polled;
	uint64_t threshold_bytes; /* MR_UNLIMITED: none */
};

/* Opens the directory of ancestor i (0: the parent .. nanc - 1: root) by
 * path, for one use: the fd (close with mri_close()), -ENOENT,
 * -EINVAL. */
int mri_cgroup2_open_ancestor(struct mri_cgroup2 *cg, size_t i);

/* -ENOENT for the errors a removed group gives on kept fds (ENODEV) or by
 * name (ENOENT); other values unchanged. */
int mri_cgroup2_gone(int err);

/* A single value file: decimal bytes or the literal "max"
 * (MR_UNLIMITED). Returns 0 or -EIO. */
int mri_cgroup2_parse_value(const char *buf, uint64_t *out);
/* Reads a single value file from a kept fd: 0, -ENOENT, -EIO. */
int mri_cgroup2_read_value(struct mri_cgroup2 *cg, int fd, const char *name,
			   uint64_t *out);
/* Reads `name` in the directory dirfd (opened, read and closed through
 * mri_fops): 0, -ENOENT (absent or removed), -EIO. */
int mri_cgroup2_read_at(struct mri_cgroup2 *cg, int dirfd, const char *name,
			uint64_t *out);
/* The group's directory for one operation, opened by path and checked to
 * be the cgroup opened: a group removed and made again under its name is
 * -ENOENT, not another group's files. Closed with mri_close(). */
int mri_cgroup2_dir(struct mri_cgroup2 *cg);
/* Opens the group's file `name` for one use (O_CLOEXEC added). */
int mri_cgroup2_open_file(struct mri_cgroup2 *cg, const char *name,
			  int flags);
/* Reads a single value file of the group, opened for the read. */
int mri_cgroup2_read_file(struct mri_cgroup2 *cg, const char *name,
			  uint64_t *out);
/* Writes bytes, or "max" for MR_UNLIMITED, to an open fd. */
int mri_cgroup2_write_value(int fd, uint64_t bytes);
/* Writes bytes ("max" for MR_UNLIMITED) to the group's file `name`,
 * opened for the write (O_WRONLY | O_NONBLOCK, see limit.c) and closed. */
int mri_cgroup2_write_file(struct mri_cgroup2 *cg, const char *name,
			   uint64_t bytes);

/* memory.stat (memstat.c): parses into *out (fully written, size set);
 * three states per key: present (bit set), absent (bit clear, 0), error
 * (a known key with no valid value, or a line without one: -EIO). `kernel`
 * is the sum of its parts where the kernel does not print it. */
int mri_cgroup2_parse_memstat(const char *buf, uint64_t page_size,
			      struct mr_memstat *out);
/* memory.events: 0 or -EIO; unknown keys ignored. */
int mri_cgroup2_parse_events(const char *buf, struct mr_events *out);
int mri_cgroup2_read_memstat(void *priv, struct mr_memstat *out);
int mri_cgroup2_read_events(void *priv, bool local, struct mr_events *out);
/* Reads an events file from an open fd into *out. */
int mri_cgroup2_read_events_fd(struct mri_cgroup2 *cg, int fd,
			       const char *name, struct mr_events *out);
/* The same from the group's file `name`, opened for the read. */
int mri_cgroup2_read_events_at(struct mri_cgroup2 *cg, const char *name,
			       struct mr_events *out);

/* Effective memory.low and memory.min of the group (protect.c), as a
 * reclaim rooted root_level levels above it sees them (0: the group
 * itself, which gets none; mri_cgroup2_top_level(): the real root, or the
 * top of the visible tree taken as its child); usage, low and min are the
 * group's own. -EINVAL for a root above the top. */
int mri_cgroup2_effective_protection(struct mri_cgroup2 *cg,
				     uint32_t root_level, uint64_t usage,
				     uint64_t low, uint64_t min,
				     uint64_t *elow, uint64_t *emin);
/* The levels from the group up to the top of its tree, as root_level. */
uint32_t mri_cgroup2_top_level(const struct mri_cgroup2 *cg);

/* Reclaim (reclaim.c). */
int mri_cgroup2_reclaim(void *priv, uint64_t bytes, uint64_t *asked_bytes,
			uint64_t *freed_bytes);
int mri_cgroup2_set_swappiness(void *priv, int swappiness);
/* struct mri_backend.read_swap_usage: memory.swap.current (reclaim.c). */
int mri_cgroup2_read_swap_usage(void *priv, uint64_t *swap_bytes);
/* Kernels without memory.reclaim: opens the journal and recovers a step
 * left by a dead manager; at close, settles and closes it. */
int mri_cgroup2_journal_open(struct mri_cgroup2 *cg, const char *state_dir);
int mri_cgroup2_journal_close(struct mri_cgroup2 *cg);

/* Limits (limit.c). */
int mri_cgroup2_write_limit(void *priv, int which, uint64_t bytes);

/* Usage thresholds (watch.c). */
int mri_cgroup2_watch_init(struct mri_cgroup2 *cg, int dirfd,
			   const struct mri_event_sink *events);
void mri_cgroup2_watch_fini(struct mri_cgroup2 *cg);
void mri_cgroup2_watch_forget(struct mri_cgroup2 *cg);
int mri_cgroup2_set_usage_threshold(void *priv, uint64_t bytes);
int mri_cgroup2_event_ack(void *priv);

#endif /* MR_CGROUP2_H */
