/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance target on a fake kernel: a cgroup tree in a temporary
 * directory (v1 memory, or v2 with CONF_FAKE_V2, as Linux 6.1 shows it)
 * whose files are answered by the file-access table (lib/cgroupfs/fileops.h), so
 * the cgroup1 and cgroup2 backends run the suite without a kernel.
 *
 * The fake kernel keeps, per group: page cache and anonymous bytes (usage
 * is their sum), limit (v1 memory.limit_in_bytes, v2 memory.max), v2
 * memory.high, low and min, the peak, memory.failcnt, the memory.events
 * counters, pgscan/pgsteal, and the stall time of its one task; a clock
 * of 1 ms per 128 KiB its task reads or writes (a fake disk). Writes
 * react as the kernel does:
 *  - a limit below usage reclaims page cache down to it; v1 answers
 *    EBUSY when the cache does not cover it, after reclaiming it all,
 *    and keeps its limit (mem_cgroup_resize_max()); v2 sets it and counts
 *    an oom event (memory_max_write() would OOM-kill);
 *  - v2 memory.high reclaims towards the new high (6.1 ignores
 *    O_NONBLOCK), memory.reclaim reclaims page cache, EAGAIN when it
 *    frees less than asked (memory_reclaim()), EINVAL for a swappiness=
 *    argument (6.1 has none); the fake has no swap (its meminfo says
 *    SwapFree 0);
 *  - v1 cgroup.event_control arms usage thresholds that signal their
 *    eventfd on a crossing either way; v2 memory.events and
 *    memory.pressure are sockets that poll POLLPRI (out-of-band data) when
 *    an event counter grows, or when a PSI trigger written to the
 *    pressure file fires (kernel/sched/psi.c's window and rate limit, in
 *    the fake clock); reading an events file consumes its POLLPRI, as
 *    kernfs does;
 *  - a charge that meets the limit counts failcnt and a max event, stalls
 *    and reclaims a SWAP_CLUSTER_MAX batch of cache, and fails (oom,
 *    oom_kill) when nothing is left; usage above v2 high counts a high
 *    event and reclaims back to it (mem_cgroup_handle_over_high());
 *  - a removed group's files are gone by name (ENOENT) and its kept fds
 *    answer ENODEV, as kernfs does.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fileops.h"
#include "swap.h"
#include "target.h"
#if CONF_FAKE_V2
#include "cgroup2.h"
#endif

#define V2 CONF_FAKE_V2
#define PAGE 4096ULL
#define CLUSTER (32 * PAGE)
#define UNLIMITED_V1 9223372036854771712ULL /* PAGE_COUNTER_MAX pages */
#define MAX_FDS 4096
#define MAX_GROUPS 16
#define MAX_THR 64
#define MAX_TRIG 8
/* Stall of a charge that meets the limit or high, in us of the clock. */
#define STALL_US 250

enum fev { F_LOW, F_HIGH, F_MAX, F_OOM, F_OOM_KILL, F_OOM_GROUP_KILL, F_NEV };

enum fkind {
	K_DIR = 1, K_USAGE, K_LIMIT, K_HIGH, K_LOW, K_MIN, K_PEAK,
	K_SWAP_CURRENT, K_SWAP_MAX, K_STAT, K_EVENTS, K_EVENTS_LOCAL,
	K_PRESSURE, K_RECLAIM, K_FAILCNT, K_EVENT_CONTROL, K_OOM_CONTROL,
	K_SUBTREE_CONTROL, K_CONTROLLERS, K_OTHER,
};

