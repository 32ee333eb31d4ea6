/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proactive controller: every interval, in the worker's pass over a
 * group, it reads the group's PSI totals (memory and io), memory.stat and
 * limits, feeds the interval's stall, refaults and reclaim to the step
 * law (lib/core/steplaw.c) with the floor (lib/core/floor.c), and takes
 * the step with the group's reclaim loop, counted under
 * MR_REASON_PROACTIVE. The public side is mr_group_set_proactive() and
 * mr_group_read_proactive_stats().
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "clock.h"
#include "context.h"
#include "control.h"
#include "events.h"
#include "floor.h"
#include "group.h"
#include "policy.h"
#include "proactive.h"
#include "reclaim.h"

/* Defaults and bounds of struct mr_proactive. */
#define DEFAULT_STALL_NS 10000000ULL       /* Senpai: 10 ms ... */
#define DEFAULT_WINDOW_NS 6000000000ULL    /* ... per 6 s */
#define DEFAULT_STEP_PPM 100000U
#define DEFAULT_REFAULT_PPM 10000U
#define DEFAULT_IO_STALL_PPM 50000U
#define MAX_INTERVAL_NS 60000000000ULL
#define MIN_WINDOW_NS 1000000000ULL
#define MAX_WINDOW_NS 600000000000ULL
#define MIN_STALL_NS 1000ULL

/* An interval is over once this share of it has passed: the worker's
 * safety rounds, which drive it, come every MR_WORKER_SAFETY_NS or a
 * little later, so a 1 s interval would otherwise skip every other
 * round. The interval's real length is what is measured. */
#define INTERVAL_SLACK_DIV 8

/* A step's reclaim is bounded to this share of the interval, so that the
 * worker's other groups get their turn. */
#define STEP_TIME_DIV 4

void mri_proactive_init(struct mri_proactive *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->dry_bytes = MR_UNLIMITED;
}

void mri_proactive_destroy(struct mri_proactive *p)
{
	pthread_mutex_destroy(&p->lock);
}

/* Every statistic back to 0, field by field (readers may be reading). */
static void stats_reset(struct mri_proactive_stats *st)
{
	atomic_store(&st->intervals, 0);
	atomic_store(&st->usage_bytes, 0);
	atomic_store(&st->floor_bytes, 0);
	atomic_store(&st->target_bytes, 0);
	atomic_store(&st->step_bytes, 0);
	atomic_store(&st->step_ppm, 0);
	atomic_store(&st->refault_ratio_ppm, 0);
	atomic_store(&st->stall_ns, 0);
	atomic_store(&st->target_stall_ns, 0);
	atomic_store(&st->io_stall_ns, 0);
	atomic_store(&st->refault_bytes, 0);
	atomic_store(&st->dry_run_bytes, 0);
	atomic_store(&st->reclaimed_bytes, 0);
	atomic_store(&st->pauses_pressure, 0);
	atomic_store(&st->pauses_refaults, 0);
	atomic_store(&st->pauses_io, 0);
	atomic_store(&st->pauses_external, 0);
	atomic_store(&st->external_high_changes, 0);
	atomic_store(&st->last_external_high_bytes, 0);
	atomic_store(&st->io_gate, 0);
}

/* ------------------------------------------------------------ settings */

static bool tail_is_zero(const void *s, size_t known, size_t size)
{
	const unsigned char *b = s;
	size_t i;

	for (i = known; i < size; i++)
		if (b[i])
			return false;
	return true;
}

/* Why the settings are refused, or NULL; fills the defaults in. */
static const char *refusal(struct mr_proactive *c)
{
	if (c->flags & ~MR_PROACTIVE_DRY_RUN)
		return "unknown flags";
	if (!c->interval_ns)
		c->interval_ns = MR_WORKER_SAFETY_NS;
	if (!c->window_ns)
		c->window_ns = DEFAULT_WINDOW_NS;
	if (!c->stall_ns)
		c->stall_ns = DEFAULT_STALL_NS;
	if (!c->step_ppm)
		c->step_ppm = DEFAULT_STEP_PPM;
	if (!c->refault_ppm)
		c->refault_ppm = DEFAULT_REFAULT_PPM;
	if (!c->io_stall_ppm)
		c->io_stall_ppm = DEFAULT_IO_STALL_PPM;
	if (c->interval_ns < MR_WORKER_SAFETY_NS ||
	    c->interval_ns > MAX_INTERVAL_NS)
		return "interval_ns out of 1 s .. 60 s";
	if (c->window_ns < MIN_WINDOW_NS || c->window_ns > MAX_WINDOW_NS)
		return "window_ns out of 1 s .. 600 s";
	if (c->stall_ns < MIN_STALL_NS || c->stall_ns > c->window_ns)
		return "stall_ns out of 1 us .. window_ns";
	if (c->step_ppm > 1000000)
		return "step_ppm above 1000000";
	if (c->refault_ppm > 1000000)
		return "refault_ppm above 1000000";
	if (c->io_stall_ppm > 1000000)
		return "io_stall_ppm above 1000000";
	return NULL;
}

