/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage thresholds of the v1 memory controller
 * (Documentation/admin-guide/cgroup-v1/memory.rst, "Memory thresholds"):
 * writing "<eventfd> <fd of memory.usage_in_bytes> <bytes>" to
 * cgroup.event_control makes the kernel signal the eventfd whenever usage
 * crosses the threshold, upward or downward (checked when the charged
 * group's per-CPU count of page events passes 128, for it and its
 * parents, mm/memcontrol-v1.c memcg1_check_events(); never on a kernel
 * built with PREEMPT_RT, where the worker's safety round alone finds a
 * group above its mark). Closing the eventfd unregisters the
 * threshold: its release wakes the waiters with EPOLLHUP (fs/eventfd.c,
 * eventfd_release()), on which the kernel's event removes itself
 * (mm/memcontrol-v1.c, memcg_event_wake()).
 *
 * The eventfd itself is the group's event fd (struct mri_event_sink),
 * reported anew at each arming. A group that keeps a margin holds one
 * eventfd from mr_group_set_margin() on (the spare, opened by the keeper's
 * claim so that the fd budget is met there, lib/core/fdbudget.c), which its
 * first registration takes; a re-arming opens a new one and closes the
 * old after (an eventfd cannot be registered twice: the kernel drops a
 * threshold only when its eventfd is released). A registration waits for
 * an RCU grace period in the kernel (mm/memcontrol-v1.c,
 * __mem_cgroup_usage_register_event(): synchronize_rcu()), so the backend
 * says MRI_CAP_SLOW_THRESHOLD and the worker registers in the background. The kernel keeps neither the cgroup.event_control fd nor the
 * usage fd named in the registration, only the eventfd
 * (mm/memcontrol-v1.c, memcg_write_event_control(): fdput() of the
 * control file at the end, eventfd_ctx_fileget() of the eventfd kept in
 * the event): cgroup.event_control is opened for the write alone.
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
#include "fds.h"
#include "fileops.h"

void mri_cgroup1_threshold_init(struct mri_cgroup1 *cg,
				const struct mri_event_sink *events)
{
	atomic_init(&cg->eventfd, -1);
	atomic_init(&cg->spare_eventfd, -1);
	cg->events = *events;
}

int mri_cgroup1_threshold_spare(struct mri_cgroup1 *cg, bool keep)
{
	int efd, old = -1;

	if (!keep) {
		efd = atomic_exchange(&cg->spare_eventfd, -1);
		if (efd >= 0)
			mri_fd_close(efd);
		return 0;
	}
	if (atomic_load(&cg->eventfd) >= 0)
		return 0;
	mri_fd_begin();
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	efd = mri_fd_end(efd < 0 ? -errno : efd);
	if (efd < 0)
		return efd;
	if (!atomic_compare_exchange_strong(&cg->spare_eventfd, &old, efd))
		mri_fd_close(efd); /* one is there already */
	return 0;
}

/* Closing the eventfd unregisters its threshold. */
static void close_eventfd(struct mri_cgroup1 *cg)
{
	if (cg->eventfd >= 0)
		mri_fd_close(cg->eventfd);
	cg->eventfd = -1;
}

void mri_cgroup1_threshold_forget(struct mri_cgroup1 *cg)
{
	/* closed by the fork handler */
	atomic_store(&cg->eventfd, -1);
	atomic_store(&cg->spare_eventfd, -1);
}

void mri_cgroup1_threshold_fini(struct mri_cgroup1 *cg)
{
	close_eventfd(cg);
	mri_cgroup1_threshold_spare(cg, false);
}

/* Registers a threshold at `bytes` on the spare eventfd, or a new one:
 * the eventfd, or a negative errno. */
static int arm(struct mri_cgroup1 *cg, uint64_t bytes)
{
	char cmd[64];
	int efd, ecfd, r;

	efd = atomic_exchange(&cg->spare_eventfd, -1);
	if (efd < 0) {
		mri_fd_begin();
		efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		efd = mri_fd_end(efd < 0 ? -errno : efd);
	}
	if (efd < 0)
		return efd;
	ecfd = mri_cgroup1_open_file(cg, "cgroup.event_control", O_WRONLY);
	if (ecfd < 0) {
		mri_fd_close(efd);
		return ecfd;
	}
	/* Plain decimal bytes: the kernel parses the threshold with
	 * page_counter_memparse(), where a K/M/G suffix would also do. */
	snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, efd, cg->usage_fd, bytes);
	r = mri_write_fd(ecfd, cmd);
	mri_close(ecfd);
	if (r < 0) {
		mri_fd_close(efd);
		return mri_cgroup1_gone(r);
	}
	return efd;
}

int mri_cgroup1_set_usage_threshold(void *priv, uint64_t bytes)
{
	struct mri_cgroup1 *cg = priv;
	int efd = -1, r;

	if (bytes != MR_UNLIMITED) {
		efd = arm(cg, bytes);
		if (efd < 0) {
			mri_log(cg->log, MR_LOG_WARNING,
				"cgroup1: %s: cannot arm a usage threshold at "
				"%" PRIu64 " bytes: %s", cg->path, bytes,
				mr_strerror(efd));
			return efd;
		}
	}
	r = mri_event_sink_set(&cg->events, efd, EPOLLIN);
	if (r < 0) {
		if (efd >= 0)
			mri_fd_close(efd);
		return r;
	}
	/* The new threshold is armed before the old one goes: no crossing
	 * in between is missed. */
	close_eventfd(cg);
	cg->eventfd = efd;
	return 0;
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
	fd = mri_open(path, O_PATH | O_CLOEXEC, 0);
	if (fd >= 0)
		mri_close(fd);
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
