/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hook's group: its options, opening it (and again in a forked child),
 * charging and uncharging through the library's fast path with the slow
 * paths the verdicts ask for, THP advice, and the statistics at exit.
 *
 * Accounting is exact: every byte the wrappers hand out is charged once
 * and uncharged once. Bytes that cannot be charged at the moment they are
 * handed out (before the group is open, while this thread is inside the
 * library, in a child until the group is open again) go to the thread's
 * deferred balance, which the thread's next charge carries to the group
 * and its frees draw from first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <memreclaim.h>

#include "hook.h"
#include "policyopt.h"

#define PREFIX "alloc-hook"
#define DEFAULT_RECLAIM_TIMEOUT_MS 100
#define DEFAULT_REFRESH_MS 1000
/* A thread looks at the clock for the periodic refresh once per this many
 * charges (a power of two), and at every charge of a huge page or more. */
#define REFRESH_CHECK_CHARGES 1024
#define HPAGE_PMD_SIZE_FILE "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

enum hook_state {
	HOOK_STARTING = 0, /* the constructor has not opened the group yet */
	HOOK_READY,        /* charging */
	HOOK_REOPEN,       /* a forked child: open the group on first use */
	HOOK_OFF,          /* no group: everything passes through uncharged */
};

/* The options, from the environment (README, "alloc-hook"). */
static struct {
	const char *group_path;      /* NULL: the process's own group */
	int throttle;                /* MR_THROTTLE_NONE or _KERNEL */
	struct size_opt high;        /* not set: the backend's high */
	int thp_policy;              /* enum mr_thp_policy */
	uint64_t thp_budget_ns;
	bool refuse_allow;           /* REFUSE lets the memory through */
	uint64_t reclaim_timeout_ns;
	uint64_t refresh_ns;         /* the periodic refresh's interval */
	bool verbose;
} opts;

static _Atomic int state;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written under open_lock before state turns HOOK_READY (release); read
 * after seeing it (acquire). */
static mr_ctx_t *ctx;
static mr_group_t *group;
static _Atomic uint64_t last_refresh_ns;

size_t hook_huge_bytes;

/* Non-zero while the thread is inside a library call made by the hook
 * (or the constructor): its own allocations are deferred, not charged. */
static HOOK_TLS int in_lib;
/* Bytes handed out (> 0) or given back (< 0) and not yet told to the
 * group by this thread. */
static HOOK_TLS int64_t deferred;
/* Charges this thread made, for the periodic refresh's clock check. */
static HOOK_TLS unsigned charges_made;

/* What the hook did, beside the library's own counters
 * (mr_group_read_charge_stats()). Written only on slow paths. */
static struct {
	_Atomic uint64_t refused_enomem;  /* allocations failed with ENOMEM */
	_Atomic uint64_t refused_allowed; /* REFUSE let through (allow) */
	_Atomic uint64_t reclaims;        /* mr_group_reclaim() calls */
	_Atomic uint64_t reclaimed_bytes;
	_Atomic uint64_t refreshes;       /* mr_group_charge_refresh() calls */
	_Atomic uint64_t sleeps;          /* DELAY verdicts slept */
	_Atomic uint64_t slept_ns;
	_Atomic uint64_t thp_advice[2];   /* HUGE, RECLAIM_THEN_HUGE (SMALL:
					     the library's thp_fallbacks) */
	_Atomic uint64_t madvise_huge;    /* MADV_HUGEPAGE applied */
	_Atomic uint64_t madvise_nohuge;  /* MADV_NOHUGEPAGE applied */
	_Atomic uint64_t madvise_errors;
	_Atomic uint64_t untracked_maps;  /* mappings the table had no room for */
	_Atomic uint64_t reopens;         /* groups opened again after fork */
	_Atomic uint64_t errors;          /* other errors of the library */
} cnt;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void inc(_Atomic uint64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), PREFIX "[%d]: ", (int)getpid());
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	hook_say(line);
	hook_say("\n");
}

