/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime directory's drop-ins: how memreclaim-oci-hook hands a
 * container's memory cgroup to memreclaimd, and how memreclaimd reads
 * them back. One file per container, DIR/ID.conf, written whole under a
 * temporary name and renamed into place (so the daemon never reads half
 * a file), removed when the container stops:
 *
 *   # memreclaim-oci-hook: container ID
 *   cgroup = /sys/fs/cgroup/memory/machine/ID
 *   policy = NAME
 *
 * cgroup: the group's directory, as the hook found it from the
 * container's pid (mr_group_open_pid()), absolute and in normal form
 * (no '//', '.', '..' or trailing '/': as mr_group_path() gives it,
 * so that one group has one spelling); policy: the NAME of a
 * [group NAME] section with runtime = yes. Nothing else is accepted:
 * both programs treat the file as input to check, and the daemon reads
 * only regular files of its own user, MRD_DROPIN_MAX_BYTES at most.
 *
 * The directory must be a directory (not a symbolic link) owned by the
 * caller and writable by no one else: whoever can write it chooses which
 * groups the daemon lowers limits of. Both programs check the directory
 * they opened (fstat() of its fd), and then write, read and remove
 * through that fd only: a directory put at the path after the check,
 * by whoever can write its parent, is never used.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_DROPIN_H
#define MR_EXAMPLES_MEMRECLAIMD_DROPIN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The largest drop-in read. */
#define MRD_DROPIN_MAX_BYTES 4096
/* The longest container id taken (runc's and podman's are 64 hex
 * digits). */
#define MRD_CONTAINER_ID_MAX 128

struct mrd_dropin {
	char cgroup[PATH_MAX];
	char policy[64];
};

/* Whether id may name a drop-in: 1 to MRD_CONTAINER_ID_MAX letters,
 * digits, '_', '+', '-' and '.', not starting with '.' (runc's own rule
 * for ids, with '.' kept off the front: the daemon skips dot files, its
 * temporaries). */
bool mrd_container_id_ok(const char *id);

/* The container id of a drop-in's file name "ID.conf" into id (len at
 * least MRD_CONTAINER_ID_MAX + 1); false for any other name. */
bool mrd_dropin_id(const char *name, char *id, size_t len);

/* Opens the runtime directory dir (see above), creating it (and its
 * parent) with mode 0755 when create and missing, and checks what it
 * opened. Returns the directory's fd (O_CLOEXEC), or -errno after saying
 * why on stderr (prog: the program's name for the line): -ENOTDIR,
 * -ELOOP (a symbolic link), -EPERM (another owner, or writable by group
 * or others), -ENOENT (missing, and not create), or mkdir's, open's or
 * fstat's. */
int mrd_runtime_dir_open(const char *prog, const char *dir, bool create);

/* Writes d as ID.conf in the directory dirfd (see above), through a
 * temporary file there, fsync()ed, and renameat(). Returns 0 or -errno
 * (nothing left behind): -EINVAL (id not mrd_container_id_ok()), -EFBIG
 * (over MRD_DROPIN_MAX_BYTES), -ENOMEM, or the calls'. */
int mrd_dropin_write(int dirfd, const char *id, const struct mrd_dropin *d);

/* Removes ID.conf of the directory dirfd. Returns 0 (removed, or there
 * was none), -EINVAL (id not mrd_container_id_ok()) or unlinkat()'s
 * -errno. */
int mrd_dropin_remove(int dirfd, const char *id);

/* Reads the drop-in `name` of the directory dirfd into *d. Returns 0, or
 * -errno with *why saying what is wrong: -ENOENT (gone), -EINVAL (not a
 * regular file, a key unknown, given twice or missing, a value
 * malformed), -EPERM (owned by another user), -EFBIG (over
 * MRD_DROPIN_MAX_BYTES), or open's or read's. */
int mrd_dropin_read(int dirfd, const char *name, struct mrd_dropin *d,
		    const char **why);

#endif /* MR_EXAMPLES_MEMRECLAIMD_DROPIN_H */