static const struct {
	const char *name;
	enum fkind kind;
} files[] = {
#if V2
	{ "memory.current", K_USAGE },
	{ "memory.max", K_LIMIT },
	{ "memory.high", K_HIGH },
	{ "memory.low", K_LOW },
	{ "memory.min", K_MIN },
	{ "memory.peak", K_PEAK },
	{ "memory.swap.current", K_SWAP_CURRENT },
	{ "memory.swap.max", K_SWAP_MAX },
	{ "memory.stat", K_STAT },
	{ "memory.events", K_EVENTS },
	{ "memory.events.local", K_EVENTS_LOCAL },
	{ "memory.pressure", K_PRESSURE },
	{ "memory.reclaim", K_RECLAIM },
	{ "cgroup.subtree_control", K_SUBTREE_CONTROL },
	{ "cgroup.controllers", K_CONTROLLERS },
	{ "cgroup.procs", K_OTHER },
#else
	{ "memory.usage_in_bytes", K_USAGE },
	{ "memory.limit_in_bytes", K_LIMIT },
	{ "memory.max_usage_in_bytes", K_PEAK },
	{ "memory.stat", K_STAT },
	{ "memory.failcnt", K_FAILCNT },
	{ "memory.oom_control", K_OOM_CONTROL },
	{ "cgroup.event_control", K_EVENT_CONTROL },
	{ "memory.soft_limit_in_bytes", K_OTHER },
	{ "memory.swappiness", K_OTHER },
	{ "memory.use_hierarchy", K_OTHER },
	{ "cgroup.procs", K_OTHER },
	{ "tasks", K_OTHER },
#endif
};

struct trigger {
	int peer;                 /* the fake's end; -1: free */
	bool full;
	uint64_t threshold_us, window_us;
	uint64_t win_start, win_start_value, win_prev_growth;
	uint64_t last_total, last_event;
	bool pending;
};

struct fgroup {
	bool used, gone;
	char dir[PATH_MAX];
	uint64_t limit, high, low, min;
	uint64_t file, anon, peak;
	uint64_t failcnt, ev[F_NEV], pgscan, pgsteal, pgfault;
	uint64_t some_us, full_us;
	struct { int efd; uint64_t bytes; bool above; } thr[MAX_THR];
	unsigned nthr;
	struct trigger trig[MAX_TRIG];
	int watch_peers[8];       /* memory.events sockets to notify */
};

static struct {
	char root[PATH_MAX];
	char state[PATH_MAX];
	char mountinfo[PATH_MAX];
	char meminfo[PATH_MAX], swappiness[PATH_MAX];
	uint64_t now_us;
	struct fgroup g[MAX_GROUPS];
	struct {
		int group;        /* -1: the root, else an index */
		enum fkind kind;
		int peer;         /* socket files: the fake's end, else -1 */
	} fd[MAX_FDS];
} fk;

static unsigned seq;

/* ------------------------------------------------------------- model */

static uint64_t usage_of(const struct fgroup *g)
{
	return g->file + g->anon;
}

/* Tells every memory.events socket of g that a counter changed. */
static void notify_events(struct fgroup *g)
{
	size_t i;

	for (i = 0; i < sizeof(g->watch_peers) / sizeof(int); i++) {
		if (g->watch_peers[i] > 0)
			send(g->watch_peers[i], "e", 1,
			     MSG_OOB | MSG_DONTWAIT | MSG_NOSIGNAL);
	}
}

static void event(struct fgroup *g, enum fev e)
{
	g->ev[e]++;
	notify_events(g);
}

/* psi.c window_update() and update_triggers(), in the fake clock. */
static void check_triggers(struct fgroup *g)
{
	struct trigger *t;
	uint64_t total, growth, elapsed;
	bool new_stall;
	int i;

	for (i = 0; i < MAX_TRIG; i++) {
		t = &g->trig[i];
		if (t->peer < 0 || !t->window_us)
			continue;
		total = t->full ? g->full_us : g->some_us;
		new_stall = total != t->last_total;
		t->last_total = total;
		if (!new_stall && !t->pending)
			continue;
		if (new_stall) {
			elapsed = fk.now_us - t->win_start;
			growth = total - t->win_start_value;
			if (elapsed > t->window_us) {
				t->win_start = fk.now_us;
				t->win_start_value = total;
				t->win_prev_growth = growth;
			} else {
				growth += t->win_prev_growth *
					  (t->window_us - elapsed) /
					  t->window_us;
			}
			if (!t->pending && growth < t->threshold_us)
				continue;
			t->pending = true;
		}
		if (t->last_event && fk.now_us < t->last_event + t->window_us)
			continue;
		t->last_event = fk.now_us;
		t->pending = false;
		if (send(t->peer, "p", 1, MSG_OOB | MSG_DONTWAIT |
			 MSG_NOSIGNAL) < 0 && errno == EPIPE) {
			/* The caller closed the trigger (with close(2), not
			 * through the table): the trigger goes. */
			close(t->peer);
			t->peer = -1;
		}
	}
}

