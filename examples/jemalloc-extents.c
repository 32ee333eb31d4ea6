/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jemalloc-extents — libmemreclaim on jemalloc's own hook API: an arena
 * whose extent hooks (extent_hooks_t, jemalloc(3) "arena.<i>.extent_hooks")
 * charge the memory they commit to the program's memory cgroup with
 * mr_group_charge() and uncharge what they decommit or unmap with
 * mr_group_uncharge(), and a thread that answers the library's shrink
 * request (mr_group_shrink_fd()) with the arena's purge, so that the
 * margin worker takes the arena's free dirty pages before the group's
 * page cache.
 *
 *   jemalloc-extents --margin SIZE [--hysteresis SIZE] [--grace MS]
 *                    [--live SIZE] [--burst SIZE] [--throttle-high SIZE]
 *                    [--late-answers N]
 *
 * It runs in the memory cgroup it finds itself in (mr_group_open_self()),
 * which must have a limit, and prints one JSON object on stdout.
 *
 * The hooks. An extent is charged when jemalloc commits it (alloc with
 * *commit set, or the commit hook) and uncharged when it is decommitted
 * (its pages dropped with MADV_DONTNEED) or unmapped committed (dalloc,
 * destroy); jemalloc says at dalloc and destroy whether the extent is
 * committed. The charge's verdicts: GO commits; DELAY sleeps the delay
 * (the throttle above --throttle-high) and commits; RECLAIM reclaims the
 * amount asked with mr_group_reclaim(), refreshes the fast path and
 * tries again (three times at most); REFUSE fails the commit, which
 * jemalloc turns into a failed allocation (mallocx() returns NULL): the
 * program is told no where the kernel would have met the limit and, with
 * nothing to reclaim, called the OOM killer. Splitting and merging
 * extents change no charge.
 *
 * The arena keeps its free pages (dirty_decay_ms -1) until it is purged:
 * by the purger thread, when the library asks. The workload holds --live
 * bytes, then allocates and frees --burst bytes, leaving them dirty in
 * the arena; usage then stands above limit - margin, and the margin
 * worker asks for memory back before it would reclaim (the group's
 * memory is anonymous: without swap, reclaim could free none of it).
 * A burst whose answer came after the grace is made again, BURSTS_MAX
 * times at most ("bursts" in the output).
 * Then it allocates until the hooks refuse, and frees everything.
 *
 * Exit status: 0 done, 1 a failure (said on stderr), 2 a bad option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jemalloc/jemalloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "policyopt.h"

#define PROG "jemalloc-extents"
#define MiB (1024ULL * 1024)
#define CHUNK_BYTES MiB              /* one allocation of the workload */
#define RECLAIM_TRIES 3
/* The longest reclaim one commit waits for (mr_group_reclaim()). */
#define RECLAIM_TIMEOUT_NS 10000000ULL
#define MAX_CHUNKS 65536
/* How long the workload waits for the worker to ask and the purger to
 * answer, once the burst is freed. The worker serves a group above its
 * mark at least every MR_WORKER_SAFETY_NS. */
#define ANSWER_WAIT_NS (10 * MR_WORKER_SAFETY_NS)
/* How many bursts are made at most for an answer in time. */
#define BURSTS_MAX 5

static mr_group_t *group;
static unsigned arena;

/* The hooks' counters (any thread: jemalloc calls hooks from the
 * allocating thread and from the purger). */
static _Atomic uint64_t charged_bytes, uncharged_bytes, mapped_bytes;
static _Atomic uint64_t commits, refusals, delays, delay_ns, reclaims,
			reclaimed_bytes, charge_errors;
