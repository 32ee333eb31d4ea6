/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-scale: many groups in one context (docs/PERFORMANCE.md, "Scale").
 *
 * On the simulator, 10 000 groups in one context: the library's memory
 * per open group (mallinfo2() before and after the opens, the simulated
 * groups made beforehand), its fds per group, the time to open them all,
 * the cost of one policy update (mr_group_set_margin()) and of the worker
 * round it triggers, and the cost of routing one event to its group (the
 * group's event fd signalled, then one mr_ctx_worker_dispatch(): epoll,
 * registry lookup, event_ack), each with 10 000 groups open against a
 * context with few.
 *
 * On the real cgroup v1 backend (root, a writable v1 memory hierarchy at
 * /sys/fs/cgroup/memory): fds and memory per open group, plain and with a
 * margin's threshold armed, over REAL_GROUPS groups the program creates
 * under a parent of its own and removes; and how many groups the hard
 * RLIMIT_NOFILE allows at that count. Then the first seconds of a worker
 * with FIRST_GROUPS groups that keep a margin: its thread's, while a
 * reader streams through the group opened last (that group's margin
 * calls and limit hits in the first 1 and 5 s); then, with that group
 * above its mark, how long the first round takes to serve it,
 * and how long until every threshold is registered (cgroup.event_control
 * waits for an RCU grace period per registration, in the kernel's
 * __mem_cgroup_usage_register_event()); and, in a child at RLIMIT_NOFILE
 * 1024, how many such groups open before the fd budget refuses one, and
 * that the busy group is served then. Exits 77 after the simulator's
 * figures when that part cannot run.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "context.h"
#include "fdbudget.h"
#include "group.h"
#include "memreclaim-sim.h"
#include "registry.h"

#define BENCH "scale"
#define SIM_GROUPS 10000
#define FEW_GROUPS 10
#define ROUTE_ROUNDS 20000
#define UPDATE_ROUNDS 200
#define REAL_GROUPS 300
#define SNAPSHOT_ROUNDS 2000
#define FIRST_GROUPS 1000
#define FIRST_LIMIT (64 * MiB)
#define FIRST_MARGIN (16 * MiB)
#define FIRST_CACHE (56 * MiB) /* above FIRST_LIMIT - FIRST_MARGIN */
#define COMMON_NOFILE 1024
#define STREAM_BYTES (4 * FIRST_LIMIT) /* read over and over: 4x the limit */
#define STREAM_S 5
#define V1_ROOT "/sys/fs/cgroup/memory"
#define MiB (1024ULL * 1024)

static void die(const char *what, int r)
{
	fprintf(stderr, "bench-scale: %s: %s\n", what, mr_strerror(r));
	exit(1);
}

static void check(const char *what, int r)
{
	if (r < 0)
		die(what, r);
}

/* Bytes the process has allocated (glibc's in-use arena and mmapped
 * blocks). */
static double heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (double)mi.uordblks + (double)mi.hblkhd;
}

static int count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		die("/proc/self/fd", -errno);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

struct sim_set {
	mr_sim_t *sim;
	mr_ctx_t *ctx;
	mr_group_t **g;
	unsigned n;
	double open_ns;
	double bytes;
	int fds;
};

/* A simulator with n groups, all opened in one context. */
static void sim_set_open(struct sim_set *s, unsigned n)
{
	struct mr_sim_config c = { .size = sizeof(c), .seed = 1 };
	char path[32];
	double heap;
	uint64_t t0;
	unsigned i;
	int fds;

	s->n = n;
	s->g = calloc(n, sizeof(*s->g));
	if (!s->g)
		die("calloc", -ENOMEM);
	check("mr_sim_new", mr_sim_new(&c, &s->sim));
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/g%u", i);
		check("mr_sim_create_group", mr_sim_create_group(s->sim, path));
		check("mr_sim_set_knob", mr_sim_set_knob(s->sim, path,
							  MR_SIM_MAX,
							  64 * MiB));
	}
	check("mr_ctx_new", mr_ctx_new(&s->ctx));
	check("mr_sim_attach", mr_sim_attach(s->sim, s->ctx));
	/* The first open grows liburcu's own state: not a group's. */
	heap = heap_bytes();
	fds = count_fds();
	t0 = bench_now_ns();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/g%u", i);
		check("mr_group_open", mr_group_open(s->ctx, path, "sim",
						     &s->g[i]));
	}
	s->open_ns = (double)(bench_now_ns() - t0);
	s->bytes = (heap_bytes() - heap) / n;
	s->fds = count_fds() - fds;
	/* The opens' wake-up served: nothing pending. */
	check("dispatch", mr_ctx_worker_dispatch(s->ctx, MR_DISPATCH_ALL));
}