static void stall(struct fgroup *g)
{
	g->some_us += STALL_US;
	g->full_us += STALL_US;
	check_triggers(g);
}

static void usage_changed(struct fgroup *g)
{
	uint64_t one = 1, u = usage_of(g);
	bool above;
	unsigned i;

	if (u > g->peak)
		g->peak = u;
	for (i = 0; i < g->nthr; i++) {
		above = u > g->thr[i].bytes;
		if (above != g->thr[i].above) {
			g->thr[i].above = above;
			if (write(g->thr[i].efd, &one, sizeof(one)) < 0)
				ck_abort_msg("eventfd: %s", strerror(errno));
		}
	}
}

/* Reclaims up to `bytes` of page cache; returns what it freed. */
static uint64_t reclaim_cache(struct fgroup *g, uint64_t bytes)
{
	uint64_t n = bytes < g->file ? bytes : g->file;

	n = n / PAGE * PAGE;
	g->pgscan += n / PAGE;
	g->pgsteal += n / PAGE;
	g->file -= n;
	if (n)
		usage_changed(g);
	return n;
}

/* A charge of `bytes` by the group's task (try_charge()). */
static int charge(struct fgroup *g, uint64_t bytes, bool file)
{
	while (usage_of(g) + bytes > g->limit) {
		g->failcnt++;
		event(g, F_MAX);
		stall(g);
		if (!reclaim_cache(g, CLUSTER > bytes ? CLUSTER : bytes)) {
			event(g, F_OOM);
			event(g, F_OOM_KILL);
			return -ENOMEM;
		}
	}
	if (file)
		g->file += bytes;
	else
		g->anon += bytes;
	g->pgfault += bytes / PAGE;
	usage_changed(g);
	if (usage_of(g) > g->high) {
		event(g, F_HIGH);
		stall(g);
		reclaim_cache(g, usage_of(g) - g->high);
	}
	return 0;
}

/* The task reads or writes `bytes` of a file through the group. */
static void file_io(struct fgroup *g, uint64_t bytes, mr_ctx_t *worker)
{
	struct timespec ms = { 0, 1000000 };
	struct pollfd pfd;
	uint64_t done;

	if (worker) {
		pfd.fd = mr_ctx_worker_fd(worker);
		ck_assert_int_ge(pfd.fd, 0);
		pfd.events = POLLIN;
	}
	for (done = 0; done < bytes; done += CLUSTER) {
		fk.now_us += 1000;
		ck_assert_int_eq(charge(g, CLUSTER, true), 0);
		check_triggers(g);
		if (!worker)
			continue;
		/* The worker runs beside the reader: the reader's 1 ms of
		 * disk is real time, in which the v2 backend's timer can
		 * tick. */
		nanosleep(&ms, NULL);
		if (poll(&pfd, 1, 0) == 1)
			ck_assert_int_ge(mr_ctx_worker_dispatch(worker, 0), 0);
	}
}

/* --------------------------------------------------------- rendering */

static int render_value(char *out, size_t len, uint64_t v)
{
	if (v == MR_UNLIMITED && V2)
		return snprintf(out, len, "max\n");
	if (v == MR_UNLIMITED)
		v = UNLIMITED_V1;
	return snprintf(out, len, "%" PRIu64 "\n", v);
}

static int render_events(char *out, size_t len, const struct fgroup *g)
{
	return snprintf(out, len, "low %" PRIu64 "\nhigh %" PRIu64
			"\nmax %" PRIu64 "\noom %" PRIu64 "\noom_kill %" PRIu64
			"\noom_group_kill %" PRIu64 "\n", g->ev[F_LOW],
			g->ev[F_HIGH], g->ev[F_MAX], g->ev[F_OOM],
			g->ev[F_OOM_KILL], g->ev[F_OOM_GROUP_KILL]);
}

