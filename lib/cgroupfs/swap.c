/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host's swap, read for the backends' limits (lib/cgroupfs/swap.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fileops.h"
#include "swap.h"

const char *mri_swap_meminfo = "/proc/meminfo";
const char *mri_swap_vm_swappiness = "/proc/sys/vm/swappiness";

int mri_swap_host_free(uint64_t *bytes)
{
	/* /proc/meminfo is about 1.5 KiB (fs/proc/meminfo.c). */
	char buf[8192], *p, *end;
	uint64_t kib;
	ssize_t n;

	n = mri_read_file(mri_swap_meminfo, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "SwapFree:       123456 kB" */
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "SwapFree:", 9))
			continue;
		p += 9;
		while (*p == ' ' || *p == '\t')
			p++;
		end = strchr(p, ' ');
		if (!end || strncmp(end, " kB", 3))
			return -EIO;
		*end = '\0';
		if (mri_parse_u64(p, &kib) < 0 || kib > UINT64_MAX / 1024)
			return -EIO;
		*bytes = kib * 1024;
		return 0;
	}
	return -EIO;
}

int mri_swap_vm(uint32_t *swappiness)
{
	char buf[32];
	uint64_t v;
	ssize_t n;

	n = mri_read_file(mri_swap_vm_swappiness, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (mri_parse_u64(buf, &v) < 0 || v > 200)
		return -EIO;
	*swappiness = (uint32_t)v;
	return 0;
}
