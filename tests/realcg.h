/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the real cgroup v1 suites (tests/test-real-cgroup1.c,
 * tests/test-real-alloc-hook.c) share: where they create their groups,
 * data files and state directory, how they skip (or, under CI=true,
 * fail), how they name and sweep what they create, and the file helpers.
 * Groups are "<parent>/memreclaim-test-<pid>-<suffix>", data files
 * "<data_dir>/memreclaim-test-<pid>.<suffix>" (files, or directories such
 * as a sort's temporary one): rc_sweep_stale() removes those
 * of dead processes and never anything else.
 */
#ifndef MEMRECLAIM_TESTS_REALCG_H
#define MEMRECLAIM_TESTS_REALCG_H

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

extern char parent[PATH_MAX];    /* where groups are created */
extern char data_dir[PATH_MAX];  /* real filesystem for the data files */
extern char state_dir[PATH_MAX]; /* the suite's MEMRECLAIM_STATE_DIR */

/* snprintf that treats truncation as a broken test setup (exit 99). */
__attribute__((format(printf, 3, 4)))
void fmt(char *out, size_t len, const char *f, ...);

/* The whole of dir/name, as text (a static buffer); asserts it opens. */
const char *read_text(const char *dir, const char *name);

/* Writes val to dir/name, whole; asserts it. */
void write_file(const char *dir, const char *name, const char *val);

/* Writes a file of `bytes` (a multiple of 1 MiB) at path on a real
 * filesystem, synced and dropped from the page cache, so that whoever
 * reads it next is charged for its cache; asserts it. */
void rc_make_uncached_file(const char *path, unsigned long long bytes);

/* Drops path's page cache (POSIX_FADV_DONTNEED); asserts it. */
void rc_drop_cache(const char *path);

/* 77 (skip) with the reason printed, or 1 (fail) under CI=true, where a
 * real-kernel test that cannot run must not pass silently. */
int rc_skip(const char *why);

/* 77 (skip, even under CI) when MEMRECLAIM_SKIP_REAL_KERNEL is set (the
 * builds of --disable-real-kernel-tests, as make distcheck's); else finds
 * the parent (MEMRECLAIM_TEST_PARENT, else the v1 memory mount),
 * the data directory (MEMRECLAIM_TEST_DATA_DIR, else /var/tmp; not tmpfs)
 * and names the state directory /tmp/memreclaim-test<tag>-state-<pid>;
 * probes that a group can be created (and removed) in the parent.
 * Returns 0, or rc_skip()'s answer. Call from main, before any test. */
int rc_find_places(const char *tag);

/* Removes the groups and data files that runs of these suites left when
 * their process died before its teardown (only names of this file's
 * pattern, only of processes that are gone), and on a hybrid host the
 * groups' cgroup2 twins (mr_ctx_set_hybrid_psi()). A data entry that is a
 * directory is removed with what it holds, 8 levels deep at most, never
 * following a symbolic link (a link is removed, not what it names), never
 * leaving the data directory's file system, never removing what another
 * user owns; what cannot be removed is left and named on stderr. */
void rc_sweep_stale(void);

/* Whether name is "memreclaim-test-<pid><sep>..." with pid, a positive
 * decimal number, naming no live process. */
bool rc_dead_run(const char *name, char sep);

/* The cgroup2 directory holding the twins of the groups in parent (the
 * same path relative to the v1 memory mount under the cgroup2 mount, as
 * mr_ctx_set_hybrid_psi() makes them), into out; false where the host
 * has no such place. */
bool rc_twin_parent(char *out, size_t len);

/* Removes the state directory and what the library left in it. */
void rc_remove_state_dir(void);

/* Runs the suite s (freed), then rc_remove_state_dir(); EXIT_SUCCESS when
 * every test passed, else EXIT_FAILURE. */
int rc_run(Suite *s);

#endif
