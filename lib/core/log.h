/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The context's log callback, as the rest of the library calls it. */
#ifndef MR_LOG_H
#define MR_LOG_H

#include <pthread.h>

#include "memreclaim.h"

struct mri_logger {
	pthread_mutex_t lock; /* guards fn/userdata/max_level changes */
	mr_log_fn fn;
	void *userdata;
	int max_level;
};

void mri_logger_init(struct mri_logger *lg);
void mri_logger_destroy(struct mri_logger *lg);

/* Formats and delivers one message if a callback is set and level <=
 * max_level. Never allocates beyond a stack buffer of 512 bytes (longer
 * messages are truncated). Safe with lg == NULL (no-op). */
void mri_log(struct mri_logger *lg, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* MR_LOG_H */
