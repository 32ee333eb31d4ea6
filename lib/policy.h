/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy math's internal helpers (lib/policy.c), shared by the public
 * pure functions and the allocator fast path. */
#ifndef MR_POLICY_H
#define MR_POLICY_H

#include <stdint.h>

/* What a group at usage_bytes, after charge_bytes more, would stand above
 * limit_bytes - margin_bytes by (0 when at or below; a margin at or above
 * the limit leaves no room): the bytes to reclaim so that the charge fits
 * and usage ends at limit - margin. The sum saturates, no input
 * overflows. limit_bytes must not be MR_UNLIMITED. MT-safe,
 * async-signal-safe. */
uint64_t mri_shortfall_bytes(uint64_t usage_bytes, uint64_t charge_bytes,
			     uint64_t limit_bytes, uint64_t margin_bytes);

#endif /* MR_POLICY_H */
