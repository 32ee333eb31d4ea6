/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 memory.stat, normalised into struct mr_memstat.
 *
 * The file (mm/memcontrol-v1.c, memcg1_stat_format()) prints each counter
 * twice: local ("cache") and over the subtree ("total_cache"); only the
 * total_* keys are used, as v2's memory.stat is hierarchical too. Sizes
 * are printed in bytes already; pgpgin/pgpgout and workingset_refault_*
 * are counts of pages; pgfault/pgmajfault counts of events.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup1.h"
#include "fileops.h"

uint64_t mri_cgroup1_limit_value(uint64_t raw)
{
	/* PAGE_COUNTER_MAX (include/linux/page_counter.h) is
	 * LONG_MAX / PAGE_SIZE; the file shows it times PAGE_SIZE. */
	static const uint64_t page_sizes[] = { 4096, 8192, 16384, 65536 };
	size_t i;

	if (raw == UINT64_MAX || raw == (uint64_t)LONG_MAX)
		return MR_UNLIMITED;
	for (i = 0; i < sizeof(page_sizes) / sizeof(page_sizes[0]); i++) {
		if (raw == (uint64_t)LONG_MAX / page_sizes[i] * page_sizes[i])
			return MR_UNLIMITED;
	}
	return raw;
}

enum unit { BYTES, PAGES, EVENTS };

struct stat_key {
	const char *key;
	int field;        /* enum mr_memstat_field */
	size_t offset;    /* in struct mr_memstat */
	enum unit unit;
};

#define KEY(k, f, m, u) { k, MR_MEMSTAT_##f, offsetof(struct mr_memstat, m), u }

static const struct stat_key keys[] = {
	KEY("total_rss", ANON, anon_bytes, BYTES),
	KEY("total_cache", FILE, file_bytes, BYTES),
	KEY("total_shmem", SHMEM, shmem_bytes, BYTES),
	KEY("total_mapped_file", FILE_MAPPED, file_mapped_bytes, BYTES),
	KEY("total_dirty", FILE_DIRTY, file_dirty_bytes, BYTES),
	KEY("total_writeback", FILE_WRITEBACK, file_writeback_bytes, BYTES),
	KEY("total_rss_huge", ANON_THP, anon_thp_bytes, BYTES),
	KEY("total_inactive_anon", INACTIVE_ANON, inactive_anon_bytes, BYTES),
	KEY("total_active_anon", ACTIVE_ANON, active_anon_bytes, BYTES),
	KEY("total_inactive_file", INACTIVE_FILE, inactive_file_bytes, BYTES),
	KEY("total_active_file", ACTIVE_FILE, active_file_bytes, BYTES),
	KEY("total_unevictable", UNEVICTABLE, unevictable_bytes, BYTES),
	KEY("total_swap", SWAP, swap_bytes, BYTES),
	KEY("total_pgfault", PGFAULT, pgfault, EVENTS),
	KEY("total_pgmajfault", PGMAJFAULT, pgmajfault, EVENTS),
	KEY("total_pgpgin", PGPGIN, pgpgin_bytes, PAGES),
	KEY("total_pgpgout", PGPGOUT, pgpgout_bytes, PAGES),
	KEY("total_workingset_refault_anon", WORKINGSET_REFAULT_ANON,
	    workingset_refault_anon_bytes, PAGES),
	KEY("total_workingset_refault_file", WORKINGSET_REFAULT_FILE,
	    workingset_refault_file_bytes, PAGES),
};

static const struct stat_key *find_key(const struct mri_kv_line *line)
{
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (mri_kv_is(line, keys[i].key))
			return &keys[i];
	}
	return NULL;
}

int mri_cgroup1_parse_memstat(const char *buf, uint64_t page_size,
			      struct mr_memstat *out, uint64_t *hier_limit,
			      uint64_t *hier_memsw_limit)
{
	const struct stat_key *k;
	struct mri_kv_line line;
	const char *pos = buf;
	uint64_t v;
	int r;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	*hier_limit = MR_UNLIMITED;
	if (hier_memsw_limit)
		*hier_memsw_limit = MR_UNLIMITED;
	while ((r = mri_kv_next(&pos, &line)) > 0) {
		if (mri_kv_is(&line, "hierarchical_memory_limit")) {
			if (mri_kv_value(&line, &v) < 0)
				return -EIO;
			*hier_limit = mri_cgroup1_limit_value(v);
			continue;
		}
		if (mri_kv_is(&line, "hierarchical_memsw_limit")) {
			if (mri_kv_value(&line, &v) < 0)
				return -EIO;
			if (hier_memsw_limit)
				*hier_memsw_limit = mri_cgroup1_limit_value(v);
			continue;
		}
		k = find_key(&line);
		if (!k)
			continue;
		if (mri_kv_value(&line, &v) < 0)
			return -EIO;
		if (k->unit == PAGES)
			v = v > UINT64_MAX / page_size ? UINT64_MAX :
							 v * page_size;
		*(uint64_t *)((char *)out + k->offset) = v;
		out->present |= 1ULL << k->field;
	}
	return r;
}

int mri_cgroup1_read_stat(struct mri_cgroup1 *cg, int dirfd,
			  struct mr_memstat *out, uint64_t *hier_limit,
			  uint64_t *hier_memsw_limit)
{
	/* 42 lines of at most ~50 bytes on Linux 6.18. */
	char buf[8192];
	ssize_t n;
	int fd, r;

	fd = mri_openat(dirfd, "memory.stat", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup1_gone(fd);
	n = mri_read_fd(fd, buf, sizeof(buf));
	mri_close(fd);
	if (n < 0)
		return mri_cgroup1_gone((int)n);
	r = mri_cgroup1_parse_memstat(buf, cg->page_size, out, hier_limit,
				      hier_memsw_limit);
	if (r < 0)
		mri_log(cg->log, MR_LOG_ERR, "cgroup1: %s/memory.stat: "
			"unparsable content", cg->path);
	return r;
}
