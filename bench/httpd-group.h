/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's group of bench-httpd, and the keeper's, on either of the
 * two layouts a host can have; the one whose hierarchy holds the memory
 * controller is chosen at run time (httpd_group_probe()):
 *
 *  - hybrid (HTTPD_HYBRID): the memory controller is cgroup v1's. The
 *    server's memory group is HTTPD_V1_MEMORY/NAME (its limit
 *    memory.limit_in_bytes, its limit hits memory.failcnt, its refaults
 *    memory.stat total_workingset_refault_file), and the same processes
 *    sit in a cgroup2 twin, HTTPD_V2_HYBRID/NAME, for their PSI
 *    memory.pressure and cpu.stat (the host's cgroup2 has no memory
 *    controller, but both files are core cgroup2 files);
 *  - cgroup v2 (HTTPD_V2): the memory controller is cgroup2's, enabled for
 *    the children of HTTPD_V2_ROOT, as in the kernel that tests/kernel/run
 *    boots. One group, HTTPD_V2_ROOT/NAME, is both the memory group and
 *    the "twin": its limit is memory.max, its limit hits memory.events
 *    `max` (what memory.failcnt counts on v1: charges that met the limit,
 *    counted by memcg_memory_event(MEMCG_MAX) after try_charge() failed),
 *    its refaults memory.stat workingset_refault_file.
 *
 * On both, the keeper's own cgroup2 group, NAME-keeper beside the twin,
 * counts the keeper's CPU time in cpu.stat usage_usec, the kernel's
 * reclaim its limit writes run included.
 */
#ifndef MEMRECLAIM_BENCH_HTTPD_GROUP_H
#define MEMRECLAIM_BENCH_HTTPD_GROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTPD_V1_MEMORY "/sys/fs/cgroup/memory"
#define HTTPD_V2_HYBRID "/sys/fs/cgroup/unified"
#define HTTPD_V2_ROOT "/sys/fs/cgroup"

enum httpd_layout {
	HTTPD_HYBRID,   /* v1 memory group and its cgroup2 twin */
	HTTPD_V2,       /* one cgroup2 group with the memory controller */
};

struct httpd_group {
	enum httpd_layout layout;
	char memory[PATH_MAX];  /* the memory group: its limit binds the
				   server; memreclaimd keeps it */
	char twin[PATH_MAX];    /* its cgroup2 group (PSI, cpu.stat): on
				   HTTPD_V2 the memory group itself */
	char keeper[PATH_MAX];  /* the keeper's cgroup2 group */
	bool made_memory, made_twin, made_keeper;
};

struct httpd_counters {
	uint64_t limit_hits;        /* httpd_group_hits_name() */
	uint64_t refault_pages;     /* memory.stat's file refaults */
	uint64_t psi_some_us;       /* twin's memory.pressure some total */
	uint64_t server_cpu_us;     /* twin's cpu.stat usage_usec */
	uint64_t keeper_cpu_us;     /* keeper group's cpu.stat usage_usec */
};

/* What the memory group holds, read at one moment. */
struct httpd_memory {
	uint64_t current_bytes;     /* v1 memory.usage_in_bytes, v2
				       memory.current */
	uint64_t swap_bytes;        /* v1 memory.memsw.usage_in_bytes less
				       usage (0 without swap accounting),
				       v2 memory.swap.current (0 where
				       absent) */
	uint64_t oom_kills;         /* v1 memory.oom_control oom_kill, v2
				       memory.events oom_kill */
	uint64_t refault_anon_pages;/* memory.stat's anonymous refaults */
	uint64_t file_bytes;        /* memory.stat's page cache (v1
				       total_cache, v2 file) */
	uint64_t anon_bytes;        /* and anonymous memory (v1 total_rss,
				       v2 anon) */
};

/* The layout of this host in *layout: HTTPD_HYBRID when it has a
 * writable v1 memory controller and a cgroup2 mount with PSI at
 * HTTPD_V2_HYBRID, HTTPD_V2 when HTTPD_V2_ROOT is a writable cgroup2
 * hierarchy with the memory controller enabled for its children. 0, or
 * -1 (neither; said on stderr). */
int httpd_group_probe(enum httpd_layout *layout);

/* limit_bytes of httpd_group_create(): the memory group keeps the
 * limit a new group has, none. */
#define HTTPD_NO_LIMIT UINT64_MAX

/* Creates the groups of layout named after name (which may hold a
 * slash: a group below a parent the caller made on both hierarchies)
 * and sets the memory group's limit to limit_bytes. 0, or -1 (said on stderr; what was made
 * is in g, for httpd_group_remove()). */
int httpd_group_create(struct httpd_group *g, enum httpd_layout layout,
		       const char *name, uint64_t limit_bytes);

/* Moves the calling process into the memory group and the twin (server)
 * or the keeper group (keeper). For a child between fork and exec: on
 * failure it says why on stderr and returns -1. */
int httpd_group_enter_server(const struct httpd_group *g);
int httpd_group_enter_keeper(const struct httpd_group *g);

/* Starts argv (argv[0] looked up in PATH) in the keeper group, its
 * standard output and error into the file log (truncated), killed with
 * SIGTERM if the caller dies. The child's pid, or -1 (fork failed);
 * a child that cannot set itself up exits 126, one that cannot exec
 * argv[0] 127, saying why on stderr. */
pid_t httpd_group_spawn_keeper(const struct httpd_group *g,
			       const char *const argv[], const char *log);

int httpd_group_read(const struct httpd_group *g, struct httpd_counters *c);

/* The memory group's usage, swap, OOM kills, anonymous refaults, page
 * cache and anonymous memory into *m. 0, or -1 (said on stderr). */
int httpd_group_read_memory(const struct httpd_group *g,
			    struct httpd_memory *m);

/* Only its usage and swap (m's other fields untouched), without reading
 * memory.stat: cheap enough to sample often. 0, or -1 (said on
 * stderr). */
int httpd_group_read_usage(const struct httpd_group *g,
			   struct httpd_memory *m);

/* What limit_hits counts on the layout, named by the file it comes
 * from: "memory.failcnt" (HTTPD_HYBRID) or "memory.events max"
 * (HTTPD_V2). A static string. */
const char *httpd_group_hits_name(enum httpd_layout layout);

/* Kills what is left in the groups (only the bench's own children can
 * be there), waits for them to leave and removes the groups. */
void httpd_group_remove(struct httpd_group *g);

/* Writes s to the file at path; 0 or -1 with errno set. */
int httpd_write_file(const char *path, const char *s);

#endif
