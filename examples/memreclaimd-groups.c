/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The groups memreclaimd keeps and their discovery (memreclaimd-groups.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "memreclaimd-groups.h"
#include "memreclaimd-log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
		    IN_ONLYDIR | IN_EXCL_UNLINK)

uint64_t mrd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void mrd_groups_init(struct mrd_groups *gs, mr_ctx_t *ctx,
		     const struct mrd_groups_hooks *hooks, void *userdata)
{
	*gs = (struct mrd_groups){ .ctx = ctx, .ifd = -1,
				   .userdata = userdata };
	if (hooks)
		gs->hooks = *hooks;
	pthread_mutex_init(&gs->lock, NULL);
}

int mrd_groups_fd(const struct mrd_groups *gs)
{
	return gs->ifd;
}

/* ---------------------------------------------------------------- table */

/* The index of path in the table, or of where it would go (*found
 * false). */
static size_t find(const struct mrd_groups *gs, const char *path, bool *found)
{
	size_t lo = 0, hi = gs->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(gs->v[mid]->path, path);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static struct mrd_group *insert(struct mrd_groups *gs, size_t at,
				const char *path)
{
	struct mrd_group *grp, **grown;

	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? gs->cap * 2 : 16;

		grown = realloc(gs->v, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		gs->v = grown;
		gs->cap = cap;
	}
	grp = calloc(1, sizeof(*grp));
	if (!grp || !(grp->path = strdup(path))) {
		free(grp);
		return NULL;
	}
	pthread_mutex_lock(&gs->lock);
	memmove(gs->v + at + 1, gs->v + at, (gs->n - at) * sizeof(*gs->v));
	gs->v[at] = grp;
	gs->n++;
	pthread_mutex_unlock(&gs->lock);
	return grp;
}

/* Closes the group at index i and takes it out of the table. */
static int drop(struct mrd_groups *gs, size_t i, const char *why)
{
	struct mrd_group *grp = gs->v[i];
	int r = 0;

	if (grp->g && gs->hooks.closing)
		gs->hooks.closing(gs, grp, why);
	pthread_mutex_lock(&gs->lock);
	memmove(gs->v + i, gs->v + i + 1, (gs->n - i - 1) * sizeof(*gs->v));
	gs->n--;
	pthread_mutex_unlock(&gs->lock);
	if (grp->g) {
		r = mr_group_close(grp->g);
		if (r < 0 && r != -ENOENT)
			mrd_log(MR_LOG_ERR, "%s: closing: %s", grp->path,
				mr_strerror(r));
		else
			r = 0;
	}
	free(grp->path);
	free(grp->key);
	free(grp->container);
	free(grp);
	return r;
}

int mrd_groups_adopt(struct mrd_groups *gs, mr_group_t *g, const char *path)
{
	struct mr_limits lim = { .size = sizeof(lim) };
	struct mrd_group *grp;
	bool found;
	size_t at = find(gs, path, &found);

	if (found)
		return -EEXIST;
	grp = insert(gs, at, path);
	if (!grp)
		return -ENOMEM;
	grp->g = g;
	grp->start_ns = mrd_now_ns();
	if (mr_group_read_limits(g, &lim) == 0)
		grp->limit_hits_base = lim.limit_hits;
	if (gs->hooks.opened)
		gs->hooks.opened(gs, grp);
	return 0;
}

/* ---------------------------------------------------------------- policy */

static char *key_of(const struct mrd_section *s)
{
	return strdup(s->policy_key);
}

/* Applies the section's policy to g, the group at path, over the policy
 * *old it has (NULL: just opened), all or nothing; stores the policy in
 * force then in *applied (policyopt_apply()'s *out) and its limit hits
 * now in *hits (may be NULL). Returns 0 or a negative errno (reported,
 * with the group and the cause; the group is as it was). */
static int configure(mr_group_t *g, const char *path,
		     const struct mrd_section *s,
		     const struct policy_bytes *old,
		     struct policy_bytes *applied, uint64_t *hits)
{
	struct mr_limits lim = { .size = sizeof(lim) };
	struct policy_bytes b;
	char prefix[PATH_MAX + 64];
	int r;

	r = mr_group_read_limits(g, &lim);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "%s: reading its limits: %s", path,
			mr_strerror(r));
		return r;
	}
	r = policyopt_apply(mrd_log_prefix(prefix, sizeof(prefix), path), g,
			    path, &s->policy, &lim, old, &b);
	*applied = b;
	if (r < 0) {
		if (old)
			mrd_log(MR_LOG_ERR, "%s: the policy of [group %s] (%s) "
				"not applied: %s; it keeps its former policy",
				path, s->name, s->where, mr_strerror(r));
		return r;
	}
	if (hits)
		*hits = lim.limit_hits;
	if (b.margin_adaptive)
		mrd_log(MR_LOG_INFO, "%s: adaptive margin ([group %s], %s)",
			path, s->name, s->where);
	else if (b.margin_set)
		mrd_log(MR_LOG_INFO, "%s: margin %" PRIu64 " bytes, hysteresis "
			"%" PRIu64 " bytes ([group %s], %s)", path, b.margin,
			b.hysteresis, s->name, s->where);
	if (b.proactive)
		mrd_log(MR_LOG_INFO, "%s: proactive controller%s ([group %s], "
			"%s)", path, s->policy.proactive ==
			POLICYOPT_PROACTIVE_DRY_RUN ? " (dry run)" : "",
			s->name, s->where);
	return 0;
}

