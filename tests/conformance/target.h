/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance suite's view of one backend: a target. The behaviour
 * tests (suite.c) are written once, against the public API only, and run
 * on every backend through this interface, so the backends cannot drift
 * apart. A target says how to get a fresh group with a limit, how to put
 * memory in it from a process (or simulated task) the test started, how
 * to stream a file through it with and without the margin worker, and how
 * to remove it; and, in `expect`, the exact answers its backend gives
 * where it lacks a feature, which the tests check instead of skipping.
 *
 * Every hook asserts (Check) on its own failures; none returns an error.
 */
#ifndef MR_CONF_TARGET_H
#define MR_CONF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memreclaim.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)

/* A process (or simulated task) holding anonymous memory in a group. */
struct conf_proc;

struct conf_expect {
	/* mr_group_set_high(): 0, or -EOPNOTSUPP (cgroup v1 has no high). */
	int set_high;
	/* mr_group_set_reclaim_swappiness(g, 0): 0, or -EOPNOTSUPP (cgroup
	 * v1; v2 before Linux 6.11). */
	int swappiness;
	/* mr_group_read_pressure() and mr_group_psi_trigger_open(): 0, or
	 * -EOPNOTSUPP (cgroup v1 without a cgroup2 twin). */
	int pressure;
	/* What a fired PSI trigger's fd polls: POLLPRI (the kernel's), or
	 * POLLIN (the simulator's socket, sim.h). */
	short psi_poll;
	/* MR_EVENT_* bits mr_group_read_events() reports present. */
	uint64_t events_present;
	/* MR_LIMITS_HAS_* bits mr_group_read_limits() reports present. */
	uint32_t limits_present;
	/* mr_group_reclaim() of a group holding only anonymous memory: 0
	 * where it goes to swap, else the error, and anon_reason why. */
	int anon_reclaim;
	const char *anon_reason;
	/* A group of anonymous memory above its margin may swap (swap
	 * free, swappiness not 0): the margin worker reclaims it. Else it
	 * leaves the group alone, with a warning, for swap_reason. */
	bool margin_swaps;
	const char *swap_reason;
	/* The kernel's per-CPU charge stock (MEMCG_CHARGE_BATCH, 64 pages
	 * per CPU), which any reclaim may drain: a fall in usage may differ
	 * from the bytes reported freed by that much. False where usage is
	 * exact. */
	bool charge_stock;
	/* Only a reclaim's first step asks the group's batch; the later ones
	 * ask what it still lacks (cgroup v1's steps, lib/core/reclaim.c). */
	bool whole_later_steps;
};

struct conf_target {
	const char *name;
	/* mr_group_open()'s backend name (NULL: "auto"). */
	const char *backend;
	/* Once, in main, before any test: 0, or the exit status to end
	 * with (77: cannot run here, printed with the reason; 1: cannot run
	 * under CI=true). It may complete `expect` with what the machine
	 * has (v1: swap accounting). May be NULL. */
	int (*init)(void);
	/* Once, after the tests (removes what init made). May be NULL. */
	void (*fini)(void);
	/* Around each test, in its process: setup gets the test's fresh
	 * context (the simulator binds it to a new machine); teardown runs
	 * after the context is freed. */
	void (*setup)(mr_ctx_t *ctx);
	void (*teardown)(void);
	/* A new empty group whose limit is limit_bytes; its path, for
	 * mr_group_open(), into path[len]. Removed at teardown unless the
	 * test removed it. */
	void (*create)(uint64_t limit_bytes, char *path, size_t len);
	/* Removes the group now, while the test may hold a handle on it. */
	void (*remove)(const char *path);
	/* Charges `bytes` of clean page cache to the group: a process of
	 * the group writes a new file of that size, fsyncs it (a kernel
	 * target also drops it and reads it back) and exits. */
	void (*charge_cache)(const char *path, uint64_t bytes);
	/* A process of the group touching `bytes` of anonymous memory with
	 * a pattern, then waiting; stop_anon has it check the pattern (the
	 * pages swapped out come back intact) and end. */
	struct conf_proc *(*start_anon)(const char *path, uint64_t bytes);
	void (*stop_anon)(struct conf_proc *p);
	/* A process of the group reads file_bytes of a file not in the
	 * page cache from start to end (a kernel target reads a smaller
	 * file in several passes, each after dropping it from the cache:
	 * the guest's scratch disk holds 512 MiB); with `worker`, the context's
	 * margin worker runs meanwhile (the thread, or the simulator's
	 * worker task). Returns when the reader has ended. */
	void (*stream)(mr_ctx_t *ctx, const char *path, uint64_t file_bytes,
		       bool worker);
	struct conf_expect expect;
};

/* The target this program runs the suite on (one per program). */
extern struct conf_target conf_target;

#endif /* MR_CONF_TARGET_H */
