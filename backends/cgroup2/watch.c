/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage thresholds on cgroup v2, which has no equivalent of v1's
 * cgroup.event_control thresholds:
 *  - while a threshold is armed the backend is on its context's tick
 *    (mri_event_sink_tick(), every MRI_TICK_NS): each tick's event_ack()
 *    reads memory.current;
 *  - its event fd (struct mri_event_sink, polled for EPOLLPRI) is an fd of
 *    memory.events of its own: kernfs notifies each modification of the
 *    file (cgroup_file_notify() from memcg_memory_event()), so a high or
 *    max event wakes the worker at once, between ticks. Reading the file
 *    through that fd consumes the notification (kernfs_seq_show() records
 *    the event count seen). A removed group's file polls POLLERR | POLLPRI
 *    for good, and its read fails with ENODEV: -ENOENT, and the fd leaves
 *    the context's set (reported as -1) and the tick stops.
 * event_ack tells a real crossing (usage above the threshold: 1) from a
 * wake-up with nothing to do (0), so the worker runs a margin pass only
 * on the former. A file that epoll refuses (a regular file standing in
 * for the cgroup in tests: EPERM) is not reported: the tick alone
 * watches then.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cgroup2.h"
#include "fds.h"
#include "fileops.h"

int mri_cgroup2_watch_init(struct mri_cgroup2 *cg, int dirfd,
			   const struct mri_event_sink *events)
{
	struct epoll_event ev = { .events = EPOLLPRI };
	struct mr_events e;
	int ep, r;

	cg->events = *events;
	cg->threshold_bytes = MR_UNLIMITED;
	cg->watch_polled = false;
	r = mri_openat(dirfd, "memory.events",
			     O_RDONLY | O_CLOEXEC, 0);
	if (r < 0)
		return mri_cgroup2_gone(r);
	cg->watch_events_fd = r;
	/* A new open file has not seen the current event count: it polls
	 * POLLPRI until read once. */
	r = mri_cgroup2_read_events_fd(cg, cg->watch_events_fd,
				       "memory.events", &e);
	if (r < 0)
		return r;
	/* Whether epoll takes the file at all: asked of a set of its own,
	 * closed at once. */
	mri_fd_begin();
	ep = epoll_create1(EPOLL_CLOEXEC);
	ep = mri_fd_end(ep < 0 ? -errno : ep);
	if (ep < 0)
		return ep;
	r = epoll_ctl(ep, EPOLL_CTL_ADD, cg->watch_events_fd, &ev) < 0 ?
	    -errno : 0;
	mri_fd_close(ep);
	if (r == -EPERM) {
		mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s/memory.events "
			"cannot be polled; usage is watched by the tick "
			"only", cg->path);
		return 0;
	}
	if (r == 0)
		r = mri_event_sink_set(&cg->events, cg->watch_events_fd,
				       EPOLLPRI);
	if (r == 0)
		cg->watch_polled = true;
	return r;
}

void mri_cgroup2_watch_fini(struct mri_cgroup2 *cg)
{
	if (cg->watch_events_fd >= 0)
		mri_close(cg->watch_events_fd);
	cg->watch_events_fd = -1;
}

void mri_cgroup2_watch_forget(struct mri_cgroup2 *cg)
{
	/* Closed by the fork handler (lib/core/fds.h). */
	cg->watch_events_fd = -1;
}

int mri_cgroup2_set_usage_threshold(void *priv, uint64_t bytes)
{
	struct mri_cgroup2 *cg = priv;
	bool on = bytes != MR_UNLIMITED;
	int r;

	/* Only a change of arming touches the tick. */
	if (on != (cg->threshold_bytes != MR_UNLIMITED)) {
		r = mri_event_sink_tick(&cg->events, on);
		if (r < 0)
			return r;
	}
	cg->threshold_bytes = bytes;
	return 0;
}

/* The group is gone: its memory.events polls POLLERR | POLLPRI for good
 * and would keep the worker awake, and the tick has nothing left to
 * watch. Both stop (the worker stops serving the group once its pass
 * sees -ENOENT, but a group without a margin gets no pass). */
static int watch_gone(struct mri_cgroup2 *cg)
{
	if (cg->watch_polled)
		mri_event_sink_set(&cg->events, -1, EPOLLPRI);
	cg->watch_polled = false;
	mri_event_sink_tick(&cg->events, false);
	return -ENOENT;
}

int mri_cgroup2_event_ack(void *priv)
{
	struct mri_cgroup2 *cg = priv;
	struct pollfd p = { .fd = cg->watch_events_fd, .events = POLLPRI };
	struct mr_events e;
	uint64_t usage;
	int r;

	/* A pending notification is taken by reading the file. */
	if (cg->watch_polled && poll(&p, 1, 0) > 0) {
		r = mri_cgroup2_read_events_fd(cg, cg->watch_events_fd,
					       "memory.events", &e);
		if (r == -ENOENT)
			return watch_gone(cg);
		if (r < 0)
			return r;
	}
	if (cg->threshold_bytes == MR_UNLIMITED)
		return 0;
	r = mri_cgroup2_read_value(cg, cg->current_fd, "memory.current",
				   &usage);
	if (r == -ENOENT)
		return watch_gone(cg);
	if (r < 0)
		return r;
	return usage > cg->threshold_bytes ? 1 : 0;
}
