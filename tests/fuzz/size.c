/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The size syntax of the policy options ("16M", "5%",
 * policyopt_parse_size), with and without percentages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuzz.h"
#include "policyopt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The parser says why it refuses on stderr: once per input would drown
 * libFuzzer's report, which keeps its own stream, as do the sanitizers. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	stderr = fopen("/dev/null", "w");
	return stderr ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct size_opt o;
	int r;

	r = policyopt_parse_size("fuzz", "--margin", s, false, &o);
	if (r != 0 && r != -EINVAL)
		abort();
	r = policyopt_parse_size("fuzz", "--margin", s, true, &o);
	if (r != 0 && r != -EINVAL)
		abort();
	free(s);
	return 0;
}
