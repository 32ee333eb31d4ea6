/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/self/cgroup with its mountinfo (mri_self_group_find): the input
 * is the cgroup file, a NUL byte, then the mountinfo (none: empty). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz.h"
#include "selfgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mri_self_group g;
	const uint8_t *nul = memchr(data, '\0', size);
	size_t cgroup_len = nul ? (size_t)(nul - data) : size;
	size_t mi_off = nul ? cgroup_len + 1 : size;
	char cgroup_path[32], mi_path[32];
	int cfd, mfd, r;
	unsigned bad_line = 0;

	cfd = fuzz_file(data, cgroup_len, cgroup_path, sizeof(cgroup_path));
	mfd = fuzz_file(data + mi_off, size - mi_off, mi_path, sizeof(mi_path));
	r = mri_self_group_find(cgroup_path, mi_path, &g, &bad_line);
	if (r != 0 && r != -EIO && r != -ENODEV && r != -EREMOTE &&
	    r != -ENAMETOOLONG && r != -ENOMEM)
		abort();
	if (r == 0 && ((g.version != 1 && g.version != 2) ||
		       !memchr(g.dir, '\0', sizeof(g.dir))))
		abort();
	close(cfd);
	close(mfd);
	return 0;
}