static void sim_set_free(struct sim_set *s)
{
	mr_ctx_free(s->ctx);
	check("mr_sim_free", mr_sim_free(s->sim));
	free(s->g);
}

/* Mean ns of one routed event: group k's event fd signalled as the kernel
 * would, then one dispatch round that takes it to the group. */
static double route_ns(struct sim_set *s)
{
	uint64_t one = 1, t, total = 0;
	unsigned i;
	mr_group_t *g;

	for (i = 0; i < ROUTE_ROUNDS; i++) {
		g = s->g[(i * 7919u) % s->n];
		if (write(g->event_fd, &one, sizeof(one)) != sizeof(one))
			die("eventfd write", -errno);
		t = bench_now_ns();
		check("dispatch", mr_ctx_worker_dispatch(s->ctx, 0));
		total += bench_now_ns() - t;
	}
	return (double)total / ROUTE_ROUNDS;
}

/* Mean ns of a registry lookup and its reference (the worker's part of
 * routing after epoll_wait()). */
static double lookup_ns(struct sim_set *s)
{
	struct mr_group *g;
	uint64_t t;
	unsigned i;

	t = bench_now_ns();
	for (i = 0; i < ROUTE_ROUNDS; i++) {
		g = mri_ctx_get_group(s->ctx, s->g[(i * 7919u) % s->n]->id);
		mri_ctx_put_group(s->ctx, g);
	}
	return (double)(bench_now_ns() - t) / ROUTE_ROUNDS;
}

/* Mean ns of one mr_group_set_margin() (the caller's side), and of the
 * worker round it wakes (*round_ns). */
static double update_ns(struct sim_set *s, double *round_ns)
{
	uint64_t t, call = 0, round = 0;
	unsigned i;

	for (i = 0; i < UPDATE_ROUNDS; i++) {
		t = bench_now_ns();
		check("mr_group_set_margin",
		      mr_group_set_margin(s->g[i % s->n],
					  (i % 2 ? 8 : 16) * MiB, 0, 0));
		call += bench_now_ns() - t;
		t = bench_now_ns();
		check("dispatch", mr_ctx_worker_dispatch(s->ctx, 0));
		round += bench_now_ns() - t;
	}
	*round_ns = (double)round / UPDATE_ROUNDS;
	return (double)call / UPDATE_ROUNDS;
}

/* Mean ns of the fd budget's check an open makes (lib/core/fdbudget.c: one
 * kept fd and the reserve duplicated and closed). */
static double budget_ns(struct sim_set *s)
{
	uint64_t t;
	unsigned i;

	t = bench_now_ns();
	for (i = 0; i < UPDATE_ROUNDS; i++)
		check("mri_fd_budget", mri_fd_budget(NULL, s->ctx->epfd, 1,
						     "bench", "an open"));
	return (double)(bench_now_ns() - t) / UPDATE_ROUNDS;
}

