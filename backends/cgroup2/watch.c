/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage thresholds on cgroup v2, which has no equivalent of v1's
 * cgroup.event_control thresholds. The event fd the core polls (struct
 * mri_event_sink) is an epoll instance holding:
 *  - a timerfd that ticks every MRI_CGROUP2_WATCH_PERIOD_NS while a
 *    threshold is armed (cgroup2.h says why that period); each tick reads
 *    memory.current;
 *  - an fd of memory.events of its own, polled for POLLPRI: kernfs
 *    notifies each modification of the file (cgroup_file_notify() from
 *    memcg_memory_event()), so a high or max event wakes the worker at
 *    once, between ticks. Reading the file through that fd consumes the
 *    notification (kernfs_seq_show() records the event count seen). A
 *    removed group's file polls POLLERR | POLLPRI for good, and its read
 *    fails with ENODEV: -ENOENT.
 * event_ack tells a real crossing (usage above the threshold: 1) from a
 * tick with nothing to do (0), so the worker runs a margin pass only on
 * the former. A file that epoll refuses (a regular file standing in for
 * the cgroup in tests: EPERM) leaves the timer alone on duty.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgroup2.h"
#include "fileops.h"

#define WATCH_TIMER  1
#define WATCH_EVENTS 2

int mri_cgroup2_watch_init(struct mri_cgroup2 *cg)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = WATCH_TIMER };
	struct mr_events e;
	int r;

	cg->threshold_bytes = MR_UNLIMITED;
	cg->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (cg->epoll_fd < 0)
		return -errno;
	cg->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (cg->timer_fd < 0 ||
	    epoll_ctl(cg->epoll_fd, EPOLL_CTL_ADD, cg->timer_fd, &ev) < 0)
		return -errno;
	r = mri_fops->openat(cg->dir_fd, "memory.events",
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
	ev.events = EPOLLPRI;
	ev.data.u32 = WATCH_EVENTS;
	if (epoll_ctl(cg->epoll_fd, EPOLL_CTL_ADD, cg->watch_events_fd,
		      &ev) < 0) {
		if (errno != EPERM)
			return -errno;
		mri_log(cg->log, MR_LOG_INFO, "cgroup2: %s/memory.events "
			"cannot be polled; usage is watched by the timer "
			"only", cg->path);
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void mri_cgroup2_watch_fini(struct mri_cgroup2 *cg)
{
	close_fd(&cg->epoll_fd);
	close_fd(&cg->timer_fd);
	if (cg->watch_events_fd >= 0)
		mri_fops->close(cg->watch_events_fd);
	cg->watch_events_fd = -1;
}

void mri_cgroup2_watch_forget(struct mri_cgroup2 *cg)
{
	/* Plain closes: the epoll instance and the timer are the parent's
	 * as well (shared open file descriptions); disarming the timer or
	 * removing fds from the set here would do it to the parent. */
	close_fd(&cg->epoll_fd);
	close_fd(&cg->timer_fd);
	close_fd(&cg->watch_events_fd);
}

int mri_cgroup2_set_usage_threshold(void *priv, uint64_t bytes)
{
	struct mri_cgroup2 *cg = priv;
	struct itimerspec its = { 0 };

	if (bytes != MR_UNLIMITED) {
		its.it_interval.tv_nsec = (long)MRI_CGROUP2_WATCH_PERIOD_NS;
		its.it_value.tv_nsec = (long)MRI_CGROUP2_WATCH_PERIOD_NS;
	}
	/* Only a change of arming touches the timer: re-arming at every
	 * new threshold would postpone the next tick each time. */
	if ((bytes == MR_UNLIMITED) != (cg->threshold_bytes == MR_UNLIMITED) &&
	    timerfd_settime(cg->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	cg->threshold_bytes = bytes;
	return 0;
}

/* The group is gone: its memory.events polls POLLERR | POLLPRI for good
 * and would keep the worker awake; the timer has nothing left to watch.
 * Both are silenced (the worker stops serving the group once its pass
 * sees -ENOENT, but a group without a margin gets no pass). */
static int watch_gone(struct mri_cgroup2 *cg)
{
	struct itimerspec off = { 0 };

	epoll_ctl(cg->epoll_fd, EPOLL_CTL_DEL, cg->watch_events_fd, NULL);
	timerfd_settime(cg->timer_fd, 0, &off, NULL);
	return -ENOENT;
}

int mri_cgroup2_event_ack(void *priv)
{
	struct mri_cgroup2 *cg = priv;
	struct epoll_event evs[2];
	struct mr_events e;
	uint64_t ticks, usage;
	int n, i, r;

	n = epoll_wait(cg->epoll_fd, evs, 2, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		if (evs[i].data.u32 == WATCH_TIMER) {
			if (read(cg->timer_fd, &ticks, sizeof(ticks)) < 0 &&
			    errno != EAGAIN)
				return -errno;
		} else {
			r = mri_cgroup2_read_events_fd(cg,
						       cg->watch_events_fd,
						       "memory.events", &e);
			if (r == -ENOENT)
				return watch_gone(cg);
			if (r < 0)
				return r;
		}
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
