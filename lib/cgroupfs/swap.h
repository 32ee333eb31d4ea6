/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's swap as the backends read it for struct mr_limits
 * (swap_free_bytes, swappiness): SwapFree of /proc/meminfo and
 * vm.swappiness. What reclaim makes of it is the policy's
 * (lib/core/policy.h, mri_swap_anon_reclaimable()).
 */
#ifndef MR_SWAP_H
#define MR_SWAP_H

#include <stdint.h>

#include "memreclaim.h"

/* Test-only: the files read for the host's free swap and vm.swappiness
 * (default "/proc/meminfo", "/proc/sys/vm/swappiness"). */
extern const char *mri_swap_meminfo;
extern const char *mri_swap_vm_swappiness;

/* The host's free swap: SwapFree of /proc/meminfo, in bytes (0: no swap
 * device, or all of it used). Returns 0 or a negative errno (-EIO: no
 * SwapFree line). Reads through the file-access table. */
int mri_swap_host_free(uint64_t *bytes);

/* vm.swappiness (0 .. 200). Returns 0 or a negative errno. */
int mri_swap_vm(uint32_t *swappiness);

#endif /* MR_SWAP_H */