/* The library's warnings, with MEMRECLAIM_HOOK_VERBOSE=1. */
static void log_line(int level, const char *msg, void *userdata)
{
	say("memreclaim: %s", msg);
}

/* ------------------------------------------------------------ options */

static int bad_option(const char *name, const char *value, const char *why)
{
	say("%s '%s': %s", name, value, why);
	return -EINVAL;
}

/* A decimal number in 0..max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_options(void)
{
	const char *s;
	uint64_t v;

	opts.thp_policy = MR_THP_RECLAIM_FULL;
	opts.throttle = MR_THROTTLE_NONE;
	opts.reclaim_timeout_ns = DEFAULT_RECLAIM_TIMEOUT_MS * 1000000ULL;
	opts.refresh_ns = DEFAULT_REFRESH_MS * 1000000ULL;
	s = getenv("MEMRECLAIM_HOOK_GROUP");
	if (s && *s && *s != '/')
		return bad_option("MEMRECLAIM_HOOK_GROUP", s,
				  "expected an absolute path");
	opts.group_path = s && *s ? s : NULL;
	s = getenv("MEMRECLAIM_HOOK_THROTTLE");
	if (s && strcmp(s, "kernel") == 0)
		opts.throttle = MR_THROTTLE_KERNEL;
	else if (s && strcmp(s, "none") != 0)
		return bad_option("MEMRECLAIM_HOOK_THROTTLE", s,
				  "expected none or kernel");
	s = getenv("MEMRECLAIM_HOOK_HIGH");
	if (s && policyopt_parse_size(PREFIX, "MEMRECLAIM_HOOK_HIGH", s, true,
				      &opts.high) < 0)
		return -EINVAL;
	s = getenv("MEMRECLAIM_HOOK_THP");
	if (!s || strcmp(s, "full") == 0) {
		opts.thp_policy = MR_THP_RECLAIM_FULL;
	} else if (strcmp(s, "clean") == 0) {
		opts.thp_policy = MR_THP_CLEAN_CACHE;
	} else if (strcmp(s, "fallback") == 0) {
		opts.thp_policy = MR_THP_FALLBACK;
	} else if (strncmp(s, "budget:", 7) == 0 &&
		   parse_u64(s + 7, MR_UNLIMITED, &v) == 0 && v > 0) {
		opts.thp_policy = MR_THP_BUDGET;
		opts.thp_budget_ns = v;
	} else {
		return bad_option("MEMRECLAIM_HOOK_THP", s, "expected full, "
				  "clean, fallback or budget:NS (NS > 0)");
	}
	s = getenv("MEMRECLAIM_HOOK_REFUSE");
	if (s && strcmp(s, "allow") == 0)
		opts.refuse_allow = true;
	else if (s && strcmp(s, "enomem") != 0)
		return bad_option("MEMRECLAIM_HOOK_REFUSE", s,
				  "expected enomem or allow");
	s = getenv("MEMRECLAIM_HOOK_RECLAIM_TIMEOUT_MS");
	if (s) {
		if (parse_u64(s, 3600000, &v) < 0)
			return bad_option("MEMRECLAIM_HOOK_RECLAIM_TIMEOUT_MS",
					  s, "expected milliseconds, 0 (no "
					  "bound) to 3600000");
		opts.reclaim_timeout_ns = v * 1000000ULL;
	}
	s = getenv("MEMRECLAIM_HOOK_REFRESH_MS");
	if (s) {
		if (parse_u64(s, 3600000, &v) < 0 || v == 0)
			return bad_option("MEMRECLAIM_HOOK_REFRESH_MS", s,
					  "expected milliseconds, 1 to "
					  "3600000");
		opts.refresh_ns = v * 1000000ULL;
	}
	s = getenv("MEMRECLAIM_HOOK_VERBOSE");
	if (s && strcmp(s, "1") == 0)
		opts.verbose = true;
	else if (s && strcmp(s, "0") != 0)
		return bad_option("MEMRECLAIM_HOOK_VERBOSE", s,
				  "expected 0 or 1");
	return 0;
}

/* The PMD size, if the kernel has THP. */
static void read_huge_bytes(void)
{
	char buf[32];
	uint64_t v;
	ssize_t n;
	int fd;

	fd = open(HPAGE_PMD_SIZE_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_u64(buf, 1ULL << 40, &v) == 0)
		hook_huge_bytes = (size_t)v;
}

