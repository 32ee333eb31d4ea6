/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's runtime directory (memreclaimd-runtime.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "memreclaimd-dropin.h"
#include "memreclaimd-log.h"
#include "memreclaimd-runtime.h"

#define RT_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | \
		 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

void mrd_runtime_init(struct mrd_runtime *rt)
{
	*rt = (struct mrd_runtime){ .dirfd = -1, .ifd = -1 };
}

int mrd_runtime_fd(const struct mrd_runtime *rt)
{
	return rt->ifd;
}

void mrd_runtime_close(struct mrd_runtime *rt)
{
	if (rt->ifd >= 0)
		close(rt->ifd);
	if (rt->dirfd >= 0)
		close(rt->dirfd);
	free(rt->dir);
	mrd_runtime_init(rt);
}

/* Releases every group a drop-in took. */
static void release_all(struct mrd_groups *gs, const char *why)
{
	const char **ids;
	char *id;
	size_t n, i;

	if (mrd_groups_containers(gs, &ids, &n) < 0) {
		/* One at a time, without the list. */
		while (gs->n) {
			for (i = 0; i < gs->n && !gs->v[i]->container; i++)
				;
			if (i == gs->n)
				break;
			mrd_groups_release(gs, gs->v[i]->container, why);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		/* The table's string goes with its group. */
		id = strdup(ids[i]);
		if (id)
			mrd_groups_release(gs, id, why);
		free(id);
	}
	free(ids);
}

/* The drop-in `name` of container id was written: take its group, or
 * refuse it (and release what it held). */
static void take_file(struct mrd_runtime *rt, struct mrd_groups *gs,
		      const char *name, const char *id)
{
	const struct mrd_section *s;
	struct mrd_dropin *d;
	const char *why;
	int r;

	d = malloc(sizeof(*d));
	if (!d) {
		mrd_log(MR_LOG_ERR, "%s/%s: %s", rt->dir, name,
			strerror(ENOMEM));
		return;
	}
	r = mrd_dropin_read(rt->dirfd, name, d, &why);
	if (r == -ENOENT) {
		/* Removed as it was read: its event follows. */
		free(d);
		return;
	}
	if (r < 0) {
		mrd_log(MR_LOG_WARNING, "%s/%s: drop-in refused: %s", rt->dir,
			name, why);
		mrd_groups_release(gs, id, "its drop-in was refused");
		free(d);
		return;
	}
	s = mrd_config_runtime_section(gs->cfg, d->policy);
	if (!s) {
		mrd_log(MR_LOG_WARNING, "%s/%s: drop-in refused: policy '%s' "
			"is no [group] section with runtime = yes", rt->dir,
			name, d->policy);
		mrd_groups_release(gs, id, "its drop-in was refused");
	} else if (!mrd_pattern_match(&s->pattern, d->cgroup)) {
		mrd_log(MR_LOG_WARNING, "%s/%s: drop-in refused: %s is not a "
			"path of [group %s] (path = %s, %s)", rt->dir, name,
			d->cgroup, s->name, s->pattern.text, s->path.where);
		mrd_groups_release(gs, id, "its drop-in was refused");
	} else if (mrd_groups_take(gs, id, d->cgroup, s) < 0) {
		/* Said why; a group held before under another path went. */
	}
	free(d);
}

/* Reads the directory: every drop-in taken, the groups of those gone
 * released. */
static void scan(struct mrd_runtime *rt, struct mrd_groups *gs)
{
	char id[MRD_CONTAINER_ID_MAX + 1];
	const char **ids;
	struct dirent *e;
	char **present = NULL, **grown, **gone;
	size_t n = 0, cap = 0, nids, ngone = 0, i, j;
	bool keep;
	DIR *dp;
	int fd;

	fd = openat(rt->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp) {
		mrd_log(MR_LOG_ERR, "%s: listing: %s", rt->dir,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.' ||
		    !mrd_dropin_id(e->d_name, id, sizeof(id)))
			continue;
		take_file(rt, gs, e->d_name, id);
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(present, cap * sizeof(*grown));
			if (!grown)
				break;
			present = grown;
		}
		present[n] = strdup(id);
		if (present[n])
			n++;
	}
	closedir(dp);
	if (!e && mrd_groups_containers(gs, &ids, &nids) == 0 && nids) {
		/* A complete list: what it lacks is gone. Copied first:
		 * each release frees its id. */
		gone = calloc(nids, sizeof(*gone));
		for (i = 0; gone && i < nids; i++) {
			keep = false;
			for (j = 0; j < n && !keep; j++)
				keep = strcmp(present[j], ids[i]) == 0;
			if (!keep && (gone[ngone] = strdup(ids[i])))
				ngone++;
		}
		free(ids);
		for (i = 0; i < ngone; i++) {
			mrd_groups_release(gs, gone[i], "its drop-in is gone");
			free(gone[i]);
		}
		free(gone);
	}
	for (i = 0; i < n; i++)
		free(present[i]);
	free(present);
}

