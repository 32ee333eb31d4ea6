/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Write permissions learnt per control (see control.h). */
#include "config.h"

#include <errno.h>

#include "context.h"
#include "control.h"
#include "group.h"
#include "log.h"

static const char *const control_names[MR_NCONTROLS] = {
	[MR_CONTROL_LIMIT] = "limit",
	[MR_CONTROL_HIGH] = "high",
	[MR_CONTROL_RECLAIM] = "reclaim",
	[MR_CONTROL_PSI_TRIGGER] = "PSI trigger",
};

int mri_control_refusal(int r)
{
	return r == -EACCES || r == -EPERM || r == -EROFS;
}

int mri_control_check(struct mr_group *g, int control)
{
	int s = atomic_load(&g->control_state[control]);

	return mri_control_refusal(s) ? s : 0;
}

int mri_control_learn(struct mr_group *g, int control, int r)
{
	int expected = 0;

	if (r >= 0) {
		atomic_compare_exchange_strong(&g->control_state[control],
					       &expected, 1);
	} else if (r == -EOPNOTSUPP) {
		/* Not a refusal: the next call asks again (a cgroup2 twin
		 * may appear), but the state says there is none now. */
		atomic_compare_exchange_strong(&g->control_state[control],
					       &expected, r);
	} else if (mri_control_refusal(r)) {
		/* The first refusal is kept; a writable one that is refused
		 * later (permissions changed) is refused from then on. */
		if (atomic_exchange(&g->control_state[control], r) != r)
			mri_log(&g->ctx->log, MR_LOG_WARNING,
				"%s: writing its %s was refused (%s); not "
				"tried again by this handle%s", g->path,
				control_names[control], mr_strerror(r),
				control == MR_CONTROL_RECLAIM ?
				": statistics and events only" : "");
	}
	return r;
}

MR_EXPORT int mr_group_control_state(mr_group_t *g, int control)
{
	if (!g || control < 0 || control >= MR_NCONTROLS)
		return -EINVAL;
	switch (control) {
	case MR_CONTROL_RECLAIM:
		if (!(g->be->caps & MRI_CAP_RECLAIM))
			return -EOPNOTSUPP;
		break;
	case MR_CONTROL_LIMIT:
	case MR_CONTROL_HIGH:
		if (!g->be->write_limit)
			return -EOPNOTSUPP;
		break;
	case MR_CONTROL_PSI_TRIGGER:
		if (!g->be->psi_trigger_open)
			return -EOPNOTSUPP;
		break;
	}
	return atomic_load(&g->control_state[control]);
}