static int render_stat(char *out, size_t len, const struct fgroup *g)
{
	/* All cache inactive, all anon active. */
	if (V2)
		return snprintf(out, len, "anon %" PRIu64 "\nfile %" PRIu64
				"\nkernel 0\nshmem 0\nfile_mapped 0\n"
				"file_dirty 0\nfile_writeback 0\n"
				"inactive_anon 0\nactive_anon %" PRIu64
				"\ninactive_file %" PRIu64 "\nactive_file 0\n"
				"unevictable 0\npgfault %" PRIu64
				"\npgmajfault 0\npgscan %" PRIu64
				"\npgsteal %" PRIu64
				"\nworkingset_refault_anon 0\n"
				"workingset_refault_file 0\n", g->anon,
				g->file, g->anon, g->file, g->pgfault,
				g->pgscan, g->pgsteal);
	return snprintf(out, len, "cache %" PRIu64 "\nrss %" PRIu64
			"\nhierarchical_memory_limit %" PRIu64
			"\nhierarchical_memsw_limit %llu\ntotal_cache %" PRIu64
			"\ntotal_rss %" PRIu64 "\ntotal_shmem 0\n"
			"total_mapped_file 0\ntotal_dirty 0\n"
			"total_writeback 0\ntotal_pgfault %" PRIu64
			"\ntotal_pgmajfault 0\ntotal_inactive_anon 0\n"
			"total_active_anon %" PRIu64
			"\ntotal_inactive_file %" PRIu64
			"\ntotal_active_file 0\ntotal_unevictable 0\n",
			g->file, g->anon,
			g->limit == MR_UNLIMITED ? (uint64_t)UNLIMITED_V1 :
			g->limit,
			UNLIMITED_V1, g->file, g->anon, g->pgfault, g->anon,
			g->file);
}

static int render(char *out, size_t len, int gi, enum fkind kind)
{
	const struct fgroup *g = gi >= 0 ? &fk.g[gi] : NULL;

	if (!g)
		return kind == K_SUBTREE_CONTROL || kind == K_CONTROLLERS ?
		       snprintf(out, len, "memory\n") : -ENOENT;
	switch (kind) {
	case K_USAGE:
		return render_value(out, len, usage_of(g));
	case K_LIMIT:
		return render_value(out, len, g->limit);
	case K_HIGH:
		return render_value(out, len, g->high);
	case K_LOW:
		return render_value(out, len, g->low);
	case K_MIN:
		return render_value(out, len, g->min);
	case K_PEAK:
		return render_value(out, len, g->peak);
	case K_SWAP_CURRENT:
		return render_value(out, len, 0);
	case K_SWAP_MAX:
		return render_value(out, len, MR_UNLIMITED);
	case K_FAILCNT:
		return render_value(out, len, g->failcnt);
	case K_STAT:
		return render_stat(out, len, g);
	case K_EVENTS:
	case K_EVENTS_LOCAL:
		return render_events(out, len, g);
	case K_OOM_CONTROL:
		return snprintf(out, len, "oom_kill_disable 0\nunder_oom 0\n"
				"oom_kill %" PRIu64 "\n", g->ev[F_OOM_KILL]);
	case K_PRESSURE:
		/* The fake keeps totals only: its averages read 0. */
		return snprintf(out, len, "some avg10=0.00 avg60=0.00 "
				"avg300=0.00 total=%" PRIu64 "\nfull avg10=0.00 "
				"avg60=0.00 avg300=0.00 total=%" PRIu64 "\n",
				g->some_us, g->full_us);
	case K_SUBTREE_CONTROL:
		return snprintf(out, len, "\n");
	case K_CONTROLLERS:
		return snprintf(out, len, "memory\n");
	default:
		return snprintf(out, len, "0\n");
	}
}

/* ------------------------------------------------------------ writes */

static int parse_value(const char *s, uint64_t *v)
{
	if (V2 && strcmp(s, "max") == 0) {
		*v = MR_UNLIMITED;
		return 0;
	}
	if (!V2 && strcmp(s, "-1") == 0) {
		*v = MR_UNLIMITED;
		return 0;
	}
	if (mri_parse_u64(s, v) < 0)
		return -EINVAL;
	if (*v >= UNLIMITED_V1)
		*v = MR_UNLIMITED;
	else
		*v = *v / PAGE * PAGE;
	return 0;
}

static int write_limit(struct fgroup *g, const char *s)
{
	uint64_t v;

	if (parse_value(s, &v) < 0)
		return -EINVAL;
	if (usage_of(g) > v)
		reclaim_cache(g, usage_of(g) - v);
	if (usage_of(g) > v) {
		if (!V2)
			return -EBUSY;
		event(g, F_OOM);
	}
	g->limit = v;
	return 0;
}

