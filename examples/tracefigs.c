/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefigs.h"

/* FNV-1a over the key policy '/' name, without building it. */
static size_t key_hash(const char *policy, size_t plen, const char *name)
{
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *p = (const unsigned char *)policy;
	size_t i;

	for (i = 0; i < plen; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return (size_t)h;
}

static bool same_figure(const struct trace_fig *f, const char *policy,
			size_t plen, const char *name)
{
	return (size_t)f->policy_len == plen &&
	       memcmp(f->key, policy, plen) == 0 && strcmp(f->name, name) == 0;
}

/* The slot of the figure (policy: plen bytes, name): where it is, or the
 * empty one where it would go. t->nslots > 0. */
static size_t *find_slot(const struct trace_figs *t, const char *policy,
			 size_t plen, const char *name)
{
	size_t mask = t->nslots - 1;
	size_t i = key_hash(policy, plen, name) & mask;

	while (t->slot[i] &&
	       !same_figure(&t->f[t->slot[i] - 1], policy, plen, name))
		i = (i + 1) & mask;
	return &t->slot[i];
}

/* Makes room for one more figure: the array and, kept at most half full,
 * the hash (rebuilt at twice the size). */
static int grow(struct trace_figs *t)
{
	struct trace_fig *f;
	size_t *slot, nslots, i, cap;
	const struct trace_fig *g;

	if (t->n == t->cap) {
		cap = t->cap ? 2 * t->cap : 64;
		f = realloc(t->f, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		t->f = f;
		t->cap = cap;
	}
	if (2 * (t->n + 1) <= t->nslots)
		return 0;
	nslots = t->nslots ? 2 * t->nslots : 128;
	slot = calloc(nslots, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	for (i = 0; i < t->n; i++) {
		g = &t->f[i];
		*find_slot(t, g->key, (size_t)g->policy_len, g->name) = i + 1;
	}
	return 0;
}

/* Appends (policy, name) at *slot, in order after t->prev. Returns its
 * index, or TRACE_FIGS_END on -ENOMEM. */
static size_t add(struct trace_figs *t, const char *policy,
		  const char *name)
{
	size_t plen = strlen(policy), i = t->n, *slot;
	struct trace_fig *f;

	if (grow(t) < 0)
		return TRACE_FIGS_END;
	f = &t->f[i];
	*f = (struct trace_fig){ .policy_len = (int)plen };
	f->key = malloc(plen + strlen(name) + 2);
	if (!f->key)
		return TRACE_FIGS_END;
	sprintf(f->key, "%s/%s", policy, name);
	f->name = f->key + plen + 1;
	if (t->n == 0 || t->prev == TRACE_FIGS_END) {
		f->next = t->n ? t->first : TRACE_FIGS_END;
		t->first = i;
	} else {
		f->next = t->f[t->prev].next;
		t->f[t->prev].next = i;
	}
	slot = find_slot(t, policy, plen, name);
	*slot = i + 1;
	t->n++;
	return i;
}

void trace_figs_start(struct trace_figs *t, int run)
{
	t->run = run;
	t->prev = TRACE_FIGS_END;
}

void trace_figs_collect(const char *policy, const char *name, double value,
			void *userdata)
{
	struct trace_figs *t = userdata;
	size_t i = TRACE_FIGS_END, *slot;

	if (t->err)
		return;
	if (t->nslots) {
		slot = find_slot(t, policy, strlen(policy), name);
		if (*slot)
			i = *slot - 1;
	}
	if (i == TRACE_FIGS_END) {
		i = add(t, policy, name);
		if (i == TRACE_FIGS_END) {
			t->err = -ENOMEM;
			return;
		}
	}
	t->f[i].v[t->run] = value;
	t->f[i].has[t->run] = true;
	t->prev = i;
}

size_t trace_figs_next(const struct trace_figs *t, size_t i)
{
	if (i == TRACE_FIGS_END)
		return t->n ? t->first : TRACE_FIGS_END;
	return t->f[i].next;
}

void trace_figs_free(struct trace_figs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->f[i].key);
	free(t->f);
	free(t->slot);
	*t = (struct trace_figs){ .n = 0 };
}