/* The path was found matching s: open it, or reconfigure it if its
 * section changed. */
static void found_group(struct mrd_groups *gs, const char *path,
			const struct mrd_section *s)
{
	const char *backend = gs->cfg->daemon.backend.text;
	struct mrd_group *grp;
	mr_group_t *g;
	char *key = key_of(s);
	bool found;
	size_t at;
	int r;

	if (!key) {
		mrd_log(MR_LOG_ERR, "%s: %s", path, strerror(ENOMEM));
		return;
	}
	at = find(gs, path, &found);
	if (found && gs->v[at]->container) {
		/* Its drop-in's, not the walk's. */
		free(key);
		return;
	}
	if (found) {
		grp = gs->v[at];
		grp->seen = true;
		if (strcmp(grp->key, key) == 0) {
			free(key);
			return;
		}
		if (grp->g) {
			if (configure(grp->g, grp->path, s, &grp->applied,
				      &grp->applied, NULL) == 0) {
				free(grp->key);
				grp->key = key;
			} else {
				free(key);
			}
			return;
		}
		/* Refused before; its section changed: try again. */
		free(grp->key);
	} else {
		grp = insert(gs, at, path);
		if (!grp) {
			mrd_log(MR_LOG_ERR, "%s: %s", path, strerror(ENOMEM));
			free(key);
			return;
		}
	}
	grp->key = key;
	grp->seen = true;
	r = mr_group_open(gs->ctx, path, backend, &g);
	if (r == -ENOENT) {
		/* Removed as it was found: its parent's event follows. */
		at = find(gs, path, &found);
		drop(gs, at, "removed");
		return;
	}
	if (r < 0) {
		mrd_log(MR_LOG_WARNING, "%s: matched by [group %s] (%s) but "
			"not opened: %s; left alone", path, s->name,
			s->where, mr_strerror(r));
		return;
	}
	if (configure(g, path, s, NULL, &grp->applied,
		      &grp->limit_hits_base) < 0) {
		mrd_log(MR_LOG_WARNING, "%s: matched by [group %s] (%s) but "
			"its policy does not suit it; left alone", path,
			s->name, s->where);
		mr_group_close(g);
		return;
	}
	/* Under the lock: the metrics endpoint's thread reads the table. */
	pthread_mutex_lock(&gs->lock);
	grp->g = g;
	pthread_mutex_unlock(&gs->lock);
	grp->start_ns = mrd_now_ns();
	if (gs->hooks.opened)
		gs->hooks.opened(gs, grp);
}

/* ---------------------------------------------------------------- drop-ins */

/* The index of the group taken for id, or gs->n. */
static size_t find_container(const struct mrd_groups *gs, const char *id)
{
	size_t i;

	for (i = 0; i < gs->n; i++)
		if (gs->v[i]->container && strcmp(gs->v[i]->container, id) == 0)
			return i;
	return gs->n;
}