/* ------------------------------------------------------------ the group */

/* Opens the group, applies the options and arms the fast path. Caller
 * holds open_lock, with in_lib set. Returns 0, or a negative errno after
 * saying what failed (ctx and group are then NULL). */
static int open_group(void)
{
	struct mr_throttle_curve curve = {
		.size = sizeof(curve),
		.kind = opts.throttle,
		.max_delay_ns = MR_THROTTLE_KERNEL_MAX_DELAY_NS,
	};
	struct mr_limits lim = { .size = sizeof(lim) };
	const char *what = "creating a context";
	uint64_t high = MR_HIGH_FROM_BACKEND;
	int r;

	r = mr_ctx_new(&ctx);
	if (r == 0 && opts.verbose)
		r = mr_ctx_set_log(ctx, log_line, NULL, MR_LOG_WARNING);
	if (r == 0) {
		what = "opening the group";
		r = opts.group_path ?
		    mr_group_open(ctx, opts.group_path, NULL, &group) :
		    mr_group_open_self(ctx, &group);
	}
	if (r == 0) {
		what = "reading its limits";
		r = mr_group_read_limits(group, &lim);
	}
	if (r == 0 && opts.high.set && opts.high.is_ppm) {
		what = "MEMRECLAIM_HOOK_HIGH as a share of the limit";
		if (lim.limit_bytes == MR_UNLIMITED)
			r = -ERANGE;
		else
			high = policyopt_ppm_of(lim.limit_bytes,
						opts.high.ppm);
	} else if (r == 0 && opts.high.set) {
		high = opts.high.bytes;
	}
	if (r == 0) {
		what = "setting the throttle high";
		r = mr_group_set_throttle_high(group, high);
	}
	if (r == 0) {
		what = "setting the throttle curve";
		r = mr_group_set_throttle(group, &curve);
	}
	if (r == 0) {
		what = "setting the THP policy";
		r = mr_group_set_thp_policy(group, opts.thp_policy,
					    opts.thp_budget_ns);
	}
	if (r == 0) {
		what = "arming the fast path";
		r = mr_group_charge_refresh(group);
	}
	if (r < 0) {
		say("%s %s: %s; allocations pass through uncharged", what,
		    opts.group_path ? opts.group_path : "(own group)",
		    r == -ERANGE ? "the group has no limit" : mr_strerror(r));
		mr_ctx_free(ctx);
		ctx = NULL;
		group = NULL;
		return r;
	}
	return 0;
}

/* In a forked child, on first use: the parent's handles answer -ECHILD,
 * so the group is opened again (the child is in the same cgroup). One
 * thread opens; the others defer until it has. */
static mr_group_t *reopen(void)
{
	mr_group_t *g = NULL;

	if (pthread_mutex_trylock(&open_lock))
		return NULL;
	if (atomic_load(&state) == HOOK_REOPEN) {
		in_lib++;
		mr_ctx_free(ctx); /* in a child: frees memory only */
		ctx = NULL;
		group = NULL;
		inc(&cnt.reopens, 1);
		atomic_store_explicit(&state, open_group() == 0 ? HOOK_READY :
				      HOOK_OFF, memory_order_release);
		in_lib--;
	}
	if (atomic_load(&state) == HOOK_READY)
		g = group;
	pthread_mutex_unlock(&open_lock);
	return g;
}

/* The group, if this thread may call it now. */
static inline mr_group_t *callable(void)
{
	int s;

	if (in_lib)
		return NULL;
	s = atomic_load_explicit(&state, memory_order_acquire);
	if (__builtin_expect(s == HOOK_READY, 1))
		return group;
	return s == HOOK_REOPEN ? reopen() : NULL;
}

bool hook_active(void)
{
	return callable() != NULL;
}

