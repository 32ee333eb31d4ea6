/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rules of a PSI trigger (see psitrigger.h). */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "memreclaim.h"
#include "psitrigger.h"

int mri_psi_has_sys_resource(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	return (data[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &
		CAP_TO_MASK(CAP_SYS_RESOURCE)) != 0;
}

static mri_psi_cap_probe_fn cap_probe = mri_psi_has_sys_resource;

mri_psi_cap_probe_fn mri_psi_cap_probe_set(mri_psi_cap_probe_fn fn)
{
	mri_psi_cap_probe_fn old = cap_probe;

	cap_probe = fn ? fn : mri_psi_has_sys_resource;
	return old;
}

int mri_psi_trigger_check(int kind, uint64_t stall_ns, uint64_t window_ns)
{
	if (kind != MR_PSI_SOME && kind != MR_PSI_FULL)
		return -EINVAL;
	if (stall_ns % 1000 || window_ns % 1000)
		return -EINVAL;
	if (stall_ns == 0 || stall_ns > window_ns)
		return -EINVAL;
	if (window_ns < MRI_PSI_WINDOW_MIN_NS ||
	    window_ns > MRI_PSI_WINDOW_MAX_NS)
		return -EINVAL;
	/* The kernel checks the opener's effective capabilities
	 * (psi_trigger_create(), file->f_cred); a failed probe takes the
	 * stricter rule, which every kernel accepts. */
	if (window_ns % MRI_PSI_UNPRIV_UNIT_NS && cap_probe() != 1)
		return -EINVAL;
	return 0;
}


bool mri_psi_wakeup_real(struct mri_psi_armed *a, uint64_t total_us)
{
	bool real = total_us >= a->last_total_us &&
		    total_us - a->last_total_us >= a->stall_us;

	a->last_total_us = total_us;
	return real;
}
