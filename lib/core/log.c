/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

void mri_logger_init(struct mri_logger *lg)
{
	pthread_mutex_init(&lg->lock, NULL);
	lg->fn = NULL;
	lg->userdata = NULL;
	lg->max_level = MR_LOG_INFO;
}

void mri_logger_destroy(struct mri_logger *lg)
{
	pthread_mutex_destroy(&lg->lock);
}

void mri_log(struct mri_logger *lg, int level, const char *fmt, ...)
{
	char msg[512];
	mr_log_fn fn;
	void *userdata;
	va_list ap;

	if (!lg)
		return;
	pthread_mutex_lock(&lg->lock);
	fn = lg->fn;
	userdata = lg->userdata;
	if (level > lg->max_level)
		fn = NULL;
	pthread_mutex_unlock(&lg->lock);
	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(level, msg, userdata);
}
