/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public headers compile alone, as C (this file) and as C++
 * (test-header-cxx.cc, which includes this one), with every warning. */
#include <memreclaim.h>
#include <memreclaim-sim.h>

#include <stdio.h>

int main(void)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat m = { .size = sizeof(m) };
	struct mr_reclaim_stats s = { .size = sizeof(s) };
	struct mr_sim_config c = { .size = sizeof(c) };
	int bad = 0;

	/* Snapshot structs begin with their size, so they can grow. */
	bad |= (void *)&l.size != (void *)&l;
	bad |= (void *)&m.size != (void *)&m;
	bad |= (void *)&s.size != (void *)&s;
	bad |= (void *)&c.size != (void *)&c;
	bad |= MR_UNLIMITED != UINT64_MAX;
	bad |= MR_SWAP_CLUSTER_MAX_BYTES != 128 * 1024;
	if (bad)
		fprintf(stderr, "header constants or layout changed\n");
	return bad;
}