static _Atomic uint64_t purges;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --margin SIZE [--hysteresis SIZE] [--grace MS] [--live SIZE]\n"
		"       [--burst SIZE] [--throttle-high SIZE] [--late-answers N]\n"
		"A jemalloc arena whose extent hooks charge the program's memory cgroup through\n"
		"libmemreclaim, and answer its shrink requests with the arena's purge.\n"
		"\n"
		"  --margin SIZE         the margin the worker keeps (mr_group_set_margin())\n"
		"  --hysteresis SIZE     reclaim this much further (default: the margin)\n"
		"  --grace MS            how long the worker waits for the purge, 0..100 (default 50)\n"
		"  --live SIZE           held throughout (default 25%% of the limit)\n"
		"  --burst SIZE          allocated and freed, left dirty (default 50%% of the limit)\n"
		"  --throttle-high SIZE  delay charges above this usage (default: none)\n"
		"  --late-answers N      answer the first N requests 50 ms after the grace, as a\n"
		"                        purger held up on a loaded machine (default 0)\n"
		"SIZE: bytes with an optional K, M or G suffix, or N%% of the group's limit.\n");
}

/* ---------------------------------------------------------------- hooks */

/* Charges bytes for a commit; false when refused. */
static bool charge(size_t bytes)
{
	struct mr_charge_answer a;
	struct timespec ts;
	uint64_t freed;
	int v, i;

	for (i = 0; i < RECLAIM_TRIES; i++) {
		v = mr_group_charge(group, bytes, &a);
		switch (v) {
		case MR_CHARGE_GO:
			atomic_fetch_add(&charged_bytes, bytes);
			return true;
		case MR_CHARGE_DELAY:
			/* Charged; back off before using it, as the
			 * kernel's memory.high throttle does on return to
			 * user space. */
			ts.tv_sec = (time_t)(a.delay_ns / 1000000000ULL);
			ts.tv_nsec = (long)(a.delay_ns % 1000000000ULL);
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			atomic_fetch_add(&delays, 1);
			atomic_fetch_add(&delay_ns, a.delay_ns);
			atomic_fetch_add(&charged_bytes, bytes);
			return true;
		case MR_CHARGE_RECLAIM:
			/* The library has asked the purger too (the shrink
			 * request); reclaim what is asked, then look
			 * again. */
			atomic_fetch_add(&reclaims, 1);
			if (mr_group_reclaim(group, a.reclaim_bytes,
					     RECLAIM_TIMEOUT_NS, &freed) == 0)
				atomic_fetch_add(&reclaimed_bytes, freed);
			mr_group_charge_refresh(group);
			continue;
		case MR_CHARGE_REFUSE:
			atomic_fetch_add(&refusals, 1);
			return false;
		default:
			atomic_fetch_add(&charge_errors, 1);
			return false;
		}
	}
	atomic_fetch_add(&refusals, 1);
	return false;
}

static void uncharge(size_t bytes)
{
	if (mr_group_uncharge(group, bytes) == 0)
		atomic_fetch_add(&uncharged_bytes, bytes);
	else
		atomic_fetch_add(&charge_errors, 1);
}