/* A library error on the charge path: a removed cgroup stops charging;
 * -ECHILD (a child the fork handler did not see, e.g. made by clone())
 * opens the group again; the rest are counted. */
static void lib_error(int r)
{
	int s = HOOK_READY;

	if (r == -ENOENT &&
	    atomic_compare_exchange_strong(&state, &s, HOOK_OFF))
		say("the cgroup was removed; allocations pass through "
		    "uncharged from now on");
	else if (r == -ECHILD)
		atomic_compare_exchange_strong(&state, &s, HOOK_REOPEN);
	else
		inc(&cnt.errors, 1);
}

/* mr_group_charge_refresh(): the limits and clean page cache the fast path
 * judges with are those of the last refresh (it never reads them itself,
 * so a lowered limit would go unseen). Runs when the last refresh, by any
 * thread, is at least min_age_ns old (0: always), in one thread at a
 * time. Returns whether it ran and succeeded. */
static bool refresh(mr_group_t *g, uint64_t min_age_ns)
{
	uint64_t now = now_ns(), last = atomic_load(&last_refresh_ns);
	int r;

	if (!min_age_ns)
		atomic_store(&last_refresh_ns, now);
	else if (now - last < min_age_ns ||
		 !atomic_compare_exchange_strong(&last_refresh_ns, &last, now))
		return false;
	in_lib++;
	r = mr_group_charge_refresh(g);
	in_lib--;
	inc(&cnt.refreshes, 1);
	if (r < 0)
		lib_error(r);
	return r == 0;
}

/* mr_group_reclaim() of `bytes`, bounded by the reclaim timeout. */
static void reclaim(mr_group_t *g, uint64_t bytes)
{
	uint64_t freed = 0;
	int r;

	in_lib++;
	r = mr_group_reclaim(g, bytes, opts.reclaim_timeout_ns, &freed);
	in_lib--;
	inc(&cnt.reclaims, 1);
	inc(&cnt.reclaimed_bytes, freed);
	if (r < 0 && r != -EAGAIN)
		lib_error(r);
}

/* A DELAY verdict: sleep it whole, signals or not. */
static void throttle_sleep(uint64_t delay_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(delay_ns / 1000000000ULL),
		.tv_nsec = (long)(delay_ns % 1000000000ULL),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	inc(&cnt.sleeps, 1);
	inc(&cnt.slept_ns, delay_ns);
}

/* A verdict other than GO. RECLAIM and REFUSE were judged with the limits
 * and clean cache of the last refresh: refresh and ask again first. Then
 * RECLAIM reclaims what it asks (reclaim_bytes) and asks once more. Returns 0 (charged),
 * -ENOMEM (not charged) or -EIO (a library error: not charged). */
static int charge_slow(mr_group_t *g, uint64_t bytes, int r,
		       struct mr_charge_answer *a)
{
	if ((r == MR_CHARGE_RECLAIM || r == MR_CHARGE_REFUSE) &&
	    refresh(g, MR_CHARGE_USAGE_REFRESH_NS))
		r = mr_group_charge(g, bytes, a);
	if (r == MR_CHARGE_RECLAIM) {
		reclaim(g, a->reclaim_bytes);
		refresh(g, 0);
		r = mr_group_charge(g, bytes, a);
	}
	switch (r) {
	case MR_CHARGE_GO:
		return 0;
	case MR_CHARGE_DELAY:
		throttle_sleep(a->delay_ns);
		return 0;
	case MR_CHARGE_RECLAIM:
	case MR_CHARGE_REFUSE:
		return -ENOMEM;
	default:
		lib_error(r);
		return -EIO;
	}
}

static void give_back(mr_group_t *g, uint64_t bytes)
{
	int r = mr_group_uncharge(g, bytes);

	if (r < 0)
		lib_error(r);
}