int mrd_groups_containers(const struct mrd_groups *gs, const char ***ids,
			  size_t *n)
{
	size_t i, k = 0;

	*ids = NULL;
	*n = 0;
	for (i = 0; i < gs->n; i++)
		k += gs->v[i]->container != NULL;
	if (!k)
		return 0;
	*ids = calloc(k, sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (i = 0; i < gs->n; i++)
		if (gs->v[i]->container)
			(*ids)[(*n)++] = gs->v[i]->container;
	return 0;
}

void mrd_groups_release(struct mrd_groups *gs, const char *id,
			const char *why)
{
	size_t i = find_container(gs, id);
	uint64_t usage;

	if (i == gs->n)
		return;
	mrd_log(MR_LOG_NOTICE, "%s: container %s: %s; released",
		gs->v[i]->path, id, why);
	/* A runtime removes a stopped container's group before its
	 * poststop hooks run (crun): nothing left to read then. */
	if (gs->v[i]->g && mr_group_read_usage(gs->v[i]->g, &usage) == -ENOENT)
		why = "removed";
	drop(gs, i, why);
}

void mrd_groups_release_gone(struct mrd_groups *gs)
{
	struct mrd_group *grp;
	uint64_t usage;
	size_t i = 0;

	while (i < gs->n) {
		grp = gs->v[i];
		if (!grp->container || !grp->g ||
		    mr_group_read_usage(grp->g, &usage) != -ENOENT) {
			i++;
			continue;
		}
		mrd_log(MR_LOG_NOTICE, "%s: container %s: its cgroup was "
			"removed with its drop-in still there (no poststop "
			"hook took it back); released", grp->path,
			grp->container);
		drop(gs, i, "removed");
	}
}

int mrd_groups_take(struct mrd_groups *gs, const char *id, const char *path,
		    const struct mrd_section *s)
{
	const char *backend = gs->cfg ? gs->cfg->daemon.backend.text : NULL;
	struct policy_bytes applied;
	struct mrd_group *grp;
	char *key = NULL, *cid = NULL;
	uint64_t hits = 0;
	mr_group_t *g;
	bool found;
	size_t i, at;
	int r;

	i = find_container(gs, id);
	if (i < gs->n && strcmp(gs->v[i]->path, path) != 0)
		mrd_groups_release(gs, id, "its drop-in names another group");
	at = find(gs, path, &found);
	if (found && !gs->v[at]->container) {
		mrd_log(MR_LOG_WARNING, "%s: container %s's drop-in refused: "
			"the group is kept by [group %s]'s walk", path, id,
			mrd_config_section_for(gs->cfg, path) ?
			mrd_config_section_for(gs->cfg, path)->name : "?");
		return -EEXIST;
	}
	if (found && strcmp(gs->v[at]->container, id) != 0) {
		mrd_log(MR_LOG_WARNING, "%s: container %s's drop-in refused: "
			"the group is container %s's", path, id,
			gs->v[at]->container);
		return -EEXIST;
	}
	key = key_of(s);
	if (!key)
		goto nomem;
	if (found) {
		/* Its drop-in was written again. */
		grp = gs->v[at];
		if (strcmp(grp->key, key) == 0) {
			free(key);
			return 0;
		}
		r = configure(grp->g, path, s, &grp->applied, &grp->applied,
			      NULL);
		if (r < 0) {
			free(key);
			return r;
		}
		free(grp->key);
		grp->key = key;
		return 0;
	}
	cid = strdup(id);
	if (!cid)
		goto nomem;
	r = mr_group_open(gs->ctx, path, backend, &g);
	if (r < 0) {
		mrd_log(MR_LOG_WARNING, "%s: container %s with [group %s] (%s) "
			"but not opened: %s; left alone", path, id, s->name,
			s->where, mr_strerror(r));
		goto err;
	}
	if (configure(g, path, s, NULL, &applied, &hits) < 0) {
		mrd_log(MR_LOG_WARNING, "%s: container %s: the policy of "
			"[group %s] (%s) does not suit it; left alone", path,
			id, s->name, s->where);
		mr_group_close(g);
		r = -EINVAL;
		goto err;
	}
	grp = insert(gs, at, path);
	if (!grp) {
		mr_group_close(g);
		goto nomem;
	}
	grp->key = key;
	grp->container = cid;
	grp->seen = true;
	pthread_mutex_lock(&gs->lock);
	grp->g = g;
	pthread_mutex_unlock(&gs->lock);
	grp->start_ns = mrd_now_ns();
	grp->limit_hits_base = hits;
	grp->applied = applied;
	mrd_log(MR_LOG_NOTICE, "%s: container %s: kept with [group %s]", path,
		id, s->name);
	if (gs->hooks.opened)
		gs->hooks.opened(gs, grp);
	return 0;
nomem:
	mrd_log(MR_LOG_ERR, "%s: container %s: %s", path, id, strerror(ENOMEM));
	r = -ENOMEM;
err:
	free(key);
	free(cid);
	return r;
}

/* ---------------------------------------------------------------- walk */

static bool on_cgroupfs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 &&
	       ((unsigned long)sf.f_type == CGROUP_SUPER_MAGIC ||
		(unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC);
}

static int watch_cmp(const void *a, const void *b)
{
	const struct mrd_watch *x = a, *y = b;

	return (x->wd > y->wd) - (x->wd < y->wd);
}

static struct mrd_watch *watch_find(struct mrd_groups *gs, int wd)
{
	struct mrd_watch key = { .wd = wd };

	if (!gs->nw)
		return NULL;
	return bsearch(&key, gs->w, gs->nw, sizeof(*gs->w), watch_cmp);
}

static void watch_add(struct mrd_groups *gs, const char *path)
{
	struct mrd_watch *w, *grown;
	int wd = inotify_add_watch(gs->ifd, path, WATCH_MASK);
	size_t i;

	if (wd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			mrd_log(MR_LOG_WARNING, "%s: cannot watch for new "
				"groups: %s", path, strerror(errno));
		return;
	}
	w = watch_find(gs, wd);
	if (w) {
		if (strcmp(w->path, path) != 0) {
			/* The same directory under another name (a bind
			 * mount, a rename): the newest name. */
			char *p = strdup(path);

			if (p) {
				free(w->path);
				w->path = p;
			}
		}
		return;
	}
	if (gs->nw == gs->capw) {
		size_t cap = gs->capw ? gs->capw * 2 : 16;

		grown = realloc(gs->w, cap * sizeof(*grown));
		if (!grown)
			goto nomem;
		gs->w = grown;
		gs->capw = cap;
	}
	for (i = gs->nw; i > 0 && gs->w[i - 1].wd > wd; i--)
		gs->w[i] = gs->w[i - 1];
	gs->w[i].wd = wd;
	gs->w[i].path = strdup(path);
	if (!gs->w[i].path) {
		memmove(gs->w + i, gs->w + i + 1,
			(gs->nw - i) * sizeof(*gs->w));
		goto nomem;
	}
	gs->nw++;
	return;
nomem:
	inotify_rm_watch(gs->ifd, wd);
	mrd_log(MR_LOG_ERR, "%s: watching: %s", path, strerror(ENOMEM));
}

static void watch_remove_at(struct mrd_groups *gs, size_t i)
{
	free(gs->w[i].path);
	memmove(gs->w + i, gs->w + i + 1, (gs->nw - i - 1) * sizeof(*gs->w));
	gs->nw--;
}

static void watches_clear(struct mrd_groups *gs)
{
	while (gs->nw)
		watch_remove_at(gs, gs->nw - 1);
}

/* The states of the sections at path. */
static void states_of(const struct mrd_config *cfg, const char *path,
		      uint64_t *st)
{
	size_t k;

	/* A runtime section is the hooks' (mrd_groups_take()), not the
	 * walk's. */
	for (k = 0; k < cfg->nsections; k++)
		st[k] = cfg->sections[k].runtime_on ? 0 :
			mrd_pattern_state(&cfg->sections[k].pattern, path);
}

static void walk(struct mrd_groups *gs, const char *dir, const uint64_t *st);

/* The child `name` of dir, whose states are st. */
static void visit_child(struct mrd_groups *gs, const char *dir,
			const uint64_t *st, const char *name)
{
	const struct mrd_config *cfg = gs->cfg;
	const struct mrd_section *winner = NULL;
	char path[PATH_MAX];
	uint64_t *cst;
	bool descend = false;
	size_t k;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s",
			     strcmp(dir, "/") == 0 ? "" : dir, name) >=
	    sizeof(path))
		return;
	cst = calloc(cfg->nsections, sizeof(*cst));
	if (!cst) {
		mrd_log(MR_LOG_ERR, "%s: %s", path, strerror(ENOMEM));
		return;
	}
	for (k = 0; k < cfg->nsections; k++) {
		const struct mrd_pattern *p = &cfg->sections[k].pattern;

		cst[k] = st[k] ? mrd_pattern_step(p, st[k], name) : 0;
		if (!winner && mrd_pattern_matched(p, cst[k]))
			winner = &cfg->sections[k];
		if (mrd_pattern_descends(p, cst[k]))
			descend = true;
	}
	if (winner)
		found_group(gs, path, winner);
	if (descend)
		walk(gs, path, cst);
	free(cst);
}