/* Maps size bytes aligned to alignment, at new_addr if not NULL. */
static void *map(void *new_addr, size_t size, size_t alignment)
{
	size_t span = size + (alignment > 4096 ? alignment : 0);
	uintptr_t p, aligned;
	void *m;

	if (new_addr) {
		m = mmap(new_addr, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		if (m != new_addr) {
			munmap(m, size);
			return NULL;
		}
		return m;
	}
	if (span < size)
		return NULL;
	m = mmap(NULL, span, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = (uintptr_t)m;
	aligned = alignment > 4096 ? (p + alignment - 1) & ~(alignment - 1) : p;
	if (aligned > p)
		munmap(m, aligned - p);
	if (aligned + size < p + span)
		munmap((void *)(aligned + size), p + span - aligned - size);
	return (void *)aligned;
}

static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size,
			size_t alignment, bool *zero, bool *commit,
			unsigned arena_ind)
{
	void *p;

	(void)h;
	(void)arena_ind;
	/* Asked committed: charged first, so a refusal maps nothing. */
	if (*commit && !charge(size))
		return NULL;
	p = map(new_addr, size, alignment);
	if (!p) {
		if (*commit)
			uncharge(size);
		return NULL;
	}
	if (*commit)
		atomic_fetch_add(&commits, 1);
	atomic_fetch_add(&mapped_bytes, size);
	*zero = true; /* fresh anonymous memory */
	return p;
}

static bool hook_dalloc(extent_hooks_t *h, void *addr, size_t size,
			bool committed, unsigned arena_ind)
{
	(void)h;
	(void)arena_ind;
	if (munmap(addr, size) < 0)
		return true; /* jemalloc keeps it */
	if (committed)
		uncharge(size);
	atomic_fetch_sub(&mapped_bytes, size);
	return false;
}

static void hook_destroy(extent_hooks_t *h, void *addr, size_t size,
			 bool committed, unsigned arena_ind)
{
	hook_dalloc(h, addr, size, committed, arena_ind);
}

static bool hook_commit(extent_hooks_t *h, void *addr, size_t size,
			size_t offset, size_t length, unsigned arena_ind)
{
	(void)h;
	(void)addr;
	(void)size;
	(void)offset;
	(void)arena_ind;
	if (!charge(length))
		return true; /* refused: the allocation fails */
	atomic_fetch_add(&commits, 1);
	return false;
}

static bool hook_decommit(extent_hooks_t *h, void *addr, size_t size,
			  size_t offset, size_t length, unsigned arena_ind)
{
	(void)h;
	(void)size;
	(void)arena_ind;
	if (madvise((char *)addr + offset, length, MADV_DONTNEED) < 0)
		return true;
	uncharge(length);
	return false;
}

/* Splitting or merging mappings of this file's own changes nothing
 * charged: the pages stay where they are. */
static bool hook_split(extent_hooks_t *h, void *addr, size_t size,
		       size_t size_a, size_t size_b, bool committed,
		       unsigned arena_ind)
{
	(void)h, (void)addr, (void)size, (void)size_a, (void)size_b;
	(void)committed, (void)arena_ind;
	return false;
}

static bool hook_merge(extent_hooks_t *h, void *addr_a, size_t size_a,
		       void *addr_b, size_t size_b, bool committed,
		       unsigned arena_ind)
{
	(void)h, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b;
	(void)committed, (void)arena_ind;
	return false;
}

/* No purge hooks: the arena gives pages back by decommit or unmap,
 * which the charge follows. */
static extent_hooks_t hooks = {
	.alloc = hook_alloc,
	.dalloc = hook_dalloc,
	.destroy = hook_destroy,
	.commit = hook_commit,
	.decommit = hook_decommit,
	.split = hook_split,
	.merge = hook_merge,
};

/* ---------------------------------------------------------------- purger */

struct purger {
	int shrink_fd;
	int stop_fd;
	pthread_t thread;
	unsigned late;           /* requests still to answer late */
	uint64_t late_ns;        /* how late: after the grace */
};

/* Answers each shrink request with the arena's purge: its free dirty
 * pages go back through the hooks (unmapped and uncharged). */
static void *purger_main(void *arg)
{
	struct purger *pu = arg;
	struct pollfd p[2] = {
		{ .fd = pu->shrink_fd, .events = POLLIN },
		{ .fd = pu->stop_fd, .events = POLLIN },
	};
	struct timespec late;
	char cmd[64];
	uint64_t asked;

	snprintf(cmd, sizeof(cmd), "arena.%u.purge", arena);
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (read(pu->shrink_fd, &asked, sizeof(asked)) !=
		    (ssize_t)sizeof(asked))
			continue;
		if (pu->late) {
			/* --late-answers: a purger held up past the grace,
			 * as on a loaded machine. */
			pu->late--;
			late.tv_sec = (time_t)(pu->late_ns / 1000000000ULL);
			late.tv_nsec = (long)(pu->late_ns % 1000000000ULL);
			nanosleep(&late, NULL);
		}
		if (mallctl(cmd, NULL, NULL, NULL, 0) == 0)
			atomic_fetch_add(&purges, 1);
		mr_group_shrink_done(group);
	}
	return NULL;
}