int hook_charge(uint64_t bytes)
{
	struct mr_charge_answer a;
	mr_group_t *g = callable();
	uint64_t total = bytes;
	int64_t d;
	int r;

	if (!g) {
		deferred += (int64_t)bytes;
		return 0;
	}
	if (!(++charges_made & (REFRESH_CHECK_CHARGES - 1)) ||
	    (hook_huge_bytes && bytes >= hook_huge_bytes))
		refresh(g, opts.refresh_ns);
	d = deferred;
	deferred = 0;
	if (d > 0)
		total += (uint64_t)d;
	else if (d < 0)
		give_back(g, (uint64_t)-d);
	r = mr_group_charge(g, total, &a);
	if (__builtin_expect(r == MR_CHARGE_GO, 1))
		return 0;
	r = charge_slow(g, total, r, &a);
	if (r == 0 || r == -EIO)
		return 0;
	/* Not charged: the deferred bytes wait for the next charge. */
	deferred += d > 0 ? d : 0;
	if (opts.refuse_allow) {
		deferred += (int64_t)bytes;
		inc(&cnt.refused_allowed, 1);
		return 0;
	}
	inc(&cnt.refused_enomem, 1);
	return -ENOMEM;
}

void hook_charge_settled(uint64_t bytes)
{
	deferred += (int64_t)bytes;
}

void hook_uncharge(uint64_t bytes)
{
	int64_t net = deferred - (int64_t)bytes;
	mr_group_t *g;

	if (net >= 0) {
		deferred = net;
		return;
	}
	g = callable();
	if (!g) {
		deferred = net;
		return;
	}
	deferred = 0;
	give_back(g, (uint64_t)-net);
}

void hook_count_untracked(void)
{
	inc(&cnt.untracked_maps, 1);
}

/* ------------------------------------------------------------ THP */

/* RECLAIM_THEN_HUGE: the advice's shortfall (margin included, sized by
 * the library) is reclaimed here, once, before the region is charged: the
 * charge answers RECLAIM only above the limit, so between limit - margin
 * and the limit it would charge the huge pages with nothing reclaimed. */
int hook_thp_prepare(size_t len)
{
	uint64_t shortfall;
	mr_group_t *g;
	int advice;

	if (!hook_huge_bytes || len < hook_huge_bytes)
		return -1;
	g = callable();
	if (!g)
		return -1;
	advice = mr_group_thp_advise_reclaim(g, len, &shortfall);
	if (advice < 0) {
		lib_error(advice);
		return -1;
	}
	if (advice < MR_THP_ADVICE_SMALL)
		inc(&cnt.thp_advice[advice], 1);
	if (advice == MR_THP_ADVICE_RECLAIM_THEN_HUGE && shortfall) {
		reclaim(g, shortfall);
		refresh(g, 0);
	}
	return advice;
}

