/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 memory.stat and memory.events, normalised into struct
 * mr_memstat and struct mr_events.
 *
 * memory.stat (mm/memcontrol.c, memory_stat_format()) is hierarchical;
 * sizes are printed in bytes, pgscan, pgsteal, their parts by reclaimer
 * (pgscan_kswapd, ..._direct, ..._khugepaged, ..._proactive) and
 * workingset_refault_* are counts of pages, pgfault and pgmajfault counts of events. Each key has
 * three states: present (its bit set), absent (an older kernel does not
 * print it: bit clear, value 0) and error (a known key without a valid
 * value: the whole read fails with -EIO, never a silent zero).
 *
 * `kernel` arrived in 5.18 (memcg's kmem counter). Before, it is the sum
 * of the parts 5.18 counts in it: kernel_stack, pagetables,
 * sec_pagetables (6.2), percpu, sock, vmalloc and slab (or
 * slab_reclaimable + slab_unreclaimable where `slab` is missing, before
 * 5.9), whichever of them the kernel prints; absent when it prints none.
 * slab_reclaimable is also kept on its own (the part of `kernel` that
 * reclaim shrinks).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>

#include "cgroup2.h"
#include "fileops.h"

enum unit { BYTES, PAGES, EVENTS };

/* Parts of `kernel`, as indices of struct parts. */
enum part {
	P_NONE = -1,
	P_KERNEL_STACK, P_PAGETABLES, P_SEC_PAGETABLES, P_PERCPU, P_SOCK,
	P_VMALLOC, P_SLAB, P_SLAB_RECLAIMABLE, P_SLAB_UNRECLAIMABLE, P_COUNT
};

struct stat_key {
	const char *key;
	int field;        /* enum mr_memstat_field, or -1 */
	size_t offset;    /* in struct mr_memstat */
	enum unit unit;
	enum part part;
};

#define KEY(k, f, m, u) \
	{ k, MR_MEMSTAT_##f, offsetof(struct mr_memstat, m), u, P_NONE }
#define PART(k, p) { k, -1, 0, BYTES, p }

static const struct stat_key keys[] = {
	KEY("anon", ANON, anon_bytes, BYTES),
	KEY("file", FILE, file_bytes, BYTES),
	KEY("kernel", KERNEL, kernel_bytes, BYTES),
	KEY("shmem", SHMEM, shmem_bytes, BYTES),
	KEY("file_mapped", FILE_MAPPED, file_mapped_bytes, BYTES),
	KEY("file_dirty", FILE_DIRTY, file_dirty_bytes, BYTES),
	KEY("file_writeback", FILE_WRITEBACK, file_writeback_bytes, BYTES),
	KEY("anon_thp", ANON_THP, anon_thp_bytes, BYTES),
	KEY("inactive_anon", INACTIVE_ANON, inactive_anon_bytes, BYTES),
	KEY("active_anon", ACTIVE_ANON, active_anon_bytes, BYTES),
	KEY("inactive_file", INACTIVE_FILE, inactive_file_bytes, BYTES),
	KEY("active_file", ACTIVE_FILE, active_file_bytes, BYTES),
	KEY("unevictable", UNEVICTABLE, unevictable_bytes, BYTES),
	KEY("pgfault", PGFAULT, pgfault, EVENTS),
	KEY("pgmajfault", PGMAJFAULT, pgmajfault, EVENTS),
	KEY("pgscan", PGSCAN, pgscan_bytes, PAGES),
	KEY("pgsteal", PGSTEAL, pgsteal_bytes, PAGES),
	/* By reclaimer; their sums are the two lines above. */
	KEY("pgscan_kswapd", PGSCAN_KSWAPD, pgscan_kswapd_bytes, PAGES),
	KEY("pgscan_direct", PGSCAN_DIRECT, pgscan_direct_bytes, PAGES),
	KEY("pgscan_khugepaged", PGSCAN_KHUGEPAGED, pgscan_khugepaged_bytes,
	    PAGES),
	KEY("pgscan_proactive", PGSCAN_PROACTIVE, pgscan_proactive_bytes,
	    PAGES),
	KEY("pgsteal_kswapd", PGSTEAL_KSWAPD, pgsteal_kswapd_bytes, PAGES),
	KEY("pgsteal_direct", PGSTEAL_DIRECT, pgsteal_direct_bytes, PAGES),
	KEY("pgsteal_khugepaged", PGSTEAL_KHUGEPAGED,
	    pgsteal_khugepaged_bytes, PAGES),
	KEY("pgsteal_proactive", PGSTEAL_PROACTIVE, pgsteal_proactive_bytes,
	    PAGES),
	KEY("workingset_refault_anon", WORKINGSET_REFAULT_ANON,
	    workingset_refault_anon_bytes, PAGES),
	KEY("workingset_refault_file", WORKINGSET_REFAULT_FILE,
	    workingset_refault_file_bytes, PAGES),
	PART("kernel_stack", P_KERNEL_STACK),
	PART("pagetables", P_PAGETABLES),
	PART("sec_pagetables", P_SEC_PAGETABLES),
	PART("percpu", P_PERCPU),
	PART("sock", P_SOCK),
	PART("vmalloc", P_VMALLOC),
	PART("slab", P_SLAB),
	PART("slab_reclaimable", P_SLAB_RECLAIMABLE),
	PART("slab_unreclaimable", P_SLAB_UNRECLAIMABLE),
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

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The sum of `kernel`'s parts; false when the kernel printed none. */
static bool kernel_from_parts(const uint64_t *part, unsigned seen,
			      uint64_t *out)
{
	uint64_t sum = 0;
	int p;

	if (!seen)
		return false;
	for (p = 0; p < P_SLAB; p++) {
		if (seen & (1u << p))
			sum = sat_add(sum, part[p]);
	}
	if (seen & (1u << P_SLAB))
		sum = sat_add(sum, part[P_SLAB]);
	else
		sum = sat_add(sum, sat_add(part[P_SLAB_RECLAIMABLE],
					   part[P_SLAB_UNRECLAIMABLE]));
	*out = sum;
	return true;
}

int mri_cgroup2_parse_memstat(const char *buf, uint64_t page_size,
			      struct mr_memstat *out)
{
	const struct stat_key *k;
	struct mri_kv_line line;
	const char *pos = buf;
	uint64_t v, part[P_COUNT] = { 0 };
	unsigned seen = 0;
	int r;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	while ((r = mri_kv_next(&pos, &line)) > 0) {
		k = find_key(&line);
		if (!k)
			continue;
		if (mri_kv_value(&line, &v) < 0)
			return -EIO;
		if (k->part != P_NONE) {
			part[k->part] = v;
			seen |= 1u << k->part;
			continue;
		}
		if (k->unit == PAGES)
			v = v > UINT64_MAX / page_size ? UINT64_MAX :
							 v * page_size;
		*(uint64_t *)((char *)out + k->offset) = v;
		out->present |= 1ULL << k->field;
	}
	if (r < 0)
		return r;
	if (!(out->present & (1ULL << MR_MEMSTAT_KERNEL)) &&
	    kernel_from_parts(part, seen, &out->kernel_bytes))
		out->present |= 1ULL << MR_MEMSTAT_KERNEL;
	if (seen & (1u << P_SLAB_RECLAIMABLE)) {
		out->slab_reclaimable_bytes = part[P_SLAB_RECLAIMABLE];
		out->present |= 1ULL << MR_MEMSTAT_SLAB_RECLAIMABLE;
	}
	return 0;
}

int mri_cgroup2_read_memstat(void *priv, struct mr_memstat *out)
{
	struct mri_cgroup2 *cg = priv;
	struct mr_memstat st;
	/* About 60 lines of at most ~40 bytes on 6.1; room for growth. */
	char buf[16384];
	uint64_t swap;
	ssize_t n;
	int fd, r;

	fd = mri_cgroup2_open_file(cg, "memory.stat", O_RDONLY);
	if (fd < 0)
		return fd;
	n = mri_read_fd(fd, buf, sizeof(buf));
	mri_close(fd);
	if (n < 0)
		return mri_cgroup2_gone((int)n);
	r = mri_cgroup2_parse_memstat(buf, cg->page_size, &st);
	if (r < 0) {
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s/memory.stat: "
			"unparsable content", cg->path);
		return r;
	}
	/* v2's memory.stat has no swap line: the swap charged to the
	 * subtree is memory.swap.current. */
	if (cg->has_swap) {
		r = mri_cgroup2_read_file(cg, "memory.swap.current", &swap);
		if (r < 0)
			return r;
		st.swap_bytes = swap;
		st.present |= 1ULL << MR_MEMSTAT_SWAP;
	}
	*out = st;
	return 0;
}

static const struct {
	const char *key;
	int field;
	size_t offset;
} event_keys[] = {
	{ "low", MR_EVENT_LOW, offsetof(struct mr_events, low) },
	{ "high", MR_EVENT_HIGH, offsetof(struct mr_events, high) },
	{ "max", MR_EVENT_MAX, offsetof(struct mr_events, max) },
	{ "oom", MR_EVENT_OOM, offsetof(struct mr_events, oom) },
	{ "oom_kill", MR_EVENT_OOM_KILL, offsetof(struct mr_events, oom_kill) },
	{ "oom_group_kill", MR_EVENT_OOM_GROUP_KILL,
	  offsetof(struct mr_events, oom_group_kill) },
};

int mri_cgroup2_parse_events(const char *buf, struct mr_events *out)
{
	struct mri_kv_line line;
	const char *pos = buf;
	size_t i;
	uint64_t v;
	int r;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	while ((r = mri_kv_next(&pos, &line)) > 0) {
		for (i = 0; i < sizeof(event_keys) / sizeof(event_keys[0]);
		     i++) {
			if (mri_kv_is(&line, event_keys[i].key))
				break;
		}
		if (i == sizeof(event_keys) / sizeof(event_keys[0]))
			continue;
		if (mri_kv_value(&line, &v) < 0)
			return -EIO;
		*(uint64_t *)((char *)out + event_keys[i].offset) = v;
		out->present |= 1ULL << event_keys[i].field;
	}
	return r;
}

int mri_cgroup2_read_events_fd(struct mri_cgroup2 *cg, int fd,
			       const char *name, struct mr_events *out)
{
	char buf[512];
	ssize_t n;
	int r;

	n = mri_read_fd(fd, buf, sizeof(buf));
	if (n < 0)
		return mri_cgroup2_gone((int)n);
	r = mri_cgroup2_parse_events(buf, out);
	if (r < 0)
		mri_log(cg->log, MR_LOG_ERR, "cgroup2: %s/%s: unparsable "
			"content", cg->path, name);
	return r;
}

int mri_cgroup2_read_events(void *priv, bool local, struct mr_events *out)
{
	struct mri_cgroup2 *cg = priv;

	if (local && !cg->has_events_local)
		return -EOPNOTSUPP;
	return mri_cgroup2_read_events_at(cg, local ? "memory.events.local" :
					  "memory.events", out);
}

int mri_cgroup2_read_events_at(struct mri_cgroup2 *cg, const char *name,
			       struct mr_events *out)
{
	int fd, r;

	fd = mri_cgroup2_open_file(cg, name, O_RDONLY);
	if (fd < 0)
		return fd;
	r = mri_cgroup2_read_events_fd(cg, fd, name, out);
	mri_close(fd);
	return r;
}