static int write_reclaim(struct fgroup *g, const char *s)
{
	char num[32];
	uint64_t want;
	size_t n = strcspn(s, " \n");

	/* 6.1's memory_reclaim() takes a size alone: any argument is
	 * -EINVAL. */
	if (s[n] == ' ' || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (mri_parse_u64(num, &want) < 0)
		return -EINVAL;
	want = (want + PAGE - 1) / PAGE * PAGE;
	return reclaim_cache(g, want) < want ? -EAGAIN : 0;
}

/* "<eventfd> <fd of memory.usage_in_bytes> <bytes>" */
static int write_event_control(struct fgroup *g, const char *s)
{
	int efd, ufd;
	uint64_t bytes;

	if (sscanf(s, "%d %d %" SCNu64, &efd, &ufd, &bytes) != 3 ||
	    ufd < 0 || ufd >= MAX_FDS || fk.fd[ufd].kind != K_USAGE)
		return -EINVAL;
	if (g->nthr == MAX_THR) {
		/* The backend keeps one threshold: drop the oldest. */
		close(g->thr[0].efd);
		memmove(&g->thr[0], &g->thr[1], sizeof(g->thr[0]) *
			(MAX_THR - 1));
		g->nthr--;
	}
	/* The kernel holds its own reference to the eventfd. */
	g->thr[g->nthr].efd = dup(efd);
	if (g->thr[g->nthr].efd < 0)
		return -errno;
	g->thr[g->nthr].bytes = bytes;
	g->thr[g->nthr].above = usage_of(g) > bytes;
	g->nthr++;
	return 0;
}

/* "some|full <stall us> <window us>" on a pressure socket. */
static int write_trigger(struct fgroup *g, int fd, const char *s)
{
	unsigned long long stall, window;
	char kind[8];
	int i;

	if (sscanf(s, "%7s %llu %llu", kind, &stall, &window) != 3 ||
	    (strcmp(kind, "some") && strcmp(kind, "full")) || !stall ||
	    stall > window || window < 500000 || window > 10000000)
		return -EINVAL;
	for (i = 0; i < MAX_TRIG; i++) {
		if (g->trig[i].peer == fk.fd[fd].peer)
			return -EBUSY;
	}
	for (i = 0; i < MAX_TRIG && g->trig[i].peer >= 0; i++)
		;
	if (i == MAX_TRIG)
		return -ENOSPC;
	g->trig[i] = (struct trigger){
		.peer = fk.fd[fd].peer,
		.full = kind[0] == 'f',
		.threshold_us = stall,
		.window_us = window,
		.win_start = fk.now_us,
		.win_start_value = kind[0] == 'f' ? g->full_us : g->some_us,
		.last_total = kind[0] == 'f' ? g->full_us : g->some_us,
	};
	return 0;
}

/* ---------------------------------------------------- the fops table */

static bool under_root(const char *path)
{
	size_t n = strlen(fk.root);

	return strncmp(path, fk.root, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* The group of a directory path: its index, -1 for the root, -2 for
 * none. */
static int group_of_dir(const char *path)
{
	int i;

	if (strcmp(path, fk.root) == 0)
		return -1;
	for (i = 0; i < MAX_GROUPS; i++) {
		if (fk.g[i].used && !fk.g[i].gone &&
		    strcmp(fk.g[i].dir, path) == 0)
			return i;
	}
	return -2;
}

static enum fkind kind_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (strcmp(files[i].name, name) == 0)
			return files[i].kind;
	}
	return 0;
}

static bool fake(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fk.fd[fd].kind;
}

static bool gone(int fd)
{
	return fk.fd[fd].group >= 0 && fk.g[fk.fd[fd].group].gone;
}

/* A new fd the fake does not answer for: a number it held before (a
 * trigger fd its caller closed with close(2)) is forgotten. */
static int untracked(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		fk.fd[fd].kind = 0;
	return fd;
}

static int h_open(const char *path, int flags, mode_t mode)
{
	int fd = mri_file_ops_real.open(path, flags, mode);
	int gi;

	if (fd < 0 || !under_root(path))
		return untracked(fd);
	gi = group_of_dir(path);
	if (gi == -2)
		return untracked(fd);
	ck_assert_int_lt(fd, MAX_FDS);
	fk.fd[fd].group = gi;
	fk.fd[fd].kind = K_DIR;
	fk.fd[fd].peer = -1;
	return fd;
}

static int h_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	enum fkind kind;
	int fd, sv[2], gi;
	size_t i;

	if (!fake(dirfd) || fk.fd[dirfd].kind != K_DIR)
		return untracked(mri_file_ops_real.openat(dirfd, name, flags,
							  mode));
	gi = fk.fd[dirfd].group;
	if (gi >= 0 && fk.g[gi].gone)
		return -ENOENT;
	if (strcmp(name, ".") == 0)
		kind = K_DIR;
	else
		kind = kind_of(name);
	/* The file must exist in the tree (the root has few). */
	fd = mri_file_ops_real.openat(dirfd, name, flags & ~O_NONBLOCK, mode);
	if (fd < 0 || !kind)
		return untracked(fd);
	ck_assert_int_lt(fd, MAX_FDS);
	fk.fd[fd].group = gi;
	fk.fd[fd].kind = kind;
	fk.fd[fd].peer = -1;
	if (!V2 || (kind != K_EVENTS && kind != K_EVENTS_LOCAL &&
		    kind != K_PRESSURE) || gi < 0)
		return fd;
	/* A pollable file: a socket whose out-of-band byte is POLLPRI. */
	fk.fd[fd].kind = 0;
	close(fd);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				    SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_lt(sv[0], MAX_FDS);
	fk.fd[sv[0]].group = gi;
	fk.fd[sv[0]].kind = kind;
	fk.fd[sv[0]].peer = sv[1];
	if (kind == K_EVENTS) {
		for (i = 0; i < sizeof(fk.g[gi].watch_peers) / sizeof(int);
		     i++) {
			if (fk.g[gi].watch_peers[i] <= 0) {
				fk.g[gi].watch_peers[i] = sv[1];
				break;
			}
		}
	}
	return sv[0];
}

