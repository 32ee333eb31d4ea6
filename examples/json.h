/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON output shared by the example programs. */
#ifndef MR_EXAMPLES_JSON_H
#define MR_EXAMPLES_JSON_H

#include <stdio.h>

/* Prints s as a JSON string, quotes included. */
static inline void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

#endif /* MR_EXAMPLES_JSON_H */