static void bench_sim(void)
{
	struct sim_set many, few;
	double route_many, route_few, look_many, look_few;
	double upd_many, upd_few, round_many, round_few;

	sim_set_open(&few, FEW_GROUPS);
	sim_set_open(&many, SIM_GROUPS);
	bench_emit(BENCH, "sim: library memory per open group", many.bytes,
		   "bytes/group", "target", 4096, "bytes/group");
	bench_emit(BENCH, "sim: fds per open group",
		   (double)many.fds / SIM_GROUPS, "fds/group", "target", 2,
		   "fds/group");
	bench_emit(BENCH, "sim: open 10000 groups, total", many.open_ns / 1e6,
		   "ms", NULL, 0, NULL);
	bench_emit(BENCH, "sim: open, per group (10000 open)",
		   many.open_ns / SIM_GROUPS, "ns/group",
		   "per group, 10 open", few.open_ns / FEW_GROUPS, "ns/group");

	route_few = route_ns(&few);
	route_many = route_ns(&many);
	bench_emit(BENCH, "sim: route one event (10000 groups open)",
		   route_many, "ns/event", "10 groups open", route_few,
		   "ns/event");
	look_few = lookup_ns(&few);
	look_many = lookup_ns(&many);
	bench_emit(BENCH, "registry lookup (10000 groups open)", look_many,
		   "ns/lookup", "10 groups open", look_few, "ns/lookup");

	bench_emit(BENCH, "fd budget check of one open (10000 groups open)",
		   budget_ns(&many), "ns/check", "10 groups open",
		   budget_ns(&few), "ns/check");
	upd_few = update_ns(&few, &round_few);
	upd_many = update_ns(&many, &round_many);
	bench_emit(BENCH, "sim: mr_group_set_margin (10000 groups open)",
		   upd_many, "ns/call", "10 groups open", upd_few, "ns/call");
	bench_emit(BENCH, "sim: worker round after a policy update "
		   "(10000 groups open)", round_many, "ns/round",
		   "10 groups open", round_few, "ns/round");
	sim_set_free(&many);
	sim_set_free(&few);
}

/* ------------------------------------------------------------ cgroup v1 */

static char parent[128];
static char state_dir[64];

static bool v1_usable(void)
{
	char probe[160];
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-scale: real v1 part needs root\n");
		return false;
	}
	snprintf(probe, sizeof(probe), "%s/memory.usage_in_bytes", V1_ROOT);
	if (stat(probe, &st) < 0) {
		fprintf(stderr, "bench-scale: no cgroup v1 memory hierarchy "
			"at %s\n", V1_ROOT);
		return false;
	}
	return true;
}

static int bench_v1(void)
{
	mr_group_t **g = calloc(REAL_GROUPS, sizeof(*g));
	struct mr_limits l = { .size = sizeof(l) };
	double heap, bytes;
	uint64_t t0;
	struct rlimit rl;
	char path[192];
	mr_ctx_t *ctx;
	int fds, plain, armed, r = 0;
	unsigned i, n = 0;

	if (!g)
		die("calloc", -ENOMEM);
	snprintf(state_dir, sizeof(state_dir), "/tmp/memreclaim-bench-XXXXXX");
	if (!mkdtemp(state_dir))
		die("mkdtemp", -errno);
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	check("mr_ctx_new", mr_ctx_new(&ctx));
	snprintf(parent, sizeof(parent), "%s/memreclaim-bench-scale-%d",
		 V1_ROOT, (int)getpid());
	r = mr_cgroup_create(ctx, parent, 64ULL * REAL_GROUPS * MiB);
	if (r < 0) {
		fprintf(stderr, "bench-scale: cannot create %s: %s\n", parent,
			mr_strerror(r));
		mr_ctx_free(ctx);
		rmdir(state_dir);
		free(g);
		return 77;
	}
	for (n = 0; n < REAL_GROUPS; n++) {
		snprintf(path, sizeof(path), "%s/g%u", parent, n);
		r = mr_cgroup_create(ctx, path, 64 * MiB);
		if (r < 0)
			break;
	}
	if (r < 0)
		fprintf(stderr, "bench-scale: group %u: %s\n", n, mr_strerror(r));
	if (n == 0)
		goto out;

	heap = heap_bytes();
	fds = count_fds();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/g%u", parent, i);
		check("mr_group_open", mr_group_open(ctx, path, "cgroup1",
						     &g[i]));
	}
	plain = count_fds() - fds;
	bytes = (heap_bytes() - heap) / n;
	/* A margin on each, its threshold armed by one round. */
	for (i = 0; i < n; i++)
		check("mr_group_set_margin",
		      mr_group_set_margin(g[i], 8 * MiB, 0, 0));
	check("dispatch", mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL));
	armed = count_fds() - fds;
	bench_emit(BENCH, "cgroup1: fds per open group", (double)plain / n,
		   "fds/group", "target", 2, "fds/group");
	bench_emit(BENCH, "cgroup1: fds per group with a margin armed",
		   (double)armed / n, "fds/group", "target", 2, "fds/group");
	bench_emit(BENCH, "cgroup1: library memory per open group", bytes,
		   "bytes/group", "target", 4096, "bytes/group");
	bench_emit(BENCH, "cgroup1: groups opened", n, "groups", NULL, 0,
		   NULL);
	/* What opening files per use costs a snapshot (v1 opens what it
	 * reads, and waits out steps through directory locks). */
	t0 = bench_now_ns();
	for (i = 0; i < SNAPSHOT_ROUNDS; i++)
		check("mr_group_read_limits",
		      mr_group_read_limits(g[i % n], &l));
	bench_emit(BENCH, "cgroup1: mr_group_read_limits",
		   (double)(bench_now_ns() - t0) / SNAPSHOT_ROUNDS / 1000,
		   "us/call", NULL, 0, NULL);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && armed > 0)
		bench_emit(BENCH, "cgroup1: groups with a margin the hard "
			   "RLIMIT_NOFILE allows",
			   (double)(rl.rlim_max - (rlim_t)fds) * n / armed,
			   "groups", NULL, 0, NULL);
	for (i = 0; i < n; i++)
		check("mr_group_close", mr_group_close(g[i]));
