/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroups of bench-httpd (httpd-group.h) on a host whose only
 * hierarchy is cgroup v2 with the memory controller, as in the kernel
 * that tests/kernel/run boots: bench/bench-httpd-v2 is bench-httpd built
 * with this file instead of httpd-group.c. There one cgroup2 group below
 * /sys/fs/cgroup holds the server and is both its memory group and its
 * "twin": g->v1 and g->twin name the same directory (g->v1 is the group
 * bench-httpd hands to memreclaimd and whose limit binds the server), made
 * once. Its limit is memory.max; the counters map to cgroup v2's own
 * files: charges that met the limit are memory.events' max (what
 * memory.failcnt counts on v1: mem_cgroup_charge's retries after
 * try_charge() failed, counted by memcg_memory_event(MEMCG_MAX)), the
 * refaults memory.stat's workingset_refault_file, the stalls and CPU time
 * memory.pressure and cpu.stat as on the hybrid host. The keeper's group
 * is a sibling, NAME-keeper, counting the keeper's CPU time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "httpd-group.h"

#define PROG "bench-httpd"
#define V2_ROOT "/sys/fs/cgroup"
/* How long the processes killed in a group may take to leave it. */
#define LEAVE_TIMEOUT_MS 10000

int httpd_write_file(const char *path, const char *s)
{
	size_t n = strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t k;
	int e;

	if (fd < 0)
		return -1;
	k = write(fd, s, n);
	e = errno;
	close(fd);
	if (k == (ssize_t)n)
		return 0;
	errno = k < 0 ? e : EIO;
	return -1;
}

/* Whether the file's first line has the word. */
static int has_word(const char *path, const char *word)
{
	char line[512], *tok, *save;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " \n", &save); tok && !found;
		     tok = strtok_r(NULL, " \n", &save))
			found = strcmp(tok, word) == 0;
	fclose(f);
	return found;
}

int httpd_group_probe(void)
{
	struct statfs sf;

	if (statfs(V2_ROOT, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC ||
	    !has_word(V2_ROOT "/cgroup.subtree_control", "memory") ||
	    access(V2_ROOT "/cgroup.procs", W_OK)) {
		fprintf(stderr, PROG ": no writable cgroup v2 hierarchy at "
			V2_ROOT " with the memory controller enabled for its "
			"children\n");
		return -1;
	}
	return 0;
}

static int make_dir(const char *path, bool *made)
{
	if (mkdir(path, 0755)) {
		fprintf(stderr, PROG ": creating %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	*made = true;
	return 0;
}

int httpd_group_create(struct httpd_group *g, const char *name,
		       uint64_t limit_bytes)
{
	char path[PATH_MAX + 32], val[32];

	memset(g, 0, sizeof(*g));
	snprintf(g->v1, sizeof(g->v1), V2_ROOT "/%s", name);
	snprintf(g->twin, sizeof(g->twin), "%s", g->v1);
	snprintf(g->keeper, sizeof(g->keeper), V2_ROOT "/%s-keeper", name);
	if (make_dir(g->v1, &g->made_v1) ||
	    make_dir(g->keeper, &g->made_keeper))
		return -1;
	snprintf(path, sizeof(path), "%s/memory.max", g->v1);
	snprintf(val, sizeof(val), "%" PRIu64, limit_bytes);
	if (httpd_write_file(path, val)) {
		fprintf(stderr, PROG ": writing %s to %s: %s\n", val, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int enter(const char *dir)
{
	char path[PATH_MAX + 32], pid[24];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (httpd_write_file(path, pid)) {
		fprintf(stderr, PROG ": moving %s into %s: %s\n", pid, dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

int httpd_group_enter_server(const struct httpd_group *g)
{
	return enter(g->v1);
}

int httpd_group_enter_keeper(const struct httpd_group *g)
{
	return enter(g->keeper);
}

/* The number after key (which ends in its separator: "name " or
 * "total="), at a line's start or after a space, in the first line of
 * dir/file that has it. 0 or -1, said on stderr. */
static int read_key(const char *dir, const char *file, const char *key,
		    uint64_t *v)
{
	char path[PATH_MAX + 32], line[512];
	size_t len = strlen(key);
	int r = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, PROG ": opening %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (r && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, key);

		if (p && (p == line || p[-1] == ' ')) {
			*v = strtoull(p + len, NULL, 10);
			r = 0;
		}
	}
	fclose(f);
	if (r)
		fprintf(stderr, PROG ": no \"%s\" in %s\n", key, path);
	return r;
}

int httpd_group_read(const struct httpd_group *g, struct httpd_counters *c)
{
	int r = 0;

	r |= read_key(g->v1, "memory.events", "max ", &c->failcnt);
	r |= read_key(g->v1, "memory.stat", "workingset_refault_file ",
		      &c->refault_pages);
	/* "some avg10=... avg60=... avg300=... total=N" comes first. */
	r |= read_key(g->v1, "memory.pressure", "total=", &c->psi_some_us);
	r |= read_key(g->v1, "cpu.stat", "usage_usec ", &c->server_cpu_us);
	r |= read_key(g->keeper, "cpu.stat", "usage_usec ", &c->keeper_cpu_us);
	return r ? -1 : 0;
}

/* Kills what is left in dir (cgroup.kill), waits until it is empty
 * (cgroup.events populated 0), then removes it. */
static void empty_and_remove(const char *dir, bool *made)
{
	char path[PATH_MAX + 32];
	uint64_t populated = 1;
	int waited_ms = 0;

	if (!*made)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	if (httpd_write_file(path, "1"))
		fprintf(stderr, PROG ": writing 1 to %s: %s\n", path,
			strerror(errno));
	while (read_key(dir, "cgroup.events", "populated ", &populated) == 0 &&
	       populated && (waited_ms += 10) < LEAVE_TIMEOUT_MS)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	if (rmdir(dir))
		fprintf(stderr, PROG ": removing %s: %s\n", dir,
			strerror(errno));
	else
		*made = false;
}

void httpd_group_remove(struct httpd_group *g)
{
	empty_and_remove(g->keeper, &g->made_keeper);
	empty_and_remove(g->v1, &g->made_v1);
	g->made_twin = false;
}
