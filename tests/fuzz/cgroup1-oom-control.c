/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v1 memory.oom_control, the v1 group's events besides failcnt
 * (mri_cgroup1_parse_oom_kill). */
#include <errno.h>
#include <stdlib.h>
#include "cgroup1.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	uint64_t oom_kill;
	int r;

	r = mri_cgroup1_parse_oom_kill(s, &oom_kill);
	if (r != 0 && r != 1 && r != -EIO)
		abort();
	free(s);
	return 0;
}