out:
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/g%u", parent, i);
		mr_cgroup_remove(ctx, path);
	}
	mr_cgroup_remove(ctx, parent);
	mr_ctx_free(ctx);
	rmdir(state_dir);
	free(g);
	return n ? 0 : 77;
}

/* ------------------------------------------- first seconds, cgroup v1 */

static char first_parent[128];
static char data_file[64], stream_file[64];

/* A file of `bytes` in /var/tmp, written back (its name into `name`,
 * 64 bytes). It stays until the groups are removed: its removal would
 * uncharge its cache. */
static void make_file(char *name, uint64_t bytes)
{
	static char buf[1 << 20];
	uint64_t done;
	int fd;

	snprintf(name, 64, "/var/tmp/mr-bench-scale-XXXXXX");
	fd = mkstemp(name);
	if (fd < 0)
		die("mkstemp", -errno);
	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < bytes; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("write", -EIO);
	if (fsync(fd) < 0)
		die("fsync", -errno);
	close(fd);
}

/* A child moved into `path` that reads `file` whole, once or (loop) over
 * and over until killed; the file's cache is dropped first (from a new
 * fd, once written back, as bench-reclaim), so the reads charge the
 * group. Returns the child's pid. */
static pid_t start_reader(mr_ctx_t *ctx, const char *path, const char *file,
			  bool loop)
{
	static char buf[1 << 20];
	int fd, go[2];
	pid_t pid;
	char c;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
		die("posix_fadvise", -EIO);
	close(fd);
	if (pipe2(go, O_CLOEXEC) < 0)
		die("pipe2", -errno);
	pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		do {
			fd = open(file, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				_exit(3);
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		} while (loop);
		_exit(0);
	}
	close(go[0]);
	if (mr_cgroup_attach(ctx, path, pid) < 0 || write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	return pid;
}

/* FIRST_CACHE of clean page cache charged to `path`. */
static void charge_cache(mr_ctx_t *ctx, const char *path)
{
	int status;
	pid_t pid;

	if (!data_file[0])
		make_file(data_file, FIRST_CACHE);
	pid = start_reader(ctx, path, data_file, false);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		die("the reader", -EIO);
}

static void first_path(char *path, size_t len, unsigned i)
{
	snprintf(path, len, "%s/g%u", first_parent, i);
}

static uint64_t margin_calls(mr_group_t *g)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };

	check("mr_group_read_reclaim_stats",
	      mr_group_read_reclaim_stats(g, MR_REASON_MARGIN, &st));
	return st.calls;
}