static bool any_runtime_section(const struct mrd_config *cfg)
{
	size_t k;

	for (k = 0; k < cfg->nsections; k++)
		if (cfg->sections[k].runtime_on)
			return true;
	return false;
}

int mrd_runtime_apply(struct mrd_runtime *rt, struct mrd_groups *gs,
		      const struct mrd_config *cfg)
{
	const char *dir = mrd_daemon_runtime_dir(&cfg->daemon);
	char self[64];
	int r;

	if (!any_runtime_section(cfg)) {
		if (rt->dir)
			mrd_log(MR_LOG_NOTICE, "%s: no longer followed (no "
				"[group] section with runtime = yes)", rt->dir);
		mrd_runtime_close(rt);
		release_all(gs, "no [group] section with runtime = yes");
		return 0;
	}
	if (!rt->dir || strcmp(rt->dir, dir) != 0) {
		mrd_runtime_close(rt);
		r = mrd_runtime_dir_open(MRD_PROG, dir, true);
		if (r < 0)
			goto fail;
		rt->dirfd = r;
		rt->dir = strdup(dir);
		rt->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		/* The watch on the directory checked, through its fd (the
		 * magic link of proc(5) leads to the open directory, not
		 * to what the path names now). */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", rt->dirfd);
		if (!rt->dir || rt->ifd < 0 ||
		    inotify_add_watch(rt->ifd, self, RT_MASK) < 0) {
			r = !rt->dir ? -ENOMEM : -errno;
			mrd_log(MR_LOG_ERR, "%s: following: %s", dir,
				strerror(-r));
			mrd_runtime_close(rt);
			goto fail;
		}
		mrd_log(MR_LOG_INFO, "%s: following the containers' drop-ins",
			dir);
	}
	scan(rt, gs);
	return 0;
fail:
	release_all(gs, "the runtime directory cannot be followed");
	return r;
}

int mrd_runtime_dispatch(struct mrd_runtime *rt, struct mrd_groups *gs)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	char id[MRD_CONTAINER_ID_MAX + 1];
	const struct inotify_event *ev;
	ssize_t len;
	char *p;

	if (rt->ifd < 0)
		return 0;
	for (;;) {
		len = read(rt->ifd, buf, sizeof(buf));
		if (len < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const void *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				scan(rt, gs);
				continue;
			}
			if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
				mrd_log(MR_LOG_ERR, "%s: the runtime directory "
					"was removed or moved; reload to follow "
					"it again", rt->dir);
				release_all(gs, "the runtime directory is gone");
				mrd_runtime_close(rt);
				return 0;
			}
			if (!ev->len || ev->name[0] == '.' ||
			    (ev->mask & IN_ISDIR) ||
			    !mrd_dropin_id(ev->name, id, sizeof(id)))
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
				mrd_groups_release(gs, id,
						   "its drop-in was removed");
			else
				take_file(rt, gs, ev->name, id);
		}
	}
}
