/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shrink request (shrink.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "fds.h"
#include "group.h"
#include "log.h"
#include "shrink.h"

/* An eventfd's counter holds at most UINT64_MAX - 1 (eventfd(2)). */
#define COUNTER_MAX (UINT64_MAX - 1)

void mri_shrink_init(struct mri_shrink *s)
{
	atomic_init(&s->fd, -1);
	atomic_init(&s->ackfd, -1);
	atomic_init(&s->grace_ns, 0);
	s->unanswered = false;
}

void mri_shrink_close(struct mri_shrink *s)
{
	int fd = atomic_exchange(&s->fd, -1), ack = atomic_exchange(&s->ackfd, -1);

	if (fd >= 0)
		mri_fd_close(fd);
	if (ack >= 0)
		mri_fd_close(ack);
}

void mri_shrink_forget(struct mri_shrink *s)
{
	atomic_store(&s->fd, -1);
	atomic_store(&s->ackfd, -1);
}

bool mri_shrink_notify(struct mri_shrink *s, uint64_t bytes)
{
	int fd = atomic_load_explicit(&s->fd, memory_order_acquire), e;
	ssize_t n;

	if (fd < 0 || !bytes)
		return false;
	if (bytes > COUNTER_MAX / 2)
		bytes = COUNTER_MAX / 2;
	/* A counter that would overflow refuses the write (EAGAIN): a
	 * request is pending then all the same. errno is the caller's (a
	 * charge from a malloc or a signal handler): kept as it was. */
	e = errno;
	n = write(fd, &bytes, sizeof(bytes));
	if (n != (ssize_t)sizeof(bytes) && errno != EAGAIN) {
		errno = e;
		return false;
	}
	errno = e;
	atomic_fetch_add_explicit(&s->requests, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->requested_bytes, bytes,
				  memory_order_relaxed);
	return true;
}

/* Takes a pending answer; true if there was one. */
static bool take_answer(int ackfd)
{
	uint64_t v;

	return read(ackfd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

/* Waits up to grace_ns for an answer on ackfd. */
static bool wait_answer(int ackfd, uint64_t grace_ns)
{
	struct pollfd p = { .fd = ackfd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(grace_ns / 1000000000ULL),
		.tv_nsec = (long)(grace_ns % 1000000000ULL),
	};
	int r;

	do
		r = ppoll(&p, 1, &ts, NULL);
	while (r < 0 && errno == EINTR);
	return r > 0 && take_answer(ackfd);
}

int mri_shrink_before_reclaim(struct mr_group *g, uint64_t excess_bytes,
			      uint64_t high_mark, bool wait)
{
	struct mri_shrink *s = &g->shrink;
	int ackfd = atomic_load(&s->ackfd);
	uint64_t grace = atomic_load(&s->grace_ns), usage;
	int r;

	if (ackfd < 0)
		return 0;
	/* An old answer (to a request the worker did not wait for) is no
	 * answer to this one; it tells that the program answers again. */
	if (take_answer(ackfd))
		s->unanswered = false;
	if (!mri_shrink_notify(s, excess_bytes) || !wait || !grace ||
	    s->unanswered)
		return 0;
	if (!wait_answer(ackfd, grace)) {
		atomic_fetch_add_explicit(&s->timeouts, 1,
					  memory_order_relaxed);
		s->unanswered = true;
		mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: shrink request of "
			"%llu bytes not answered within %llu ns; reclaiming, "
			"and not waiting again until an answer comes", g->path,
			(unsigned long long)excess_bytes,
			(unsigned long long)grace);
		return 0;
	}
	atomic_fetch_add_explicit(&s->answered, 1, memory_order_relaxed);
	r = g->be->read_usage(g->priv, &usage);
	if (r < 0)
		return r == -ENOENT ? r : 0;
	if (usage > high_mark)
		return 0;
	atomic_fetch_add_explicit(&s->avoided, 1, memory_order_relaxed);
	return 1;
}

MR_EXPORT int mr_group_shrink_fd(mr_group_t *g, uint64_t grace_ns)
{
	int r, fd, ack;

	if (!g || grace_ns > MR_SHRINK_GRACE_MAX_NS)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	pthread_mutex_lock(&g->reclaim_lock);
	atomic_store(&g->shrink.grace_ns, grace_ns);
	fd = atomic_load(&g->shrink.fd);
	if (fd >= 0)
		goto out;
	mri_fd_begin();
	ack = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ack = mri_fd_end(ack < 0 ? -errno : ack);
	if (ack < 0) {
		fd = ack;
		goto out;
	}
	mri_fd_begin();
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fd = mri_fd_end(fd < 0 ? -errno : fd);
	if (fd < 0) {
		mri_fd_close(ack);
		goto out;
	}
	atomic_store(&g->shrink.ackfd, ack);
	atomic_store_explicit(&g->shrink.fd, fd, memory_order_release);
out:
	pthread_mutex_unlock(&g->reclaim_lock);
	return fd;
}

MR_EXPORT int mr_group_shrink_done(mr_group_t *g)
{
	uint64_t one = 1;
	int r, ack;

	if (!g)
		return -EINVAL;
	r = mri_ctx_check_fork(g->ctx);
	if (r < 0)
		return r;
	ack = atomic_load(&g->shrink.ackfd);
	if (ack < 0)
		return -EBADF;
	/* A full counter is an answer pending all the same. */
	if (write(ack, &one, sizeof(one)) != (ssize_t)sizeof(one) &&
	    errno != EAGAIN)
		return -errno;
	return 0;
}

MR_EXPORT int mr_group_read_shrink_stats(mr_group_t *g,
					 struct mr_shrink_stats *st)
{
	struct mr_shrink_stats v = { .size = sizeof(v) };
	size_t n;

	if (!g || !st || st->size < sizeof(st->size) + sizeof(uint64_t))
		return -EINVAL;
	v.requests = atomic_load(&g->shrink.requests);
	v.requested_bytes = atomic_load(&g->shrink.requested_bytes);
	v.answered = atomic_load(&g->shrink.answered);
	v.timeouts = atomic_load(&g->shrink.timeouts);
	v.avoided = atomic_load(&g->shrink.avoided);
	n = st->size < sizeof(v) ? st->size : sizeof(v);
	v.size = st->size;
	memcpy(st, &v, n);
	return 0;
}
