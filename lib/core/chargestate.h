/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The allocator fast path's state in a group: the policy latch, the thread
 * slots, the estimate, and the slow side that arms and refreshes them
 * (lib/core/chargestate.c). The hot side, mr_group_charge() and its kin, is
 * lib/core/charge.c; the knobs it reads are published by lib/core/knobs.c.
 */
#ifndef MR_CHARGESTATE_H
#define MR_CHARGESTATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memreclaim.h"

struct mr_group;
struct mri_policy;

/* The fast path's form of a group's knobs (built from struct mri_policy
 * by mri_charge_publish()). Only 64-bit words, so that the latch's readers
 * copy it word by word with relaxed atomic loads. */
struct mri_charge_policy {
	uint64_t kind;                /* enum mr_throttle_kind */
	uint64_t max_delay_ns;
	uint64_t scale_ns;
	uint64_t doubling_ppm;
	uint64_t npoints;
	uint64_t high_bytes;          /* MR_HIGH_FROM_BACKEND, or kept */
	uint64_t thp_policy;          /* enum mr_thp_policy */
	uint64_t budget_ns;
	uint64_t margin_bytes;        /* the group's margin */
	uint64_t margin_ppm;
	uint64_t margin_adaptive;     /* 1: adaptive_margin_bytes instead */
	struct mr_throttle_point points[MR_THROTTLE_MAX_POINTS];
};

/* One thread's stock and counters in a group, or (the last slot of the
 * array) those shared by every thread without one. A slot's owner writes
 * it with plain relaxed load and store pairs; the shared slot is written
 * with atomic read-modify-writes; readers fold both with relaxed loads. */
struct mri_charge_slot {
	_Atomic uintptr_t owner;      /* the owner's token; 0: free */
	_Atomic uint64_t stock_bytes; /* drawn and not yet charged */
	_Atomic uint64_t charges;     /* GO: those not counted below */
	_Atomic uint64_t uncharges;
	_Atomic uint64_t delayed;
	_Atomic uint64_t reclaim;
	_Atomic uint64_t refused;
	_Atomic uint64_t delay_ns;
	_Atomic uint64_t charged_bytes;
	_Atomic uint64_t uncharged_bytes;
	_Atomic uint64_t batches;
	_Atomic uint64_t stock_returns;
} __attribute__((aligned(64)));

/* What the fast path needs once a group is used by it: the policy latch
 * and the thread slots, about 12 KiB, allocated when the group is armed
 * (or a setter of the fast path is called), so that a group opened for
 * anything else costs none of it (docs/PERFORMANCE.md, Scale). */
struct mri_charge_state {
	/* The policy latch (include/linux/seqlock.h, seqcount_latch_t):
	 * readers take latch[seq & 1]; the writer updates latch[0] while seq
	 * is odd, then latch[1] while it is even, so one copy is always
	 * whole, even for a signal handler that interrupted the writer. */
	_Atomic uint64_t latch_seq;
	struct mri_charge_policy latch[2];
	/* MR_CHARGE_THREAD_SLOTS owned slots, then the shared one. */
	struct mri_charge_slot slots[MR_CHARGE_THREAD_SLOTS + 1];
};

struct mri_charge {
	/* Identifies the group in threads' caches; never reused, unlike the
	 * group's address. */
	uint64_t key;
	/* Set once armed: the state exists (release after the state). */
	atomic_bool armed;
	/* The estimate: usage at the last refresh plus the net bytes drawn
	 * since (signed: uncharges may exceed the draws). */
	_Atomic uint64_t usage_bytes;
	_Atomic int64_t drawn_bytes;
	/* The floor of the estimate: base_bytes (what the group held at the
	 * last full refresh that reclaim cannot free and the fast path did
	 * not charge) plus live_bytes (the net bytes drawn since arming,
	 * never reset), so that charges not yet touched, which the kernel's
	 * usage does not show, are not forgotten at a usage refresh. */
	_Atomic uint64_t base_bytes;
	_Atomic int64_t live_bytes;
	_Atomic uint64_t usage_ns;    /* time of the last usage refresh */
	atomic_flag usage_claim;      /* held by the one thread reading it */
	_Atomic uint64_t usage_refreshes;
	_Atomic uint64_t refresh_errors;
	/* The slow snapshot: binding limit, backend high, clean page cache,
	 * and the anonymous memory reclaim may swap out (lib/core/policy.h: 0
	 * without swap or with swappiness 0). */
	_Atomic uint64_t limit_bytes;
	_Atomic uint64_t backend_high_bytes;
	_Atomic uint64_t reclaimable_bytes;
	_Atomic uint64_t swappable_bytes;
	_Atomic uint64_t limits_ns;
	_Atomic uint64_t limits_refreshes;
	/* An adaptive margin's size in force (lib/core/adaptive.c). */
	_Atomic uint64_t adaptive_margin_bytes;
	/* mr_group_thp_advise() answers of small pages (rare: one atomic
	 * add, no slot). */
	_Atomic uint64_t thp_fallbacks;
	/* Serialises writers: creating the state, the latch, arming and
	 * refreshes. Taken after the group's policy_lock when both are
	 * (lib/core/knobs.c). */
	pthread_mutex_t lock;
	/* NULL until the group is first armed or set up; then fixed until
	 * the group is freed. */
	struct mri_charge_state *_Atomic state;
};