/* ---------------------------------------------------------------- main */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t size_of(const struct size_opt *o, uint64_t limit)
{
	return o->is_ppm ? policyopt_ppm_of(limit, o->ppm) : o->bytes;
}

/* Allocates n chunks into v from the arena, touching them; returns how
 * many it got (fewer when refused). */
static size_t take(void **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		v[i] = mallocx(CHUNK_BYTES, MALLOCX_ARENA(arena) |
			       MALLOCX_TCACHE_NONE);
		if (!v[i])
			break;
		memset(v[i], 0x5a, CHUNK_BYTES);
	}
	return i;
}

static void give(void **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dallocx(v[i], MALLOCX_TCACHE_NONE);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "margin", required_argument, NULL, 'm' },
		{ "hysteresis", required_argument, NULL, 'y' },
		{ "grace", required_argument, NULL, 'g' },
		{ "live", required_argument, NULL, 'l' },
		{ "burst", required_argument, NULL, 'b' },
		{ "throttle-high", required_argument, NULL, 't' },
		{ "late-answers", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct size_opt live_o = { .set = true, .is_ppm = true, .ppm = 250000 };
	struct size_opt burst_o = { .set = true, .is_ppm = true, .ppm = 500000 };
	struct size_opt high_o = { 0 };
	struct mr_limits lim = { .size = sizeof(lim) };
	struct mr_charge_stats cs = { .size = sizeof(cs) };
	struct mr_shrink_stats ss = { .size = sizeof(ss) };
	struct mr_throttle_curve curve = {
		.size = sizeof(curve), .kind = MR_THROTTLE_LINEAR,
		.max_delay_ns = 10000000ULL, .scale_ns = 1000000ULL,
	};
	struct policy_opts pol = { 0 };
	struct policy_bytes pb;
	struct purger pu = { .shrink_fd = -1, .stop_fd = -1 };
	extent_hooks_t *hp = &hooks;
	uint64_t grace_ms = 50, live, burst, end, peak = 0, usage_after = 0;
	uint64_t timeouts;
	unsigned long late = 0;
	unsigned bursts;
	uint64_t one = 1;
	size_t sz = sizeof(arena), nlive, nburst, nmore;
	ssize_t decay = -1;
	void **v = NULL;
	mr_ctx_t *ctx = NULL;
	char cmd[64], *endp;
	int c, r, status = 1;
	bool answered = false;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			r = policyopt_parse(PROG, "margin", optarg, &pol);
			break;
		case 'y':
			r = policyopt_parse(PROG, "hysteresis", optarg, &pol);
			break;
		case 'g':
			errno = 0;
			grace_ms = strtoull(optarg, &endp, 10);
			r = errno || *endp || optarg[0] < '0' ||
			    optarg[0] > '9' ||
			    grace_ms > MR_SHRINK_GRACE_MAX_NS / 1000000ULL ?
			    -EINVAL : 0;
			if (r)
				fprintf(stderr, PROG ": --grace '%s': 0 to "
					"100 milliseconds\n", optarg);
			break;
		case 'L':
			errno = 0;
			late = strtoul(optarg, &endp, 10);
			r = errno || *endp || optarg[0] < '0' ||
			    optarg[0] > '9' || late > BURSTS_MAX - 1 ?
			    -EINVAL : 0;
			if (r)
				fprintf(stderr, PROG ": --late-answers '%s': "
					"0 to %d\n", optarg, BURSTS_MAX - 1);
			break;
		case 'l':
			r = policyopt_parse_size(PROG, "--live", optarg, true,
						 &live_o);
			break;
		case 'b':
			r = policyopt_parse_size(PROG, "--burst", optarg, true,
						 &burst_o);
			break;
		case 't':
			r = policyopt_parse_size(PROG, "--throttle-high",
						 optarg, true, &high_o);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (r < 0)
			return 2;
	}
	if (optind < argc || !pol.margin.set || pol.margin_auto ||
	    policyopt_check(PROG, &pol) < 0) {
		if (!pol.margin.set || pol.margin_auto)
			fprintf(stderr, PROG ": --margin SIZE is needed (a "
				"fixed margin)\n");
		usage(stderr);
		return 2;
	}

	r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_group_open_self(ctx, &group);
	if (r == 0)
		r = mr_group_read_limits(group, &lim);
	if (r < 0) {
		fprintf(stderr, PROG ": own memory cgroup: %s\n",
			mr_strerror(r));
		goto out;
	}
	if (lim.limit_bytes == MR_UNLIMITED) {
		fprintf(stderr, PROG ": %s has no limit\n", mr_group_path(group));
		goto out;
	}
	if (policyopt_apply(PROG, group, mr_group_path(group), &pol, &lim,
			    NULL, &pb) < 0)
		goto out;
	live = size_of(&live_o, lim.limit_bytes);
	burst = size_of(&burst_o, lim.limit_bytes);
	if (high_o.set) {
		r = mr_group_set_throttle_high(group,
					       size_of(&high_o, lim.limit_bytes));
		if (r == 0)
			r = mr_group_set_throttle(group, &curve);
		if (r < 0) {
			fprintf(stderr, PROG ": the throttle: %s\n",
				mr_strerror(r));
			goto out;
		}
	}
	/* Armed here: the hooks must never be the first to charge (arming
	 * allocates, and they run inside jemalloc). */
	r = mr_group_charge_refresh(group);
	if (r < 0) {
		fprintf(stderr, PROG ": arming: %s\n", mr_strerror(r));
		goto out;
	}
	pu.late = (unsigned)late;
	pu.late_ns = (grace_ms + 50) * 1000000ULL;
	pu.shrink_fd = mr_group_shrink_fd(group, grace_ms * 1000000ULL);
	pu.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (pu.shrink_fd < 0 || pu.stop_fd < 0) {
		fprintf(stderr, PROG ": the shrink request: %s\n",
			pu.shrink_fd < 0 ? mr_strerror(pu.shrink_fd) :
			strerror(errno));
		goto out;
	}
	if (mallctl("arenas.create", &arena, &sz, &hp, sizeof(hp)) != 0) {
		fprintf(stderr, PROG ": arenas.create with the hooks failed\n");
		goto out;
	}
	/* Free pages stay in the arena until the purge: the shrink request
	 * is what gives them back. */
	snprintf(cmd, sizeof(cmd), "arena.%u.dirty_decay_ms", arena);
	if (mallctl(cmd, NULL, NULL, &decay, sizeof(decay)) != 0) {
		fprintf(stderr, PROG ": %s refused\n", cmd);
		goto out;
	}
	r = pthread_create(&pu.thread, NULL, purger_main, &pu);
	if (r) {
		fprintf(stderr, PROG ": the purger: %s\n", strerror(r));
		pu.thread = 0;
		goto out;
	}
	r = mr_ctx_worker_start(ctx);
	if (r < 0) {
		fprintf(stderr, PROG ": the worker: %s\n", mr_strerror(r));
		goto out;
	}

	v = calloc(MAX_CHUNKS, sizeof(*v));
	if (!v)
		goto out;
	nlive = take(v, live / CHUNK_BYTES);
	/* With no grace the worker never waits: one burst. */
	for (bursts = 1; !answered && bursts <= (grace_ms ? BURSTS_MAX : 1);
	     bursts++) {
		nburst = take(v + nlive, burst / CHUNK_BYTES);
		mr_group_read_usage(group, &peak);
		give(v + nlive, nburst);
		/* The burst's pages are free in the arena and still
		 * charged: the worker finds usage above its mark and asks
		 * for them. An answer after the grace (the purger was
		 * late: a loaded machine) still purges, but the pass was
		 * not avoided: the burst is made again, and the late
		 * answer has the worker wait for the next one. */
		timeouts = ss.timeouts;
		end = now_ns() + ANSWER_WAIT_NS;
		while (now_ns() < end &&
		       mr_group_read_shrink_stats(group, &ss) == 0) {
			if (ss.avoided > 0) {
				answered = true;
				break;
			}
			if ((ss.timeouts > timeouts || !grace_ms) &&
			    mr_group_read_usage(group, &usage_after) == 0 &&
			    usage_after <= lim.limit_bytes - pb.margin)
				break;
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
		}
	}
	mr_group_read_usage(group, &usage_after);
	/* Then more than the limit holds: the hooks refuse before the
	 * kernel's limit is met. */
	nmore = take(v + nlive, MAX_CHUNKS - nlive);
	give(v + nlive, nmore);
	give(v, nlive);
	snprintf(cmd, sizeof(cmd), "arena.%u.purge", arena);
	mallctl(cmd, NULL, NULL, NULL, 0);
	mr_ctx_worker_stop(ctx);
	mr_group_read_shrink_stats(group, &ss);
	mr_group_read_charge_stats(group, &cs);
	printf("{\"cgroup\":\"%s\",\"limit_bytes\":%" PRIu64
	       ",\"margin_bytes\":%" PRIu64 ",\"live_bytes\":%zu"
	       ",\"burst_bytes\":%zu,\"usage_peak_bytes\":%" PRIu64
	       ",\"usage_after_answer_bytes\":%" PRIu64
	       ",\"answered_in_time\":%s,\"bursts\":%u"
	       ",\"refused_after_bytes\":%zu"
	       ",\"hook_charged_bytes\":%" PRIu64
	       ",\"hook_uncharged_bytes\":%" PRIu64
	       ",\"mapped_bytes\":%" PRIu64 ",\"commits\":%" PRIu64
	       ",\"refusals\":%" PRIu64 ",\"delays\":%" PRIu64
	       ",\"delay_ns\":%" PRIu64 ",\"reclaims\":%" PRIu64
	       ",\"reclaimed_bytes\":%" PRIu64 ",\"charge_errors\":%" PRIu64
	       ",\"purges\":%" PRIu64 ",\"shrink_requests\":%" PRIu64
	       ",\"shrink_requested_bytes\":%" PRIu64
	       ",\"shrink_answered\":%" PRIu64 ",\"shrink_timeouts\":%" PRIu64
	       ",\"shrink_avoided\":%" PRIu64 ",\"lib_charged_bytes\":%" PRIu64
	       ",\"lib_uncharged_bytes\":%" PRIu64 "}\n",
	       mr_group_path(group), lim.limit_bytes, pb.margin,
	       nlive * (size_t)CHUNK_BYTES, nburst * (size_t)CHUNK_BYTES, peak,
	       usage_after, answered ? "true" : "false", bursts - 1,
	       (nlive + nmore) * (size_t)CHUNK_BYTES,
	       atomic_load(&charged_bytes), atomic_load(&uncharged_bytes),
	       atomic_load(&mapped_bytes), atomic_load(&commits),
	       atomic_load(&refusals), atomic_load(&delays),
	       atomic_load(&delay_ns), atomic_load(&reclaims),
	       atomic_load(&reclaimed_bytes), atomic_load(&charge_errors),
	       atomic_load(&purges), ss.requests, ss.requested_bytes,
	       ss.answered, ss.timeouts, ss.avoided, cs.charged_bytes,
	       cs.uncharged_bytes);
	status = 0;
out:
	if (pu.stop_fd >= 0 && pu.thread) {
		if (write(pu.stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(pu.thread, NULL);
	}
	if (pu.stop_fd >= 0)
		close(pu.stop_fd);
	free(v);
	mr_group_close(group);
	mr_ctx_free(ctx);
	return status;
}
