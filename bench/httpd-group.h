/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The groups of bench-httpd on a hybrid host: the server's cgroup v1
 * memory group (its limit, memory.failcnt, memory.stat's refaults), the
 * server's cgroup2 twin (PSI memory.pressure and cpu.stat of the same
 * processes: the host's cgroup2 has no memory controller, but both files
 * are core cgroup2 files), and the keeper's own cgroup2 group, whose
 * cpu.stat usage counts the keeper's CPU time, the kernel's reclaim its
 * limit writes run included.
 */
#ifndef MEMRECLAIM_BENCH_HTTPD_GROUP_H
#define MEMRECLAIM_BENCH_HTTPD_GROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HTTPD_V1_MEMORY "/sys/fs/cgroup/memory"
#define HTTPD_V2_ROOT "/sys/fs/cgroup/unified"

struct httpd_group {
	char v1[PATH_MAX];      /* HTTPD_V1_MEMORY/NAME */
	char twin[PATH_MAX];    /* HTTPD_V2_ROOT/NAME */
	char keeper[PATH_MAX];  /* HTTPD_V2_ROOT/NAME-keeper */
	bool made_v1, made_twin, made_keeper;
};

struct httpd_counters {
	uint64_t failcnt;           /* memory.failcnt: charges at the limit */
	uint64_t refault_pages;     /* total_workingset_refault_file */
	uint64_t psi_some_us;       /* twin's memory.pressure some total */
	uint64_t server_cpu_us;     /* twin's cpu.stat usage_usec */
	uint64_t keeper_cpu_us;     /* keeper group's cpu.stat usage_usec */
};

/* 0 when this host has a writable v1 memory controller and a cgroup2
 * mount at HTTPD_V2_ROOT; otherwise -1, said on stderr. */
int httpd_group_probe(void);

/* Creates the three groups named after name and sets the v1 group's
 * memory.limit_in_bytes to limit_bytes. 0, or -1 (said on stderr; what
 * was made is in g, for httpd_group_remove()). */
int httpd_group_create(struct httpd_group *g, const char *name,
		       uint64_t limit_bytes);

/* Moves the calling process into the v1 group and the twin (server) or
 * the keeper group (keeper). For a child between fork and exec: on
 * failure it says why on stderr and returns -1. */
int httpd_group_enter_server(const struct httpd_group *g);
int httpd_group_enter_keeper(const struct httpd_group *g);

int httpd_group_read(const struct httpd_group *g, struct httpd_counters *c);

/* Kills what is left in the groups (only the bench's own children can
 * be there), waits for them to leave and removes the groups. */
void httpd_group_remove(struct httpd_group *g);

/* Writes s to the file at path; 0 or -1 with errno set. */
int httpd_write_file(const char *path, const char *s);

#endif
