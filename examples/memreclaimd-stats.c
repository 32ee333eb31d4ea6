/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's snapshots and statistics records (memreclaimd-stats.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "json.h"
#include "memreclaimd-log.h"
#include "memreclaimd-stats.h"

const char *const mrd_reason_names[MRD_REASONS] = {
	[MR_REASON_MARGIN] = "margin",
	[MR_REASON_REQUESTED] = "requested",
	[MR_REASON_SOFT] = "soft",
	[MR_REASON_PROACTIVE] = "proactive",
};

int mrd_snapshot_read(mr_group_t *g, struct mrd_snapshot *s)
{
	int r, i;

	*s = (struct mrd_snapshot){
		.lim = { .size = sizeof(s->lim) },
		.ms = { .size = sizeof(s->ms) },
		.ps = { .size = sizeof(s->ps) },
		.psi = { .size = sizeof(s->psi) },
	};
	r = mr_group_read_limits(g, &s->lim);
	if (r < 0)
		return r;
	r = mr_group_read_margin_stats(g, &s->ms);
	if (r < 0)
		return r;
	r = mr_group_read_proactive_stats(g, &s->ps, sizeof(s->ps));
	if (r < 0)
		return r;
	for (i = 0; i < MRD_REASONS; i++) {
		s->rs[i].size = sizeof(s->rs[i]);
		r = mr_group_read_reclaim_stats(g, i, &s->rs[i]);
		if (r < 0)
			return r;
	}
	r = mr_group_read_pressure(g, &s->psi);
	if (r == -ENOENT)
		return r;
	s->psi_ok = r == 0;
	return 0;
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL +
	       (uint64_t)tv.tv_usec * 1000;
}

