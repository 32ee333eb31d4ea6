/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals of the cgroup v1 memory controller backend, shared by its
 * files and reached by its tests. */
#ifndef MR_CGROUP1_H
#define MR_CGROUP1_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "hybrid.h"
#include "journal.h"
#include "log.h"
#include "lowerstep.h"
#include "memreclaim.h"

/* The control file a reclaim step lowers, as named in journal records. */
#define MRI_CGROUP1_LIMIT_FILE "memory.limit_in_bytes"

/*
 * A group's private data (struct mri_backend.priv). At most two fds stay
 * open (docs/design.md, "File descriptors"): memory.usage_in_bytes, read at
 * every event and holding the keeper's lock, and, while the group keeps a
 * margin, one eventfd: the spare opened by claim_keeper(true), which the
 * first registration takes, then the armed threshold's. Every other file
 * is opened when used, through the group's directory checked against the
 * cgroup opened (mri_cgroup1_dir()).
 */
struct mri_cgroup1 {
	struct mri_logger *log;
	char *path;              /* as opened */
	char *real_path;         /* without symlinks: ancestors, twin */
	char *root;              /* the hierarchy's top as visible here */
	uint64_t page_size;
	int usage_fd;            /* memory.usage_in_bytes, O_RDONLY */
	/* The armed threshold's eventfd, or -1; written under the core's
	 * reclaim_lock, read by claim_keeper(true) without it. */
	atomic_int eventfd;
	/* The keeper's eventfd not yet registered, or -1: taken by the
	 * worker's registration while the caller's thread may release it
	 * (claim_keeper(false)), hence atomic. */
	atomic_int spare_eventfd;
	/* memory.limit_in_bytes, O_RDWR, during a run of reclaim steps
	 * (cgroup1.c, step_begin()), else -1. */
	int run_limit_fd;
	/* memory.memsw.{usage,limit}_in_bytes exist: not on kernels without
	 * swap accounting (CONFIG_MEMCG_SWAP, swapaccount=0). */
	bool memsw;
	struct mri_event_sink events;
	/* Steps take its lock exclusively; read_limits takes it shared, so
	 * no reader, in this process or another, reports a step's
	 * transient limit (mr_group_set_margin() checks against it). */
	struct mri_journal journal;
	/* The lowering step of the limit (lib/cgroupfs/lowerstep.h), set at open. */
	struct mri_lowerstep step;
	/* Hybrid PSI (pressure.c): the context's switch; the twin is named
	 * after real_path. */
	const struct mri_hybrid_psi *hybrid;
};

/* The group's directory for one operation, opened by path and checked to
 * be the cgroup opened (device and inode): a group removed and made again
 * under its name is -ENOENT, not another group's files. The caller closes
 * it (mri_close()). */
int mri_cgroup1_dir(struct mri_cgroup1 *cg);

/* Opens the group's file `name` for one use (mri_cgroup1_dir()), with
 * O_CLOEXEC added to flags: the fd, -ENOENT, or the open's error. */
int mri_cgroup1_open_file(struct mri_cgroup1 *cg, const char *name,
			  int flags);

/* Reads a decimal number from `name` in the group's directory dirfd: 0,
 * -ENOENT, -EIO. */
int mri_cgroup1_read_at(struct mri_cgroup1 *cg, int dirfd, const char *name,
			uint64_t *out);

/* Maps a value read from memory.limit_in_bytes (or
 * hierarchical_memory_limit) to MR_UNLIMITED when it is any form of v1's
 * "no limit": PAGE_COUNTER_MAX * PAGE_SIZE, i.e. floor(LONG_MAX / page
 * size) * page size for 4, 8, 16 and 64 KiB pages (mm/memcontrol-v1.c
 * prints page_counter max in bytes), LONG_MAX itself, and the
 * 18446744073709551615 (RES_COUNTER_MAX) of kernels before 3.19. Other
 * values are returned as they are. */
uint64_t mri_cgroup1_limit_value(uint64_t raw);

