/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A group's adaptive margin: what the worker measures on the group over
 * each interval, the rule of lib/core/sizing.c applied to it, and the
 * margin it gives published to the worker's marks, the allocator fast
 * path and mr_group_read_margin_stats(). The interval ends at the first
 * pass of the worker after it is over, which the worker's safety round
 * (MR_WORKER_SAFETY_NS) makes at least once a second; one memory.stat
 * and one memory.events read per interval.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adaptive.h"
#include "clock.h"
#include "context.h"
#include "fds.h"
#include "group.h"
#include "knobs.h"
#include "policy.h"

/* The calling thread's CPU time and time spent waiting for a CPU, from
 * /proc/thread-self/schedstat (fs/proc/base.c, proc_pid_schedstat():
 * sum_exec_runtime, run_delay, pcount; CONFIG_SCHED_INFO); where it
 * cannot be read, CLOCK_THREAD_CPUTIME_ID and no wait. */
static void schedstat(uint64_t *cpu_ns, uint64_t *runq_ns)
{
	unsigned long long cpu, runq;
	struct timespec ts;
	char buf[96];
	ssize_t n = -1;
	int fd;

	mri_fd_begin();
	fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	fd = mri_fd_end(fd < 0 ? -errno : fd);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		mri_fd_close(fd);
	}
	if (n > 0) {
		buf[n] = 0;
		/* "0 0 0" from a kernel without CONFIG_SCHED_INFO
		 * (fs/proc/base.c, proc_pid_schedstat()): no figure. */
		if (sscanf(buf, "%llu %llu", &cpu, &runq) == 2 && cpu) {
			*cpu_ns = cpu;
			*runq_ns = runq;
			return;
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	*cpu_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	*runq_ns = 0;
}

void mri_adaptive_thread_times(struct mr_group *g, uint64_t *cpu_ns,
			       uint64_t *runq_ns)
{
	if (g->be->thread_cpu_ns) {
		*cpu_ns = g->be->thread_cpu_ns(g->priv);
		*runq_ns = 0;
		return;
	}
	schedstat(cpu_ns, runq_ns);
}

#define GIB (1024.0 * 1024.0 * 1024.0)

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* Whether the margin is kept below memory.high rather than the limit
 * (mri_margin_limit() chose it). */
static bool below_high(const struct mr_limits *l, uint64_t limit_bytes)
{
	return (l->present & MR_LIMITS_HAS_HIGH) &&
	       l->high_bytes == limit_bytes && l->high_bytes < l->limit_bytes;
}

/* The group's counters now: those the backend has. Limit hits are the
 * group's own (memory.events.local where the kernel has it: the
 * hierarchical file counts every descendant's, mm/memcontrol.c
 * memcg_memory_event()), of memory.high when the margin is kept below
 * high (`high`), else of the limit (v1 memory.failcnt, v2 `max`). */
static void read_counters(struct mr_group *g, uint64_t usage_bytes,
			  bool below_high, struct mri_adaptive_counters *c)
{
	struct mr_memstat m = { .size = sizeof(m) };
	struct mr_events ev = { .size = sizeof(ev) };
	struct mr_pressure psi = { .size = sizeof(psi) };
	int field = below_high ? MR_EVENT_HIGH : MR_EVENT_MAX;
	int r = -EOPNOTSUPP;

	c->usage_bytes = usage_bytes;
	if (g->be->read_memstat(g->priv, &m) < 0)
		m.present = 0;
	c->has_pgsteal = m.present & (1ULL << MR_MEMSTAT_PGSTEAL);
	c->pgsteal_bytes = m.pgsteal_bytes;
	c->has_refaults = m.present &
			  (1ULL << MR_MEMSTAT_WORKINGSET_REFAULT_FILE);
	c->refault_bytes = m.workingset_refault_file_bytes;
	if (g->be->read_events) {
		r = g->be->read_events(g->priv, true, &ev);
		if (r == -EOPNOTSUPP)
			r = g->be->read_events(g->priv, false, &ev);
	}
	c->has_hits = r == 0 && (ev.present & (1ULL << field));
	c->limit_hits = below_high ? ev.high : ev.max;
	/* The group's memory stall, where the backend has PSI (on cgroup
	 * v1, its cgroup2 twin's: mr_ctx_set_hybrid_psi()). */
	c->has_stall = g->be->read_pressure &&
		       g->be->read_pressure(g->priv, &psi) == 0 &&
		       (psi.present & MR_PRESSURE_SOME);
	c->stall_us = psi.some.total_us;
}

/* The growth of a counter both ends have; 0 otherwise (or if it was
 * reset). */
static uint64_t grew(bool had, bool has, uint64_t then, uint64_t now)
{
	return had && has && now > then ? now - then : 0;
}

/* What the group charged over the interval: usage grew by what was
 * charged less what left it, and what left it by reclaim is pgsteal
 * (cgroup v2, the simulator), or else the worker's own reclaim (cgroup v1
 * counts reclaimed bytes nowhere, and its pgpgin counts charge events, a
 * large folio as one: mm/memcontrol.c mem_cgroup_charge_statistics()).
 * The charges that met the limit are then missed; the rule grows the
 * margin on limit hits for them. */
static uint64_t charged(const struct mri_adaptive_counters *then,
			const struct mri_adaptive_counters *now,
			uint64_t freed_bytes)
{
	uint64_t left;

	left = then->has_pgsteal && now->has_pgsteal ?
	       grew(true, true, then->pgsteal_bytes, now->pgsteal_bytes) :
	       freed_bytes;
	return mri_add_signed(left, (int64_t)(now->usage_bytes -
					      then->usage_bytes));
}

static void resolve(const struct mr_margin_adaptive *a, uint64_t limit_bytes,
		    struct mri_sizing_params *out)
{
	out->min_bytes = a->min_bytes;
	out->max_bytes = a->max_bytes ? a->max_bytes :
		(uint64_t)((unsigned __int128)limit_bytes * a->max_ppm /
			   1000000);
	if (out->max_bytes < out->min_bytes)
		out->max_bytes = out->min_bytes;
	out->safety_ppm = a->safety_ppm;
	out->hysteresis_ppm = a->hysteresis_ppm;
	out->min_strength_ppm = a->min_strength_ppm;
}

static void publish(struct mr_group *g, struct mri_adaptive *a,
		    uint64_t refault_bytes, uint64_t hits)
{
	const struct mri_sizing *s = &a->sizing;
	struct mri_adaptive_stats *st = &a->stats;

	atomic_store(&g->charge.adaptive_margin_bytes, s->margin_bytes);
	atomic_store(&st->margin_bytes, s->margin_bytes);
	atomic_store(&st->hysteresis_bytes, s->hysteresis_bytes);
	atomic_store(&st->sized_bytes, s->sized_bytes);
	atomic_store(&st->strength_ppm, s->strength_ppm);
	atomic_store(&st->charge_bytes_per_s, mri_sizing_u64(s->rate_bytes_per_s));
	atomic_store(&st->reaction_ns, s->reaction_ns);
	atomic_store(&st->overshoot_bytes, s->overshoot_bytes);
	atomic_store(&st->benefit_ns, mri_sizing_u64(s->benefit_ns));
	atomic_store(&st->cost_ns, mri_sizing_u64(s->cost_ns));
	atomic_store(&st->refault_bytes, refault_bytes);
	atomic_store(&st->limit_hits, hits);
	atomic_store(&st->pass_cpu_ns, mri_sizing_u64(s->pass_cpu_ns));
	atomic_store(&st->empty_cost_ns_per_gib_s,
		     mri_sizing_u64(s->empty_ns_per_byte_s * GIB));
}

/* A decision of the rule (its strength, margin or hysteresis changed),
 * at debug level, with every figure it was made on; old: the strength
 * before it. */
static void log_decision(struct mr_group *g, const struct mri_adaptive *a,
			 uint32_t old, const struct mri_sizing_sample *x)
{
	const struct mri_sizing *s = &a->sizing;
	char floor[32];

	/* The group's stall with the margin at its floor: measured only
	 * where the backend reads the group's PSI, at the floor, in an
	 * interval that met the limit. */
	if (s->has_floor_stall)
		snprintf(floor, sizeof(floor), "%.3f ms/s",
			 s->floor_stall_ns_per_s / 1e6);
	else
		snprintf(floor, sizeof(floor), "not measured");
	mri_log(&g->ctx->log, MR_LOG_DEBUG,
		"%s: adaptive margin: %s %u -> %u ppm (benefit %.3f ms, cost "
		"%.3f ms over %.1f MiB freed, %.1f MiB refaulted, %" PRIu64
		" limit hits and %" PRIu64 " in the worker's own steps, stall "
		"%.3f ms against the floor's %s); margin %.2f MiB of %.2f MiB "
		"sized (%.2f MiB over the mark + %.1f MiB/s x %.3f ms); "
		"hysteresis %.2f MiB (%u "
		"passes, %.3f ms of CPU a pass, %.3f ms a second of refaults "
		"per GiB kept empty)",
		g->path, old ? "strength" : "probe: strength", old,
		s->strength_ppm, s->benefit_ns / 1e6, s->cost_ns / 1e6,
		mib(x->freed_bytes), mib(x->refault_bytes), x->limit_hits,
		a->own_hits, (double)x->stall_ns / 1e6, floor,
		mib(s->margin_bytes), mib(s->sized_bytes),
		mib(s->overshoot_bytes), mib(mri_sizing_u64(s->rate_bytes_per_s)),
		(double)s->reaction_ns / 1e6, mib(s->hysteresis_bytes),
		x->passes, s->pass_cpu_ns / 1e6,
		s->empty_ns_per_byte_s * GIB / 1e6);
}

/* Ends the interval: the sample, the rule, the new margin; the next
 * interval starts. */
static void end_interval(struct mr_group *g, const struct mri_policy *p,
			 struct mri_adaptive *a, uint64_t now_ns,
			 const struct mr_limits *l, uint64_t limit_bytes)
{
	uint64_t usage_bytes = l->usage_bytes;
	const struct mri_adaptive_counters *then = &a->start;
	struct mri_adaptive_counters now;
	struct mri_sizing_params params;
	struct mri_sizing_sample x = {
		.interval_ns = now_ns - a->start_ns,
		.freed_bytes = a->freed_bytes,
		.cpu_ns = a->cpu_ns,
		.runq_ns = a->runq_ns,
		.wall_ns = a->wall_ns,
		.margin_bytes = a->sizing.margin_bytes,
		.hysteresis_bytes = a->sizing.hysteresis_bytes,
		.limit_bytes = limit_bytes,
		.passes = a->passes,
	};
	uint32_t old = a->sizing.strength_ppm;

	read_counters(g, usage_bytes, below_high(l, limit_bytes), &now);
	x.charged_bytes = charged(then, &now, a->freed_bytes);
	x.charges_seen = then->has_pgsteal && now.has_pgsteal;
	x.has_refaults = then->has_refaults && now.has_refaults;
	x.refault_bytes = grew(then->has_refaults, now.has_refaults,
			       then->refault_bytes, now.refault_bytes);
	x.has_stall = then->has_stall && now.has_stall;
	x.stall_ns = grew(then->has_stall, now.has_stall, then->stall_us,
			  now.stall_us) * 1000;
	x.has_hits = then->has_hits && now.has_hits;
	x.limit_hits = grew(then->has_hits, now.has_hits, then->limit_hits,
			    now.limit_hits);
	/* Those of charges that met the worker's own lowered v1 limit are
	 * not the margin's to answer. */
	x.limit_hits = x.limit_hits > a->own_hits ?
		       x.limit_hits - a->own_hits : 0;
	resolve(&p->adaptive, limit_bytes, &params);
	if (mri_sizing_update(&a->sizing, &params, &x))
		log_decision(g, a, old, &x);
	publish(g, a, x.refault_bytes, x.limit_hits);
	atomic_fetch_add(&a->stats.intervals, 1);
	a->start = now;
	a->start_ns = now_ns;
	a->freed_bytes = a->cpu_ns = a->runq_ns = a->wall_ns = 0;
	a->own_hits = 0;
	a->passes = 0;
}

void mri_adaptive_margin(struct mr_group *g, const struct mri_policy *p,
			 const struct mr_limits *l, uint64_t limit_bytes,
			 uint64_t *margin_bytes, uint64_t *hysteresis_bytes)
{
	struct mri_adaptive *a = &g->adaptive;
	struct mri_sizing_params params;
	uint64_t now = mri_group_now_ns(g);

	if (!a->started || a->gen != p->adaptive_gen) {
		/* A new call: measurements start afresh. */
		mri_sizing_init(&a->sizing);
		resolve(&p->adaptive, limit_bytes, &params);
		a->sizing.margin_bytes = params.min_bytes;
		a->gen = p->adaptive_gen;
		a->started = true;
		a->start_ns = now;
		a->reaction_start_ns = 0;
		read_counters(g, l->usage_bytes, below_high(l, limit_bytes),
			      &a->start);
		a->freed_bytes = a->cpu_ns = a->runq_ns = a->wall_ns = 0;
		a->own_hits = 0;
		a->passes = 0;
		/* No rate is known before the first interval ends: it runs
		 * at the floor, and measures the floor's refaults. */
		publish(g, a, 0, 0);
	} else if (now - a->start_ns >= p->adaptive.interval_ns ||
		   (a->sizing.probing && a->freed_bytes &&
		    a->cpu_ns >= MRI_SIZING_PROBE_CPU_NS)) {
		/* A probe is decided at the end of its interval, or once the
		 * worker spent the probe's CPU on it: on a fast charger a
		 * whole interval of a margin that does not pay costs
		 * hundreds of v1 steps. */
		end_interval(g, p, a, now, l, limit_bytes);
	}
	*margin_bytes = a->sizing.margin_bytes;
	*hysteresis_bytes = a->sizing.hysteresis_bytes;
	/* A limit lowered since the interval began: the rule's bounds for
	 * it (below half the limit, half of what is below the margin). */
	if (*margin_bytes > limit_bytes / 2)
		*margin_bytes = limit_bytes / 2;
	if (*hysteresis_bytes > (limit_bytes - *margin_bytes) / 2)
		*hysteresis_bytes = (limit_bytes - *margin_bytes) / 2;
}

uint64_t mri_adaptive_own_hits(struct mr_group *g)
{
	struct mr_events ev = { .size = sizeof(ev) };

	if (!(g->be->caps & MRI_CAP_STEP_CAN_OOM) || !g->be->read_events ||
	    g->be->read_events(g->priv, true, &ev) < 0 ||
	    !(ev.present & (1ULL << MR_EVENT_MAX)))
		return 0;
	return ev.max;
}

void mri_adaptive_note_reclaim(struct mr_group *g, uint64_t start_ns,
			       uint64_t over_bytes, uint64_t cpu_ns,
			       uint64_t runq_ns, uint64_t wall_ns,
			       uint64_t freed_bytes, uint64_t own_hits)
{
	struct mri_adaptive *a = &g->adaptive;

	a->own_hits += own_hits;

	a->cpu_ns += cpu_ns;
	a->runq_ns += runq_ns;
	a->wall_ns += wall_ns;
	a->freed_bytes += freed_bytes;
	if (freed_bytes)
		a->passes++;
	atomic_fetch_add(&a->stats.worker_cpu_ns, cpu_ns);
	if (a->reaction_start_ns)
		return;
	a->reaction_start_ns = start_ns;
	if (over_bytes)
		mri_sizing_note_overshoot(&a->sizing, over_bytes);
}

void mri_adaptive_note_below(struct mr_group *g, uint64_t at_ns,
			     uint64_t interval_ns)
{
	struct mri_adaptive *a = &g->adaptive;
	uint64_t reaction;

	if (a->reaction_start_ns && at_ns > a->reaction_start_ns) {
		/* A worker that fell behind for longer than an interval is
		 * not measuring what would suffice. */
		reaction = at_ns - a->reaction_start_ns;
		mri_sizing_note_reaction(&a->sizing, reaction < interval_ns ?
					 reaction : interval_ns);
	}
	a->reaction_start_ns = 0;
}

void mri_adaptive_forget_reaction(struct mr_group *g)
{
	g->adaptive.reaction_start_ns = 0;
}

MR_EXPORT int mr_group_read_margin_stats(mr_group_t *g,
					 struct mr_margin_stats *out)
{
	const struct mri_adaptive_stats *st;
	struct mr_margin_stats full = { 0 };
	struct mri_policy p;
	uint64_t limit;
	size_t size;

	if (!g || !out ||
	    out->size < offsetof(struct mr_margin_stats, adaptive) +
			sizeof(out->adaptive))
		return -EINVAL;
	size = out->size < sizeof(*out) ? out->size : sizeof(*out);
	full.size = out->size;
	mri_group_policy(g, &p);
	st = &g->adaptive.stats;
	if (p.margin_adaptive) {
		full.adaptive = 1;
		full.margin_bytes = atomic_load(&st->margin_bytes);
		full.hysteresis_bytes = atomic_load(&st->hysteresis_bytes);
		full.sized_bytes = atomic_load(&st->sized_bytes);
		full.strength_ppm = atomic_load(&st->strength_ppm);
		full.charge_bytes_per_s = atomic_load(&st->charge_bytes_per_s);
		full.reaction_ns = atomic_load(&st->reaction_ns);
		full.overshoot_bytes = atomic_load(&st->overshoot_bytes);
		full.benefit_ns = atomic_load(&st->benefit_ns);
		full.cost_ns = atomic_load(&st->cost_ns);
		full.refault_bytes = atomic_load(&st->refault_bytes);
		full.limit_hits = atomic_load(&st->limit_hits);
		full.intervals = atomic_load(&st->intervals);
		full.worker_cpu_ns = atomic_load(&st->worker_cpu_ns);
		full.pass_cpu_ns = atomic_load(&st->pass_cpu_ns);
		full.empty_cost_ns_per_gib_s =
			atomic_load(&st->empty_cost_ns_per_gib_s);
	} else if (mri_margin_on(&p)) {
		/* A margin in ppm is of the limit the worker last read. */
		limit = atomic_load(&g->charge.limit_bytes);
		full.margin_bytes = p.margin_bytes ? p.margin_bytes :
				    limit && limit != MR_UNLIMITED ?
				    mri_margin_bytes(&p, limit) : 0;
		full.hysteresis_bytes = p.hysteresis_bytes;
	}
	memcpy(out, &full, size);
	return 0;
}
