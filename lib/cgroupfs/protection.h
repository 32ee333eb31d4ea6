/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Effective memory.low and memory.min, computed as the kernel does
 * (Linux 6.1 mm/memcontrol.c, effective_protection() and
 * mem_cgroup_calculate_protection(); from 6.11 the same algorithm lives
 * in mm/page_counter.c, page_counter_calculate_protection()). Pure: the
 * cgroup2 backend reads the values, this computes.
 *
 * Every quantity is in pages, as the kernel counts them (page_counter):
 * the kernel divides pages by pages, and computing in bytes would round
 * differently.
 */
#ifndef MR_PROTECTION_H
#define MR_PROTECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* effective_protection() for one group:
 *  usage              the group's usage (page_counter_read(&memcg->memory))
 *  parent_usage       its parent's usage
 *  setting            its memory.low (or memory.min)
 *  parent_effective   its parent's effective low (or min)
 *  siblings_protected the parent's children_low_usage (children_min_usage):
 *                     the sum over the parent's children, the group
 *                     included, of min(child usage, child setting)
 *                     (mm/page_counter.c, propagate_protected_usage())
 *  recursive          the cgroup2 mount has memory_recursiveprot (5.7)
 * Intermediate products are computed in 128 bits. */
uint64_t mri_effective_protection(uint64_t usage, uint64_t parent_usage,
				  uint64_t setting, uint64_t parent_effective,
				  uint64_t siblings_protected, bool recursive);

#endif /* MR_PROTECTION_H */
