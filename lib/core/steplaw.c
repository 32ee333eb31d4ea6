/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proactive controller's step law: lib/core/steplaw.h. */
#include "steplaw.h"

#include <string.h>

void mri_steplaw_init(struct mri_steplaw *s)
{
	memset(s, 0, sizeof(*s));
}

/* max(now, held x decay) */
static double hold(double held, double now)
{
	double decayed = held * (MRI_STEPLAW_DECAY_PPM / 1e6);

	return now > decayed ? now : decayed;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* The refault ratio of refault_bytes in an interval: over steal_bytes,
 * what reclaim took in it and the one before; with nothing taken, over
 * the group's usage (refaults of another reclaim's pages: the kernel's,
 * another manager's; as many as refault_ppm of the group per interval is
 * a group that thrashes on its own). In [0, 1]. */
static double ratio_of(uint64_t refault_bytes, uint64_t steal_bytes,
		       uint64_t usage_bytes)
{
	if (steal_bytes)
		return clamp01((double)refault_bytes / (double)steal_bytes);
	if (usage_bytes)
		return clamp01((double)refault_bytes / (double)usage_bytes);
	return refault_bytes ? 1.0 : 0.0;
}

/* max(0, 1 - q) */
static double room_left(double q)
{
	return q < 1 ? 1 - q : 0;
}

void mri_steplaw_update(struct mri_steplaw *s,
			const struct mri_steplaw_params *p,
			const struct mri_steplaw_sample *x,
			struct mri_steplaw_decision *d)
{
	uint64_t room, steal = x->steal_bytes + s->prev_steal_bytes;
	uint64_t reclaimable = x->file_bytes + x->anon_bytes, anon_refaults;
	double ppm = 1e6 / p->refault_ppm, weight, step;

	memset(d, 0, sizeof(*d));
	d->refault_ratio_ppm = (uint32_t)(ratio_of(x->refault_file_bytes +
						   x->refault_anon_bytes,
						   steal, x->usage_bytes) *
					  1e6 + 0.5);
	/* Steps that took no anonymous memory: the anonymous share is
	 * judged by every refault they bought (steplaw.h). */
	anon_refaults = x->refault_anon_bytes;
	if (x->anon_steal_known && steal &&
	    !x->anon_steal_bytes && !s->prev_anon_steal_bytes)
		anon_refaults += x->refault_file_bytes;
	s->prev_steal_bytes = x->steal_bytes;
	s->prev_anon_steal_bytes = x->anon_steal_known ?
				   x->anon_steal_bytes : 0;
	s->pressure = hold(s->pressure, (double)x->stall_ns /
				       (double)p->target_stall_ns);
	s->refaults_file = hold(s->refaults_file,
				ratio_of(x->refault_file_bytes, steal,
					 x->usage_bytes) * ppm);
	s->refaults_anon = hold(s->refaults_anon,
				ratio_of(anon_refaults, steal,
					 x->usage_bytes) * ppm);

	room = x->usage_bytes > x->floor_bytes ?
	       x->usage_bytes - x->floor_bytes : 0;
	if (room > reclaimable)
		room = reclaimable;
	d->target_bytes = x->usage_bytes > x->floor_bytes ? x->usage_bytes :
			  x->floor_bytes;
	if (s->pressure >= 1) {
		d->hold = MRI_HOLD_PRESSURE;
		return;
	}
	/* Each kind's room by its own refault hold (steplaw.h). With
	 * nothing reclaimable, the larger hold stands for both. */
	if (reclaimable)
		weight = ((double)x->file_bytes *
			  room_left(s->refaults_file) +
			  (double)x->anon_bytes *
			  room_left(s->refaults_anon)) / (double)reclaimable;
	else
		weight = room_left(s->refaults_file > s->refaults_anon ?
				   s->refaults_file : s->refaults_anon);
	if (weight <= 0) {
		d->hold = MRI_HOLD_REFAULTS;
		return;
	}
	step = (double)p->step_ppm / 1e6 * (1 - s->pressure) * weight;
	d->step_bytes = (uint64_t)(step * (double)room);
	if (d->step_bytes < MRI_STEPLAW_MIN_STEP_BYTES) {
		d->step_bytes = 0;
		d->hold = MRI_HOLD_FLOOR;
		return;
	}
	d->step_ppm = (uint32_t)(step * 1e6 + 0.5);
	d->target_bytes = x->usage_bytes - d->step_bytes;
}
