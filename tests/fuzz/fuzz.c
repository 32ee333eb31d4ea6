/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz.h"

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		abort();
	while (done < size) {
		n = write(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if ((size_t)snprintf(path, pathlen, "/proc/self/fd/%d", fd) >= pathlen)
		abort();
	return fd;
}