/* Reading an events file takes its pending POLLPRI. */
static void consume(int fd)
{
	char buf[64];

	while (recv(fd, buf, 1, MSG_OOB | MSG_DONTWAIT) > 0)
		;
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static ssize_t h_pread(int fd, void *buf, size_t len, off_t off)
{
	char text[2048];
	int n;

	if (!fake(fd) || fk.fd[fd].kind == K_DIR)
		return mri_file_ops_real.pread(fd, buf, len, off);
	if (gone(fd))
		return -ENODEV;
	if (fk.fd[fd].peer >= 0 && fk.fd[fd].kind != K_PRESSURE)
		consume(fd);
	n = render(text, sizeof(text), fk.fd[fd].group, fk.fd[fd].kind);
	if (n < 0)
		return n;
	ck_assert_int_lt(n, (int)sizeof(text));
	if (off >= n)
		return 0;
	if ((size_t)(n - off) < len)
		len = (size_t)(n - off);
	memcpy(buf, text + off, len);
	return (ssize_t)len;
}

static ssize_t h_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct fgroup *g;
	char s[128];
	int r;

	if (!fake(fd) || fk.fd[fd].kind == K_DIR)
		return mri_file_ops_real.pwrite(fd, buf, len, off);
	if (gone(fd))
		return -ENODEV;
	if (fk.fd[fd].group < 0 || len >= sizeof(s))
		return -EINVAL;
	g = &fk.g[fk.fd[fd].group];
	memcpy(s, buf, len);
	s[len] = '\0';
	/* kernfs strips nothing; the kernel's parsers take a newline. */
	s[strcspn(s, "\n")] = '\0';
	switch (fk.fd[fd].kind) {
	case K_LIMIT:
		r = write_limit(g, s);
		break;
	case K_HIGH:
		r = parse_value(s, &g->high);
		if (r == 0 && usage_of(g) > g->high)
			reclaim_cache(g, usage_of(g) - g->high);
		break;
	case K_LOW:
		r = parse_value(s, &g->low);
		break;
	case K_MIN:
		r = parse_value(s, &g->min);
		break;
	case K_RECLAIM:
		r = write_reclaim(g, s);
		break;
	case K_EVENT_CONTROL:
		r = write_event_control(g, s);
		break;
	case K_PRESSURE:
		r = write_trigger(g, fd, s);
		break;
	default:
		r = -EINVAL;
	}
	return r < 0 ? r : (ssize_t)len;
}

