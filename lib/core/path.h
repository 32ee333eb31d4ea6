/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one check and normal form of a group's path, for every entry point
 * that takes one. */
#ifndef MR_PATH_H
#define MR_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* Checks that `path` names a cgroup directory the way the public API wants
 * it (absolute, no "." or ".." component, shorter than PATH_MAX) and writes
 * it to out (out_len bytes) with repeated slashes folded and a trailing
 * slash dropped. Returns 0 or -EINVAL. MT-safe. */
int mri_path_normalize(const char *path, char *out, size_t out_len);

/* Whether the len bytes at path are a path mri_path_normalize() accepts,
 * already in its normal form ("/" or "/a/b": no repeated or trailing
 * slash, no NUL): for the simulator, whose groups are named by their
 * exact path. MT-safe. */
bool mri_path_is_normal(const char *path, size_t len);

#endif /* MR_PATH_H */
