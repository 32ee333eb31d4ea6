/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The model's invariants, checked by the tests after every scenario. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int broken(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -EIO;
}

int sim_check_invariants(const struct sim_machine *m, char *buf, size_t len)
{
	uint64_t *self, *lru, *hier, *cl, *cm, charged = 0, pgscan, pgsteal;
	const struct sim_memcg *g;
	const struct sim_page *p;
	unsigned i, k;
	uint64_t pfn;
	int r = 0;

	self = calloc(m->nmemcg, sizeof(*self));
	hier = calloc(m->nmemcg, sizeof(*hier));
	lru = calloc((size_t)m->nmemcg * SIM_NR_LRU, sizeof(*lru));
	cl = calloc(m->nmemcg, sizeof(*cl));
	cm = calloc(m->nmemcg, sizeof(*cm));
	if (!self || !hier || !lru || !cl || !cm) {
		r = -ENOMEM;
		goto out;
	}
	for (pfn = 0; pfn < m->cfg.ram_pages; pfn++) {
		p = &m->pages[pfn];
		if (p->lru == 0xff)
			continue;
		self[p->memcg]++;
		lru[p->memcg * SIM_NR_LRU + p->lru]++;
		charged++;
	}
	if (charged + m->nr_free != m->cfg.ram_pages)
		r = broken(buf, len, "pages in use %llu + free %llu != RAM %llu",
			   (unsigned long long)charged,
			   (unsigned long long)m->nr_free,
			   (unsigned long long)m->cfg.ram_pages);
	/* Each group's subtree: a parent is created before its children,
	 * so one pass from the last group up sums them. */
	memcpy(hier, self, m->nmemcg * sizeof(*hier));
	for (i = m->nmemcg; i-- > 0;) {
		if (m->memcg[i]->parent)
			hier[m->memcg[i]->parent->id] += hier[i];
	}
	/* The protected usage of the live children, as the kernel sums it
	 * (propagate_protected_usage()). */
	for (i = 0; i < m->nmemcg; i++) {
		g = m->memcg[i];
		if (!g->parent || g->removed)
			continue;
		cl[g->parent->id] += hier[i] < g->knob[SIM_KNOB_LOW] ?
				     hier[i] : g->knob[SIM_KNOB_LOW];
		cm[g->parent->id] += hier[i] < g->knob[SIM_KNOB_MIN] ?
				     hier[i] : g->knob[SIM_KNOB_MIN];
	}
	for (i = 0; i < m->nmemcg && !r; i++) {
		g = m->memcg[i];
		if (g->self_usage != self[i])
			r = broken(buf, len, "%s: own usage %llu, pages %llu",
				   g->path, (unsigned long long)g->self_usage,
				   (unsigned long long)self[i]);
		for (k = 0; k < SIM_NR_LRU && !r; k++) {
			if (g->lru_size[k] != lru[i * SIM_NR_LRU + k])
				r = broken(buf, len, "%s: LRU %u size %llu, "
					   "pages %llu", g->path, k,
					   (unsigned long long)g->lru_size[k],
					   (unsigned long long)
					   lru[i * SIM_NR_LRU + k]);
		}
		if (!r && g->usage != hier[i])
			r = broken(buf, len, "%s: usage %llu, sum of charged "
				   "pages %llu", g->path,
				   (unsigned long long)g->usage,
				   (unsigned long long)hier[i]);
		/* Charges are exact (no per-CPU stock): max holds always. */
		if (!r && g->knob[SIM_KNOB_MAX] != SIM_UNLIMITED &&
		    g->usage > g->knob[SIM_KNOB_MAX])
			r = broken(buf, len, "%s: usage %llu above max %llu",
				   g->path, (unsigned long long)g->usage,
				   (unsigned long long)g->knob[SIM_KNOB_MAX]);
		if (!r && (g->children_low_usage != cl[i] ||
			   g->children_min_usage != cm[i]))
			r = broken(buf, len, "%s: children's protected usage "
				   "low %llu min %llu, sums %llu and %llu",
				   g->path,
				   (unsigned long long)g->children_low_usage,
				   (unsigned long long)g->children_min_usage,
				   (unsigned long long)cl[i],
				   (unsigned long long)cm[i]);
		pgscan = g->counter[SIM_PGSCAN];
		pgsteal = g->counter[SIM_PGSTEAL];
		if (!r && pgsteal > pgscan)
			r = broken(buf, len, "%s: pgsteal %llu > pgscan %llu",
				   g->path, (unsigned long long)pgsteal,
				   (unsigned long long)pgscan);
	}
out:
	free(self);
	free(hier);
	free(lru);
	free(cl);
	free(cm);
	return r;
}
