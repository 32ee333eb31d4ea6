// SPDX-License-Identifier: LGPL-2.1-or-later
// The public header as C++: extern "C", no C-only constructs.
#include <memreclaim.h>

#include <cstdio>

int main()
{
	mr_limits l = {};
	l.size = sizeof(l);
	const char *v = mr_version();
	if (!v || l.size != sizeof(mr_limits) || MR_UNLIMITED != UINT64_MAX) {
		std::fprintf(stderr, "header broken under C++\n");
		return 1;
	}
	return 0;
}
