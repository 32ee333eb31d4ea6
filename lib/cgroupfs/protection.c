/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Effective memory.low and memory.min (lib/cgroupfs/protection.h). */
#include "config.h"

#include "protection.h"

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t mri_effective_protection(uint64_t usage, uint64_t parent_usage,
				  uint64_t setting, uint64_t parent_effective,
				  uint64_t siblings_protected, bool recursive)
{
	uint64_t protected = min_u64(usage, setting), ep;
	unsigned __int128 unclaimed;

	/* The children claim, and use, more than the parent is given:
	 * each gets a share in proportion to its protected usage. */
	if (siblings_protected > parent_effective)
		return (uint64_t)((unsigned __int128)protected *
				  parent_effective / siblings_protected);
	ep = protected;
	if (!recursive)
		return ep;
	/* memory_recursiveprot: what the children leave unclaimed of the
	 * parent's protection goes to each in proportion to its usage
	 * beyond its own protection. Both usages are checked against the
	 * protected values: the kernel reads them at different times. */
	if (parent_effective > siblings_protected &&
	    parent_usage > siblings_protected && usage > protected) {
		unclaimed = (unsigned __int128)(parent_effective -
						siblings_protected) *
			    (usage - protected) /
			    (parent_usage - siblings_protected);
		ep += (uint64_t)unclaimed;
	}
	return ep;
}
