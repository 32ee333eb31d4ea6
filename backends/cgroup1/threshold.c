/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage thresholds of the v1 memory controller
 * (Documentation/admin-guide/cgroup-v1/memory.rst, "Memory thresholds"):
 * writing "<eventfd> <fd of memory.usage_in_bytes> <bytes>" to
 * cgroup.event_control makes the kernel signal the eventfd whenever usage
 * crosses the threshold, upward or downward (checked every 128 page
 * events, mm/memcontrol-v1.c). Closing the eventfd unregisters the
 * threshold: its release wakes the waiters with EPOLLHUP (fs/eventfd.c,
 * eventfd_release()), on which the kernel's event removes itself
 * (mm/memcontrol-v1.c, memcg_event_wake()).
 *
 * The core polls one fd that must stay stable while thresholds are
 * replaced, so that fd is an epoll instance holding the current eventfd.
 * The kernel also signals the eventfd once when the group is removed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cgroup1.h"
#include "fileops.h"

int mri_cgroup1_threshold_init(struct mri_cgroup1 *cg)
{
	cg->eventfd = -1;
	cg->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	return cg->epoll_fd < 0 ? -errno : 0;
}

static void disarm(struct mri_cgroup1 *cg)
{
	if (cg->eventfd < 0)
		return;
	epoll_ctl(cg->epoll_fd, EPOLL_CTL_DEL, cg->eventfd, NULL);
	close(cg->eventfd);
	cg->eventfd = -1;
}

void mri_cgroup1_threshold_forget(struct mri_cgroup1 *cg)
{
	/* Plain close(): the epoll instance is the parent's as well (one
	 * open file description), and EPOLL_CTL_DEL here would take the
	 * parent's eventfd out of it. */
	if (cg->eventfd >= 0)
		close(cg->eventfd);
	if (cg->epoll_fd >= 0)
		close(cg->epoll_fd);
	cg->eventfd = cg->epoll_fd = -1;
}

void mri_cgroup1_threshold_fini(struct mri_cgroup1 *cg)
{
	disarm(cg);
	if (cg->epoll_fd >= 0)
		close(cg->epoll_fd);
	cg->epoll_fd = -1;
}

int mri_cgroup1_set_usage_threshold(void *priv, uint64_t bytes)
{
	struct mri_cgroup1 *cg = priv;
	struct epoll_event ev = { .events = EPOLLIN };
	char cmd[64];
	int efd, r;

	if (bytes == MR_UNLIMITED) {
		disarm(cg);
		return 0;
	}
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0)
		return -errno;
	/* Plain decimal bytes: the kernel parses the threshold with
	 * page_counter_memparse(), where a K/M/G suffix would also do. */
	snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, efd, cg->usage_fd, bytes);
	r = mri_write_fd(cg->event_control_fd, cmd);
	if (r < 0) {
		close(efd);
		r = mri_cgroup1_gone(r);
		mri_log(cg->log, MR_LOG_WARNING,
			"cgroup1: %s: cannot arm a usage threshold at %" PRIu64
			" bytes: %s", cg->path, bytes, mr_strerror(r));
		return r;
	}
	ev.data.fd = efd;
	if (epoll_ctl(cg->epoll_fd, EPOLL_CTL_ADD, efd, &ev) < 0) {
		r = -errno;
		close(efd);
		return r;
	}
	/* The new threshold is armed before the old one goes: no crossing
	 * in between is missed. */
	disarm(cg);
	cg->eventfd = efd;
	return 0;
}

int mri_cgroup1_event_fd(void *priv)
{
	struct mri_cgroup1 *cg = priv;

	return cg->epoll_fd;
}

/* Whether the group's cgroup.event_control is still there: O_PATH needs
 * no permission on the file and touches nothing. */
static bool still_there(struct mri_cgroup1 *cg)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/cgroup.event_control",
		     cg->path) >= (int)sizeof(path))
		return true;
	fd = mri_fops->open(path, O_PATH | O_CLOEXEC, 0);
	if (fd >= 0)
		mri_fops->close(fd);
	return fd != -ENOENT;
}

int mri_cgroup1_event_ack(void *priv)
{
	struct mri_cgroup1 *cg = priv;
	uint64_t count;

	/* One read resets an eventfd's counter (eventfd(2)); EAGAIN means
	 * there was nothing to consume. */
	if (cg->eventfd < 0)
		return 0;
	if (read(cg->eventfd, &count, sizeof(count)) < 0)
		return errno == EAGAIN ? 0 : -errno;
	/* The kernel signals each registered eventfd once when the group
	 * goes (mm/memcontrol-v1.c, memcg_event_remove() through
	 * eventfd_signal()): a count of 1 with the group gone is that
	 * signal alone; 2 or more, a crossing came before it. Either way
	 * nothing is left to serve. */
	if (!still_there(cg)) {
		mri_log(cg->log, MR_LOG_DEBUG, "cgroup1: %s: removed%s",
			cg->path, count > 1 ? " (after a threshold crossing)"
					    : "");
		return -ENOENT;
	}
	return 1;
}
