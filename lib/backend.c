/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of built-in backends. */
#include "config.h"

#include <string.h>

#include "backend.h"

/* The order "auto" tries them in. */
const struct mri_backend *const mri_backends[] = {
	&mri_backend_cgroup2,
	&mri_backend_cgroup1,
	NULL,
};

/* A program that opens a real path never silently gets a simulated
 * group: the simulator is chosen only by name. */
const struct mri_backend *const mri_named_backends[] = {
	&mri_backend_sim,
	NULL,
};

static const struct mri_backend *find_in(const struct mri_backend *const *list,
					 const char *name)
{
	size_t i;

	for (i = 0; list[i]; i++) {
		if (strcmp(list[i]->name, name) == 0)
			return list[i];
	}
	return NULL;
}

const struct mri_backend *mri_backend_find(const char *name)
{
	const struct mri_backend *be = find_in(mri_backends, name);

	return be ? be : find_in(mri_named_backends, name);
}
