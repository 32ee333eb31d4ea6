/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pressure stall information of a cgroup's memory.pressure file
 * (Documentation/accounting/psi.rst, kernel/sched/psi.c): parsing the
 * file, validating and arming triggers. Shared by the cgroup2 backend and
 * the cgroup1 backend's hybrid twin.
 */
#ifndef MR_PSI_H
#define MR_PSI_H

#include <stdint.h>

#include "memreclaim.h"

/* The kernel's trigger window bounds (kernel/sched/psi.c, WINDOW_MIN_US
 * and WINDOW_MAX_US) and the unprivileged window unit (Linux 6.4,
 * d82caa273565 "sched/psi: Allow unprivileged polling of N*2s period"). */
#define MRI_PSI_WINDOW_MIN_NS 500000000ULL
#define MRI_PSI_WINDOW_MAX_NS 10000000000ULL
#define MRI_PSI_UNPRIV_UNIT_NS 2000000000ULL

/* Parses the text of a pressure file into *out (whole struct written,
 * out->size set): lines "some avg10=A avg60=B avg300=C total=T" and
 * "full ...", percentages with two decimals converted to ppm, total in
 * us. Unknown keys and unknown lines are ignored; a missing full line
 * leaves MR_PRESSURE_FULL clear. Returns 0, -EOPNOTSUPP for an empty
 * text (PSI disabled), -EIO for a malformed some/full line. Pure. */
int mri_psi_parse(const char *buf, struct mr_pressure *out);

/* Reads a pressure file from a kept fd (through mri_fops) and parses it.
 * EOPNOTSUPP from the read, or an empty file, is -EOPNOTSUPP; ENODEV or
 * ENOENT is -ENOENT. */
int mri_psi_read(int fd, struct mr_pressure *out);

/* Validates a trigger as mr_group_psi_trigger_open() documents, in ns
 * (multiples of 1000; 0 < stall <= window; 500 ms <= window <= 10 s;
 * window a multiple of 2 s when the process lacks CAP_SYS_RESOURCE,
 * checked with capget or /proc/self/status CapEff). Returns 0 or -EINVAL.
 * Pure but for the capability check. */
int mri_psi_trigger_check(int kind, uint64_t stall_ns, uint64_t window_ns);

/* Opens the pressure file `name` relative to dirfd (O_RDWR | O_NONBLOCK |
 * O_CLOEXEC, through mri_openat()) and writes the trigger
 * "some|full STALL_US WINDOW_US\n" (the newline is part of the write:
 * the kernel overwrites the write's last byte). Returns the fd, which is
 * the caller's and no longer tracked (lib/fds.h), or the
 * negative errno of the open or the write (fd closed); EOPNOTSUPP of the
 * open/write is -EOPNOTSUPP; ENODEV/ENOENT is -ENOENT. */
int mri_psi_trigger_open(int dirfd, const char *name, int kind,
			 uint64_t stall_us, uint64_t window_us);

/* The capability probe mri_psi_trigger_check() asks: 1 when the process
 * has CAP_SYS_RESOURCE in its effective set, 0 when not, a negative errno
 * when it cannot tell (then treated as 0: the stricter rule). */
typedef int (*mri_psi_cap_probe_fn)(void);

/* The real probe (capget(2)). */
int mri_psi_has_sys_resource(void);

/* Test hook: replaces the probe (NULL: the real one), returns the
 * previous one. Not MT-safe: call it before any trigger is checked. */
mri_psi_cap_probe_fn mri_psi_cap_probe_set(mri_psi_cap_probe_fn fn);

#endif /* MR_PSI_H */
