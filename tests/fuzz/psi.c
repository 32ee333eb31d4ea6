/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lines of a pressure file (mri_psi_parse). */
#include <errno.h>
#include <stdlib.h>
#include "fuzz.h"
#include "psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct mr_pressure p;
	int r;

	r = mri_psi_parse(s, &p);
	if ((r != 0 && r != -EOPNOTSUPP && r != -EIO) ||
	    (r == 0 && p.size != sizeof(p)))
		abort();
	free(s);
	return 0;
}