void mrd_self_cpu_ns(uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user_ns = timeval_ns(ru.ru_utime);
	*sys_ns = timeval_ns(ru.ru_stime);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* Now as RFC 3339 in UTC, with milliseconds. */
static void wall_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char sec[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", sec, ts.tv_nsec / 1000000);
}

static void print_json(const struct mrd_group *grp, const char *event,
		       const struct mrd_snapshot *s, uint64_t hits_since,
		       uint64_t user_ns, uint64_t sys_ns)
{
	const struct mr_margin_stats *ms = &s->ms;
	const struct mr_proactive_stats *ps = &s->ps;
	const struct mr_reclaim_stats *st = &s->rs[MR_REASON_MARGIN];
	char now[64];

	wall_time(now, sizeof(now));
	printf("{\"time\":\"%s\",\"event\":\"%s\",\"uptime_ns\":%" PRIu64
	       ",\"cgroup\":", now, event, mrd_now_ns() - grp->start_ns);
	json_string(grp->path);
	printf(",\"usage_bytes\":%" PRIu64, s->lim.usage_bytes);
	if (s->lim.limit_bytes == MR_UNLIMITED)
		printf(",\"limit_bytes\":null");
	else
		printf(",\"limit_bytes\":%" PRIu64, s->lim.limit_bytes);
	printf(",\"limit_hits\":%" PRIu64
	       ",\"limit_hits_since_start\":%" PRIu64
	       ",\"worker_calls\":%" PRIu64
	       ",\"worker_empty_calls\":%" PRIu64
	       ",\"worker_asked_bytes\":%" PRIu64
	       ",\"worker_freed_bytes\":%" PRIu64
	       ",\"worker_elapsed_ns\":%" PRIu64
	       ",\"cpu_user_ns\":%" PRIu64 ",\"cpu_sys_ns\":%" PRIu64
	       ",\"cpu_ns\":%" PRIu64
	       ",\"margin_adaptive\":%s,\"margin_bytes\":%" PRIu64
	       ",\"hysteresis_bytes\":%" PRIu64,
	       s->lim.limit_hits, hits_since, st->calls, st->empty_calls,
	       st->asked_bytes, st->freed_bytes, st->elapsed_ns,
	       user_ns, sys_ns, user_ns + sys_ns,
	       ms->adaptive ? "true" : "false", ms->margin_bytes,
	       ms->hysteresis_bytes);
	if (ms->adaptive)
		printf(",\"margin_sized_bytes\":%" PRIu64
		       ",\"margin_strength_ppm\":%" PRIu32
		       ",\"charge_bytes_per_s\":%" PRIu64
		       ",\"reaction_ns\":%" PRIu64
		       ",\"overshoot_bytes\":%" PRIu64
		       ",\"benefit_ns\":%" PRIu64 ",\"cost_ns\":%" PRIu64
		       ",\"margin_intervals\":%" PRIu64
		       ",\"interval_limit_hits\":%" PRIu64
		       ",\"interval_refault_bytes\":%" PRIu64
		       ",\"worker_cpu_ns\":%" PRIu64
		       ",\"pass_cpu_ns\":%" PRIu64
		       ",\"empty_cost_ns_per_gib_s\":%" PRIu64,
		       ms->sized_bytes, ms->strength_ppm,
		       ms->charge_bytes_per_s, ms->reaction_ns,
		       ms->overshoot_bytes, ms->benefit_ns, ms->cost_ns,
		       ms->intervals,
		       ms->limit_hits, ms->refault_bytes, ms->worker_cpu_ns,
		       ms->pass_cpu_ns, ms->empty_cost_ns_per_gib_s);
	if (ps->enabled)
		printf(",\"proactive\":%s"
		       ",\"proactive_intervals\":%" PRIu64
		       ",\"proactive_target_bytes\":%" PRIu64
		       ",\"proactive_floor_bytes\":%" PRIu64
		       ",\"proactive_step_bytes\":%" PRIu64
		       ",\"proactive_dry_run_bytes\":%" PRIu64
		       ",\"proactive_reclaimed_bytes\":%" PRIu64
		       ",\"proactive_stall_ns\":%" PRIu64
		       ",\"proactive_target_stall_ns\":%" PRIu64
		       ",\"proactive_io_stall_ns\":%" PRIu64
		       ",\"proactive_io_gate\":%s"
		       ",\"proactive_refault_ratio_ppm\":%" PRIu32
		       ",\"proactive_refault_bytes\":%" PRIu64
		       ",\"proactive_pauses_pressure\":%" PRIu64
		       ",\"proactive_pauses_refaults\":%" PRIu64
		       ",\"proactive_pauses_io\":%" PRIu64
		       ",\"proactive_pauses_external\":%" PRIu64
		       ",\"proactive_external_high_changes\":%" PRIu64
		       ",\"proactive_freed_bytes\":%" PRIu64,
		       ps->dry_run ? "\"dry-run\"" : "\"on\"",
		       ps->intervals, ps->target_bytes, ps->floor_bytes,
		       ps->step_bytes, ps->dry_run_bytes, ps->reclaimed_bytes,
		       ps->stall_ns, ps->target_stall_ns, ps->io_stall_ns,
		       ps->io_gate ? "true" : "false", ps->refault_ratio_ppm,
		       ps->refault_bytes, ps->pauses_pressure,
		       ps->pauses_refaults, ps->pauses_io,
		       ps->pauses_external, ps->external_high_changes,
		       s->rs[MR_REASON_PROACTIVE].freed_bytes);
	printf("}\n");
}

static void print_text(const struct mrd_group *grp, const char *event,
		       const struct mrd_snapshot *s, uint64_t hits_since,
		       uint64_t user_ns, uint64_t sys_ns)
{
	const struct mr_margin_stats *ms = &s->ms;
	const struct mr_proactive_stats *ps = &s->ps;
	const struct mr_reclaim_stats *st = &s->rs[MR_REASON_MARGIN];

	printf(MRD_PROG ": %s: %s: usage %.1f MiB, limit ", event, grp->path,
	       mib(s->lim.usage_bytes));
	if (s->lim.limit_bytes == MR_UNLIMITED)
		printf("none");
	else
		printf("%.1f MiB", mib(s->lim.limit_bytes));
	printf("; limit hits %" PRIu64
	       " since the group's creation, %" PRIu64
	       " since memreclaimd started; margin worker: %" PRIu64
	       " calls (%" PRIu64 " empty), asked %.1f MiB, freed %.1f MiB, "
	       "%.3f s; cpu %.3f s\n",
	       s->lim.limit_hits, hits_since, st->calls, st->empty_calls,
	       mib(st->asked_bytes), mib(st->freed_bytes),
	       (double)st->elapsed_ns / 1e9,
	       (double)(user_ns + sys_ns) / 1e9);
	if (ms->adaptive)
		printf(MRD_PROG ": %s: %s: adaptive margin %.2f MiB "
		       "(hysteresis %.2f MiB), strength %.3f of "
		       "%.2f MiB sized (%.2f MiB over the mark before "
		       "the worker saw it + charge rate %.1f MiB/s x "
		       "reaction %.3f ms x safety, or grown on limit "
		       "hits); last interval: benefit %.3f ms "
		       "(reclaim waits taken off the workload), cost "
		       "%.3f ms (worker CPU and refaults), %" PRIu64
		       " limit hits, %.1f MiB refaulted; hysteresis priced "
		       "at %.3f ms of CPU a pass against %.3f ms a second "
		       "of refaults per GiB kept empty\n", event, grp->path,
		       mib(ms->margin_bytes), mib(ms->hysteresis_bytes),
		       ms->strength_ppm / 1e6, mib(ms->sized_bytes),
		       mib(ms->overshoot_bytes), mib(ms->charge_bytes_per_s),
		       (double)ms->reaction_ns / 1e6,
		       ms->benefit_ns / 1e6, ms->cost_ns / 1e6,
		       ms->limit_hits, mib(ms->refault_bytes),
		       ms->pass_cpu_ns / 1e6,
		       ms->empty_cost_ns_per_gib_s / 1e6);
	if (ps->enabled && ps->dry_run)
		printf(MRD_PROG ": %s: %s: proactive dry run: would take the "
		       "group to %.1f MiB (floor %.1f MiB); last interval: "
		       "stall %.3f ms of %.3f ms allowed, refaults %.1f MiB "
		       "(%.2f%% of reclaimed)\n", event, grp->path,
		       mib(ps->dry_run_bytes), mib(ps->floor_bytes),
		       ps->stall_ns / 1e6, ps->target_stall_ns / 1e6,
		       mib(ps->refault_bytes), ps->refault_ratio_ppm / 1e4);
	else if (ps->enabled)
		printf(MRD_PROG ": %s: %s: proactive: target %.1f MiB (floor "
		       "%.1f MiB), reclaimed %.1f MiB in %" PRIu64
		       " intervals; last interval: step %.1f MiB, stall "
		       "%.3f ms of %.3f ms allowed, io stall %.3f ms%s, "
		       "refaults %.1f MiB (%.2f%% of reclaimed); paused: %"
		       PRIu64 " pressure, %" PRIu64 " refaults, %" PRIu64
		       " io, %" PRIu64 " after %" PRIu64 " changes of "
		       "memory.high by others\n", event, grp->path,
		       mib(ps->target_bytes), mib(ps->floor_bytes),
		       mib(ps->reclaimed_bytes), ps->intervals,
		       mib(ps->step_bytes), ps->stall_ns / 1e6,
		       ps->target_stall_ns / 1e6, ps->io_stall_ns / 1e6,
		       ps->io_gate ? "" : " (no io.pressure: no gate)",
		       mib(ps->refault_bytes), ps->refault_ratio_ppm / 1e4,
		       ps->pauses_pressure, ps->pauses_refaults,
		       ps->pauses_io, ps->pauses_external,
		       ps->external_high_changes);
}

int mrd_stats_print(const struct mrd_group *grp, const char *event,
		    bool json)
{
	struct mrd_snapshot s;
	uint64_t user_ns, sys_ns, hits_since;
	int r;

	r = mrd_snapshot_read(grp->g, &s);
	if (r == -EBUSY) {
		mrd_log(MR_LOG_NOTICE, "%s record skipped: reading the "
			"statistics of %s: %s (in the middle of a reclaim "
			"step); retrying at the next interval", event,
			grp->path, mr_strerror(r));
		return r;
	}
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "reading statistics of %s: %s",
			grp->path, mr_strerror(r));
		return r;
	}
	/* memory.failcnt can be reset by writing to it: then count from the
	 * reset. */
	hits_since = s.lim.limit_hits >= grp->limit_hits_base ?
		     s.lim.limit_hits - grp->limit_hits_base :
		     s.lim.limit_hits;
	mrd_self_cpu_ns(&user_ns, &sys_ns);
	if (json)
		print_json(grp, event, &s, hits_since, user_ns, sys_ns);
	else
		print_text(grp, event, &s, hits_since, user_ns, sys_ns);
	fflush(stdout);
	return 0;
}