static int h_close(int fd)
{
	struct fgroup *g;
	size_t i;

	if (fake(fd) && fk.fd[fd].peer >= 0) {
		g = &fk.g[fk.fd[fd].group];
		for (i = 0; i < MAX_TRIG; i++) {
			if (g->trig[i].peer == fk.fd[fd].peer)
				g->trig[i].peer = -1;
		}
		for (i = 0; i < sizeof(g->watch_peers) / sizeof(int); i++) {
			if (g->watch_peers[i] == fk.fd[fd].peer)
				g->watch_peers[i] = 0;
		}
		close(fk.fd[fd].peer);
	}
	if (fd >= 0 && fd < MAX_FDS)
		fk.fd[fd].kind = 0;
	return mri_file_ops_real.close(fd);
}

static int h_statfs(const char *path, struct statfs *st)
{
	int r = mri_file_ops_real.statfs(path, st);

	if (r == 0 && under_root(path))
		st->f_type = V2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC;
	return r;
}

static const struct mri_file_ops fake_ops = {
	.open = h_open,
	.openat = h_openat,
	.pread = h_pread,
	.pwrite = h_pwrite,
	.close = h_close,
	.statfs = h_statfs,
};

/* ------------------------------------------------------------ target */

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	int fd;

	ck_assert_int_lt(snprintf(p, sizeof(p), "%s/%s", dir, name),
			 (int)sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static int init(void)
{
	char tmpl[] = "/tmp/memreclaim-conf-fake-XXXXXX";
	FILE *f;

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(fk.root, sizeof(fk.root), "%s/cgroup", tmpl);
	snprintf(fk.state, sizeof(fk.state), "%s/state", tmpl);
	snprintf(fk.mountinfo, sizeof(fk.mountinfo), "%s/mountinfo", tmpl);
	if (mkdir(fk.root, 0755) < 0 || mkdir(fk.state, 0700) < 0) {
		perror("mkdir");
		return 1;
	}
	setenv("MEMRECLAIM_STATE_DIR", fk.state, 1);
	f = fopen(fk.mountinfo, "we");
	if (!f)
		return 1;
	fprintf(f, "36 25 0:30 / %s rw,nosuid,nodev,noexec,relatime "
		"shared:9 - %s cgroup rw%s\n", fk.root,
		V2 ? "cgroup2" : "cgroup", V2 ? ",nsdelegate" : ",memory");
	fclose(f);
#if V2
	mri_cgroup2_mountinfo = fk.mountinfo;
#endif
	/* The host the fake kernel runs: no swap; vm.swappiness 60. */
	snprintf(fk.meminfo, sizeof(fk.meminfo), "%s/meminfo", tmpl);
	snprintf(fk.swappiness, sizeof(fk.swappiness), "%s/swappiness", tmpl);
	f = fopen(fk.meminfo, "we");
	if (!f)
		return 1;
	fprintf(f, "SwapTotal:             0 kB\nSwapFree:              0 kB\n");
	fclose(f);
	f = fopen(fk.swappiness, "we");
	if (!f)
		return 1;
	fprintf(f, "60\n");
	fclose(f);
	mri_swap_meminfo = fk.meminfo;
	mri_swap_vm_swappiness = fk.swappiness;
	return 0;
}

static void rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	/* Our own temporary directory, made by init(). */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void fini(void)
{
	char top[PATH_MAX];

	snprintf(top, sizeof(top), "%s", fk.root);
	*strrchr(top, '/') = '\0';
	rm_tree(top);
}

static void setup(mr_ctx_t *ctx)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < MAX_GROUPS; i++)
		memset(&fk.g[i], 0, sizeof(fk.g[i]));
	fk.now_us = 1;
#if V2
	touch(fk.root, "cgroup.subtree_control");
	touch(fk.root, "cgroup.controllers");
#endif
	mri_file_ops_set(&fake_ops);
}

static void teardown(void)
{
	mri_file_ops_set(&mri_file_ops_real);
}

static struct fgroup *group_at(const char *path)
{
	int gi = group_of_dir(path);

	ck_assert_int_ge(gi, 0);
	return &fk.g[gi];
}