/* In a child (a new context: the parent's handles answer -ECHILD there)
 * at RLIMIT_NOFILE COMMON_NOFILE: opens the busy group, then the others,
 * each with a margin, until the fd budget refuses one; then runs the
 * worker's rounds until every threshold is registered. Emits the count;
 * exits 1 if the refusal was not -EMFILE or the busy group went
 * unserved. */
static void budget_child(unsigned busy, unsigned n)
{
	struct rlimit rl = { COMMON_NOFILE, COMMON_NOFILE };
	mr_group_t *g, *first = NULL;
	char path[192];
	unsigned i, opened = 0;
	mr_ctx_t *ctx;
	int r = 0, refused;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || mr_ctx_new(&ctx) < 0)
		_exit(1);
	for (i = 0; i <= n && r == 0; i++) {
		first_path(path, sizeof(path), i == 0 ? busy : i - 1);
		if (i > 0 && i - 1 == busy)
			continue;
		r = mr_group_open(ctx, path, "cgroup1", &g);
		if (r == 0) {
			r = mr_group_set_margin(g, FIRST_MARGIN, 0, 0);
			if (r < 0)
				mr_group_close(g);
		}
		if (r == 0 && !first)
			first = g;
		opened += r == 0;
	}
	refused = r;
	r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
	while (r == 1)
		r = mr_ctx_worker_dispatch(ctx, 0);
	bench_emit(BENCH, "cgroup1: groups with a margin opened at "
		   "RLIMIT_NOFILE 1024 before -EMFILE", opened, "groups",
		   "the busy one's margin calls after", first ?
		   (double)margin_calls(first) : 0, "calls");
	fflush(stdout);
	_exit(refused == -EMFILE && first && margin_calls(first) > 0 &&
	      r == 0 ? 0 : 1);
}

/* Opens the n groups, each with a margin of FIRST_MARGIN. */
static void open_first(mr_ctx_t *ctx, mr_group_t **g, unsigned n)
{
	char path[192];
	unsigned i;

	for (i = 0; i < n; i++) {
		first_path(path, sizeof(path), i);
		check("mr_group_open", mr_group_open(ctx, path, "cgroup1",
						     &g[i]));
		check("mr_group_set_margin",
		      mr_group_set_margin(g[i], FIRST_MARGIN, 0, 0));
	}
}

static void close_first(mr_group_t **g, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		mr_group_close(g[i]);
		g[i] = NULL;
	}
}

/* The worker's thread started on n groups that keep a margin, nothing
 * registered yet, while a reader streams STREAM_BYTES over and over
 * through the busy group: its margin calls and limit hits in the first
 * second and in STREAM_S seconds, and the thresholds registered by then. */
static void first_seconds_stream(mr_ctx_t *ctx, mr_group_t **g, unsigned n,
				 unsigned busy)
{
	struct mr_limits l0 = { .size = sizeof(l0) }, l1 = l0;
	struct timespec one = { 1, 0 };
	uint64_t calls_1s = 0, calls;
	unsigned i, armed = 0;
	char path[192];
	int status, s;
	pid_t pid;

	if (!stream_file[0])
		make_file(stream_file, STREAM_BYTES);
	first_path(path, sizeof(path), busy);
	check("mr_group_read_limits", mr_group_read_limits(g[busy], &l0));
	pid = start_reader(ctx, path, stream_file, true);
	check("mr_ctx_worker_start", mr_ctx_worker_start(ctx));
	for (s = 0; s < STREAM_S; s++) {
		nanosleep(&one, NULL);
		if (s == 0)
			calls_1s = margin_calls(g[busy]);
	}
	calls = margin_calls(g[busy]);
	check("mr_group_read_limits", mr_group_read_limits(g[busy], &l1));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	check("mr_ctx_worker_stop", mr_ctx_worker_stop(ctx));
	for (i = 0; i < n; i++)
		armed += g[i]->armed_threshold_bytes != MR_UNLIMITED;
	bench_emit(BENCH, "cgroup1: streaming group's margin calls in the "
		   "worker's first 5 s, 1000 groups with a margin",
		   (double)calls, "calls", "in the first 1 s",
		   (double)calls_1s, "calls");
	bench_emit(BENCH, "cgroup1: streaming group's limit hits in the "
		   "worker's first 5 s", (double)(l1.limit_hits -
						   l0.limit_hits),
		   "hits", "thresholds registered by then", armed, "groups");
}

