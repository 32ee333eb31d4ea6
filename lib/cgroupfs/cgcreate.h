/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating, attaching to and removing memory cgroups through libcgroup
 * (lib/cgroupfs/cgcreate.c). Internal: declared here so tests can reach the error
 * table.
 */
#ifndef MR_CGCREATE_H
#define MR_CGCREATE_H

#include <stddef.h>

/* Translates a libcgroup return value into 0 or a negative errno: 0 stays
 * 0; each positive ECG* code maps to one fixed errno (the table in
 * cgcreate.c); ECGOTHER is unwrapped with cgroup_get_last_errno() of the
 * calling thread (-EIO if that is 0); a value below ECGROUPNOTCOMPILED is
 * taken as a plain positive errno; anything else is -EIO. MT-safe. */
int mri_cgroup_errno(int ecg);

#endif /* MR_CGCREATE_H */
