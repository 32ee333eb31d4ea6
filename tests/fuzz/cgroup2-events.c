/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v2 memory.events and memory.events.local
 * (mri_cgroup2_parse_events). */
#include <errno.h>
#include <stdlib.h>
#include "cgroup2.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct mr_events ev;
	int r;

	r = mri_cgroup2_parse_events(s, &ev);
	if (r != 0 && r != -EIO)
		abort();
	free(s);
	return 0;
}