static void create(uint64_t limit_bytes, char *path, size_t len)
{
	struct fgroup *g = NULL;
	size_t i;
	int t;

	for (i = 0; i < MAX_GROUPS && !g; i++) {
		if (!fk.g[i].used)
			g = &fk.g[i];
	}
	ck_assert_ptr_nonnull(g);
	memset(g, 0, sizeof(*g));
	for (t = 0; t < MAX_TRIG; t++)
		g->trig[t].peer = -1;
	g->used = true;
	g->limit = limit_bytes;
	g->high = MR_UNLIMITED;
	/* Each test runs in a process of its own. */
	ck_assert_int_lt(snprintf(path, len, "%s/conf-%d-%u", fk.root,
				  (int)getpid(), ++seq), (int)len);
	ck_assert_uint_lt(strlen(path), sizeof(g->dir));
	strcpy(g->dir, path);
	ck_assert_int_eq(mkdir(g->dir, 0755), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		touch(g->dir, files[i].name);
}

static void remove_group(const char *path)
{
	struct fgroup *g = group_at(path);
	unsigned i;
	int t;

	g->gone = true;
	for (i = 0; i < g->nthr; i++)
		close(g->thr[i].efd);
	/* cgroup v1 signals its event_control eventfds as the group goes;
	 * v2's memory.events and trigger files poll POLLERR|POLLPRI. */
	for (t = 0; t < MAX_TRIG; t++) {
		if (g->trig[t].peer >= 0)
			shutdown(g->trig[t].peer, SHUT_RDWR);
	}
	notify_events(g);
	rm_tree(g->dir);
}

static void charge_cache(const char *path, uint64_t bytes)
{
	file_io(group_at(path), bytes, NULL);
}

static void stream(mr_ctx_t *ctx, const char *path, uint64_t file_bytes,
		   bool worker)
{
	struct fgroup *g = group_at(path);
	uint64_t before = g->file;

	file_io(g, file_bytes, worker ? ctx : NULL);
	/* What the reader leaves behind stays cached, as on a kernel. */
	ck_assert_uint_le(g->file, before + file_bytes);
}

struct conf_proc {
	struct fgroup *g;
	uint64_t bytes;
};

static struct conf_proc *start_anon(const char *path, uint64_t bytes)
{
	struct conf_proc *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->g = group_at(path);
	p->bytes = bytes;
	ck_assert_int_eq(charge(p->g, bytes, false), 0);
	return p;
}

static void stop_anon(struct conf_proc *p)
{
	/* Without swap the fake never takes anonymous memory away. */
	ck_assert_uint_ge(p->g->anon, p->bytes);
	p->g->anon -= p->bytes;
	usage_changed(p->g);
	free(p);
}

struct conf_target conf_target = {
	.name = V2 ? "fake-v2" : "fake-v1",
	.backend = V2 ? "cgroup2" : "cgroup1",
	.init = init,
	.fini = fini,
	.setup = setup,
	.teardown = teardown,
	.create = create,
	.remove = remove_group,
	.charge_cache = charge_cache,
	.start_anon = start_anon,
	.stop_anon = stop_anon,
	.stream = stream,
	.expect = {
#if V2
		.set_high = 0,
		.pressure = 0,
		.psi_poll = POLLPRI,
		.events_present = (1ULL << F_NEV) - 1,
		.limits_present = MR_LIMITS_HAS_HIGH |
				  MR_LIMITS_HAS_PROTECTION |
				  MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_SWAP |
				  MR_LIMITS_HAS_BINDING | MR_LIMITS_HAS_SWAP_FREE,
		.anon_reclaim = -EAGAIN,
		.anon_reason = "the fake kernel has no swap: memory.reclaim "
			       "frees nothing and answers EAGAIN",
#else
		.set_high = -EOPNOTSUPP,
		.whole_later_steps = true,
		.pressure = -EOPNOTSUPP,
		.events_present = 1ULL << MR_EVENT_MAX |
				  1ULL << MR_EVENT_OOM_KILL,
		.limits_present = MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_BINDING |
				  MR_LIMITS_HAS_SWAP_FREE,
		.anon_reclaim = -EAGAIN,
		.anon_reason = "the fake kernel has no swap: a cgroup1 step "
			       "asks at most half of the group's page cache "
			       "(the core's batch, since the step can "
			       "OOM-kill), and the group has none",
#endif
		.swappiness = -EOPNOTSUPP,
		.swap_reason = "the fake kernel has no swap (SwapFree 0 in its "
			       "meminfo)",
	},
};
