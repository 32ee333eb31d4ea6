/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest tests' own tiny harness: TAP-like output, and helpers for
 * cgroup v2 files. The guest programs run as root inside the kernel that
 * tests/kernel/run boots (cgroup2 at /sys/fs/cgroup with the memory
 * controller enabled for children, an ext4 scratch disk at $MR_SCRATCH),
 * statically linked, without Check and without the library.
 *
 * Output: "ok N - what" or "not ok N - what", "# " diagnostics, then
 * "1..N" and a closing "N passed, N failed" line. Exit status 0 only when
 * every check passed.
 */
#ifndef MR_GUEST_H
#define MR_GUEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KiB 1024ULL
#define MiB (1024 * KiB)

#define CG_ROOT "/sys/fs/cgroup"

/* One check: prints ok/not ok with the message; returns cond. */
__attribute__((format(printf, 2, 3)))
int ok(int cond, const char *fmt, ...);
/* A diagnostic line ("# ..."). */
__attribute__((format(printf, 1, 2)))
void diag(const char *fmt, ...);
/* A setup step failed and nothing after it can be checked: prints
 * "Bail out! ...", the tally, and exits 1. */
__attribute__((format(printf, 1, 2), noreturn))
void bail(const char *fmt, ...);
/* Prints the plan and the tally; returns the exit status (0: all passed,
 * and at least one check ran). */
int done_testing(void);

/* Monotonic clock in seconds. */
double now_s(void);
/* Where the scratch ext4 file system is mounted ($MR_SCRATCH). */
const char *scratch_dir(void);

/* Whole-file access. Each returns >= 0 or a negative errno. */
int file_write_str(const char *path, const char *s);
ssize_t file_read_str(const char *path, char *buf, size_t size);

/*
 * A group is named relative to CG_ROOT ("mr-test/child"). cg_write()
 * writes s in one write() call, as the kernel wants; cg_read() reads the
 * whole file, NUL-terminated.
 */
int cg_create(const char *group);
int cg_write(const char *group, const char *file, const char *s);
ssize_t cg_read(const char *group, const char *file, char *buf, size_t size);
/* A single-value file ("12345" or "max" as UINT64_MAX). */
int cg_read_u64(const char *group, const char *file, uint64_t *v);
/* "key value" lines (memory.stat, memory.events): -ENOENT when absent. */
int cg_read_key(const char *group, const char *file, const char *key,
		uint64_t *v);
/* Moves the calling process into the group ("" is the root). */
int cg_enter(const char *group);
/* Kills what is left in the group (cgroup.kill), waits for it to empty
 * and removes it. */
int cg_remove(const char *group);

/* Writes size bytes of a non-zero pattern to path (created, truncated),
 * then fsyncs it. */
int file_fill(const char *path, uint64_t size);

#endif
