/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A group stuck at memory.high: the rule, the worker's sampling and the
 * conditions the caller polls (see stuckhigh.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "context.h"
#include "fds.h"
#include "group.h"
#include "reclaim.h"
#include "reclaimcount.h"
#include "stuckhigh.h"

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

bool mri_stuck_high(const struct mri_stuck_input *in,
		    struct mri_stuck_figures *fig)
{
	struct mri_stuck_figures f = { 0 };
	bool stuck;

	if (in->interval_ns)
		f.high_events_per_s = (uint64_t)((unsigned __int128)
			in->high_events * 1000000000ULL / in->interval_ns);
	if (in->interval_ns)
		f.full_ppm = in->full_stall_ns >= in->interval_ns ? 1000000 :
			(uint32_t)((unsigned __int128)in->full_stall_ns *
				   1000000 / in->interval_ns);
	if (in->high_bytes && in->high_bytes != MR_UNLIMITED)
		f.fill_ppm = in->unreclaimable_bytes >= in->high_bytes ?
			1000000 :
			(uint32_t)((unsigned __int128)in->unreclaimable_bytes *
				   1000000 / in->high_bytes);
	stuck = in->interval_ns >= MRI_STUCK_MIN_INTERVAL_NS &&
		f.high_events_per_s >= MRI_STUCK_HIGH_EVENTS_PER_S &&
		in->max_events == 0 &&
		f.full_ppm >= MRI_STUCK_FULL_PPM &&
		!in->swap_usable &&
		in->high_bytes != MR_UNLIMITED &&
		in->usage_bytes >= in->high_bytes &&
		f.fill_ppm >= MRI_STUCK_FILL_PPM;
	if (fig)
		*fig = f;
	return stuck;
}

void mri_stuck_init(struct mri_stuck *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->fd = -1;
}

void mri_stuck_fini(struct mri_stuck *s)
{
	if (s->fd >= 0)
		mri_fd_close(s->fd);
	s->fd = -1;
	pthread_mutex_destroy(&s->lock);
}

static uint64_t grew(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

/* Signals the conditions fd (if the caller asked for one). */
static void signal_fd(struct mri_stuck *s)
{
	uint64_t one = 1;

	if (s->fd >= 0 && write(s->fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the fd readable already. */
	}
}

/* What reclaim cannot take from g now (mri_unreclaimable()), with the
 * limits it weighs the swap room against read first into *l. */
static int unreclaimable(struct mr_group *g, struct mr_limits *l,
			 struct mr_memstat *ms, uint64_t *bytes,
			 bool *swap_usable)
{
	int r;

	r = g->be->read_limits(g->priv, l);
	if (r < 0)
		return r;
	return mri_unreclaimable(g, l, ms, bytes, swap_usable);
}

/* What the library's reclaim of g freed since it was opened, every
 * reason together. */
static uint64_t own_freed(struct mr_group *g)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < MRI_NREASONS; i++)
		sum += atomic_load(&g->stats[i].freed_bytes);
	return sum;
}

/* The tasks' own direct reclaim and the reclaim's efficiency between the
 * last sample's memory.stat and ms, with the library's reclaim taken
 * out of direct reclaim where the kernel counts it there (before 6.15:
 * lib/core/reclaimcount.h). The library reclaims through memory.reclaim
 * wherever the kernel has the proactive pair (6.15 has memory.reclaim;
 * the high fallback is for kernels before 5.19). */
static void direct_reclaim(struct mri_stuck *s, const struct mr_memstat *ms,
			   uint64_t own_now, uint64_t interval_ns)
{
	struct mri_own_reclaim own = { 0 };
	struct mri_reclaim_counts c;

	s->direct_bytes_per_s = 0;
	s->efficiency_ppm = 0;
	if (!s->has_stat || !interval_ns)
		return;
	own.reclaim_file_bytes = own_now > s->own_freed_bytes ?
				 own_now - s->own_freed_bytes : 0;
	mri_reclaim_counts(&s->stat, ms, &own, &c);
	if (!c.has_direct)
		return;
	s->direct_bytes_per_s = (uint64_t)((unsigned __int128)
		c.direct_steal_bytes * 1000000000ULL / interval_ns);
	s->efficiency_ppm = c.efficiency_ppm;
}

void mri_stuck_sample(struct mr_group *g)
{
	struct mri_stuck *s = &g->stuck;
	struct mr_events ev = { .size = sizeof(ev) };
	struct mr_pressure pr = { .size = sizeof(pr) };
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat ms = { .size = sizeof(ms) };
	struct mri_stuck_input in = { 0 };
	struct mri_stuck_figures fig;
	uint64_t now = mri_group_now_ns(g), maxes, own = own_freed(g);
	bool rising, has_full, stuck = false, judged = false, warn = false;

	/* The sampler's own fields (the worker's alone: one per context)
	 * are read and written without the lock; the files are read
	 * without it too (a backend may log, and a log callback may read
	 * the conditions). The lock guards what readers see. */
	if (s->no_high || !g->be->read_events ||
	    g->be->read_events(g->priv, false, &ev) < 0)
		return;
	if (!(ev.present & (1ULL << MR_EVENT_HIGH))) {
		s->no_high = true;
		return;
	}
	maxes = ev.max + ev.oom + ev.oom_kill;
	in.interval_ns = s->sampled ? now - s->last_ns : 0;
	in.high_events = s->sampled ? grew(s->last_high, ev.high) : 0;
	in.max_events = s->sampled ? grew(s->last_max, maxes) : 0;
	rising = in.interval_ns >= MRI_STUCK_MIN_INTERVAL_NS &&
		 (unsigned __int128)in.high_events * 1000000000ULL >=
		 (unsigned __int128)MRI_STUCK_HIGH_EVENTS_PER_S *
		 in.interval_ns;
	/* memory.pressure, memory.stat and the limits only while high
	 * rises: a group whose high stands still costs one read a round.
	 * PSI full's growth is weighed from the last sample's total, so the
	 * first interval of a rise reads its base, and a group is judged
	 * from the second interval in a row on. */
	if (!rising || !g->be->read_pressure ||
	    g->be->read_pressure(g->priv, &pr) < 0)
		pr.present = 0;
	has_full = s->has_full && (pr.present & MR_PRESSURE_FULL);
	if (rising && unreclaimable(g, &l, &ms, &in.unreclaimable_bytes,
				    &in.swap_usable) == 0) {
		in.full_stall_ns = has_full ?
			grew(s->last_full_us, pr.full.total_us) * 1000 : 0;
		in.high_bytes = (l.present & MR_LIMITS_HAS_HIGH) ?
				l.high_bytes : MR_UNLIMITED;
		in.usage_bytes = l.usage_bytes;
		judged = true;
	}
	stuck = mri_stuck_high(&in, &fig) && judged && has_full;
	s->has_full = pr.present & MR_PRESSURE_FULL;
	s->last_full_us = pr.full.total_us;
	s->sampled = true;
	s->last_ns = now;
	s->last_high = ev.high;
	s->last_max = maxes;

	pthread_mutex_lock(&s->lock);
	s->fig = fig;
	if (judged) {
		s->high_bytes = in.high_bytes;
		s->unreclaimable_bytes = in.unreclaimable_bytes;
		direct_reclaim(s, &ms, own, in.interval_ns);
		s->stat = ms;
		s->own_freed_bytes = own;
	} else {
		s->direct_bytes_per_s = 0;
		s->efficiency_ppm = 0;
	}
	/* The next interval's base: this memory.stat if it was read. */
	s->has_stat = judged;
	if (stuck != s->stuck) {
		s->stuck = stuck;
		if (stuck)
			s->entered++;
		signal_fd(s);
		warn = stuck && !s->warned;
		s->warned |= stuck;
	}
	pthread_mutex_unlock(&s->lock);
	if (warn)
		mri_log(&g->ctx->log, MR_LOG_WARNING,
			"%s: stuck at memory.high: %" PRIu64 " high events/s, "
			"no max or oom, PSI full %.1f %%, %.1f MiB that "
			"reclaim cannot take (no usable swap) under a high of "
			"%.1f MiB; raise memory.high or give the group swap",
			g->path, fig.high_events_per_s, fig.full_ppm / 1e4,
			mib(in.unreclaimable_bytes), mib(in.high_bytes));
}

MR_EXPORT int mr_group_conditions_fd(mr_group_t *g)
{
	struct mri_stuck *s;
	int r;

	if (!g)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	s = &g->stuck;
	pthread_mutex_lock(&s->lock);
	if (s->fd < 0) {
		mri_fd_begin();
		r = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		r = mri_fd_end(r < 0 ? -errno : r);
		if (r >= 0) {
			s->fd = r;
			/* A condition already on: readable at once. */
			if (s->stuck)
				signal_fd(s);
		}
	}
	r = s->fd;
	pthread_mutex_unlock(&s->lock);
	return r;
}

MR_EXPORT int mr_group_read_conditions(mr_group_t *g,
				       struct mr_conditions *out)
{
	struct mr_conditions full = { 0 };
	struct mri_stuck *s;
	uint64_t drain;
	size_t size;
	int r;

	if (!g || !out ||
	    out->size < offsetof(struct mr_conditions, active) +
			sizeof(out->active))
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	size = out->size < sizeof(*out) ? out->size : sizeof(*out);
	s = &g->stuck;
	pthread_mutex_lock(&s->lock);
	if (s->fd >= 0 && read(s->fd, &drain, sizeof(drain)) < 0) {
		/* EAGAIN: nothing was pending. */
	}
	full.size = out->size;
	full.active = s->stuck ? MR_CONDITION_STUCK_HIGH : 0;
	full.stuck_high_entered = s->entered;
	full.high_events_per_s = s->fig.high_events_per_s;
	full.full_ppm = s->fig.full_ppm;
	full.unreclaimable_bytes = s->unreclaimable_bytes;
	full.high_bytes = s->high_bytes;
	full.direct_reclaim_bytes_per_s = s->direct_bytes_per_s;
	full.reclaim_efficiency_ppm = s->efficiency_ppm;
	pthread_mutex_unlock(&s->lock);
	memcpy(out, &full, size);
	return 0;
}