MR_EXPORT int mr_group_set_proactive(mr_group_t *g,
				     const struct mr_proactive *proactive,
				     size_t size)
{
	struct mr_proactive c = { .size = sizeof(c) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	const char *bad = NULL;
	int r;

	if (!g)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	if (proactive) {
		if (size < sizeof(c) || proactive->size != size) {
			bad = "size smaller than struct mr_proactive, or not "
			      "its size field";
		} else if (!tail_is_zero(proactive, sizeof(c), size)) {
			mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: proactive "
				"refused: a field past this library's struct "
				"is set", g->path);
			return -E2BIG;
		} else {
			memcpy(&c, proactive, sizeof(c));
			c.size = sizeof(c);
			bad = refusal(&c);
		}
		if (bad) {
			mri_log(&g->ctx->log, MR_LOG_DEBUG,
				"%s: proactive refused: %s", g->path, bad);
			return -EINVAL;
		}
		if (!(g->be->caps & MRI_CAP_RECLAIM)) {
			mri_log(&g->ctx->log, MR_LOG_WARNING, "%s: proactive "
				"refused: the %s backend cannot reclaim",
				g->path, g->be->name);
			return -EOPNOTSUPP;
		}
		/* Without PSI there is no pressure to keep it under. */
		r = g->be->read_pressure ?
		    g->be->read_pressure(g->priv, &pr) : -EOPNOTSUPP;
		if (r == -EOPNOTSUPP)
			mri_log(&g->ctx->log, MR_LOG_WARNING, "%s: proactive "
				"refused: the group has no memory PSI (%s)",
				g->path, !strcmp(g->be->name, "cgroup1") ?
				"cgroup v1 reads it, with "
				"mr_ctx_set_hybrid_psi(), from the group's "
				"cgroup2 twin or the cgroup2 group that holds "
				"exactly its tasks" :
				"a kernel without CONFIG_PSI or booted with "
				"psi=0");
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&g->proactive.lock);
	g->proactive.cfg = c;
	g->proactive.on = proactive != NULL;
	g->proactive.gen++;
	/* Seen at once; the worker's next pass starts the rest afresh. */
	atomic_store(&g->proactive.stats.enabled, proactive != NULL);
	atomic_store(&g->proactive.stats.dry_run,
		     proactive && (c.flags & MR_PROACTIVE_DRY_RUN));
	pthread_mutex_unlock(&g->proactive.lock);
	mri_log(&g->ctx->log, MR_LOG_DEBUG, proactive ?
		"%s: proactive on: interval %llu ms, target %llu us per %llu "
		"ms, step %u ppm, refaults %u ppm, io %u ppm, min %llu bytes%s" :
		"%s: proactive off", g->path,
		(unsigned long long)(c.interval_ns / 1000000),
		(unsigned long long)(c.stall_ns / 1000),
		(unsigned long long)(c.window_ns / 1000000), c.step_ppm,
		c.refault_ppm, c.io_stall_ppm, (unsigned long long)c.min_bytes,
		(c.flags & MR_PROACTIVE_DRY_RUN) ? ", dry run" : "");
	mri_ctx_wake_group(g->ctx, g);
	return 0;
}