/* Parses the content of memory.stat into *out (fully written, size set to
 * sizeof(*out)) from the hierarchical total_* keys; counts of pages
 * (pgpgin, pgpgout, workingset_refault_*) are multiplied by page_size,
 * saturating. *hier_limit receives hierarchical_memory_limit and
 * *hier_memsw_limit (unless NULL) hierarchical_memsw_limit (the smallest
 * memsw limit on the path to the root, present with memsw accounting),
 * each through mri_cgroup1_limit_value(), or MR_UNLIMITED when absent.
 * Unknown keys are ignored. Returns 0, or -EIO when a known key has no
 * valid value or a line has no value. */
int mri_cgroup1_parse_memstat(const char *buf, uint64_t page_size,
			      struct mr_memstat *out, uint64_t *hier_limit,
			      uint64_t *hier_memsw_limit);

/* Reads and parses memory.stat of an open group from its directory
 * dirfd (mri_cgroup1_dir()). */
int mri_cgroup1_read_stat(struct mri_cgroup1 *cg, int dirfd,
			  struct mr_memstat *out, uint64_t *hier_limit,
			  uint64_t *hier_memsw_limit);

/* -ENOENT for the errors a removed group gives on kept fds (ENODEV) or by
 * name (ENOENT); other values unchanged. */
int mri_cgroup1_gone(int err);

/* Usage thresholds (threshold.c). init keeps the sink the eventfd is
 * reported to; fini closes an armed eventfd, which unregisters the kernel
 * threshold. */
void mri_cgroup1_threshold_init(struct mri_cgroup1 *cg,
				const struct mri_event_sink *events);
void mri_cgroup1_threshold_fini(struct mri_cgroup1 *cg);
/* In a child after fork(): drops the eventfd's number (the fork handler
 * closed it; see cg1_forget()). */
void mri_cgroup1_threshold_forget(struct mri_cgroup1 *cg);
/* The keeper's spare eventfd: opened (keep true; 0, or -errno such as
 * -EMFILE), unless a threshold is armed, whose eventfd is the keeper's
 * (a margin turned off and on before the worker disarmed), or closed
 * (keep false; 0). */
int mri_cgroup1_threshold_spare(struct mri_cgroup1 *cg, bool keep);
int mri_cgroup1_set_usage_threshold(void *priv, uint64_t bytes);
int mri_cgroup1_event_ack(void *priv);

/* PSI of the group's cgroup2 twin (pressure.c): read_pressure,
 * read_io_pressure and psi_trigger_open of struct mri_backend;
 * -EOPNOTSUPP while the ctx has hybrid PSI off or the twin does not
 * exist. */
int mri_cgroup1_read_pressure(void *priv, struct mr_pressure *out);
int mri_cgroup1_read_io_pressure(void *priv, struct mr_pressure *out);
int mri_cgroup1_psi_trigger_open(void *priv, int kind, uint64_t stall_us,
				 uint64_t window_us);

/* Parses memory.oom_control: *oom_kill from its "oom_kill" line (Linux
 * 4.13). Returns 1 with *oom_kill set, 0 when the line is absent (an
 * older kernel), -EIO for a malformed value. */
int mri_cgroup1_parse_oom_kill(const char *buf, uint64_t *oom_kill);

/* Fills the binding fields of *l (binding_level, binding_usage_bytes,
 * headroom_bytes, MR_LIMITS_HAS_BINDING) from its usage_bytes,
 * own_limit_bytes and limit_bytes (the kernel's hierarchical limit),
 * walking the visible ancestors; sets MR_LIMITS_BINDING_HIDDEN instead
 * when none of them has that limit (binding.c). Returns 0, -ENOENT, -EIO. */
int mri_cgroup1_binding(struct mri_cgroup1 *cg, struct mr_limits *l);

/* The headroom under the memsw ("memory+swap") limits: own_limit - usage
 * (the group's memory.memsw.limit_in_bytes and usage_in_bytes as values,
 * MR_UNLIMITED: none), and, when hier_limit (hierarchical_memsw_limit) is
 * lower, at most that limit less the memsw usage of the nearest visible
 * ancestor that sets it; one set above what is visible is not counted
 * (binding.c). Returns 0, -ENOENT, -EIO. */
int mri_cgroup1_memsw_headroom(struct mri_cgroup1 *cg, uint64_t usage,
			       uint64_t own_limit, uint64_t hier_limit,
			       uint64_t *headroom);

#endif /* MR_CGROUP1_H */
