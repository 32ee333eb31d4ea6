/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Effective memory.low and memory.min of a group: the walk. The kernel
 * computes a group's protection from its parent's effective one and from
 * what all the parent's children claim (Linux 6.1 mm/memcontrol.c,
 * mem_cgroup_calculate_protection()); lib/cgroupfs/protection.c has the formula,
 * this reads what it needs, top down from the reclaim root (the kernel's
 * `root` argument: the group whose limit or memory.reclaim started the
 * reclaim, the real root for global reclaim): at each level below the
 * root's children, every sibling's memory.current, memory.low and
 * memory.min.
 * A sibling removed in the middle of the walk (its files fail with ENOENT
 * or ENODEV), or one without memory files, is skipped and the others are
 * still counted. A level whose parent has no effective protection has
 * none either, whatever its siblings: the walk stops reading there.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup2.h"
#include "fileops.h"
#include "fds.h"
#include "protection.h"

struct prot {
	uint64_t usage, low, min; /* pages */
};

static uint64_t pages(struct mri_cgroup2 *cg, uint64_t bytes)
{
	return bytes == MR_UNLIMITED ? MR_UNLIMITED : bytes / cg->page_size;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Reads a group's usage, low and min (memory.min may be absent: 0). dirfd
 * and name: the group's directory relative to dirfd ("." for dirfd
 * itself). */
static int read_prot(struct mri_cgroup2 *cg, int dirfd, const char *name,
		     struct prot *p)
{
	char file[NAME_MAX + 32];
	uint64_t usage, low, min = 0;
	int r;

	snprintf(file, sizeof(file), "%s/memory.current", name);
	r = mri_cgroup2_read_at(cg, dirfd, file, &usage);
	if (r == 0) {
		snprintf(file, sizeof(file), "%s/memory.low", name);
		r = mri_cgroup2_read_at(cg, dirfd, file, &low);
	}
	if (r == 0) {
		snprintf(file, sizeof(file), "%s/memory.min", name);
		r = mri_cgroup2_read_at(cg, dirfd, file, &min);
		if (r == -ENOENT) {
			/* Before 4.18, or removed since the line above:
			 * tell them apart by memory.current. */
			snprintf(file, sizeof(file), "%s/memory.current",
				 name);
			r = mri_cgroup2_read_at(cg, dirfd, file, &usage);
			min = 0;
		}
	}
	if (r < 0)
		return r;
	p->usage = pages(cg, usage);
	p->low = pages(cg, low);
	p->min = pages(cg, min);
	return 0;
}

/* The parent's children_low_usage and children_min_usage: the sum over
 * its children of min(usage, low) and min(usage, min)
 * (mm/page_counter.c, propagate_protected_usage()). */
static int siblings_protected(struct mri_cgroup2 *cg, int parent_fd,
			      uint64_t *low, uint64_t *min)
{
	struct dirent *de;
	struct prot p;
	DIR *d;
	int fd, r = 0;

	*low = *min = 0;
	fd = mri_openat(parent_fd, ".", O_RDONLY | O_DIRECTORY |
			      O_CLOEXEC, 0);
	if (fd < 0)
		return mri_cgroup2_gone(fd);
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		mri_close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		r = read_prot(cg, fd, de->d_name, &p);
		if (r == -ENOENT || r == -ENOTDIR) {
			/* Removed since the listing, or no memory files
			 * (DT_UNKNOWN: not a directory). */
			mri_log(cg->log, MR_LOG_DEBUG, "cgroup2: %s: sibling "
				"%s skipped: %s", cg->path, de->d_name,
				mr_strerror(r));
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		*low = sat_add(*low, min_u64(p.usage, p.low));
		*min = sat_add(*min, min_u64(p.usage, p.min));
	}
	if (r == 0 && errno)
		r = -errno;
	mri_closedir(d);
	return r;
}

uint32_t mri_cgroup2_top_level(const struct mri_cgroup2 *cg)
{
	/* The real root is the last ancestor when visible; else the top
	 * that is seen is taken as a child of an unseen root. */
	return (uint32_t)(cg->root_visible ? cg->nanc : cg->nanc + 1);
}

int mri_cgroup2_effective_protection(struct mri_cgroup2 *cg,
				     uint32_t root_level, uint64_t usage,
				     uint64_t low, uint64_t min,
				     uint64_t *elow, uint64_t *emin)
{
	/* The levels from a child of the reclaim root down to the group:
	 * the ancestors below the root, outermost first, then the group
	 * (mem_cgroup_calculate_protection(): the root itself gets none,
	 * its children their own settings). */
	size_t nlev = root_level, i;
	struct prot cur, parent = { 0 };
	uint64_t el = 0, em = 0, sl, sm;
	int fd, r;

	if (root_level > mri_cgroup2_top_level(cg))
		return -EINVAL;
	for (i = 0; i < nlev; i++) {
		/* Level i's directory: ancestor nlev - 2 - i for the
		 * ancestors, the group's own last. */
		if (i + 1 < nlev) {
			fd = mri_cgroup2_open_ancestor(cg, nlev - 2 - i);
			if (fd < 0)
				return fd;
			r = read_prot(cg, fd, ".", &cur);
			mri_close(fd);
			if (r < 0)
				return r;
		} else {
			cur.usage = pages(cg, usage);
			cur.low = pages(cg, low);
			cur.min = pages(cg, min);
		}
		if (i == 0) {
			/* A child of the root: its own settings. */
			el = cur.low;
			em = cur.min;
		} else if (el == 0 && em == 0) {
			/* Nothing to share below an unprotected parent. */
			break;
		} else {
			fd = mri_cgroup2_open_ancestor(cg, nlev - 1 - i);
			if (fd < 0)
				return fd;
			r = siblings_protected(cg, fd, &sl, &sm);
			mri_close(fd);
			if (r < 0)
				return r;
			el = mri_effective_protection(cur.usage, parent.usage,
						      cur.low, el, sl,
						      cg->recursiveprot);
			em = mri_effective_protection(cur.usage, parent.usage,
						      cur.min, em, sm,
						      cg->recursiveprot);
		}
		parent = cur;
	}
	*elow = el == MR_UNLIMITED ? MR_UNLIMITED :
		(el > UINT64_MAX / cg->page_size ? UINT64_MAX :
		 el * cg->page_size);
	*emin = em == MR_UNLIMITED ? MR_UNLIMITED :
		(em > UINT64_MAX / cg->page_size ? UINT64_MAX :
		 em * cg->page_size);
	return 0;
}
