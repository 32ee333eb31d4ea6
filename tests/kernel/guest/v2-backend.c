/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's cgroup2 backend on a real kernel, through the public API
 * (libmemreclaim linked statically):
 *  - a child group opens with "auto" as cgroup2, and every read answers:
 *    usage, limits (with high, protection, peak, swap), memory.stat
 *    (`kernel` present), memory.events and memory.events.local;
 *  - mr_group_reclaim() of sync'ed page cache through memory.reclaim frees
 *    what was asked within the tolerance of the cgroup1 test
 *    (tests/reclaim-bound.h): only the last batch overshoots, by at most
 *    a batch, a page-cache folio, the per-CPU charge stock and a reclaim
 *    cluster; the fall in usage is what the library reports within the
 *    stock and a cluster;
 *  - mr_group_set_limit() and mr_group_set_high() read back from
 *    memory.max and memory.high, "max" for MR_UNLIMITED;
 *  - the swappiness probe answers -EOPNOTSUPP (6.1 refuses swappiness=);
 *  - the margin worker keeps a streaming page-cache reader's usage below
 *    limit - margin (most of the time: it looks every 10 ms, and the
 *    margin absorbs what is charged in between; the limit is never
 *    reached), and the charges that meet the limit (memory.events.local
 *    max) fall at least tenfold against a run without the worker;
 *  - memory.pressure reads some and full, a PSI trigger arms;
 *  - with no threshold armed, the worker's fd (mr_ctx_worker_fd()) wakes
 *    on a memory.events change (kernfs POLLPRI through the backend's
 *    epoll set) and falls quiet once a dispatch has acknowledged it;
 *  - a group removed under an open handle answers -ENOENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <memreclaim.h>

#include "guest.h"
#include "../../reclaim-bound.h"

#define GROUP "mr-v2-backend"
#define MARGIN_GROUP "mr-v2-margin"
#define GONE_GROUP "mr-v2-gone"
#define CACHE_SIZE (96 * MiB)
#define STREAM_SIZE (192 * MiB)

static mr_ctx_t *ctx;

static void cg_full(const char *group, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", CG_ROOT, group);
}

static uint64_t events_local_max(mr_group_t *g)
{
	struct mr_events e = { .size = sizeof(e) };

	if (mr_group_read_events(g, MR_EVENTS_LOCAL, &e) < 0)
		bail("cannot read memory.events.local");
	return e.max;
}

static void reads(mr_group_t *g)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat m = { .size = sizeof(m) };
	struct mr_events e = { .size = sizeof(e) };
	uint64_t usage = 0;
	int r;

	r = mr_group_read_usage(g, &usage);
	ok(r == 0 && usage >= CACHE_SIZE / 2, "usage %" PRIu64 " bytes (%s)",
	   usage, mr_strerror(r));
	r = mr_group_read_limits(g, &l);
	ok(r == 0, "read_limits (%s)", mr_strerror(r));
	ok(l.limit_bytes == MR_UNLIMITED && l.own_limit_bytes == MR_UNLIMITED,
	   "memory.max \"max\" reads MR_UNLIMITED");
	ok(l.high_bytes == MR_UNLIMITED, "memory.high \"max\" reads "
	   "MR_UNLIMITED");
	ok((l.present & (MR_LIMITS_HAS_HIGH | MR_LIMITS_HAS_PROTECTION |
			 MR_LIMITS_HAS_PEAK)) ==
	   (MR_LIMITS_HAS_HIGH | MR_LIMITS_HAS_PROTECTION | MR_LIMITS_HAS_PEAK),
	   "high, protection and peak present (0x%x)", l.present);
	ok(l.peak_bytes >= usage, "peak %" PRIu64 " >= usage", l.peak_bytes);
	ok(l.low_bytes == 0 && l.effective_low_bytes == 0 &&
	   l.effective_min_bytes == 0, "no protection");
	diag("swap: present %d, usage %" PRIu64 ", limit %" PRIu64,
	     !!(l.present & MR_LIMITS_HAS_SWAP), l.swap_usage_bytes,
	     l.swap_limit_bytes);
	r = mr_group_read_memstat(g, &m);
	ok(r == 0 && (m.present & (1ULL << MR_MEMSTAT_KERNEL)) &&
	   (m.present & (1ULL << MR_MEMSTAT_FILE)) &&
	   (m.present & (1ULL << MR_MEMSTAT_PGSCAN)) &&
	   m.file_bytes >= CACHE_SIZE / 2,
	   "memory.stat: file %" PRIu64 ", kernel %" PRIu64 " (%s)",
	   m.file_bytes, m.kernel_bytes, mr_strerror(r));
	ok(!(m.present & (1ULL << MR_MEMSTAT_PGPGIN)),
	   "pgpgin absent on v2, not zero");
	r = mr_group_read_events(g, 0, &e);
	ok(r == 0 && e.present == 0x3f, "memory.events: 6 counters "
	   "(present 0x%" PRIx64 ", %s)", e.present, mr_strerror(r));
	r = mr_group_read_events(g, MR_EVENTS_LOCAL, &e);
	ok(r == 0 && (e.present & (1ULL << MR_EVENT_MAX)),
	   "memory.events.local (%s)", mr_strerror(r));
	ok(l.limit_hits == e.max, "limit_hits is events.local max (%" PRIu64
	   ")", l.limit_hits);
}

