/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules of a PSI trigger (lib/core/psitrigger.c), which the core checks
 * before a backend opens one (mr_group_psi_trigger_open()): the kernel's
 * psi_trigger_create() (kernel/sched/psi.c) refuses the others.
 */
#ifndef MR_PSITRIGGER_H
#define MR_PSITRIGGER_H

#include <stdbool.h>
#include <stdint.h>

/* The kernel's trigger window bounds (kernel/sched/psi.c, WINDOW_MIN_US
 * and WINDOW_MAX_US) and the unprivileged window unit (Linux 6.4,
 * d82caa273565 "sched/psi: Allow unprivileged polling of N*2s period"). */
#define MRI_PSI_WINDOW_MIN_NS 500000000ULL
#define MRI_PSI_WINDOW_MAX_NS 10000000000ULL
#define MRI_PSI_UNPRIV_UNIT_NS 2000000000ULL

/* Validates a trigger as mr_group_psi_trigger_open() documents, in ns
 * (multiples of 1000; 0 < stall <= window; 500 ms <= window <= 10 s;
 * window a multiple of 2 s when the process lacks CAP_SYS_RESOURCE,
 * checked with capget or /proc/self/status CapEff). Returns 0 or -EINVAL.
 * Pure but for the capability check. */
int mri_psi_trigger_check(int kind, uint64_t stall_ns, uint64_t window_ns);

/* The capability probe mri_psi_trigger_check() asks: 1 when the process
 * has CAP_SYS_RESOURCE in its effective set, 0 when not, a negative errno
 * when it cannot tell (then treated as 0: the stricter rule). */
typedef int (*mri_psi_cap_probe_fn)(void);

/* The real probe (capget(2)). */
int mri_psi_has_sys_resource(void);

/* Test hook: replaces the probe (NULL: the real one), returns the
 * previous one. Not MT-safe: call it before any trigger is checked. */
mri_psi_cap_probe_fn mri_psi_cap_probe_set(mri_psi_cap_probe_fn fn);

/*
 * A wake-up of an armed trigger, checked against the stall total
 * (mr_group_psi_trigger_confirm()). An unprivileged trigger (a window that
 * is a multiple of 2 s, Linux 6.4, d82caa273565) is updated by the
 * averaging worker against group->total[PSI_AVGS], but psi_trigger_create()
 * starts its window at group->total[PSI_POLL], which only the RT poll
 * worker of privileged triggers moves: on a group where none ran, the
 * first update sees the whole stall since boot as growth and signals at
 * once, and window_update() carries that growth on into the next window
 * as prev_growth ("psi: fix avg trigger being fired unexpectedly", posted
 * in February 2024 and again in July 2025). A wake-up is real when the
 * total grew by at least the trigger's stall since the last confirmed
 * sample (the arming, or the last wake-up checked): the kernel's window
 * of the wake-up lies within that span, so a real crossing always passes.
 */
struct mri_psi_armed {
	int fd;                  /* -1: free slot */
	int kind;                /* MR_PSI_SOME, MR_PSI_FULL */
	uint64_t stall_us;
	uint64_t last_total_us;  /* the total of `kind` at the last sample */
};

/* Triggers a group remembers for confirmation (mr_group_psi_trigger_confirm()):
 * beyond it, the oldest is forgotten and its wake-ups are taken as real. */
#define MRI_PSI_ARMED_MAX 8

/* Whether a wake-up of `a` with the stall total now at total_us is real
 * (see above); moves a's sample to total_us either way (a total that
 * fell, as a group recreated, is a new base). Pure. */
bool mri_psi_wakeup_real(struct mri_psi_armed *a, uint64_t total_us);

#endif /* MR_PSITRIGGER_H */