void hook_thp_apply(void *addr, size_t len, int advice)
{
	bool huge = advice != MR_THP_ADVICE_SMALL;

	if (advice < 0)
		return;
	if (madvise(addr, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
		inc(&cnt.madvise_errors, 1);
	else
		inc(huge ? &cnt.madvise_huge : &cnt.madvise_nohuge, 1);
}

/* ------------------------------------------------------------ fork */

static void fork_prepare(void)
{
	pthread_mutex_lock(&open_lock);
	hook_maps_lock();
}

static void fork_parent(void)
{
	hook_maps_unlock();
	pthread_mutex_unlock(&open_lock);
}

/* The child has one thread, this one: the locks are made new, the
 * counters start from zero (its statistics are its own), and the group
 * is opened again on first use. */
static void fork_child(void)
{
	hook_maps_reset_lock();
	open_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	memset(&cnt, 0, sizeof(cnt));
	if (atomic_load(&state) == HOOK_READY)
		atomic_store(&state, HOOK_REOPEN);
}

/* ------------------------------------------------------------ start, exit */

static const char *thp_name(void)
{
	static const char *const names[] = {
		[MR_THP_RECLAIM_FULL] = "full",
		[MR_THP_CLEAN_CACHE] = "clean",
		[MR_THP_FALLBACK] = "fallback",
		[MR_THP_BUDGET] = "budget",
	};

	return names[opts.thp_policy];
}

__attribute__((constructor))
static void hook_init(void)
{
	struct mr_charge_stats st = { .size = sizeof(st) };
	int r;

	in_lib++;
	hook_resolve();
	read_huge_bytes();
	if (parse_options() < 0)
		_exit(2);
	if (opts.verbose) {
		r = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (r >= 0)
			hook_say_fd = r;
	}
	pthread_mutex_lock(&open_lock);
	r = open_group();
	/* After the library's own handler (installed by mr_ctx_new()): its
	 * child handler runs first, ours second. */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atomic_store_explicit(&state, r == 0 ? HOOK_READY : HOOK_OFF,
			      memory_order_release);
	pthread_mutex_unlock(&open_lock);
	if (r == 0 && opts.verbose &&
	    mr_group_read_charge_stats(group, &st) == 0)
		say("group=%s backend=%s limit_bytes=%" PRIu64
		    " high_bytes=%" PRIu64 " throttle=%s thp=%s"
		    " budget_ns=%" PRIu64 " refuse=%s reclaim_timeout_ns=%"
		    PRIu64 " refresh_ns=%" PRIu64 " huge_bytes=%zu", mr_group_path(group),
		    mr_group_backend(group), st.limit_bytes, st.high_bytes,
		    opts.throttle == MR_THROTTLE_KERNEL ? "kernel" : "none",
		    thp_name(), opts.thp_budget_ns,
		    opts.refuse_allow ? "allow" : "enomem",
		    opts.reclaim_timeout_ns, opts.refresh_ns,
		    hook_huge_bytes);
	in_lib--;
}

#define C(f) atomic_load(&cnt.f)

/* With MEMRECLAIM_HOOK_VERBOSE=1: one line of statistics, key=value. The
 * group stays open: other threads and later destructors may still
 * allocate, and the process's end closes everything. */
__attribute__((destructor))
static void hook_exit(void)
{
	struct mr_charge_stats st = { .size = sizeof(st) };

	if (!opts.verbose)
		return;
	in_lib++;
	if (atomic_load(&state) != HOOK_READY ||
	    mr_group_read_charge_stats(group, &st) < 0) {
		say("stats: group=none bootstrap_bytes=%zu", hook_arena_used());
		in_lib--;
		return;
	}
	say("stats: group=%s charges=%" PRIu64 " go=%" PRIu64 " delayed=%"
	    PRIu64 " reclaim=%" PRIu64 " refused=%" PRIu64 " charged_bytes=%"
	    PRIu64 " uncharges=%" PRIu64 " uncharged_bytes=%" PRIu64
	    " batches=%" PRIu64 " usage_refreshes=%" PRIu64
	    " usage_estimate_bytes=%" PRIu64 " refreshes=%" PRIu64
	    " reclaims=%" PRIu64 " reclaimed_bytes=%" PRIu64 " sleeps=%" PRIu64
	    " slept_ns=%" PRIu64 " refused_enomem=%" PRIu64
	    " refused_allowed=%" PRIu64 " thp_huge=%" PRIu64
	    " thp_reclaim_then_huge=%" PRIu64 " thp_small=%" PRIu64
	    " madvise_hugepage=%" PRIu64 " madvise_nohugepage=%" PRIu64
	    " madvise_errors=%" PRIu64 " untracked_maps=%" PRIu64
	    " reopens=%" PRIu64 " errors=%" PRIu64 " bootstrap_bytes=%zu",
	    mr_group_path(group), st.charges, st.go, st.delayed, st.reclaim,
	    st.refused, st.charged_bytes, st.uncharges, st.uncharged_bytes,
	    st.batches, st.usage_refreshes, st.usage_estimate_bytes,
	    C(refreshes), C(reclaims), C(reclaimed_bytes), C(sleeps),
	    C(slept_ns), C(refused_enomem), C(refused_allowed),
	    C(thp_advice[MR_THP_ADVICE_HUGE]),
	    C(thp_advice[MR_THP_ADVICE_RECLAIM_THEN_HUGE]),
	    st.thp_fallbacks, C(madvise_huge),
	    C(madvise_nohuge), C(madvise_errors), C(untracked_maps),
	    C(reopens), C(errors), hook_arena_used());
	in_lib--;
}
