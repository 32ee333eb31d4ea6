/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroups of bench-httpd (httpd-group.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "httpd-group.h"

#define PROG "bench-httpd"
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

/* The files of a layout's memory group. */
static const struct layout_files {
	const char *limit;          /* the limit, in bytes */
	const char *hits, *hits_key;/* limit hits: file, key (read_key()) */
	const char *hits_name;      /* httpd_group_hits_name() */
	const char *refault_key;    /* file refaults in memory.stat */
	const char *refault_anon_key;/* anonymous refaults in memory.stat */
	const char *current;        /* the usage, in bytes */
	const char *swap;           /* usage + swap (v1) or swap (v2) */
	const char *oom, *oom_key;  /* OOM kills: file, key */
	const char *file_key, *anon_key; /* in memory.stat, bytes */
} layouts[] = {
	[HTTPD_HYBRID] = {
		.limit = "memory.limit_in_bytes",
		.hits = "memory.failcnt", .hits_key = "",
		.hits_name = "memory.failcnt",
		.refault_key = "total_workingset_refault_file ",
		.refault_anon_key = "total_workingset_refault_anon ",
		.current = "memory.usage_in_bytes",
		.swap = "memory.memsw.usage_in_bytes",
		.oom = "memory.oom_control", .oom_key = "oom_kill ",
		.file_key = "total_cache ", .anon_key = "total_rss ",
	},
	[HTTPD_V2] = {
		.limit = "memory.max",
		.hits = "memory.events", .hits_key = "max ",
		.hits_name = "memory.events max",
		.refault_key = "workingset_refault_file ",
		.refault_anon_key = "workingset_refault_anon ",
		.current = "memory.current",
		.swap = "memory.swap.current",
		.oom = "memory.events", .oom_key = "oom_kill ",
		.file_key = "file ", .anon_key = "anon ",
	},
};

/* Whether path is on a cgroup2 mount. */
static bool is_cgroup2(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Whether the file's first line has the word. */
static bool has_word(const char *path, const char *word)
{
	char line[512], *tok, *save;
	FILE *f = fopen(path, "re");
	bool found = false;

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " \n", &save); tok && !found;
		     tok = strtok_r(NULL, " \n", &save))
			found = strcmp(tok, word) == 0;
	fclose(f);
	return found;
}

int httpd_group_probe(enum httpd_layout *layout)
{
	if (access(HTTPD_V1_MEMORY "/memory.limit_in_bytes", W_OK) == 0) {
		if (!is_cgroup2(HTTPD_V2_HYBRID) ||
		    access(HTTPD_V2_HYBRID "/memory.pressure", R_OK)) {
			fprintf(stderr, PROG ": the memory controller is "
				"cgroup v1's, but there is no cgroup2 mount "
				"with PSI at " HTTPD_V2_HYBRID " (for the "
				"server's memory stalls and the keeper's CPU "
				"time)\n");
			return -1;
		}
		*layout = HTTPD_HYBRID;
		return 0;
	}
	if (is_cgroup2(HTTPD_V2_ROOT) &&
	    has_word(HTTPD_V2_ROOT "/cgroup.subtree_control", "memory") &&
	    access(HTTPD_V2_ROOT "/cgroup.procs", W_OK) == 0) {
		*layout = HTTPD_V2;
		return 0;
	}
	fprintf(stderr, PROG ": no writable memory controller: neither cgroup "
		"v1's at " HTTPD_V1_MEMORY " nor cgroup v2's enabled for the "
		"children of " HTTPD_V2_ROOT "\n");
	return -1;
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

int httpd_group_create(struct httpd_group *g, enum httpd_layout layout,
		       const char *name, uint64_t limit_bytes)
{
	char path[PATH_MAX + 32], val[32];

	memset(g, 0, sizeof(*g));
	g->layout = layout;
	if (layout == HTTPD_HYBRID) {
		snprintf(g->memory, sizeof(g->memory), HTTPD_V1_MEMORY "/%s",
			 name);
		snprintf(g->twin, sizeof(g->twin), HTTPD_V2_HYBRID "/%s",
			 name);
		snprintf(g->keeper, sizeof(g->keeper),
			 HTTPD_V2_HYBRID "/%s-keeper", name);
	} else {
		snprintf(g->memory, sizeof(g->memory), HTTPD_V2_ROOT "/%s",
			 name);
		snprintf(g->twin, sizeof(g->twin), "%s", g->memory);
		snprintf(g->keeper, sizeof(g->keeper),
			 HTTPD_V2_ROOT "/%s-keeper", name);
	}
	if (make_dir(g->memory, &g->made_memory) ||
	    (layout == HTTPD_HYBRID && make_dir(g->twin, &g->made_twin)) ||
	    make_dir(g->keeper, &g->made_keeper))
		return -1;
	if (limit_bytes == HTTPD_NO_LIMIT)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", g->memory,
		 layouts[layout].limit);
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
	if (enter(g->memory))
		return -1;
	return g->layout == HTTPD_HYBRID ? enter(g->twin) : 0;
}

