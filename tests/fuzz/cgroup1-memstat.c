/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v1 memory.stat (mri_cgroup1_parse_memstat). */
#include <errno.h>
#include <stdlib.h>
#include "cgroup1.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct mr_memstat st;
	uint64_t hier_limit, hier_memsw_limit;
	int r;

	r = mri_cgroup1_parse_memstat(s, 4096, &st, &hier_limit,
				      &hier_memsw_limit);
	if ((r != 0 && r != -EIO) || (r == 0 && st.size != sizeof(st)))
		abort();
	free(s);
	return 0;
}