MR_EXPORT int mr_group_read_proactive_stats(mr_group_t *g,
					    struct mr_proactive_stats *out,
					    size_t size)
{
	const struct mri_proactive_stats *s;

	if (!g || !out || size < sizeof(*out))
		return -EINVAL;
	s = &g->proactive.stats;
	memset(out, 0, size);
	out->size = size;
	out->enabled = atomic_load(&s->enabled);
	out->dry_run = atomic_load(&s->dry_run);
	out->io_gate = atomic_load(&s->io_gate);
	out->intervals = atomic_load(&s->intervals);
	out->usage_bytes = atomic_load(&s->usage_bytes);
	out->floor_bytes = atomic_load(&s->floor_bytes);
	out->target_bytes = atomic_load(&s->target_bytes);
	out->step_bytes = atomic_load(&s->step_bytes);
	out->step_ppm = atomic_load(&s->step_ppm);
	out->stall_ns = atomic_load(&s->stall_ns);
	out->target_stall_ns = atomic_load(&s->target_stall_ns);
	out->io_stall_ns = atomic_load(&s->io_stall_ns);
	out->refault_ratio_ppm = atomic_load(&s->refault_ratio_ppm);
	out->refault_bytes = atomic_load(&s->refault_bytes);
	out->dry_run_bytes = atomic_load(&s->dry_run_bytes);
	out->reclaimed_bytes = atomic_load(&s->reclaimed_bytes);
	out->pauses_pressure = atomic_load(&s->pauses_pressure);
	out->pauses_refaults = atomic_load(&s->pauses_refaults);
	out->pauses_io = atomic_load(&s->pauses_io);
	out->pauses_external = atomic_load(&s->pauses_external);
	out->external_high_changes = atomic_load(&s->external_high_changes);
	out->last_external_high_bytes =
		atomic_load(&s->last_external_high_bytes);
	return 0;
}

/* --------------------------------------------------------- measuring */

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* now - then, 0 when then is larger (a counter reset, a larger
 * subtrahend). */