static void bench_v1_first(void)
{
	mr_group_t **g = calloc(FIRST_GROUPS, sizeof(*g));
	const unsigned busy = FIRST_GROUPS - 1;
	uint64_t t0, t1, t2, c1, c2, calls;
	unsigned i, n, rounds = 1;
	char path[192];
	mr_ctx_t *ctx;
	int r, status;
	pid_t pid;

	if (!g)
		die("calloc", -ENOMEM);
	snprintf(state_dir, sizeof(state_dir), "/tmp/memreclaim-bench-XXXXXX");
	if (!mkdtemp(state_dir))
		die("mkdtemp", -errno);
	setenv("MEMRECLAIM_STATE_DIR", state_dir, 1);
	check("mr_ctx_new", mr_ctx_new(&ctx));
	snprintf(first_parent, sizeof(first_parent),
		 "%s/memreclaim-bench-first-%d", V1_ROOT, (int)getpid());
	check("mr_cgroup_create", mr_cgroup_create(ctx, first_parent,
						   FIRST_LIMIT * FIRST_GROUPS));
	for (n = 0; n < FIRST_GROUPS; n++) {
		first_path(path, sizeof(path), n);
		if (mr_cgroup_create(ctx, path, FIRST_LIMIT) < 0)
			break;
	}
	if (n < FIRST_GROUPS) {
		fprintf(stderr, "bench-scale: created %u of %u groups\n", n,
			FIRST_GROUPS);
		goto out;
	}
	open_first(ctx, g, n);
	first_seconds_stream(ctx, g, n, busy);
	close_first(g, n);
	first_path(path, sizeof(path), busy);
	charge_cache(ctx, path);
	open_first(ctx, g, n);
	/* The worker's first round serves every group (the busy one is
	 * last) and registers one threshold; the rounds after register one
	 * each, looking at the groups still waiting. */
	t0 = bench_now_ns();
	r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
	t1 = bench_now_ns();
	c1 = bench_cpu_ns();
	calls = margin_calls(g[busy]);
	while (r == 1) {
		r = mr_ctx_worker_dispatch(ctx, 0);
		rounds++;
	}
	t2 = bench_now_ns();
	c2 = bench_cpu_ns();
	check("dispatch", r);
	bench_emit(BENCH, "cgroup1: first worker round, 1000 groups with a "
		   "margin (the busy group, opened last, served)",
		   (double)(t1 - t0) / 1e6, "ms", "every threshold registered",
		   (double)(t2 - t0) / 1e6, "ms");
	/* The CPU a round spends besides the kernel's wait: the usage
	 * reads of the groups still waiting, and the registration. */
	if (rounds > 1)
		bench_emit(BENCH, "cgroup1: one threshold registration (a "
			   "round after the first)",
			   (double)(t2 - t1) / 1e6 / (rounds - 1), "ms",
			   "CPU of the round", (double)(c2 - c1) / 1e6 /
			   (rounds - 1), "ms");
	if (calls == 0)
		fprintf(stderr, "bench-scale: the busy group was not served "
			"by the first round\n");
	/* The child's groups claim the keeper's locks these hold. */
	close_first(g, n);
	first_path(path, sizeof(path), busy);
	charge_cache(ctx, path);
	pid = fork();
	if (pid == 0)
		budget_child(busy, n);
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "bench-scale: the fd budget child failed\n");
out:
	for (i = 0; i < n; i++) {
		first_path(path, sizeof(path), i);
		mr_cgroup_remove(ctx, path);
	}
	mr_cgroup_remove(ctx, first_parent);
	if (data_file[0])
		unlink(data_file);
	if (stream_file[0])
		unlink(stream_file);
	mr_ctx_free(ctx);
	rmdir(state_dir);
	free(g);
}

int main(void)
{
	struct rlimit rl;
	int r;

	/* One fd per simulated group at least: the hard limit's worth. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	bench_sim();
	if (!v1_usable())
		return 77;
	r = bench_v1();
	if (r == 0)
		bench_v1_first();
	return r;
}
