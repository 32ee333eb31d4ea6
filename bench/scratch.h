/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real-server benchmarks' scratch directories (bench/scratch.c):
 * made, with the directories above them, and removed whole. Errors are
 * printed on stderr with the program's name. */
#ifndef MEMRECLAIM_BENCH_SCRATCH_H
#define MEMRECLAIM_BENCH_SCRATCH_H

/* path (mode 0755); one that exists is fine. 0, or -1 printed. */
int scratch_mkdir(const char *path);

/* path and the directories above it that are missing. 0, or -1. */
int scratch_mkdirs(const char *path);

/* path and all below it, symbolic links not followed; what cannot be
 * removed is printed and left. An empty path is nothing. */
void scratch_remove(const char *path);

#endif