static bool is_dir(const char *dir, const struct dirent *d)
{
	char path[PATH_MAX];
	struct stat st;

	if (d->d_type == DT_DIR)
		return true;
	if (d->d_type != DT_UNKNOWN)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Watches dir if it is a cgroup directory, and visits the children the
 * patterns can reach: named ones when every position is literal, else
 * every subdirectory. */
static void walk(struct mrd_groups *gs, const char *dir, const uint64_t *st)
{
	const struct mrd_config *cfg = gs->cfg;
	bool literal = true;
	struct dirent *d;
	struct stat sb;
	char path[PATH_MAX];
	size_t k, i;
	DIR *dp;

	if (on_cgroupfs(dir))
		watch_add(gs, dir);
	for (k = 0; k < cfg->nsections; k++)
		if (!mrd_pattern_literal_only(&cfg->sections[k].pattern,
					      st[k]))
			literal = false;
	if (literal) {
		for (k = 0; k < cfg->nsections; k++) {
			const struct mrd_pattern *p = &cfg->sections[k].pattern;

			for (i = 0; i < p->n; i++) {
				const char *name = mrd_pattern_component(p, i);
				size_t j, m;
				bool dup = false;

				if (!((st[k] >> i) & 1))
					continue;
				/* Each name once, whichever sections
				 * name it. */
				for (j = 0; j < k && !dup; j++)
					for (m = 0; m < cfg->sections[j].pattern.n; m++)
						if (((st[j] >> m) & 1) &&
						    strcmp(cfg->sections[j].pattern.comp[m], name) == 0)
							dup = true;
				for (m = 0; m < i && !dup; m++)
					if (((st[k] >> m) & 1) &&
					    strcmp(p->comp[m], name) == 0)
						dup = true;
				if (dup)
					continue;
				snprintf(path, sizeof(path), "%s/%s",
					 strcmp(dir, "/") == 0 ? "" : dir,
					 name);
				if (lstat(path, &sb) == 0 &&
				    S_ISDIR(sb.st_mode))
					visit_child(gs, dir, st, name);
			}
		}
		return;
	}
	/* A wildcard is followed on a cgroup file system alone: a pattern
	 * of `**` from the root, or of `*` under /etc, would otherwise list
	 * the whole host, /proc included, at every walk. */
	if (!on_cgroupfs(dir)) {
		mrd_log(MR_LOG_WARNING, "%s: not on a cgroup file system: the "
			"wildcards of the patterns that reach it are not "
			"followed here", dir);
		return;
	}
	dp = opendir(dir);
	if (!dp) {
		if (errno != ENOENT)
			mrd_log(MR_LOG_WARNING, "%s: listing: %s", dir,
				strerror(errno));
		return;
	}
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (is_dir(dir, d))
			visit_child(gs, dir, st, d->d_name);
	}
	closedir(dp);
}