static void reclaim_tolerance(mr_group_t *g)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	const uint64_t ask = 16 * MiB, batch = MR_SWAP_CLUSTER_MAX_BYTES;
	const uint64_t cluster = RECLAIM_CLUSTER_BYTES;
	const uint64_t stock = reclaim_stock_bytes();
	const uint64_t bound = reclaim_overshoot_bytes(batch);
	uint64_t before, after, freed = 0, fall;
	int r;

	if (mr_group_read_usage(g, &before) < 0)
		bail("usage");
	r = mr_group_reclaim(g, ask, 10ULL * 1000000000, &freed);
	if (mr_group_read_usage(g, &after) < 0)
		bail("usage");
	fall = before > after ? before - after : 0;
	diag("reclaim %" PRIu64 ": freed %" PRIu64 ", usage %" PRIu64
	     " -> %" PRIu64, ask, freed, before, after);
	ok(r == 0, "mr_group_reclaim (%s)", mr_strerror(r));
	ok(freed >= ask && freed < ask + bound,
	   "freed %" PRIu64 " within [ask, ask + %" PRIu64 ")", freed, bound);
	ok(fall + stock + cluster >= freed && freed + stock + cluster >= fall,
	   "the fall in usage (%" PRIu64 ") is what was reported", fall);
	mr_group_read_reclaim_stats(g, MR_REASON_REQUESTED, &st);
	ok(st.freed_bytes == freed && st.calls >= ask / batch / 2,
	   "statistics: %" PRIu64 " calls, %" PRIu64 " bytes", st.calls,
	   st.freed_bytes);
}

static void limits_read_back(mr_group_t *g)
{
	struct mr_limits l = { .size = sizeof(l) };
	uint64_t usage = 0, v = 0, target;
	int r;

	mr_group_read_usage(g, &usage);
	target = (usage - 8 * MiB) / 4096 * 4096;
	r = mr_group_set_limit(g, target, 10ULL * 1000000000);
	cg_read_u64(GROUP, "memory.max", &v);
	ok(r == 0 && v == target, "set_limit %" PRIu64 " below usage %" PRIu64
	   ": memory.max %" PRIu64 " (%s)", target, usage, v, mr_strerror(r));
	mr_group_read_limits(g, &l);
	ok(l.own_limit_bytes == target && l.usage_bytes <= target,
	   "read_limits: limit %" PRIu64 ", usage %" PRIu64,
	   l.own_limit_bytes, l.usage_bytes);
	r = mr_group_set_high(g, target - 4 * MiB, 10ULL * 1000000000);
	cg_read_u64(GROUP, "memory.high", &v);
	ok(r == 0 && v == target - 4 * MiB, "set_high: memory.high %" PRIu64
	   " (%s)", v, mr_strerror(r));
	r = mr_group_set_high(g, MR_UNLIMITED, 0);
	cg_read_u64(GROUP, "memory.high", &v);
	ok(r == 0 && v == UINT64_MAX, "set_high(MR_UNLIMITED): \"max\"");
	r = mr_group_set_limit(g, MR_UNLIMITED, 0);
	cg_read_u64(GROUP, "memory.max", &v);
	ok(r == 0 && v == UINT64_MAX, "set_limit(MR_UNLIMITED): \"max\"");
	r = mr_group_set_reclaim_swappiness(g, 0);
	ok(r == -EOPNOTSUPP, "swappiness probe on 6.1: %s", mr_strerror(r));
	ok(mr_group_set_reclaim_swappiness(g, -1) == 0, "swappiness -1");
}

