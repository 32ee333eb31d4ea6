/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the libFuzzer harnesses of tests/fuzz share: the input as a string
 * of exactly its size (so that AddressSanitizer sees a read past its NUL),
 * or as a file for the parsers that open one. Each harness defines
 * LLVMFuzzerTestOneInput() and returns 0; a finding is a sanitizer report
 * or an abort() on a broken promise of the parser's header.
 */
#ifndef MR_FUZZ_H
#define MR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0 .. size) copied into a malloc'd block of size + 1 bytes, NUL
 * terminated (a NUL inside ends the string early, as it would in a file
 * read by the library). Aborts when out of memory. Free with free(). */
char *fuzz_string(const uint8_t *data, size_t size);

/* data[0 .. size) as an anonymous file (memfd) named by *path
 * ("/proc/self/fd/N", pathlen at least 32); returns its fd, to close.
 * Aborts when the file cannot be made. */
int fuzz_file(const uint8_t *data, size_t size, char *path, size_t pathlen);

#endif /* MR_FUZZ_H */