static void walk_all(struct mrd_groups *gs)
{
	uint64_t *st = calloc(gs->cfg->nsections + 1, sizeof(*st));
	size_t k;

	if (!st) {
		mrd_log(MR_LOG_ERR, "walking the groups: %s", strerror(ENOMEM));
		return;
	}
	for (k = 0; k < gs->cfg->nsections; k++)
		st[k] = gs->cfg->sections[k].runtime_on ? 0 : MRD_STATE_ROOT;
	walk(gs, "/", st);
	free(st);
}

/* Drops the groups no walk found since the flags were cleared. */
static void drop_unseen(struct mrd_groups *gs, const char *why)
{
	size_t i = 0;

	while (i < gs->n) {
		if (gs->v[i]->seen) {
			i++;
			continue;
		}
		if (gs->v[i]->g)
			mrd_log(MR_LOG_NOTICE, "%s: %s; released",
				gs->v[i]->path, why);
		drop(gs, i, why);
	}
}

int mrd_groups_apply(struct mrd_groups *gs, const struct mrd_config *cfg)
{
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	size_t i;

	if (ifd < 0) {
		int r = -errno;

		mrd_log(MR_LOG_ERR, "inotify_init1: %s", strerror(-r));
		return r;
	}
	if (gs->ifd >= 0)
		close(gs->ifd);
	watches_clear(gs);
	gs->ifd = ifd;
	gs->cfg = cfg;
	/* The drop-ins' groups are the runtime directory's to release
	 * (mrd_runtime_scan() follows a reload). */
	for (i = 0; i < gs->n; i++)
		gs->v[i]->seen = gs->v[i]->container != NULL;
	walk_all(gs);
	drop_unseen(gs, "no longer matched by any [group] section");
	return 0;
}

