/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's runtime directory (runtime-dir, default
 * /run/memreclaim/groups.d): the drop-ins container runtimes' hooks write
 * (memreclaimd-dropin.h), one per container, followed with inotify. A
 * drop-in renamed or written into place takes its group with the policy
 * of the [group NAME] section (runtime = yes) it names, if the group's
 * path matches that section's path; one removed releases its group, and
 * so does its group's removal (mrd_groups_release_gone()). A
 * drop-in that does not parse, names no such section, or a group outside
 * the section's path is refused with a log line, and a group it held is
 * released. The directory is followed only while the configuration has a
 * runtime section; it is created (mode 0755) when missing, and refused
 * when it is a symbolic link, owned by another user or writable by
 * others.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_RUNTIME_H
#define MR_EXAMPLES_MEMRECLAIMD_RUNTIME_H

#include "memreclaimd-config.h"
#include "memreclaimd-groups.h"

struct mrd_runtime {
	char *dir;      /* followed; NULL: none */
	int dirfd;      /* the directory, -1 */
	int ifd;        /* inotify, -1 */
};

void mrd_runtime_init(struct mrd_runtime *rt);

/* Follows cfg's runtime directory if cfg has a runtime section (else
 * stops following, releasing the drop-ins' groups), and reads every
 * drop-in: what it names is taken, what is no longer there released.
 * Call after mrd_groups_apply() with the same cfg, at start and after
 * each reload. Returns 0, or the negative errno of a directory that
 * cannot be followed (logged; the drop-ins' groups are released). */
int mrd_runtime_apply(struct mrd_runtime *rt, struct mrd_groups *gs,
		      const struct mrd_config *cfg);

/* The inotify fd to poll (POLLIN), or -1. */
int mrd_runtime_fd(const struct mrd_runtime *rt);

/* Reads the pending events and acts on them. Returns 0 or read(2)'s
 * negative errno. */
int mrd_runtime_dispatch(struct mrd_runtime *rt, struct mrd_groups *gs);

/* Stops following (the groups stay in gs: mrd_groups_free() closes
 * them). */
void mrd_runtime_close(struct mrd_runtime *rt);

#endif /* MR_EXAMPLES_MEMRECLAIMD_RUNTIME_H */
