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

/* Opens the pressure file `name` relative to dirfd (O_RDWR | O_NONBLOCK |
 * O_CLOEXEC, through mri_openat()) and writes the trigger
 * "some|full STALL_US WINDOW_US\n" (the newline is part of the write:
 * the kernel overwrites the write's last byte). Returns the fd, which is
 * the caller's and no longer tracked (lib/core/fds.h), or the
 * negative errno of the open or the write (fd closed); EOPNOTSUPP of the
 * open/write is -EOPNOTSUPP; ENODEV/ENOENT is -ENOENT. */
int mri_psi_trigger_open(int dirfd, const char *name, int kind,
			 uint64_t stall_us, uint64_t window_us);

#endif /* MR_PSI_H */
