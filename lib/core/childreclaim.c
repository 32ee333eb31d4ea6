/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reclaim through the children the caller owns (see childreclaim.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "childreclaim.h"
#include "context.h"
#include "control.h"
#include "fds.h"
#include "group.h"
#include "log.h"

/* Opens g's child directory `name` if the caller owns it and the group's
 * backend takes it; appends it to v. Returns 0 whether or not it did, or
 * -ENOMEM. */
static int add_child(struct mr_group *g, const char *name,
		     struct mri_child **v, size_t *n)
{
	struct mri_open_env env;
	struct mri_child c = { 0 }, *nv;
	char path[PATH_MAX];
	struct stat st;
	int r;

	if (snprintf(path, sizeof(path), "%s/%s", g->path, name) >=
	    (int)sizeof(path))
		return 0;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || g->be->probe(path) != 1)
		return 0;
	c.path = strdup(path);
	c.priv = calloc(1, g->be->priv_size ? g->be->priv_size : 1);
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!c.path || !c.priv || !nv) {
		free(c.path);
		free(c.priv);
		if (nv)
			*v = nv;
		return -ENOMEM;
	}
	*v = nv;
	/* No event sink: nobody polls a child handle. */
	mri_ctx_open_env(g->ctx, g->be, &env);
	r = g->be->open(c.priv, path, &env);
	if (r == 0)
		(*v)[(*n)++] = c;
	if (r < 0) {
		mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: child %s: %s",
			g->path, path, mr_strerror(r));
		free(c.path);
		free(c.priv);
	}
	return 0;
}

static void scan(struct mr_group *g)
{
	struct mri_child *v = NULL;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	g->children.scanned = true;
	dir = mri_opendir(g->path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (add_child(g, de->d_name, &v, &n) < 0)
			break;
	}
	mri_closedir(dir);
	g->children.v = v;
	g->children.n = n;
	mri_log(&g->ctx->log, MR_LOG_NOTICE, "%s: reclaim refused; %zu child "
		"group%s owned by this user to reclaim instead%s", g->path, n,
		n == 1 ? "" : "s", n ? "" : ": advisory mode");
}

void *mri_children_next(struct mr_group *g)
{
	struct mri_children *cs = &g->children;
	size_t i, k;

	if (!cs->scanned)
		scan(g);
	for (i = 0; i < cs->n; i++) {
		k = (cs->next + i) % cs->n;
		if (!cs->v[k].refused) {
			cs->next = (k + 1) % cs->n;
			return cs->v[k].priv;
		}
	}
	return NULL;
}

void mri_children_learn(struct mr_group *g, void *priv, int r)
{
	size_t i;

	if (!mri_control_refusal(r))
		return;
	for (i = 0; i < g->children.n; i++) {
		if (g->children.v[i].priv != priv || g->children.v[i].refused)
			continue;
		g->children.v[i].refused = true;
		mri_log(&g->ctx->log, MR_LOG_WARNING, "%s: reclaim of the "
			"child %s refused too (%s)", g->path,
			g->children.v[i].path, mr_strerror(r));
	}
}

void mri_children_forget(struct mr_group *g)
{
	size_t i;

	for (i = 0; i < g->children.n; i++)
		g->be->forget(g->children.v[i].priv);
}

void mri_children_close(struct mr_group *g, bool forget)
{
	size_t i;

	for (i = 0; i < g->children.n; i++) {
		if (forget)
			g->be->forget(g->children.v[i].priv);
		else
			g->be->close(g->children.v[i].priv);
		free(g->children.v[i].priv);
		free(g->children.v[i].path);
	}
	free(g->children.v);
	g->children = (struct mri_children){ 0 };
}
