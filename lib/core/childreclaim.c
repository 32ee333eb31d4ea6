/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reclaim through the children the caller owns (see childreclaim.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "childreclaim.h"
#include "context.h"
#include "control.h"
#include "group.h"
#include "log.h"

/* The children found so far, while the backend lists them. */
struct found {
	struct mr_group *g;
	struct mri_child *v;
	size_t n;
	int err;        /* what add_child() stopped the listing with */
};

/* list_children()'s fn: opens the child group at `path` if the group's
 * backend takes it and appends it to s->v. Returns 0 whether or not it
 * did, or -ENOMEM (then the listing stops). */
static int add_child(void *arg, const char *path)
{
	struct found *s = arg;
	struct mr_group *g = s->g;
	struct mri_open_env env;
	struct mri_child c = { 0 }, *nv;
	int r;

	if (g->be->probe(path) != 1)
		return 0;
	c.path = strdup(path);
	c.priv = calloc(1, g->be->priv_size ? g->be->priv_size : 1);
	nv = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	if (!c.path || !c.priv || !nv) {
		free(c.path);
		free(c.priv);
		if (nv)
			s->v = nv;
		return s->err = -ENOMEM;
	}
	s->v = nv;
	/* No event sink: nobody polls a child handle. */
	mri_ctx_open_env(g->ctx, g->be, &env);
	r = g->be->open(c.priv, path, &env);
	if (r == 0)
		s->v[s->n++] = c;
	if (r < 0) {
		mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: child %s: %s",
			g->path, path, mr_strerror(r));
		free(c.path);
		free(c.priv);
	}
	return 0;
}

/* The children the group's backend lists, kept with those found before
 * a failure of the listing. */
static void scan(struct mr_group *g)
{
	struct found s = { .g = g };
	int r = 0;

	g->children.scanned = true;
	if (g->be->list_children)
		r = g->be->list_children(g->path, add_child, &s);
	if (r < 0 && r != s.err)
		mri_log(&g->ctx->log, MR_LOG_DEBUG, "%s: its children could "
			"not be listed: %s", g->path, mr_strerror(r));
	g->children.v = s.v;
	g->children.n = s.n;
	mri_log(&g->ctx->log, MR_LOG_NOTICE, "%s: reclaim refused; %zu child "
		"group%s owned by this user to reclaim instead%s", g->path,
		s.n, s.n == 1 ? "" : "s", s.n ? "" : ": advisory mode");
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