/* The group's state, or NULL before the first arming or setter. */
static inline struct mri_charge_state *mri_charge_state(struct mri_charge *c)
{
	return atomic_load_explicit(&c->state, memory_order_acquire);
}

/* value + delta, clamped at 0 and at UINT64_MAX. */
static inline uint64_t mri_add_signed(uint64_t value, int64_t delta)
{
	if (delta < 0)
		return (uint64_t)-delta > value ? 0 : value - (uint64_t)-delta;
	return value > UINT64_MAX - (uint64_t)delta ? UINT64_MAX :
	       value + (uint64_t)delta;
}

/* The estimate: the usage read plus what was drawn since, and never less
 * than the floor (struct mri_charge: base_bytes + live_bytes). */
static inline uint64_t mri_charge_estimate(struct mri_charge *c,
					   int64_t drawn, int64_t live)
{
	uint64_t est = mri_add_signed(atomic_load_explicit(&c->usage_bytes,
						memory_order_relaxed), drawn);
	uint64_t floor = mri_add_signed(atomic_load_explicit(&c->base_bytes,
						memory_order_relaxed), live);

	return est > floor ? est : floor;
}

static inline uint64_t mri_charge_estimate_now(struct mri_charge *c)
{
	return mri_charge_estimate(c, atomic_load_explicit(&c->drawn_bytes,
						memory_order_relaxed),
				   atomic_load_explicit(&c->live_bytes,
							memory_order_relaxed));
}

/* Sets up / tears down the state of a new / freed group. init allocates
 * nothing and returns 0; fini frees the state if one was made. */
int mri_charge_init(struct mri_charge *c);
void mri_charge_fini(struct mri_charge *c);

/* Copies the policy out of the latch: no lock, no registration, safe in a
 * signal handler that interrupted the writer (the benchmark measures it
 * beside liburcu's read sides). The default policy before the group has
 * a state. */
void mri_charge_policy_read(struct mri_charge *c,
			    struct mri_charge_policy *out);

/* Arms the group for the fast path if it is not yet: makes the state with
 * the group's published knobs, reads limits, memory.stat and usage. May
 * wait for a v1 reclaim step (read_limits) and for a charge reading usage.
 * Returns 0 at once when armed; else 0, -ENOMEM, or the backend's error
 * (nothing armed then). */
int mri_charge_arm(struct mr_group *g);

/* Publishes the fast path's form of a policy just made current
 * (lib/core/knobs.c, under the group's policy_lock) to the latch, when
 * the group has a state; a state made later reads the current policy
 * itself. */
void mri_charge_publish(struct mr_group *g, const struct mri_policy *p);

/* Reads usage again if MR_CHARGE_USAGE_REFRESH_NS has passed since the last
 * read; one thread at a time (the one that takes the claim), the others go
 * on with the old value. Returns -ENOENT when the cgroup is gone, else 0
 * (another failure keeps the old usage, and the next batch retries). */
int mri_charge_refresh_usage(struct mr_group *g);

/* Publishes a limits snapshot read elsewhere (mr_group_read_limits(), the
 * worker) to the fast path, which never reads limits itself. */
void mri_charge_note_limits(struct mr_group *g, const struct mr_limits *l);

/* After mr_group_reclaim() freed memory: a group armed for the fast path
 * reads its usage, limits and memory.stat again, so that a charge answered
 * MR_CHARGE_RECLAIM and retried sees what the reclaim did. Errors are
 * left to the next refresh. */
void mri_charge_after_reclaim(struct mr_group *g);

#endif /* MR_CHARGESTATE_H */