/* A child in the group reading `path` over and over, each pass dropped
 * from the page cache first so that every read charges new pages. */
static pid_t start_reader(const char *path)
{
	static char buf[1 << 20];
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid;
	if (cg_enter(MARGIN_GROUP) < 0)
		_exit(2);
	for (;;) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(3);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

static void stop_reader(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Samples usage every 20 ms for `seconds`; returns how many samples were
 * above `mark`, with their number in *n. */
static int sample(mr_group_t *g, double seconds, uint64_t mark, int *n,
		  uint64_t *peak)
{
	double end = now_s() + seconds;
	uint64_t u;
	int above = 0;

	*n = 0;
	*peak = 0;
	while (now_s() < end) {
		if (mr_group_read_usage(g, &u) == 0) {
			(*n)++;
			above += u > mark;
			if (u > *peak)
				*peak = u;
		}
		usleep(20000);
	}
	return above;
}

static int poll_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

static void pressure_and_events(mr_group_t *g, const char *stream)
{
	struct mr_pressure pr = { .size = sizeof(pr) };
	int fd, r;
	pid_t pid;

	r = mr_group_read_pressure(g, &pr);
	ok(r == 0 && pr.present == (MR_PRESSURE_SOME | MR_PRESSURE_FULL),
	   "memory.pressure: some and full (%s)", mr_strerror(r));
	fd = mr_group_psi_trigger_open(g, MR_PSI_SOME, 150000000ULL,
				       2000000000ULL);
	ok(fd >= 0, "PSI trigger armed (%s)", mr_strerror(fd < 0 ? fd : 0));
	if (fd >= 0)
		close(fd);

	/* The open's wake-up taken by a dispatch; no margin, so no
	 * threshold: only memory.events can wake the worker's fd. */
	fd = mr_ctx_worker_fd(ctx);
	r = mr_ctx_worker_dispatch(ctx, 0);
	ok(r == 0 && poll_in(fd, 0) == 0, "worker fd quiet (%s)",
	   mr_strerror(r < 0 ? r : 0));
	if (cg_write(MARGIN_GROUP, "memory.high", "16M") < 0)
		bail("cannot set memory.high");
	pid = start_reader(stream);
	r = poll_in(fd, 10000);
	stop_reader(pid);
	cg_write(MARGIN_GROUP, "memory.high", "max");
	ok(r == 1, "a memory.events change (high) wakes the worker's fd");
	r = mr_ctx_worker_dispatch(ctx, 0);
	ok(r == 0 && poll_in(fd, 0) == 0, "acknowledged by a dispatch: "
	   "the fd is quiet again");
}

static void margin_worker(void)
{
	const uint64_t limit = 64 * MiB, margin = 16 * MiB;
	char path[PATH_MAX], dir[PATH_MAX];
	uint64_t h0, h1, h2, base, peak;
	mr_group_t *g;
	int n, above, r;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/mr-v2-stream.data", scratch_dir());
	if (file_fill(path, STREAM_SIZE) < 0)
		bail("cannot write the stream file");
	sync();
	cg_remove(MARGIN_GROUP);
	if (cg_create(MARGIN_GROUP) < 0)
		bail("cannot create " MARGIN_GROUP);
	cg_full(MARGIN_GROUP, dir, sizeof(dir));
	r = mr_group_open(ctx, dir, "auto", &g);
	if (r < 0)
		bail("open " MARGIN_GROUP ": %s", mr_strerror(r));
	pressure_and_events(g, path);
	r = mr_group_set_limit(g, limit, 0);
	ok(r == 0, "limit 64 MiB (%s)", mr_strerror(r));

	/* Without the worker: the reader's charges meet the limit. */
	pid = start_reader(path);
	h0 = events_local_max(g);
	sample(g, 3.0, limit - margin, &n, &peak);
	h1 = events_local_max(g);
	base = h1 - h0;
	diag("without the worker: %" PRIu64 " limit hits, peak usage %"
	     PRIu64, base, peak);

	/* With it: usage stays below limit - margin. */
	r = mr_group_set_batch_proportional(g, MR_BATCH_DEFAULT_SHARE_PPM,
					    MR_BATCH_DEFAULT_MAX_BYTES,
					    MR_BATCH_DEFAULT_MAX_PPM);
	if (r == 0)
		r = mr_group_set_margin(g, margin, 0, 8 * MiB);
	if (r == 0)
		r = mr_ctx_worker_start(ctx);
	ok(r == 0, "margin 16 MiB, worker started (%s)", mr_strerror(r));
	usleep(300000);
	h1 = events_local_max(g);
	above = sample(g, 3.0, limit - margin, &n, &peak);
	h2 = events_local_max(g);
	stop_reader(pid);
	mr_ctx_worker_stop(ctx);
	diag("with the worker: %" PRIu64 " limit hits, %d of %d samples "
	     "above limit - margin, peak usage %" PRIu64, h2 - h1, above, n,
	     peak);
	/* The worker looks at usage every 10 ms (and at once on a
	 * memory.events change): between a look and its reclaim the reader
	 * charges on, which is what the margin absorbs. So usage is below
	 * limit - margin most of the time, and never reaches the limit. */
	ok(n > 0 && above * 2 < n, "usage below limit - margin in most "
	   "samples (%d of %d above)", above, n);
	ok(peak < limit, "usage never reached the limit (peak %" PRIu64 ")",
	   peak);
	ok(base > 0 && (h2 - h1) * 10 <= base, "limit hits fell at least "
	   "tenfold (%" PRIu64 " to %" PRIu64 ")", base, h2 - h1);
	mr_group_close(g);
	cg_remove(MARGIN_GROUP);
	unlink(path);
}

static void removed_under_handle(void)
{
	struct mr_limits l = { .size = sizeof(l) };
	char dir[PATH_MAX];
	uint64_t v, freed;
	mr_group_t *g;
	int r;

	cg_remove(GONE_GROUP);
	if (cg_create(GONE_GROUP) < 0)
		bail("cannot create " GONE_GROUP);
	cg_full(GONE_GROUP, dir, sizeof(dir));
	r = mr_group_open(ctx, dir, "auto", &g);
	if (r < 0)
		bail("open " GONE_GROUP ": %s", mr_strerror(r));
	if (cg_remove(GONE_GROUP) < 0)
		bail("cannot remove " GONE_GROUP);
	ok(mr_group_read_usage(g, &v) == -ENOENT, "read_usage: -ENOENT");
	ok(mr_group_read_limits(g, &l) == -ENOENT, "read_limits: -ENOENT");
	r = mr_group_reclaim(g, 1 * MiB, 0, &freed);
	ok(r == -ENOENT, "reclaim: %s", mr_strerror(r));
	r = mr_group_set_limit(g, 32 * MiB, 0);
	ok(r == -ENOENT, "set_limit: %s", mr_strerror(r));
	ok(mr_group_close(g) == 0, "close");
}

int main(void)
{
	char path[PATH_MAX], dir[PATH_MAX];
	mr_group_t *g;
	int r;

	snprintf(path, sizeof(path), "%s/mr-v2-backend.data", scratch_dir());
	cg_remove(GROUP);
	if (cg_create(GROUP) < 0)
		bail("cannot create " GROUP);
	if (cg_enter(GROUP) < 0)
		bail("cannot enter the group");
	r = file_fill(path, CACHE_SIZE);
	if (cg_enter("") < 0)
		bail("cannot leave the group");
	if (r < 0)
		bail("cannot write %s: %s", path, strerror(-r));
	sync();

	if (mr_ctx_new(&ctx) < 0)
		bail("mr_ctx_new");
	cg_full(GROUP, dir, sizeof(dir));
	r = mr_group_open(ctx, dir, "auto", &g);
	if (!ok(r == 0, "open by auto (%s)", mr_strerror(r)))
		bail("no group");
	ok(strcmp(mr_group_backend(g), "cgroup2") == 0, "backend %s",
	   mr_group_backend(g));
	reads(g);
	reclaim_tolerance(g);
	limits_read_back(g);
	mr_group_close(g);
	cg_remove(GROUP);
	unlink(path);

	margin_worker();
	removed_under_handle();
	mr_ctx_free(ctx);
	return done_testing();
}