/* ---------------------------------------------------------------- events */

/* Whether path is base or beneath it. */
static bool at_or_below(const char *path, const char *base)
{
	size_t len = strlen(base);

	return strncmp(path, base, len) == 0 &&
	       (path[len] == '\0' || path[len] == '/');
}

/* base went away (removed or renamed): its groups and watches too. */
static void gone(struct mrd_groups *gs, const char *base)
{
	size_t i = 0;

	while (i < gs->n) {
		if (!at_or_below(gs->v[i]->path, base)) {
			i++;
			continue;
		}
		if (gs->v[i]->g)
			mrd_log(MR_LOG_NOTICE, "%s: cgroup removed; dropped",
				gs->v[i]->path);
		drop(gs, i, "removed");
	}
	i = 0;
	while (i < gs->nw) {
		if (!at_or_below(gs->w[i].path, base)) {
			i++;
			continue;
		}
		/* Removed directories lose their watch in the kernel
		 * (IN_IGNORED follows); a renamed one keeps it. */
		inotify_rm_watch(gs->ifd, gs->w[i].wd);
		watch_remove_at(gs, i);
	}
}

static void rewalk(struct mrd_groups *gs)
{
	size_t i;

	mrd_log(MR_LOG_WARNING, "inotify queue overflowed: looking at every "
		"watched directory again");
	for (i = 0; i < gs->n; i++)
		gs->v[i]->seen = gs->v[i]->container != NULL;
	walk_all(gs);
	drop_unseen(gs, "no longer there");
}

int mrd_groups_dispatch(struct mrd_groups *gs)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct mrd_watch *w;
	char path[PATH_MAX], dir[PATH_MAX];
	uint64_t *st;
	ssize_t len;
	char *p;

	if (gs->ifd < 0)
		return 0;
	for (;;) {
		len = read(gs->ifd, buf, sizeof(buf));
		if (len < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (p = buf; p < buf + len;
		     p += sizeof(*ev) + ev->len) {
			/* buf is aligned for the events, each padded to it. */
			ev = (const void *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				rewalk(gs);
				continue;
			}
			w = watch_find(gs, ev->wd);
			if (!w)
				continue;
			if (ev->mask & IN_IGNORED) {
				watch_remove_at(gs, (size_t)(w - gs->w));
				continue;
			}
			if (!(ev->mask & IN_ISDIR) || !ev->len)
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s",
					     strcmp(w->path, "/") ? w->path : "",
					     ev->name) >= sizeof(path))
				continue;
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				gone(gs, path);
				continue;
			}
			/* IN_CREATE, IN_MOVED_TO: the new child as the
			 * walk would have found it. */
			st = calloc(gs->cfg->nsections + 1, sizeof(*st));
			if (!st) {
				mrd_log(MR_LOG_ERR, "%s: %s", path,
					strerror(ENOMEM));
				continue;
			}
			/* The walk may rename or move watches. */
			snprintf(dir, sizeof(dir), "%s", w->path);
			states_of(gs->cfg, dir, st);
			visit_child(gs, dir, st, ev->name);
			free(st);
		}
	}
}

int mrd_groups_free(struct mrd_groups *gs)
{
	int r, first = 0;

	while (gs->n) {
		r = drop(gs, gs->n - 1, "stopping");
		if (r < 0 && !first)
			first = r;
	}
	free(gs->v);
	watches_clear(gs);
	free(gs->w);
	if (gs->ifd >= 0)
		close(gs->ifd);
	gs->ifd = -1;
	pthread_mutex_destroy(&gs->lock);
	return first;
}
