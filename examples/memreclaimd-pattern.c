/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's group patterns (memreclaimd-pattern.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "memreclaimd-pattern.h"

static bool is_wild(const char *c)
{
	return strpbrk(c, "*?[") != NULL;
}

void mrd_pattern_free(struct mrd_pattern *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->comp[i]);
	free(p->comp);
	free(p->text);
	*p = (struct mrd_pattern){ 0 };
}

/* Whether every `[` of c opens a bracket expression that closes. */
static bool brackets_close(const char *c)
{
	const char *s = c;

	while ((s = strchr(s, '[')) != NULL) {
		s++;
		if (*s == '!' || *s == '^')
			s++;
		if (*s == ']')
			s++;
		s = strchr(s, ']');
		if (!s)
			return false;
		s++;
	}
	return true;
}

int mrd_pattern_parse(const char *text, struct mrd_pattern *out,
		      const char **why)
{
	struct mrd_pattern p = { 0 };
	const char *s = text, *e;
	size_t len, cap = 0;
	char *c, **grown;

	*why = NULL;
	if (text[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if ((len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.')) {
			*why = "a \".\" or \"..\" component";
			goto bad;
		}
		if (p.n == MRD_PATTERN_MAX_COMPONENTS) {
			*why = "more than 63 components";
			goto bad;
		}
		c = strndup(s, len);
		if (!c)
			goto nomem;
		if (strstr(c, "**") && strcmp(c, "**") != 0) {
			*why = "\"**\" must be a whole component";
			free(c);
			goto bad;
		}
		if (!brackets_close(c)) {
			*why = "a \"[\" without its \"]\"";
			free(c);
			goto bad;
		}
		if (p.n == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(p.comp, cap * sizeof(*grown));
			if (!grown) {
				free(c);
				goto nomem;
			}
			p.comp = grown;
		}
		p.comp[p.n++] = c;
		if (is_wild(c))
			p.wild = true;
		s = e;
	}
	if (p.n == 0) {
		*why = "the root directory is not a group to manage";
		goto bad;
	}
	/* The normal form: each component after one slash. */
	len = 0;
	for (size_t i = 0; i < p.n; i++)
		len += 1 + strlen(p.comp[i]);
	p.text = malloc(len + 1);
	if (!p.text)
		goto nomem;
	p.text[0] = '\0';
	for (size_t i = 0, at = 0; i < p.n; i++) {
		p.text[at++] = '/';
		strcpy(p.text + at, p.comp[i]);
		at += strlen(p.comp[i]);
	}
	*out = p;
	return 0;
nomem:
	mrd_pattern_free(&p);
	*why = "out of memory";
	return -ENOMEM;
bad:
	mrd_pattern_free(&p);
	return -EINVAL;
}

uint64_t mrd_pattern_step(const struct mrd_pattern *p, uint64_t state,
			  const char *name)
{
	uint64_t next = 0;
	size_t i;

	for (i = 0; i < p->n; i++) {
		if (!((state >> i) & 1))
			continue;
		if (strcmp(p->comp[i], "**") == 0) {
			/* One component taken: on to the next position, or
			 * stay to take more. */
			next |= UINT64_C(1) << (i + 1);
			next |= UINT64_C(1) << i;
		} else if (fnmatch(p->comp[i], name, 0) == 0) {
			next |= UINT64_C(1) << (i + 1);
		}
	}
	return next;
}

uint64_t mrd_pattern_state(const struct mrd_pattern *p, const char *path)
{
	uint64_t state = MRD_STATE_ROOT;
	const char *s = path, *e;
	char name[256];
	size_t len;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s || !state)
			return state;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if (len >= sizeof(name))
			return 0; /* longer than a file name can be */
		memcpy(name, s, len);
		name[len] = '\0';
		state = mrd_pattern_step(p, state, name);
		s = e;
	}
}

bool mrd_pattern_literal_only(const struct mrd_pattern *p, uint64_t state)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (((state >> i) & 1) && is_wild(p->comp[i]))
			return false;
	return true;
}

bool mrd_pattern_match(const struct mrd_pattern *p, const char *path)
{
	return mrd_pattern_matched(p, mrd_pattern_state(p, path));
}
