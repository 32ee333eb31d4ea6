// SPDX-License-Identifier: LGPL-2.1-or-later
// The public headers as C++: extern "C", no C-only constructs.
#include <memreclaim.h>
#include <memreclaim-sim.h>

#include <cstdio>

int main()
{
	mr_limits l = {};
	l.size = sizeof(l);
	mr_sim_config c = {};
	c.size = sizeof(c);
	mr_sim_t *sim = nullptr;
	const char *v = mr_version();
	if (!v || l.size != sizeof(mr_limits) || MR_UNLIMITED != UINT64_MAX ||
	    mr_sim_new(&c, &sim) != 0 || mr_sim_free(sim) != 0) {
		std::fprintf(stderr, "header broken under C++\n");
		return 1;
	}
	return 0;
}
