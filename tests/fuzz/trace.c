/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trace format (mr_sim_trace_parse, docs/trace-format.md): the text
 * is not NUL terminated, as the function allows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "experiments.h"
#include "fuzz.h"
#include "memreclaim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1), err[128];
	mr_sim_trace_t *t = NULL;
	int r;

	if (!text)
		abort();
	memcpy(text, data, size);
	r = mr_sim_trace_parse(text, size, &t, err, sizeof(err));
	if ((r != 0 && r != -EINVAL && r != -ENOMEM) || (r == 0) != (t != NULL) ||
	    !memchr(err, '\0', sizeof(err)))
		abort();
	mr_sim_trace_free(t);
	free(text);
	return 0;
}
