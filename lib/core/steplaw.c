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

void mri_steplaw_update(struct mri_steplaw *s,
			const struct mri_steplaw_params *p,
			const struct mri_steplaw_sample *x,
			struct mri_steplaw_decision *d)
{
	uint64_t room, steal = x->steal_bytes + s->prev_steal_bytes;
	double ratio, step;

	memset(d, 0, sizeof(*d));
	/* Refaults against what reclaim took in this interval and the one
	 * before; refaults with nothing taken: the group thrashes. */
	if (steal)
		ratio = (double)x->refault_bytes / (double)steal;
	else
		ratio = x->refault_bytes ? 1.0 : 0.0;
	ratio = clamp01(ratio);
	d->refault_ratio_ppm = (uint32_t)(ratio * 1e6 + 0.5);
	s->prev_steal_bytes = x->steal_bytes;
	s->pressure = hold(s->pressure, (double)x->stall_ns /
				       (double)p->target_stall_ns);
	s->refaults = hold(s->refaults, ratio * 1e6 / p->refault_ppm);

	room = x->usage_bytes > x->floor_bytes ?
	       x->usage_bytes - x->floor_bytes : 0;
	if (room > x->reclaimable_bytes)
		room = x->reclaimable_bytes;
	d->target_bytes = x->usage_bytes > x->floor_bytes ? x->usage_bytes :
			  x->floor_bytes;
	if (s->pressure >= 1) {
		d->hold = MRI_HOLD_PRESSURE;
		return;
	}
	if (s->refaults >= 1) {
		d->hold = MRI_HOLD_REFAULTS;
		return;
	}
	step = (double)p->step_ppm / 1e6 * (1 - s->pressure) *
	       (1 - s->refaults);
	d->step_bytes = (uint64_t)(step * (double)room);
	if (d->step_bytes < MRI_STEPLAW_MIN_STEP_BYTES) {
		d->step_bytes = 0;
		d->hold = MRI_HOLD_FLOOR;
		return;
	}
	d->step_ppm = (uint32_t)(step * 1e6 + 0.5);
	d->target_bytes = x->usage_bytes - d->step_bytes;
}