int httpd_group_enter_keeper(const struct httpd_group *g)
{
	return enter(g->keeper);
}

pid_t httpd_group_spawn_keeper(const struct httpd_group *g,
			       const char *const argv[], const char *log)
{
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0 || httpd_group_enter_keeper(g))
		_exit(126);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, PROG ": running %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The number after key (which ends in its separator: "name " or
 * "total="), at a line's start or after a space, in the first line of
 * dir/file that has it; "" reads the first line's number. 0 or -1, said
 * on stderr. */
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
	const struct layout_files *l = &layouts[g->layout];
	int r = 0;

	r |= read_key(g->memory, l->hits, l->hits_key, &c->limit_hits);
	r |= read_key(g->memory, "memory.stat", l->refault_key,
		      &c->refault_pages);
	/* "some avg10=... avg60=... avg300=... total=N" comes first. */
	r |= read_key(g->twin, "memory.pressure", "total=", &c->psi_some_us);
	r |= read_key(g->twin, "cpu.stat", "usage_usec ", &c->server_cpu_us);
	r |= read_key(g->keeper, "cpu.stat", "usage_usec ", &c->keeper_cpu_us);
	return r ? -1 : 0;
}

int httpd_group_read_usage(const struct httpd_group *g,
			   struct httpd_memory *m)
{
	const struct layout_files *l = &layouts[g->layout];
	char path[PATH_MAX + 32];
	uint64_t swap = 0;
	int r;

	r = read_key(g->memory, l->current, "", &m->current_bytes);
	/* Without swap accounting (v1 swapaccount=0, v2 without
	 * CONFIG_SWAP) the file is absent and nothing is swapped out of
	 * the group's account. */
	snprintf(path, sizeof(path), "%s/%s", g->memory, l->swap);
	if (access(path, R_OK) == 0)
		r |= read_key(g->memory, l->swap, "", &swap);
	if (g->layout == HTTPD_HYBRID)
		swap = swap > m->current_bytes ? swap - m->current_bytes : 0;
	m->swap_bytes = swap;
	return r ? -1 : 0;
}

int httpd_group_read_memory(const struct httpd_group *g,
			    struct httpd_memory *m)
{
	const struct layout_files *l = &layouts[g->layout];
	int r = httpd_group_read_usage(g, m);

	r |= read_key(g->memory, l->oom, l->oom_key, &m->oom_kills);
	r |= read_key(g->memory, "memory.stat", l->refault_anon_key,
		      &m->refault_anon_pages);
	r |= read_key(g->memory, "memory.stat", l->file_key, &m->file_bytes);
	r |= read_key(g->memory, "memory.stat", l->anon_key, &m->anon_bytes);
	return r ? -1 : 0;
}

const char *httpd_group_hits_name(enum httpd_layout layout)
{
	return layouts[layout].hits_name;
}

/* Kills every process in dir and waits until it is empty (the same on
 * both versions: cgroup.procs lists the group's processes); then removes
 * it. */
static void empty_and_remove(const char *dir, bool *made)
{
	char path[PATH_MAX + 32];
	int waited_ms = 0, left;
	long pid;
	FILE *f;

	if (!*made)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	do {
		left = 0;
		f = fopen(path, "re");
		while (f && fscanf(f, "%ld", &pid) == 1) {
			kill((pid_t)pid, SIGKILL);
			left++;
		}
		if (f)
			fclose(f);
		if (left)
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 },
				  NULL);
	} while (left && (waited_ms += 10) < LEAVE_TIMEOUT_MS);
	if (rmdir(dir))
		fprintf(stderr, PROG ": removing %s: %s\n", dir,
			strerror(errno));
	else
		*made = false;
}

void httpd_group_remove(struct httpd_group *g)
{
	empty_and_remove(g->keeper, &g->made_keeper);
	empty_and_remove(g->twin, &g->made_twin);
	empty_and_remove(g->memory, &g->made_memory);
}