static uint64_t delta(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* Whether a PSI total that was then_us an interval of elapsed_ns ago and
 * is now_us now can be the same group's (mri_proactive_pass()). */
static bool psi_source_changed(uint64_t now_us, uint64_t then_us,
			       uint64_t elapsed_ns)
{
	return now_us < then_us || (now_us - then_us) / 2 > elapsed_ns / 1000;
}

/* Reads the counters, the memory.stat and the limits of g. 0, or the
 * negative errno of the first read that failed (-EOPNOTSUPP: no memory
 * PSI). */
static int read_counters(struct mr_group *g, struct mri_proactive_counters *c,
			 struct mr_memstat *ms, struct mr_limits *l)
{
	struct mr_pressure pr = { .size = sizeof(pr) };
	int r;

	memset(c, 0, sizeof(*c));
	r = g->be->read_pressure ? g->be->read_pressure(g->priv, &pr) :
	    -EOPNOTSUPP;
	if (r < 0)
		return r;
	if (!(pr.present & MR_PRESSURE_SOME))
		return -EOPNOTSUPP;
	c->stall_us = pr.some.total_us;
	memset(&pr, 0, sizeof(pr));
	pr.size = sizeof(pr);
	if (g->be->read_io_pressure &&
	    g->be->read_io_pressure(g->priv, &pr) == 0 &&
	    (pr.present & MR_PRESSURE_SOME)) {
		c->has_io = true;
		c->io_stall_us = pr.some.total_us;
	}
	r = g->be->read_memstat(g->priv, ms);
	if (r < 0)
		return r;
	c->refault_file_bytes = ms->workingset_refault_file_bytes;
	c->refault_anon_bytes = ms->workingset_refault_anon_bytes;
	c->has_pgsteal = ms->present & (1ULL << MR_MEMSTAT_PGSTEAL);
	c->pgsteal_bytes = ms->pgsteal_bytes;
	r = g->be->read_limits(g->priv, l);
	if (r < 0)
		return r;
	c->has_high = l->present & MR_LIMITS_HAS_HIGH;
	c->own_high_bytes = l->own_high_bytes;
	c->has_swap = l->present & MR_LIMITS_HAS_SWAP;
	c->swap_bytes = l->swap_usage_bytes;
	return 0;
}

/* Starts an interval at now_ns with the counters c. */
static void start(struct mri_proactive *p, uint64_t now_ns,
		  const struct mri_proactive_counters *c)
{
	p->started = true;
	p->start_ns = now_ns;
	p->start = *c;
	p->own_freed_bytes = 0;
}

static const char *hold_name(enum mri_steplaw_hold h)
{
	switch (h) {
	case MRI_HOLD_PRESSURE:
		return "pressure at target";
	case MRI_HOLD_REFAULTS:
		return "refaults";
	case MRI_HOLD_FLOOR:
		return "at the floor";
	case MRI_HOLD_NONE:
		break;
	}
	return "step";
}

int mri_proactive_pass(struct mr_group *g, const atomic_bool *stop)
{
	struct mri_proactive *p = &g->proactive;
	struct mri_proactive_stats *st = &p->stats;
	struct mr_memstat ms = { .size = sizeof(ms) };
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_protection prot = { .size = sizeof(prot) };
	struct mri_proactive_counters c;
	struct mri_reclaimable rc;
	struct mri_floor_input fi;
	struct mri_steplaw_params lp;
	struct mri_steplaw_sample x = { 0 };
	struct mri_steplaw_decision d;
	struct mr_proactive cfg;
	uint64_t now_ns, elapsed_ns = 0, gen, io_ns, usage, freed = 0;
	const char *why = NULL;
	bool on, dry, io_held = false;
	int r, swappiness;

	pthread_mutex_lock(&p->lock);
	on = p->on;
	cfg = p->cfg;
	gen = p->gen;
	pthread_mutex_unlock(&p->lock);
	if (gen != p->seen_gen) {
		/* A new call: everything afresh, the statistics too. */
		p->seen_gen = gen;
		p->started = false;
		p->retry_ns = 0;
		p->read_failing = false;
		p->external_hold = 0;
		p->carry_bytes = 0;
		p->dry_bytes = MR_UNLIMITED;
		mri_steplaw_init(&p->law);
		stats_reset(st);
	}
	if (!on || g->gone)
		return 0;
	dry = cfg.flags & MR_PROACTIVE_DRY_RUN;
	now_ns = mri_group_now_ns(g);
	if (p->started) {
		elapsed_ns = now_ns - p->start_ns;
		if (elapsed_ns < cfg.interval_ns -
				 cfg.interval_ns / INTERVAL_SLACK_DIV)
			return 0;
	} else if (now_ns < p->retry_ns) {
		return 0;
	}
	r = read_counters(g, &c, &ms, &l);
	if (r == -ENOENT)
		return r;
	if (r < 0) {
		/* Tried again an interval later, not at every round. The
		 * first failure is a warning: the controller takes no step
		 * until a read works again (a cgroup v1 group whose twin
		 * was removed, psi switched off), and its statistics stop
		 * counting intervals, which alone would go unnoticed. */
		mri_log(&g->ctx->log, p->read_failing ? MR_LOG_DEBUG :
			MR_LOG_WARNING, "%s: proactive: reading the group: "
			"%s; interval restarts%s", g->path,
			r == -EOPNOTSUPP ? "no memory PSI (psi=0, or its "
			"pressure files hidden by cgroup.pressure; on cgroup "
			"v1: no cgroup2 twin, nor a cgroup2 group of its tasks "
			"alone)" : mr_strerror(r),
			p->read_failing ? "" : " (no step until a read works; "
			"tried again every interval)");
		p->read_failing = true;
		p->started = false;
		p->retry_ns = now_ns + cfg.interval_ns -
			      cfg.interval_ns / INTERVAL_SLACK_DIV;
		return 0;
	}
	if (p->read_failing) {
		mri_log(&g->ctx->log, MR_LOG_INFO, "%s: proactive: the group "
			"reads again; intervals resume", g->path);
		p->read_failing = false;
	}
	atomic_store(&st->io_gate, c.has_io ? MR_PROACTIVE_IO_GATE_ON :
					       MR_PROACTIVE_IO_GATE_NONE);
	if (!p->started) {
		start(p, now_ns, &c);
		return 0;
	}

	/* PSI totals only grow, and a group's some total at most as fast
	 * as the wall clock (kernel/sched/psi.c: the time at least one task
	 * stalled). A total that fell, or grew by more than twice the
	 * interval, is another group's: on cgroup v1 without a twin, the
	 * cgroup2 group of the tasks changed as they moved
	 * (lib/cgroupfs/tasks2.h). Its difference would be a stall of the
	 * second group's whole history, holding steps for dozens of
	 * intervals: the interval restarts instead, nothing decided on it. */
	if (psi_source_changed(c.stall_us, p->start.stall_us, elapsed_ns) ||
	    (c.has_io && p->start.has_io &&
	     psi_source_changed(c.io_stall_us, p->start.io_stall_us,
				elapsed_ns))) {
		mri_log(&g->ctx->log, MR_LOG_INFO, "%s: proactive: the PSI "
			"totals moved by more than the interval's %.1f s "
			"(some %.3f -> %.3f s): another group's; interval "
			"restarts", g->path, (double)elapsed_ns / 1e9,
			(double)p->start.stall_us / 1e6,
			(double)c.stall_us / 1e6);
		start(p, now_ns, &c);
		return 0;
	}

	/* The interval's figures. */
	usage = l.usage_bytes;
	swappiness = atomic_load(&g->reclaim_swappiness);
	if (l.present & MR_LIMITS_HAS_PROTECTION) {
		prot.min_bytes = l.min_bytes;
		prot.effective_low_bytes = l.effective_low_bytes;
	}
	mri_floor_input_of(&ms, &l, &prot, swappiness, cfg.min_bytes, &fi);
	mri_reclaimable(&ms, &l, swappiness, &rc);
	lp.step_ppm = cfg.step_ppm;
	lp.refault_ppm = cfg.refault_ppm;
	/* The stall allowed in an interval of this length. */
	lp.target_stall_ns = (uint64_t)((double)cfg.stall_ns *
					(double)elapsed_ns /
					(double)cfg.window_ns);
	if (!lp.target_stall_ns)
		lp.target_stall_ns = 1;
	x.usage_bytes = usage;
	x.floor_bytes = mri_floor_bytes(&fi);
	x.file_bytes = rc.file_bytes;
	x.anon_bytes = rc.swappable_bytes;
	x.stall_ns = delta(c.stall_us, p->start.stall_us) * 1000;
	x.refault_file_bytes = delta(c.refault_file_bytes,
				     p->start.refault_file_bytes);
	x.refault_anon_bytes = delta(c.refault_anon_bytes,
				     p->start.refault_anon_bytes);
	/* cgroup v1 has no pgsteal: the controller's own reclaim. */
	x.steal_bytes = c.has_pgsteal && p->start.has_pgsteal ?
			delta(c.pgsteal_bytes, p->start.pgsteal_bytes) :
			p->own_freed_bytes;
	x.anon_steal_known = c.has_swap && p->start.has_swap;
	x.anon_steal_bytes = x.anon_steal_known ?
			     delta(c.swap_bytes, p->start.swap_bytes) : 0;
	if (dry) {
		/* The law applied to the size it would have reached, what
		 * it would have reclaimed taken from the page cache first,
		 * as the kernel's LRU would (the cold cache is inactive). */
		uint64_t gone, file;

		if (p->dry_bytes > usage)
			p->dry_bytes = usage;
		gone = usage - p->dry_bytes;
		file = gone < x.file_bytes ? gone : x.file_bytes;
		x.file_bytes -= file;
		x.anon_bytes = delta(x.anon_bytes, gone - file);
		x.usage_bytes = p->dry_bytes;
	}
	mri_steplaw_update(&p->law, &lp, &x, &d);
	io_ns = c.has_io && p->start.has_io ?
		delta(c.io_stall_us, p->start.io_stall_us) * 1000 : 0;

	/* Someone else changed the group's memory.high: hold off. */
	if (c.has_high && p->start.has_high &&
	    c.own_high_bytes != p->start.own_high_bytes) {
		atomic_fetch_add(&st->external_high_changes, 1);
		atomic_store(&st->last_external_high_bytes, c.own_high_bytes);
		mri_log(&g->ctx->log, MR_LOG_INFO,
			"%s: proactive: memory.high changed by someone else "
			"(%.1f -> %.1f MiB); no steps for %u intervals",
			g->path, mib(p->start.own_high_bytes),
			mib(c.own_high_bytes), MRI_PROACTIVE_EXTERNAL_HOLD);
		p->external_hold = MRI_PROACTIVE_EXTERNAL_HOLD;
	}
	if (c.has_io && io_ns > (uint64_t)((double)elapsed_ns *
					   cfg.io_stall_ppm / 1e6))
		io_held = true;

	if (p->external_hold) {
		p->external_hold--;
		atomic_fetch_add(&st->pauses_external, 1);
		why = "memory.high changed by someone else";
	} else if (io_held) {
		atomic_fetch_add(&st->pauses_io, 1);
		why = "io pressure above the gate";
	} else if (d.hold == MRI_HOLD_PRESSURE) {
		atomic_fetch_add(&st->pauses_pressure, 1);
	} else if (d.hold == MRI_HOLD_REFAULTS) {
		atomic_fetch_add(&st->pauses_refaults, 1);
	}
	if (why) {
		d.step_bytes = 0;
		d.step_ppm = 0;
		d.target_bytes = x.usage_bytes;
	}

	atomic_store(&st->usage_bytes, usage);
	atomic_store(&st->floor_bytes, x.floor_bytes);
	atomic_store(&st->target_bytes, d.target_bytes);
	atomic_store(&st->step_bytes, d.step_bytes);
	atomic_store(&st->step_ppm, d.step_ppm);
	atomic_store(&st->stall_ns, x.stall_ns);
	atomic_store(&st->target_stall_ns, lp.target_stall_ns);
	atomic_store(&st->io_stall_ns, io_ns);
	atomic_store(&st->refault_ratio_ppm, d.refault_ratio_ppm);
	atomic_store(&st->refault_bytes, x.refault_file_bytes +
					 x.refault_anon_bytes);
	if (dry)
		atomic_store(&st->dry_run_bytes, d.target_bytes);
	/* The count last (sequentially consistent, as every store here): a
	 * reader that sees it, and reads the figures after it as
	 * mr_group_read_proactive_stats() does, sees the interval's own,
	 * its dry-run size included. */
	atomic_fetch_add(&st->intervals, 1);
	mri_log(&g->ctx->log, MR_LOG_DEBUG,
		"%s: proactive%s: %.1f s: usage %.2f MiB, floor %.2f MiB, "
		"reclaimable %.2f MiB file + %.2f MiB anon, stall %.3f/%.3f "
		"ms, io %.3f ms, refaults %.2f MiB file + %.2f MiB anon over "
		"%.2f MiB reclaimed (%u ppm): %s %.2f MiB (%u ppm) to %.2f "
		"MiB", g->path, dry ? " (dry run)" : "",
		(double)elapsed_ns / 1e9, mib(x.usage_bytes),
		mib(x.floor_bytes), mib(x.file_bytes), mib(x.anon_bytes),
		(double)x.stall_ns / 1e6, (double)lp.target_stall_ns / 1e6,
		(double)io_ns / 1e6, mib(x.refault_file_bytes),
		mib(x.refault_anon_bytes), mib(x.steal_bytes),
		d.refault_ratio_ppm, why ? why : hold_name(d.hold),
		mib(d.step_bytes), d.step_ppm, mib(d.target_bytes));

	/* The next interval starts before the step: its reclaim, and what
	 * refaults after it, are the next interval's. */
	start(p, now_ns, &c);
	if (dry) {
		p->dry_bytes = d.target_bytes;
		return 0;
	}
	if (!d.step_bytes) {
		/* Held back (pressure, refaults, the floor): what earlier
		 * steps over-reclaimed no longer stands for a step. */
		p->carry_bytes = 0;
		return 0;
	}
	/* A write may free far more than it asked (before Linux 6.6 a
	 * memory.reclaim of 1 GiB could take 1.7 GiB): the excess is
	 * carried into the next step, which asks that much less. */
	r = mri_reclaim_carried(g, MR_REASON_PROACTIVE, d.step_bytes,
				d.target_bytes,
				mri_deadline_ns(now_ns,
						cfg.interval_ns / STEP_TIME_DIV),
				stop, &p->carry_bytes, &freed);
	p->own_freed_bytes = r < 0 ? 0 : freed;
	atomic_fetch_add(&st->reclaimed_bytes, p->own_freed_bytes);
	if (r == -ENOENT)
		return r;
	if (mri_control_refusal(r)) {
		mri_log(&g->ctx->log, MR_LOG_WARNING,
			"%s: proactive: reclaim refused (%s); off", g->path,
			mr_strerror(r));
		pthread_mutex_lock(&p->lock);
		if (p->gen == gen)
			p->on = false;
		pthread_mutex_unlock(&p->lock);
		atomic_store(&st->enabled, 0);
	} else if (r < 0 && r != -EAGAIN) {
		mri_log(&g->ctx->log, r == -EBUSY ? MR_LOG_DEBUG : MR_LOG_ERR,
			"%s: proactive reclaim: %s", g->path, mr_strerror(r));
	}
	return 0;
}
