/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The adaptive margin's rule (lib/core/sizing.c): how large a margin the
 * measurements of one interval call for, and whether it pays. Pure
 * functions on a state the caller keeps; the measuring side is
 * lib/core/adaptive.c. The rule is the one mr_group_set_margin_adaptive()
 * describes. */
#ifndef MR_SIZING_H
#define MR_SIZING_H

#include <stdbool.h>
#include <stdint.h>

/* The intervals whose longest reaction (and largest overshoot) the
 * percentile is taken over, and those a size limit hits grew is held. */
#define MRI_SIZING_WINDOW 32
/* The reaction time assumed until one is measured. */
#define MRI_SIZING_PRIOR_REACTION_NS 1000000ULL
/* Strength, in ppm: full, which is also the probe's and the first (a
 * margin's cost per byte falls with its size: each v1 step has a fixed
 * price, and a small margin's small steps find clean pages where a large
 * one's wait on writeback, so a fraction of the margin would judge a
 * dearer margin than the one the gate would keep), and the floor below
 * which it is 0. */
#define MRI_SIZING_FULL 1000000U
#define MRI_SIZING_FLOOR 62500U
/* Limit hits in an interval beyond those of one direct reclaim (the
 * charge of a batch and of the page itself both fail first,
 * mm/memcontrol.c try_charge_memcg()): the margin is too small. */
#define MRI_SIZING_HITS 2U
/* The worker's CPU after which a probe is decided without waiting for
 * the end of its interval (lib/core/adaptive.c). */
#define MRI_SIZING_PROBE_CPU_NS 20000000ULL
/* Intervals at strength 0 before the first probe, and at most. */
#define MRI_SIZING_PROBE_AFTER 8U
#define MRI_SIZING_PROBE_AFTER_MAX 256U

/* The caller's bounds, resolved against the limit in force. */
struct mri_sizing_params {
	uint64_t min_bytes;
	uint64_t max_bytes;        /* >= min_bytes */
	uint32_t safety_ppm;
	uint32_t hysteresis_ppm;
	uint32_t min_strength_ppm; /* the least the gate may leave */
};

/* What one interval measured. */
struct mri_sizing_sample {
	uint64_t interval_ns;      /* > 0 */
	uint64_t charged_bytes;    /* charged to the group in it */
	bool charges_seen;         /* the backend counts all reclaim, so
				      charged_bytes has every charge (not
				      cgroup v1: see lib/core/adaptive.c) */
	bool has_refaults;         /* the backend counts refaults */
	uint64_t refault_bytes;    /* workingset_refault_file growth */
	uint64_t freed_bytes;      /* the worker's reclaim in it */
	uint64_t cpu_ns;           /* the worker's CPU in that reclaim */
	uint64_t runq_ns;          /* its time waiting for a CPU */
	uint64_t wall_ns;          /* the worker's time in that reclaim */
	bool has_stall;            /* the backend has the group's PSI */
	uint64_t stall_ns;         /* memory PSI some total growth */
	bool has_hits;             /* the backend counts limit hits */
	uint64_t limit_hits;       /* charges that met the limit in it */
	uint64_t margin_bytes;     /* the margin in force over it */
	uint64_t hysteresis_bytes; /* the hysteresis in force over it */
	uint64_t limit_bytes;      /* the limit it was kept below */
	unsigned passes;           /* the worker's passes that freed
				      something (cpu_ns is of all) */
};

/* The largest value of the interval under way; the largest of each of
 * the last intervals that had one, a ring, and their 95th percentile. */
struct mri_sizing_window {
	uint64_t interval_max;
	uint64_t v[MRI_SIZING_WINDOW];
	unsigned n, next;
	uint64_t p95;
};

struct mri_sizing {
	/* Smoothed charge rate; none until the first interval. */
	double rate_bytes_per_s;
	bool has_rate;
	/* The worker's reactions (ns), from the crossing of the mark as the
	 * worker saw it to usage back at the mark; reaction_ns is their
	 * percentile, or MRI_SIZING_PRIOR_REACTION_NS before one. */
	struct mri_sizing_window reactions;
	uint64_t reaction_ns;
	/* What usage had above the mark when a pass answering the
	 * threshold's signal first read it (bytes): what the group charged
	 * past the mark before the worker could see it. overshoot_bytes is
	 * their percentile, 0 before one. */
	struct mri_sizing_window overshoots;
	uint64_t overshoot_bytes;
	/* Smoothed per byte the worker freed: its waits and its CPU. */
	double wait_ns_per_byte, cpu_ns_per_byte;
	bool has_costs;
	/* Refaults with the margin at its floor: per charged byte where the
	 * charges are seen, else per second. */
	double floor_refault_ratio;
	bool has_floor_refaults;
	/* The group's memory stall (PSI some) per second with the margin at
	 * its floor: the direct reclaim (and thrashing) a margin can take
	 * out of the workload's path. */
	double floor_stall_ns_per_s;
	bool has_floor_stall;
	/* The hysteresis's prices: the worker's CPU per pass that freed
	 * something, and what a byte kept empty costs a second in refaults
	 * (ns per byte-second), both smoothed; forgotten at a probe. */
	double pass_cpu_ns;
	bool has_pass_cpu;
	double empty_ns_per_byte_s;
	bool has_empty_cost;
	/* The last interval's estimates. */
	double benefit_ns, cost_ns;
	uint32_t strength_ppm;
	bool probing;              /* full strength on trial: the next
				      interval that frees decides it */
	unsigned off_intervals, probe_after;
	/* The size limit hits last doubled to, and the intervals it is
	 * still held. */
	uint64_t held_bytes;
	unsigned hold_intervals;
	/* The decision: overshoot + safety x rate x reaction, and what is
	 * in force. */
	uint64_t sized_bytes, margin_bytes, hysteresis_bytes;
};

/* One of the rule's figures (a rate, a price, an estimate in ns) as a
 * statistic: 0 for a negative one or NaN, UINT64_MAX for one beyond
 * uint64_t (converting such a double is undefined, C11 6.3.1.4). Pure. */
uint64_t mri_sizing_u64(double v);

/* A new state: the probe's strength, no measurement. */
void mri_sizing_init(struct mri_sizing *s);

/* Notes one reaction time (ns) of the interval under way: its longest
 * enters the window when the interval ends (mri_sizing_update()). */
void mri_sizing_note_reaction(struct mri_sizing *s, uint64_t reaction_ns);

/* Notes one overshoot (bytes) of the interval under way, as
 * mri_sizing_note_reaction(). */
void mri_sizing_note_overshoot(struct mri_sizing *s, uint64_t over_bytes);

/* Folds one interval's sample into s and decides the margin and the
 * hysteresis for the next: s->margin_bytes (0, or at least one page,
 * within p's bounds) and s->hysteresis_bytes (from the margin times
 * p->hysteresis_ppm up to p->max_bytes, and at most half of what lies
 * below limit - margin, which wins over the least; 0 with no margin).
 * Returns true when the strength, the margin or the hysteresis
 * changed. */
bool mri_sizing_update(struct mri_sizing *s,
		       const struct mri_sizing_params *p,
		       const struct mri_sizing_sample *x);

#endif /* MR_SIZING_H */
