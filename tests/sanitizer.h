/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a test program is built with a sanitizer (scripts/check-sanitize
 * builds the suite with AddressSanitizer and UndefinedBehaviorSanitizer,
 * and the threaded tests with ThreadSanitizer), for the tests that cannot
 * run under one and skip by name, saying why. GCC defines
 * __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__; clang answers
 * __has_feature().
 */
#ifndef MR_TEST_SANITIZER_H
#define MR_TEST_SANITIZER_H

#include <stdio.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define MR_TEST_ASAN 1
#else
#define MR_TEST_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define MR_TEST_TSAN 1
#else
#define MR_TEST_TSAN 0
#endif

/* Under a sanitizer that replaces malloc (ASan, TSan), prints why the
 * test `name` cannot run and returns 77 (automake's skip); otherwise 0. */
static inline int mr_test_skip_sanitized_malloc(const char *name,
						const char *why)
{
	if (!MR_TEST_ASAN && !MR_TEST_TSAN)
		return 0;
	printf("SKIP %s under %s: %s\n", name,
	       MR_TEST_ASAN ? "AddressSanitizer" : "ThreadSanitizer", why);
	return 77;
}

#endif /* MR_TEST_SANITIZER_H */
