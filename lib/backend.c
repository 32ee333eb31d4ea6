/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of built-in backends. */
#include "config.h"

#include <string.h>

#include "backend.h"

/* The order "auto" tries them in. The simulator, when it exists, is never
 * here: it is chosen only by name. */
const struct mri_backend *const mri_backends[] = {
	&mri_backend_cgroup1,
	NULL,
};

const struct mri_backend *mri_backend_find(const char *name)
{
	size_t i;

	for (i = 0; mri_backends[i]; i++) {
		if (strcmp(mri_backends[i]->name, name) == 0)
			return mri_backends[i];
	}
	return NULL;
}
