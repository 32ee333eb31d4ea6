/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/self/mountinfo (lib/cgroupfs/mountinfo.c): every mount it lists, and the
 * three lookups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"
#include "mountinfo.h"

static int check_mount(const struct mri_cgroup_mount *m, void *arg)
{
	(void)arg;
	if ((m->version != 1 && m->version != 2) ||
	    !memchr(m->mount_point, '\0', sizeof(m->mount_point)) ||
	    !memchr(m->root, '\0', sizeof(m->root)))
		abort();
	return 0;
}

static void check_find(int r)
{
	if (r != 0 && r != -ENODEV && r != -EIO && r != -ENOMEM)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mri_cgroup_mount m;
	char path[32];
	int fd = fuzz_file(data, size, path, sizeof(path)), r;

	r = mri_mount_each(path, check_mount, NULL);
	if (r != 0 && r != -EIO && r != -ENOMEM)
		abort();
	check_find(mri_mount_find(path, "/sys/fs/cgroup/memory/a", &m));
	check_find(mri_mount_find_memory_v1(path, &m));
	check_find(mri_mount_find_v2(path, &m));
	close(fd);
	return 0;
}
