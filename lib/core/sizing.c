/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The adaptive margin's rule. The margin must absorb what the group
 * charges past the mark before the worker can see it (the overshoot it
 * measures in bytes at its wake-up) and while it reacts: charge rate x
 * reaction time x a safety factor (the 2011 memcg async reclaim's
 * watermark gap, sized from measurements instead of a constant).
 * Whether a margin is worth keeping at all is a second question: a
 * direct reclaim costs the charging task its CPU and its waits; moving
 * it to the worker removes the waits from the workload's path but not
 * the CPU, which a busy machine takes from the workload all the same,
 * and the margin's emptier cache brings refaults. The strength gate
 * below keeps the margin only while the stall it removes (the group's
 * PSI against the floor's where read, else the worker's own waits)
 * exceeds the CPU and refaults it adds.
 *
 * Where the backend cannot count what the workload reclaimed (cgroup v1
 * has no pgsteal, and its pgpgin counts charge events, not pages: a
 * large folio is one event, mm/memcontrol.c
 * mem_cgroup_charge_statistics()), the rate misses the charges that met
 * the limit; limit hits make the size double, it is held there for 32
 * intervals, and then comes back toward the measured size by at most a
 * tenth an interval.
 *
 * Convergence: the charge rate is an exponentially weighted mean (weight
 * 1/4), the reaction and the overshoot percentiles over a window, so
 * constant inputs give a constant size (or, after limit hits, one held
 * for 32 intervals and then falling by a tenth an interval toward it);
 * the strength moves by factors of 2 and only when
 * benefit and cost differ by more than the dead band (cost above benefit,
 * or benefit a quarter above cost), and both scale with the bytes freed,
 * so their ratio depends on the workload and on the margin's size, which
 * it favours (hence whole probes): it is driven to full or to 0 (or the
 * caller's least strength) and stays there, with no limit cycle. At 0
 * it probes at an exponentially growing period, so a workload that
 * changes is noticed and one that does not costs a probe every 256
 * intervals at most. The hysteresis is the economic order quantity of
 * two prices smoothed as the rate is (weight 1/4), the refaults priced
 * per byte kept empty, so a cache whose refaults grow with what is kept
 * empty gives a price that does not move with the hysteresis; it moves
 * only by more than a sixteenth, as the margin does.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "memreclaim.h"
#include "sizing.h"

uint64_t mri_sizing_u64(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
}

void mri_sizing_init(struct mri_sizing *s)
{
	memset(s, 0, sizeof(*s));
	s->reaction_ns = MRI_SIZING_PRIOR_REACTION_NS;
	s->strength_ppm = MRI_SIZING_FULL;
	s->probing = true;
	s->probe_after = MRI_SIZING_PROBE_AFTER;
}

static void window_note(struct mri_sizing_window *w, uint64_t v)
{
	if (v > w->interval_max)
		w->interval_max = v;
}

void mri_sizing_note_reaction(struct mri_sizing *s, uint64_t reaction_ns)
{
	window_note(&s->reactions, reaction_ns);
}

void mri_sizing_note_overshoot(struct mri_sizing *s, uint64_t over_bytes)
{
	window_note(&s->overshoots, over_bytes);
}

/* The interval's largest value enters the window, and the percentile is
 * taken again (nearest rank: of 32 values the second largest, of fewer
 * than 20 the largest); returns false for an interval that had none.
 * One an interval, not every value: the window is then a time (32 intervals,
 * half a minute at the default interval), not a count, which a worker
 * waking ten times a second would fill in three seconds; the reactions
 * that stall on writeback come in bursts seconds apart (the flusher's,
 * and reclaim's own, mm/vmscan.c reclaim_throttle()), and a margin sized
 * between two of them lets the next through. */
static bool window_end(struct mri_sizing_window *w)
{
	uint64_t sorted[MRI_SIZING_WINDOW], v;
	unsigned i, j, k;

	if (!w->interval_max)
		return false;
	w->v[w->next] = w->interval_max;
	w->interval_max = 0;
	w->next = (w->next + 1) % MRI_SIZING_WINDOW;
	if (w->n < MRI_SIZING_WINDOW)
		w->n++;
	memcpy(sorted, w->v, w->n * sizeof(sorted[0]));
	for (i = 1; i < w->n; i++) {
		v = sorted[i];
		for (j = i; j > 0 && sorted[j - 1] > v; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = v;
	}
	/* The nearest-rank 95th percentile: ceil(0.95 n). */
	k = (95 * w->n + 99) / 100;
	w->p95 = sorted[k - 1];
	return true;
}

static double ewma(double old, double sample, double weight)
{
	return old + (sample - old) * weight;
}

/* What refaults are measured against: the bytes charged where every
 * charge is seen; else (cgroup v1, whose charges that met the limit are
 * missed) the interval's seconds, which counts against the margin the
 * refaults of a workload that it speeds up. */
static double refault_base(const struct mri_sizing_sample *x)
{
	return x->charges_seen ? (double)x->charged_bytes :
	       (double)x->interval_ns / 1e9;
}

/* The bytes refaulted beyond what the group refaults with its margin at
 * the floor; before that is measured, the refaults in the share of the
 * limit the margin keeps empty. */
static double extra_refaults(const struct mri_sizing *s,
			     const struct mri_sizing_sample *x)
{
	double extra;

	if (!x->has_refaults || !x->margin_bytes)
		return 0;
	if (s->has_floor_refaults)
		extra = (double)x->refault_bytes -
			s->floor_refault_ratio * refault_base(x);
	else
		extra = (double)x->refault_bytes * (double)x->margin_bytes /
			(double)x->limit_bytes;
	return extra > 0 ? extra : 0;
}

/* Whether the interval's limit hits say the margin is too small. */
static bool too_small(const struct mri_sizing_sample *x)
{
	return x->has_hits && x->limit_hits > MRI_SIZING_HITS;
}

/* Whether the interval's reclaim is one to judge by: not while a probe
 * waits for its size (the margin was held at min_bytes, as in the first
 * interval, so what was freed is not the probe's), nor while a probe's
 * margin still lets charges meet the limit below its bound: it is not
 * yet the margin the rule would keep (on cgroup v1 the rate misses what
 * the workload reclaimed, and the size at a probe's start is the rate's
 * alone), and it doubles first. */
static bool judged(const struct mri_sizing *s,
		   const struct mri_sizing_params *p,
		   const struct mri_sizing_sample *x)
{
	if (!x->freed_bytes)
		return false;
	if (!s->probing)
		return true;
	return x->margin_bytes > p->min_bytes &&
	       (!too_small(x) || x->margin_bytes >= p->max_bytes ||
		x->margin_bytes >= x->limit_bytes / 2);
}

static void measure(struct mri_sizing *s, const struct mri_sizing_params *p,
		    const struct mri_sizing_sample *x)
{
	double rate, freed = (double)x->freed_bytes;
	uint64_t wait;

	rate = (double)x->charged_bytes * 1e9 / (double)x->interval_ns;
	s->rate_bytes_per_s = s->has_rate ? ewma(s->rate_bytes_per_s, rate,
						 0.25) : rate;
	s->has_rate = true;
	if (judged(s, p, x)) {
		/* Blocked, not running and not waiting for a CPU: what a
		 * direct reclaim would have stalled the workload for. */
		wait = x->wall_ns > x->cpu_ns + x->runq_ns ?
		       x->wall_ns - x->cpu_ns - x->runq_ns : 0;
		if (s->has_costs) {
			s->wait_ns_per_byte = ewma(s->wait_ns_per_byte,
						   (double)wait / freed, 0.5);
			s->cpu_ns_per_byte = ewma(s->cpu_ns_per_byte,
						  (double)x->cpu_ns / freed,
						  0.5);
		} else {
			s->wait_ns_per_byte = (double)wait / freed;
			s->cpu_ns_per_byte = (double)x->cpu_ns / freed;
		}
		s->has_costs = true;
	}
	/* The hysteresis's prices: a pass's CPU (the interval's CPU over
	 * the passes that freed something: those that freed nothing are
	 * part of what the passes cost), and the refaults of the bytes
	 * kept empty on average (the margin, and half the hysteresis),
	 * each refaulted byte priced as in the gate, in the intervals it
	 * judges. */
	if (x->passes && x->cpu_ns) {
		rate = (double)x->cpu_ns / x->passes;
		s->pass_cpu_ns = s->has_pass_cpu ?
				 ewma(s->pass_cpu_ns, rate, 0.25) : rate;
		s->has_pass_cpu = true;
	}
	if (judged(s, p, x) && x->has_refaults && x->margin_bytes) {
		rate = extra_refaults(s, x) *
		       (s->cpu_ns_per_byte + s->wait_ns_per_byte) * 1e9 /
		       (double)x->interval_ns /
		       ((double)x->margin_bytes +
			(double)x->hysteresis_bytes / 2);
		s->empty_ns_per_byte_s = s->has_empty_cost ?
			ewma(s->empty_ns_per_byte_s, rate, 0.25) : rate;
		s->has_empty_cost = true;
	}
	/* The refaults and the stall of the floor: the margin did nothing
	 * this interval. */
	if (x->margin_bytes > p->min_bytes || x->freed_bytes)
		return;
	if (x->has_refaults && refault_base(x) > 0) {
		rate = (double)x->refault_bytes / refault_base(x);
		s->floor_refault_ratio = s->has_floor_refaults ?
			ewma(s->floor_refault_ratio, rate, 0.25) : rate;
		s->has_floor_refaults = true;
	}
	/* A floor that did not meet the limit shows nothing of the direct
	 * reclaim a margin would remove: the interval after a margin is in
	 * force (usage climbing back to the limit, as at the start of a call
	 * that replaces another margin) would count as a stall-free floor. */
	if (x->has_stall && !(x->has_hits && !too_small(x))) {
		rate = (double)x->stall_ns * 1e9 / (double)x->interval_ns;
		s->floor_stall_ns_per_s = s->has_floor_stall ?
			ewma(s->floor_stall_ns_per_s, rate, 0.25) : rate;
		s->has_floor_stall = true;
	}
}

/* What the interval's margin took out of the workload's path. Where the
 * group's PSI is read, the stall it removed: the floor's stall over the
 * interval less the interval's (memory PSI some counts the time a task
 * of the group spent in direct reclaim, mm/vmscan.c
 * try_to_free_mem_cgroup_pages() under psi_memstall_enter(), and waiting
 * on the refault of a page of its working set, mm/filemap.c
 * folio_wait_bit_common(); so a margin whose emptied cache comes back as
 * thrashing earns less). Otherwise the waits the worker's reclaim
 * blocked for, as what a direct reclaim of those bytes would have
 * stalled the workload. */
static double benefit(const struct mri_sizing *s,
		      const struct mri_sizing_sample *x)
{
	double floor;

	if (!x->has_stall || !s->has_floor_stall)
		return (double)x->freed_bytes * s->wait_ns_per_byte;
	floor = s->floor_stall_ns_per_s * (double)x->interval_ns / 1e9;
	return floor > (double)x->stall_ns ? floor - (double)x->stall_ns : 0;
}

/* Halves or doubles the strength by the interval's benefit and cost
 * (a probe that does not pay ends at 0), never below the caller's
 * least; probes from 0. Returns true when it changed. */
static bool judge(struct mri_sizing *s, const struct mri_sizing_params *p,
		  const struct mri_sizing_sample *x)
{
	uint32_t old = s->strength_ppm;
	double freed = (double)x->freed_bytes;

	s->benefit_ns = 0;
	s->cost_ns = 0;
	if (judged(s, p, x) && s->has_costs) {
		s->benefit_ns = benefit(s, x);
		s->cost_ns = freed * s->cpu_ns_per_byte +
			     extra_refaults(s, x) *
			     (s->cpu_ns_per_byte + s->wait_ns_per_byte);
		if (s->cost_ns > s->benefit_ns) {
			s->strength_ppm = s->probing ? 0 : s->strength_ppm / 2;
			if (s->strength_ppm < MRI_SIZING_FLOOR)
				s->strength_ppm = 0;
		} else {
			if (s->benefit_ns > 1.25 * s->cost_ns)
				s->strength_ppm =
					s->strength_ppm * 2 > MRI_SIZING_FULL ?
					MRI_SIZING_FULL : s->strength_ppm * 2;
			/* It paid (a probe in the dead band too). */
			if (s->probing || s->benefit_ns > 1.25 * s->cost_ns)
				s->probe_after = MRI_SIZING_PROBE_AFTER;
		}
		s->probing = false;
	}
	if (s->strength_ppm < p->min_strength_ppm)
		s->strength_ppm = p->min_strength_ppm;
	if (s->strength_ppm) {
		s->off_intervals = 0;
	} else if (++s->off_intervals >= s->probe_after) {
		s->strength_ppm = MRI_SIZING_FULL;
		s->probing = true;
		/* Judged on its own interval, not on the costs of the last
		 * probe, up to 256 intervals old; and its hysteresis is the
		 * least until it has measured the prices again, not the
		 * order the last probe's workload called for. */
		s->has_costs = false;
		s->has_pass_cpu = s->has_empty_cost = false;
		s->pass_cpu_ns = s->empty_ns_per_byte_s = 0;
		s->off_intervals = 0;
		s->probe_after = s->probe_after * 2 > MRI_SIZING_PROBE_AFTER_MAX ?
				 MRI_SIZING_PROBE_AFTER_MAX :
				 s->probe_after * 2;
	}
	return s->strength_ppm != old;
}

/*
 * The hysteresis for a margin of m bytes (lo and hi are of it): how much
 * each of the worker's passes frees below the mark. Its economic order
 * quantity (F. W. Harris, "How many parts to make at once", 1913): at a
 * charge rate of R bytes a second, passes of h bytes come R / h times a
 * second at K each (the worker's CPU per pass), and the group keeps
 * m + h / 2 bytes empty on average at H each a second (their refaults);
 * R K / h + H h / 2 is least at h = sqrt(2 R K / H). K is the whole
 * pass's CPU, its fixed price (a v1 step's limit writes and reads, the
 * wake-up) and the part that grows with h alike, so h errs on the large
 * side; the gate weighs the refaults it brings all the same. A cache that
 * is streamed, not reused, refaults nothing whatever is kept empty
 * (H = 0): the bound. Between lo, the margin times the caller's
 * hysteresis_ppm (what it is until both prices are measured), and hi
 * (>= lo), max_bytes, the margin's own bound.
 */
static uint64_t eoq_hysteresis(const struct mri_sizing *s, uint64_t lo,
			       uint64_t hi)
{
	double h;

	if (!s->has_rate || !s->has_pass_cpu || !s->has_empty_cost)
		return lo;
	if (s->empty_ns_per_byte_s <= 0)
		return hi;
	h = sqrt(2 * s->rate_bytes_per_s * s->pass_cpu_ns /
		 s->empty_ns_per_byte_s);
	return h <= (double)lo ? lo : h >= (double)hi ? hi : (uint64_t)h;
}

/* Whether a new size is within a sixteenth of the old one. */
static bool within_16th(uint64_t now, uint64_t old)
{
	return now < old + old / 16 && now + old / 16 > old;
}

bool mri_sizing_update(struct mri_sizing *s,
		       const struct mri_sizing_params *p,
		       const struct mri_sizing_sample *x)
{
	double sized, grown, margin;
	uint64_t m, room, h, lo, old_m = s->margin_bytes;
	uint64_t old_h = s->hysteresis_bytes;
	bool changed, hit;

	if (window_end(&s->reactions))
		s->reaction_ns = s->reactions.p95;
	if (window_end(&s->overshoots))
		s->overshoot_bytes = s->overshoots.p95;
	measure(s, p, x);
	changed = judge(s, p, x);
	/* What the group charged past the mark before the worker saw it,
	 * measured in bytes (no safety: it is not the rate's estimate),
	 * and what it charges while the worker reacts. */
	sized = (double)s->overshoot_bytes +
		(double)p->safety_ppm / 1e6 * s->rate_bytes_per_s *
		(double)s->reaction_ns / 1e9;
	/* Limit hits while a margin was wanted: the charges reclaimed in
	 * the workload are not in the rate (cgroup v1 counts no reclaimed
	 * bytes), nor a crossing the kernel told late, so the size
	 * doubles, from one SWAP_CLUSTER_MAX batch. The size they doubled
	 * to is held (the measured one wins where larger) for as many
	 * intervals as the window keeps a slow reaction, while the gate
	 * keeps a margin at all; only then does the size fall toward the
	 * measured one, by a tenth an interval at most. Falling at once,
	 * it came back within seconds to where the hits began, and on
	 * cgroup v1 each new size is a threshold registration, during
	 * which the worker waits in the kernel (synchronize_rcu(),
	 * mm/memcontrol-v1.c) and watches nothing. */
	hit = too_small(x) && s->strength_ppm;
	if (hit) {
		grown = 2.0 * (double)s->sized_bytes;
		if (grown < (double)MR_SWAP_CLUSTER_MAX_BYTES)
			grown = (double)MR_SWAP_CLUSTER_MAX_BYTES;
		s->held_bytes = grown >= (double)p->max_bytes ?
				p->max_bytes : (uint64_t)grown;
		/* 32 intervals with this one. */
		s->hold_intervals = MRI_SIZING_WINDOW - 1;
	} else if (s->hold_intervals && s->strength_ppm) {
		s->hold_intervals--;
		grown = (double)(s->held_bytes < p->max_bytes ?
				 s->held_bytes : p->max_bytes);
	} else {
		s->hold_intervals = 0; /* off: nothing to hold */
		grown = 0.9 * (double)s->sized_bytes;
	}
	if (grown > sized)
		sized = grown;
	s->sized_bytes = sized >= (double)p->max_bytes ? p->max_bytes :
			 (uint64_t)sized;
	margin = (double)s->sized_bytes * s->strength_ppm / MRI_SIZING_FULL;
	m = margin >= (double)p->max_bytes ? p->max_bytes : (uint64_t)margin;
	if (m < p->min_bytes)
		m = p->min_bytes;
	/* A margin below a page cannot be kept (mm/page_counter.c counts
	 * whole pages); one at or above half the limit would empty it. */
	if (m < MR_MARGIN_MIN_BYTES)
		m = 0;
	if (m > x->limit_bytes / 2)
		m = x->limit_bytes / 2;
	/* A margin that moved by less than a sixteenth stays as it was: on
	 * cgroup v1 each new mark is a threshold registration, which waits
	 * for an RCU grace period in the kernel. Not at a bound, nor where
	 * the old one is out of those of a limit that fell (max_bytes of
	 * max_ppm, half the limit). */
	if (s->margin_bytes && m && m != p->min_bytes && m != p->max_bytes &&
	    s->margin_bytes <= p->max_bytes &&
	    s->margin_bytes <= x->limit_bytes / 2 &&
	    within_16th(m, s->margin_bytes))
		m = s->margin_bytes;
	/* The hysteresis too moves only by more than a sixteenth, so that
	 * the log and the statistics show decisions, not the smoothing's
	 * noise; but to either bound at once, as the margin does, and never
	 * stays where it is out of them (the margin, or max_bytes with the
	 * limit, moved). lo <= m <= max_bytes. */
	lo = (uint64_t)((unsigned __int128)m * p->hysteresis_ppm / 1000000);
	h = eoq_hysteresis(s, lo, p->max_bytes);
	if (h != lo && h != p->max_bytes && old_h >= lo &&
	    old_h <= p->max_bytes && within_16th(h, old_h))
		h = old_h;
	room = x->limit_bytes - m;
	if (h > room / 2)
		h = room / 2;
	s->margin_bytes = m;
	s->hysteresis_bytes = m ? h : 0;
	return changed || s->margin_bytes != old_m ||
	       s->hysteresis_bytes != old_h;
}
