/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmemreclaim-sim — a simulated machine whose memory cgroups the
 * library's policies run on, through the backend "sim" of libmemreclaim
 * (<memreclaim.h>). Build with `pkg-config --cflags --libs
 * libmemreclaim-sim`, which links libmemreclaim too.
 *
 * The conventions are those of <memreclaim.h>: bytes and nanoseconds as
 * uint64_t, negative errno values, a thread class at the end of each
 * function's comment. The library never prints, starts no thread and
 * installs no signal handler.
 */
#ifndef MEMRECLAIM_SIM_H
#define MEMRECLAIM_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <memreclaim.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MR_BUILDING_SIM_LIBRARY)
#define MR_SIM_EXPORT __attribute__((visibility("default")))
#else
#define MR_SIM_EXPORT
#endif

/* A simulated machine: RAM, CPUs, a disk, optional swap, memory cgroups
 * below its root "/", in a virtual clock counted in ns, driven by one
 * seeded generator: the same seed gives the same run, byte for byte. The
 * model (LRU lists, page cache states, refaults, THP, memory.high
 * throttling, soft-limit reclaim, PSI) and its cost parameter sets are in
 * docs/simulator.md. Groups of a simulator are opened with
 * mr_group_open(ctx, path, "sim", ...) on a context bound to it with
 * mr_sim_attach(); every policy of the library runs on them unchanged.
 * The simulator is chosen only by name, never by "auto".
 * A machine made with mr_sim_new() has no tasks: it serves a program that
 * checks its handling of a group hierarchy (open, limits, policies,
 * synchronous reclaim once usage exists) without a real cgroup. The
 * workloads, the trace replay and the reference experiments that run
 * tasks on the model are the project's (experiments/, run by mrsim), not
 * part of this library.
 * A simulator and the contexts bound to it are driven by one thread
 * (not MT-safe), and a simulator's group keeps its margin claim in the
 * simulator, not in the state directory. -EBUSY from the functions below
 * means "in use", whatever mr_strerror() says of managers. */
typedef struct mr_sim mr_sim_t;

/* Swap devices of a simulated machine. */
enum mr_sim_swap {
	MR_SIM_SWAP_NONE = 0,
	MR_SIM_SWAP_DISK = 1,   /* pages written to the disk */
	MR_SIM_SWAP_ZSWAP = 2,  /* pages compressed in memory */
};

/* The machine; the caller sets size = sizeof(struct mr_sim_config). */
struct mr_sim_config {
	size_t size;
	uint64_t seed;          /* seeds the machine's one generator (every
				   random draw of the model and workloads) */
	uint64_t ram_bytes;     /* 16 MiB .. 8 TiB; 0: 1 GiB */
	uint32_t cpus;          /* 1 .. 4096; 0: 2 */
	uint64_t swap_bytes;    /* 0: no swap */
	int swap_kind;          /* enum mr_sim_swap; NONE with swap_bytes 0 */
	const char *costs;      /* cost set: "2011" or "today"; NULL: today */
};

/* Creates a simulated machine with its root group "/" at time 0.
 * Errors: -EINVAL (config or ret NULL, size too small, a value out of
 * range, an unknown cost set, swap_bytes without a swap kind or the
 * reverse), -ENOMEM. MT-safe (the new simulator is the caller's). */
MR_SIM_EXPORT int mr_sim_new(const struct mr_sim_config *config,
			     mr_sim_t **ret);

/* Frees the simulator. Returns 0, or -EBUSY when groups of it are still
 * open in a context (close them, or free the context, first: nothing is
 * freed then). NULL returns 0. Not MT-safe (the simulator's thread). */
MR_SIM_EXPORT int mr_sim_free(mr_sim_t *sim);

/* Knobs of a simulated group, in bytes (mr_sim_set_knob()). */
enum mr_sim_knob {
	MR_SIM_MAX = 0,    /* memory.max / memory.limit_in_bytes */
	MR_SIM_HIGH = 1,   /* memory.high */
	MR_SIM_LOW = 2,    /* memory.low */
	MR_SIM_MIN = 3,    /* memory.min */
	MR_SIM_SOFT = 4,   /* the kernel's soft limit (v1
			      memory.soft_limit_in_bytes) */
};

/* Creates the group at path ("/a", "/a/b": its parent must exist, as
 * for a mkdir in a cgroup hierarchy), with no limit, no protection and
 * no usage. Returns 0. Errors: -EINVAL (NULL; a path mr_group_open()
 * refuses: not absolute, a "." or ".." component, PATH_MAX or longer; or
 * one it takes but not in its normal form: a repeated or trailing '/'),
 * -EEXIST ("/" included), -ENOENT (no parent), -ENOSPC (16383 groups below
 * the root per machine), -ENOMEM. Not MT-safe (the simulator's thread). */
MR_SIM_EXPORT int mr_sim_create_group(mr_sim_t *sim, const char *path);

/* Sets a knob of the group at path ("/" is the machine: its max, like
 * any group's, binds everything below it) to bytes, 0 .. MR_UNLIMITED,
 * rounded down to 4 KiB; MR_UNLIMITED means none for MAX, HIGH and SOFT
 * and protects everything for LOW and MIN (the defaults are none and 0).
 * Lowering MR_SIM_MAX below usage reclaims first, in virtual time; -EBUSY
 * when it cannot get there (the limit is then left as it was), as a
 * cgroup v1 limit write does (mm/memcontrol-v1.c, mem_cgroup_resize_max()
 * in Linux 6.1's mm/memcontrol.c). Returns 0.
 * Errors: -EINVAL (sim or path NULL, knob not an enum mr_sim_knob),
 * -ENOENT (no such group), -EBUSY. Not MT-safe (the simulator's thread). */
MR_SIM_EXPORT int mr_sim_set_knob(mr_sim_t *sim, const char *path,
				  int knob, uint64_t bytes);

/* The simulator's virtual time in ns since it was created; 0 for NULL.
 * Not MT-safe (the simulator's thread). */
MR_SIM_EXPORT uint64_t mr_sim_now_ns(const mr_sim_t *sim);

/* Binds ctx to sim: from now on mr_group_open(ctx, path, "sim", ...)
 * opens the group at path of sim's hierarchy. sim NULL unbinds ctx; a
 * context is bound to one simulator at a time, a simulator may serve
 * several contexts. While bound, the context's worker runs only through
 * mr_ctx_worker_dispatch(), in virtual time (the trace replay of
 * experiments/ calls it from a simulated task): mr_ctx_worker_start()
 * answers -EOPNOTSUPP. The backend "sim" is registered with libmemreclaim
 * when this library is loaded, so it exists, bound or not, in every
 * program linked with it; mr_group_open() on a context bound to no
 * simulator answers -ENODEV.
 * Errors: -EINVAL (ctx NULL; or another library registered a backend
 * named "sim" before this one was loaded), -EBUSY (ctx has simulated
 * groups open and sim is another simulator or NULL; or sim is not NULL
 * and the worker thread of mr_ctx_worker_start() runs), -ECHILD (ctx was
 * created before a fork() of this process).
 * MT-safe; the simulator itself is driven by one thread. */
MR_SIM_EXPORT int mr_sim_attach(mr_sim_t *sim, mr_ctx_t *ctx);

#ifdef __cplusplus
}
#endif

#endif /* MEMRECLAIM_SIM_H */
