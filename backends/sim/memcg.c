/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simulated memory cgroups: the hierarchy, its knobs (max, high, low, min,
 * soft limit), charge and uncharge against them (mm/memcontrol.c
 * try_charge and mem_cgroup_handle_over_high), usage thresholds,
 * memory.events, and PSI stall accounting.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <unistd.h>

#include "model.h"
#include "path.h"
#include "protection.h"

/* mm/memcontrol.c MAX_RECLAIM_RETRIES (5 before 5.9, 16 since). */
#define RECLAIM_RETRIES 5
/* mm/memcontrol.c: a throttle sleep of this or less is skipped. */
#define MIN_THROTTLE_NS 10000000ULL

/* kernel/sched/psi.c: the averages are updated every PSI_FREQ (2 s + 1
 * tick there, 2 s here) as loadavg-style exponential decays
 * (include/linux/sched/loadavg.h: FSHIFT, EXP_10s, EXP_60s, EXP_300s). */
#define PSI_PERIOD_NS 2000000000ULL
#define FSHIFT 11
#define FIXED_1 (1ULL << FSHIFT)
static const uint64_t psi_exp[3] = { 1677, 1981, 2034 };

struct sim_memcg *sim_root(struct sim_machine *m)
{
	return m->memcg[0];
}

/* FNV-1a of the path, reduced to a bucket of the machine's path index. */
static unsigned path_bucket(const char *path)
{
	uint32_t h = 2166136261u;

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 16777619u;
	return h & (SIM_MEMCG_HASH - 1);
}

struct sim_memcg *sim_memcg_find(struct sim_machine *m, const char *path)
{
	struct sim_memcg *g;

	for (g = m->memcg_hash[path_bucket(path)]; g; g = g->hash_next) {
		if (!g->removed && strcmp(g->path, path) == 0)
			return g;
	}
	return NULL;
}

int sim_memcg_create(struct sim_machine *m, const char *path,
		     struct sim_memcg **ret)
{
	struct sim_memcg *g, *parent = NULL;
	char parent_path[4096];
	const char *slash;
	size_t len;
	int k;

	if (!path || path[0] != '/' || strlen(path) >= sizeof(parent_path))
		return -EINVAL;
	if (sim_memcg_find(m, path))
		return -EEXIST;
	if (m->nmemcg) {
		/* The check of mr_group_open(), and its normal form. */
		len = strlen(path);
		if (len < 2 || !mri_path_is_normal(path, len))
			return -EINVAL;
		slash = strrchr(path, '/');
		len = (size_t)(slash - path);
		memcpy(parent_path, path, len ? len : 1);
		parent_path[len ? len : 1] = '\0';
		parent = sim_memcg_find(m, parent_path);
		if (!parent)
			return -ENOENT;
	} else if (strcmp(path, "/") != 0) {
		return -EINVAL;
	}
	if (m->nmemcg >= SIM_MAX_GROUPS)
		return -ENOSPC;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->path = strdup(path);
	if (!g->path) {
		free(g);
		return -ENOMEM;
	}
	g->m = m;
	g->id = (uint16_t)m->nmemcg;
	g->parent = parent;
	g->knob[SIM_KNOB_MAX] = SIM_UNLIMITED;
	g->knob[SIM_KNOB_HIGH] = SIM_UNLIMITED;
	g->knob[SIM_KNOB_LOW] = 0;
	g->knob[SIM_KNOB_MIN] = 0;
	g->knob[SIM_KNOB_SOFT] = SIM_UNLIMITED;
	for (k = 0; k < SIM_NR_LRU; k++)
		g->lru_head[k] = g->lru_tail[k] = SIM_NOPAGE;
	g->psi_since_ns = m->now;
	g->psi_avg_next_ns = m->now + PSI_PERIOD_NS;
	m->memcg[m->nmemcg++] = g;
	if (parent) {
		g->sibling = parent->child;
		parent->child = g;
	}
	k = (int)path_bucket(path);
	g->hash_next = m->memcg_hash[k];
	m->memcg_hash[k] = g;
	if (ret)
		*ret = g;
	return 0;
}

static void psi_triggers_release(struct sim_memcg *g);

void sim_memcg_free_all(struct sim_machine *m)
{
	unsigned i;

	for (i = 0; i < m->nmemcg; i++) {
		psi_triggers_release(m->memcg[i]);
		free(m->memcg[i]->path);
		free(m->memcg[i]);
	}
	m->nmemcg = 0;
	memset(m->memcg_hash, 0, sizeof(m->memcg_hash));
}

const char *sim_memcg_path(const struct sim_memcg *g)
{
	return g->path;
}

unsigned sim_memcg_id(const struct sim_memcg *g)
{
	return g->id;
}

struct sim_memcg *sim_memcg_parent(const struct sim_memcg *g)
{
	return g->parent;
}

bool sim_memcg_is_ancestor(const struct sim_memcg *a,
			   const struct sim_memcg *g)
{
	for (; g; g = g->parent) {
		if (g == a)
			return true;
	}
	return false;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* propagate_protected_usage() for g: its protected usage (none once it is
 * removed: mem_cgroup_css_offline() resets low and min) is brought up to
 * date in its parent's children_low_usage and children_min_usage. */
static void propagate_protected(struct sim_memcg *g)
{
	struct sim_memcg *p = g->parent;
	uint64_t low = 0, min = 0;

	if (!p)
		return;
	if (!g->removed) {
		low = min_u64(g->usage, g->knob[SIM_KNOB_LOW]);
		min = min_u64(g->usage, g->knob[SIM_KNOB_MIN]);
	}
	p->children_low_usage = p->children_low_usage - g->low_usage + low;
	p->children_min_usage = p->children_min_usage - g->min_usage + min;
	g->low_usage = low;
	g->min_usage = min;
}

int sim_memcg_remove(struct sim_memcg *g)
{
	const struct sim_machine *m = g->m;
	unsigned i;

	if (!g->parent || g->removed)
		return g->removed ? -ENOENT : -EBUSY;
	/* cgroup_rmdir(): -EBUSY while tasks or live children remain. */
	if (g->nr_tasks)
		return -EBUSY;
	for (i = 0; i < m->nmemcg; i++) {
		if (m->memcg[i]->parent == g && !m->memcg[i]->removed)
			return -EBUSY;
	}
	g->removed = true;
	propagate_protected(g);
	psi_triggers_release(g);
	/* cgroup v1's event_control eventfds are signalled as their group
	 * goes (memcg_event_remove()); the watchers of memory.events too. */
	for (i = 0; i < SIM_MAX_WATCH; i++) {
		if (g->evw[i].fn)
			g->evw[i].fn(g->evw[i].arg);
		if (g->thr[i].fn)
			g->thr[i].fn(g->thr[i].arg);
	}
	return 0;
}

bool sim_memcg_removed(const struct sim_memcg *g)
{
	return g->removed;
}

uint64_t sim_memcg_get(const struct sim_memcg *g, int knob)
{
	return g->knob[knob];
}

void sim_memcg_protection(const struct sim_memcg *root,
			  const struct sim_memcg *g, uint64_t *elow,
			  uint64_t *emin)
{
	const struct sim_memcg *p = g->parent;
	uint64_t pl, pm;

	*elow = *emin = 0;
	if (g == root || !p)
		return;
	if (p == root) {
		/* The root's children: their own settings. */
		*elow = g->knob[SIM_KNOB_LOW];
		*emin = g->knob[SIM_KNOB_MIN];
		return;
	}
	sim_memcg_protection(root, p, &pl, &pm);
	if (!pl && !pm)
		return;
	*elow = mri_effective_protection(g->usage, p->usage,
					 g->knob[SIM_KNOB_LOW], pl,
					 p->children_low_usage, false);
	*emin = mri_effective_protection(g->usage, p->usage,
					 g->knob[SIM_KNOB_MIN], pm,
					 p->children_min_usage, false);
}

uint64_t sim_memcg_binding_max(const struct sim_memcg *g)
{
	uint64_t max = SIM_UNLIMITED;

	for (; g; g = g->parent) {
		if (g->knob[SIM_KNOB_MAX] < max)
			max = g->knob[SIM_KNOB_MAX];
	}
	return max;
}

const struct sim_memcg *sim_memcg_binding_group(const struct sim_memcg *g,
					       unsigned *levels)
{
	const struct sim_memcg *b = g;
	unsigned up = 0;

	*levels = 0;
	for (g = g->parent, up = 1; g; g = g->parent, up++) {
		if (g->knob[SIM_KNOB_MAX] < b->knob[SIM_KNOB_MAX]) {
			b = g;
			*levels = up;
		}
	}
	return b;
}

uint64_t sim_memcg_binding_high(const struct sim_memcg *g)
{
	uint64_t high = SIM_UNLIMITED;

	for (; g; g = g->parent) {
		if (g->knob[SIM_KNOB_HIGH] < high)
			high = g->knob[SIM_KNOB_HIGH];
	}
	return high;
}

int sim_memcg_set(struct sim_memcg *g, int knob, uint64_t pages)
{
	struct sim_reclaim_result res;
	uint64_t old;
	int tries;

	if (knob < 0 || knob >= SIM_NR_KNOBS)
		return -EINVAL;
	if (knob != SIM_KNOB_MAX || pages >= g->usage) {
		g->knob[knob] = pages;
		propagate_protected(g);
		return 0;
	}
	/* A lower max reclaims down to it first (mem_cgroup_resize_max);
	 * the old limit holds meanwhile and stays if reclaim cannot get
	 * there, as on cgroup v1. */
	old = g->knob[SIM_KNOB_MAX];
	for (tries = 0; g->usage > pages && tries < RECLAIM_RETRIES;) {
		sim_reclaim(g->m, g, g->usage - pages, SIM_RECLAIM_LIMIT,
			    true, false, &res);
		if (!res.reclaimed)
			tries++;
	}
	if (g->usage > pages) {
		g->knob[SIM_KNOB_MAX] = old;
		return -EBUSY;
	}
	g->knob[SIM_KNOB_MAX] = pages;
	return 0;
}

uint64_t sim_memcg_usage(const struct sim_memcg *g)
{
	return g->usage;
}

/* The group after c in a pre-order walk of top's subtree, or NULL. */
static const struct sim_memcg *subtree_next(const struct sim_memcg *top,
					    const struct sim_memcg *c)
{
	if (c->child)
		return c->child;
	while (c != top && !c->sibling)
		c = c->parent;
	return c == top ? NULL : c->sibling;
}

/* Sums a per-group quantity over g's subtree (removed groups included),
 * walking the subtree alone: O(its size), not O(groups). */
#define SUBTREE_SUM(g, expr)                                              \
	({                                                                \
		const struct sim_memcg *top_ = (g), *c;                   \
		uint64_t sum_ = 0;                                        \
		for (c = top_; c; c = subtree_next(top_, c))              \
			sum_ += (expr);                                   \
		sum_;                                                     \
	})

uint64_t sim_memcg_lru(const struct sim_memcg *g, int lru)
{
	return SUBTREE_SUM(g, c->lru_size[lru]);
}

uint64_t sim_memcg_dirty(const struct sim_memcg *g)
{
	return SUBTREE_SUM(g, c->dirty);
}

uint64_t sim_memcg_writeback(const struct sim_memcg *g)
{
	return SUBTREE_SUM(g, c->writeback);
}

uint64_t sim_memcg_counter(const struct sim_memcg *g, int counter)
{
	return SUBTREE_SUM(g, c->counter[counter]);
}

uint64_t sim_memcg_counter_local(const struct sim_memcg *g, int counter)
{
	return g->counter[counter];
}

uint64_t sim_memcg_peak(const struct sim_memcg *g)
{
	return g->peak;
}

uint64_t sim_memcg_swap(const struct sim_memcg *g)
{
	return SUBTREE_SUM(g, c->swap_self);
}

void sim_memcg_count(struct sim_memcg *g, int counter, uint64_t n)
{
	unsigned i;

	g->counter[counter] += n;
	if (counter < SIM_EV_LOW || counter > SIM_EV_OOM_KILL)
		return;
	/* memory.events notifies up the hierarchy. */
	for (; g; g = g->parent) {
		for (i = 0; i < SIM_MAX_WATCH; i++) {
			if (g->evw[i].fn)
				g->evw[i].fn(g->evw[i].arg);
		}
	}
}

/* ---------------------------------------------------------------- PSI */


/* kernel/sched/loadavg.h calc_load(). */
static uint64_t calc_load(uint64_t load, uint64_t exp, uint64_t active)
{
	uint64_t newload = load * exp + active * (FIXED_1 - exp);

	if (active >= load)
		newload += FIXED_1 - 1;
	return newload / FIXED_1;
}

/* psi.c calc_avgs() for the period that ends now: the share of it the
 * state stalled, in percent times FIXED_1, into each average. */
static void psi_avg_period(struct sim_memcg *g)
{
	uint64_t total[2] = { g->psi_some_ns, g->psi_full_ns };
	uint64_t sample, pct;
	int s, w;

	for (s = 0; s < 2; s++) {
		sample = total[s] - g->psi_avg_total[s];
		if (sample > PSI_PERIOD_NS)
			sample = PSI_PERIOD_NS;
		g->psi_avg_total[s] += sample;
		pct = sample * 100 / PSI_PERIOD_NS * FIXED_1;
		for (w = 0; w < 3; w++)
			g->psi_avg[s][w] = calc_load(g->psi_avg[s][w],
						     psi_exp[w], pct);
	}
}

/* The stall of the state the group has been in since psi_since_ns, up
 * to `until`. */
static void psi_accrue(struct sim_memcg *g, uint64_t until)
{
	uint64_t dt = until - g->psi_since_ns;

	if (g->nr_stalled) {
		g->psi_some_ns += dt;
		if (g->nr_stalled >= g->nr_tasks)
			g->psi_full_ns += dt;
	}
	g->psi_since_ns = until;
}

/* Signals a trigger's fd: one message, unless the caller has not read the
 * previous one yet (psi.c: cmpxchg(&t->event, 0, 1), one pending event).
 * False when the caller closed its end: the trigger is then dropped. */
static bool psi_trigger_signal(struct sim_psi_trigger *t)
{
	int unread = 0;

	if (ioctl(t->fd, SIOCOUTQ, &unread) == 0 && unread > 0)
		return true;
	if (send(t->fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		return true;
	return errno == EAGAIN || errno == ENOBUFS;
}

/* psi.c window_update(): the growth of the state's total within the
 * moving window ending now; the previous window's growth is counted for
 * the part of it still inside the window, as if it had been linear. */
static uint64_t psi_window_growth(struct sim_psi_trigger *t, uint64_t now,
				  uint64_t value)
{
	uint64_t elapsed = now - t->win_start_ns;
	uint64_t growth = value - t->win_start_value;

	if (elapsed > t->window_ns) {
		t->win_start_ns = now;
		t->win_start_value = value;
		t->win_prev_growth = growth;
	} else {
		growth += (uint64_t)((unsigned __int128)t->win_prev_growth *
				     (t->window_ns - elapsed) / t->window_ns);
	}
	return growth;
}

/* psi.c update_triggers() for one trigger: if its state stalled since
 * the last check and its window growth reached the threshold, it fires,
 * at most once per window; a breach inside the rate limit is kept
 * pending. False when the caller closed its fd. */
static bool psi_trigger_update(struct sim_psi_trigger *t, uint64_t now,
			       uint64_t total)
{
	bool new_stall = total != t->last_total;

	t->last_total = total;
	if (!new_stall && !t->pending_event)
		return true;
	if (new_stall && psi_window_growth(t, now, total) < t->threshold_ns &&
	    !t->pending_event)
		return true;
	t->pending_event = true;
	if (t->last_event_ns && now < t->last_event_ns + t->window_ns)
		return true;
	t->last_event_ns = now;
	t->pending_event = false;
	return psi_trigger_signal(t);
}

static void psi_check_triggers(struct sim_memcg *g)
{
	struct sim_psi_trigger **pt = &g->psi_triggers, *t;

	while ((t = *pt)) {
		if (psi_trigger_update(t, g->m->now, t->full ? g->psi_full_ns :
						      g->psi_some_ns)) {
			pt = &t->next;
			continue;
		}
		*pt = t->next;
		close(t->fd);
		free(t);
	}
}

/* Brings the group's totals and averages to now, closing each 2 s period
 * on the way, then checks its triggers. */
static void psi_update(struct sim_memcg *g)
{
	uint64_t now = g->m->now;

	while (g->psi_avg_next_ns <= now) {
		psi_accrue(g, g->psi_avg_next_ns);
		psi_avg_period(g);
		g->psi_avg_next_ns += PSI_PERIOD_NS;
	}
	psi_accrue(g, now);
	if (g->psi_triggers)
		psi_check_triggers(g);
}

void sim_memcg_psi_change(struct sim_memcg *g, int stalled_delta,
			  int tasks_delta)
{
	/* A group counts the tasks of its whole subtree, as cgroup2's
	 * memory.pressure does. */
	for (; g; g = g->parent) {
		psi_update(g);
		g->nr_stalled += stalled_delta;
		g->nr_tasks += tasks_delta;
	}
}

void sim_memcg_psi(const struct sim_memcg *g, uint64_t *some_ns,
		   uint64_t *full_ns)
{
	psi_update((struct sim_memcg *)g);
	*some_ns = g->psi_some_ns;
	*full_ns = g->psi_full_ns;
}

/* FIXED_1 percent to ppm, as psi_show() prints it: LOAD_INT and two
 * decimals of LOAD_FRAC. */
static uint32_t psi_ppm(uint64_t avg)
{
	return (uint32_t)((avg >> FSHIFT) * 10000 +
			  ((avg & (FIXED_1 - 1)) * 100 >> FSHIFT) * 100);
}

void sim_memcg_psi_avg(const struct sim_memcg *g, bool full,
		       uint32_t avg_ppm[3])
{
	int w;

	psi_update((struct sim_memcg *)g);
	for (w = 0; w < 3; w++)
		avg_ppm[w] = psi_ppm(g->psi_avg[full][w]);
}

int sim_memcg_psi_trigger_open(struct sim_memcg *g, bool full,
			       uint64_t threshold_ns, uint64_t window_ns)
{
	struct sim_psi_trigger *t;
	int sv[2];

	if (g->removed)
		return -ENOENT;
	if (!threshold_ns || threshold_ns > window_ns)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv) < 0) {
		free(t);
		return -errno;
	}
	/* The caller only reads. */
	shutdown(sv[0], SHUT_WR);
	psi_update(g);
	t->fd = sv[1];
	t->full = full;
	t->threshold_ns = threshold_ns;
	t->window_ns = window_ns;
	t->win_start_ns = g->m->now;
	t->win_start_value = t->last_total = full ? g->psi_full_ns :
						    g->psi_some_ns;
	t->next = g->psi_triggers;
	g->psi_triggers = t;
	return sv[0];
}

/* Closes the model's end of every trigger: their fds poll POLLHUP. */
static void psi_triggers_release(struct sim_memcg *g)
{
	struct sim_psi_trigger *t;

	while ((t = g->psi_triggers)) {
		g->psi_triggers = t->next;
		shutdown(t->fd, SHUT_RDWR);
		close(t->fd);
		free(t);
	}
}

/* ---------------------------------------------------------------- events */

static int set_watch(void **owner_slot, size_t stride, size_t n, void *owner)
{
	size_t i, free_i = n;

	for (i = 0; i < n; i++) {
		void *o = *(void **)((char *)owner_slot + i * stride);

		if (o == owner)
			return (int)i;
		if (!o && free_i == n)
			free_i = i;
	}
	return free_i == n ? -ENOMEM : (int)free_i;
}

int sim_memcg_set_threshold(struct sim_memcg *g, void *owner,
			    uint64_t pages, sim_event_fn fn, void *arg)
{
	int i = set_watch(&g->thr[0].owner, sizeof(g->thr[0]),
			  SIM_MAX_WATCH, owner);

	if (i < 0)
		return pages == SIM_UNLIMITED ? 0 : i;
	if (pages == SIM_UNLIMITED) {
		memset(&g->thr[i], 0, sizeof(g->thr[i]));
		return 0;
	}
	g->thr[i].owner = owner;
	g->thr[i].pages = pages;
	g->thr[i].above = g->usage > pages;
	g->thr[i].fn = fn;
	g->thr[i].arg = arg;
	return 0;
}

int sim_memcg_set_events_fn(struct sim_memcg *g, void *owner,
			    sim_event_fn fn, void *arg)
{
	int i = set_watch(&g->evw[0].owner, sizeof(g->evw[0]),
			  SIM_MAX_WATCH, owner);

	if (i < 0)
		return fn ? i : 0;
	g->evw[i].owner = fn ? owner : NULL;
	g->evw[i].fn = fn;
	g->evw[i].arg = arg;
	return 0;
}

void sim_memcg_usage_changed(struct sim_memcg *g)
{
	struct sim_threshold *t;
	bool above;
	unsigned i;

	for (; g; g = g->parent) {
		for (i = 0; i < SIM_MAX_WATCH; i++) {
			t = &g->thr[i];
			if (!t->fn)
				continue;
			above = g->usage > t->pages;
			if (above != t->above) {
				t->above = above;
				t->fn(t->arg);
			}
		}
	}
}

/* ---------------------------------------------------------------- charge */

/* The lowest group from g up whose max n more pages would exceed. */
static struct sim_memcg *over_max(struct sim_memcg *g, uint64_t n)
{
	for (; g; g = g->parent) {
		if (g->knob[SIM_KNOB_MAX] != SIM_UNLIMITED &&
		    g->usage + n > g->knob[SIM_KNOB_MAX])
			return g;
	}
	return NULL;
}

static uint64_t room(const struct sim_memcg *g)
{
	uint64_t max = g->knob[SIM_KNOB_MAX];

	return max == SIM_UNLIMITED ? SIM_UNLIMITED :
	       (g->usage < max ? max - g->usage : 0);
}

static void commit_charge(struct sim_memcg *g, uint64_t n)
{
	struct sim_memcg *c;

	g->self_usage += n;
	for (c = g; c; c = c->parent) {
		c->usage += n;
		if (c->usage > c->peak)
			c->peak = c->usage;
		propagate_protected(c);
	}
	sim_memcg_usage_changed(g);
}

void sim_memcg_uncharge(struct sim_memcg *g, uint64_t n)
{
	struct sim_memcg *c;

	g->self_usage -= n;
	for (c = g; c; c = c->parent) {
		c->usage -= n;
		propagate_protected(c);
	}
	sim_memcg_usage_changed(g);
}

/* Direct reclaim at a limit, in the running task; the rate it achieved
 * is remembered for MR_THP_BUDGET. Fills *res. */
static void limit_reclaim(struct sim_machine *m, struct sim_memcg *over,
			  uint64_t nr, bool clean_only,
			  struct sim_reclaim_result *res)
{
	sim_reclaim(m, over, nr, SIM_RECLAIM_LIMIT, true, clean_only, res);
	over->limit_reclaimed += res->reclaimed;
	over->limit_reclaim_ns += res->ns;
}

/* One reclaim for a huge-page charge: its anon swap-outs are counted as
 * the huge page's (what the 2014 fix's review feared). */
static uint64_t thp_limit_reclaim(struct sim_machine *m,
				  struct sim_memcg *over, uint64_t nr,
				  bool clean_only)
{
	struct sim_reclaim_result res;

	limit_reclaim(m, over, nr, clean_only, &res);
	sim_memcg_count(over, SIM_THP_SWPOUT, res.swapped);
	return res.reclaimed;
}

/* MR_THP_BUDGET's budget: what reclaim frees, at the group's measured
 * limit-reclaim rate, in the time the huge page saves its task (the small
 * faults it replaces). 0 before the group has reclaimed at all. */
static uint64_t thp_budget_pages(const struct sim_machine *m,
				 const struct sim_memcg *over)
{
	uint64_t save_ns = (SIM_HPAGE_NR - 1) * m->costs.minor_fault_ns;

	if (!over->limit_reclaim_ns || save_ns <= m->costs.hpage_fault_ns)
		return 0;
	return (uint64_t)((unsigned __int128)over->limit_reclaimed *
			  (save_ns - m->costs.hpage_fault_ns) /
			  over->limit_reclaim_ns);
}

/* The reclaim of a huge-page charge (512 pages, GFP_TRANSHUGE: no OOM,
 * __GFP_NORETRY) that does not fit under `over`. Returns false when the
 * policy gives up at once, true when it reclaimed (the caller then looks
 * at the room). */
static bool thp_reclaim(struct sim_machine *m, struct sim_memcg *over)
{
	uint64_t shortfall, total = 0, clean = 0, budget = 0;
	unsigned loop;
	int advice;

	switch (m->thp_mode) {
	case SIM_THP_OLD:
		/* 3.17 mem_cgroup_reclaim(): SWAP_CLUSTER_MAX at a time
		 * until there is room for one page, at most
		 * MEM_CGROUP_MAX_RECLAIM_LOOPS times, and no more once two
		 * rounds freed nothing at all. */
		for (loop = 0; loop < 100; loop++) {
			total += thp_limit_reclaim(m, over,
						   SIM_SWAP_CLUSTER_MAX, false);
			if (room(over) >= 1 || (loop && !total))
				break;
		}
		return true;
	case SIM_THP_FULL:
		/* The 2014 fix (mm: memcontrol: fix transparent huge page
		 * allocations under pressure): try_to_free_mem_cgroup_pages()
		 * with the whole charge as its goal. */
		thp_limit_reclaim(m, over, SIM_HPAGE_NR, false);
		return true;
	default:
		/* The library's policy in place of the goal: it asks for
		 * the shortfall, only of clean cache for MR_THP_CLEAN_CACHE,
		 * within the time the huge page saves for MR_THP_BUDGET. */
		shortfall = SIM_HPAGE_NR - room(over);
		if (m->thp_policy == MR_THP_CLEAN_CACHE)
			clean = sim_memcg_clean_cache(over);
		if (m->thp_policy == MR_THP_BUDGET)
			budget = thp_budget_pages(m, over);
		if (mr_thp_decide(m->thp_policy, sim_bytes(SIM_HPAGE_NR),
				  sim_bytes(over->usage),
				  sim_bytes(over->knob[SIM_KNOB_MAX]), 0,
				  sim_bytes(clean), sim_bytes(budget),
				  &advice) < 0 ||
		    advice == MR_THP_ADVICE_SMALL)
			return false;
		thp_limit_reclaim(m, over,
				  shortfall > SIM_SWAP_CLUSTER_MAX ?
				  shortfall : SIM_SWAP_CLUSTER_MAX,
				  m->thp_policy == MR_THP_CLEAN_CACHE);
		return true;
	}
}

/* MEMCG_CHARGE_BATCH of 5.6 to 6.0 (64 since 6.1): the era of S3. */
#define CHARGE_BATCH 32

static bool above_high(const struct sim_memcg *g)
{
	return g->knob[SIM_KNOB_HIGH] != SIM_UNLIMITED &&
	       g->usage > g->knob[SIM_KNOB_HIGH];
}

/* try_charge(): a task charges batches and keeps the surplus in a per-CPU
 * stock that its next charges consume without a look at the limits; a
 * batch charged while a level from g up is above its high is added to
 * the pages the task reclaims on its return to user space. The model's
 * usage stays exact: only the cadence of that check is the kernel's. */
static void note_over_high(struct sim_machine *m, struct sim_memcg *g,
			   uint64_t n)
{
	struct sim_task *t = m->current;
	uint64_t need, charged;

	if (!t)
		return;
	if (t->charge_stock >= n) {
		t->charge_stock -= n;
		return;
	}
	need = n - t->charge_stock;
	charged = (need + CHARGE_BATCH - 1) / CHARGE_BATCH * CHARGE_BATCH;
	t->charge_stock = charged - need;
	for (; g; g = g->parent) {
		if (above_high(g)) {
			t->nr_pages_over_high += charged;
			return;
		}
	}
}

int sim_memcg_try_charge(struct sim_machine *m, struct sim_memcg *g,
			 uint64_t n, bool huge)
{
	struct sim_reclaim_result res;
	struct sim_memcg *over;
	unsigned retries = RECLAIM_RETRIES;
	bool drained = false;
	uint64_t nr;

	while ((over = over_max(g, n))) {
		sim_memcg_count(over, SIM_FAILCNT, 1);
		sim_memcg_count(over, SIM_EV_MAX, 1);
		if (huge) {
			if (!thp_reclaim(m, over))
				return -ENOMEM;
			if (room(over) >= n)
				continue;
			/* Since the 2014 fix a miss drains the per-CPU
			 * stocks and tries once more; then __GFP_NORETRY
			 * fails the charge and the fault falls back. */
			if (m->thp_mode == SIM_THP_OLD || drained)
				return -ENOMEM;
			drained = true;
			continue;
		}
		/* try_to_free_mem_cgroup_pages(): at least SWAP_CLUSTER_MAX */
		nr = n > SIM_SWAP_CLUSTER_MAX ? n : SIM_SWAP_CLUSTER_MAX;
		limit_reclaim(m, over, nr, false, &res);
		if (res.reclaimed)
			continue;
		if (!--retries) {
			sim_memcg_count(over, SIM_EV_OOM, 1);
			sim_memcg_count(over, SIM_EV_OOM_KILL, 1);
			return -ENOMEM;
		}
	}
	commit_charge(g, n);
	note_over_high(m, g, n);
	return 0;
}

/* ---------------------------------------------------------------- high */

void sim_memcg_set_high_mode(struct sim_machine *m, int mode,
			     const struct mr_throttle_curve *curve)
{
	m->high_mode = mode;
	if (curve)
		m->high_curve = *curve;
	else
		m->high_curve = (struct mr_throttle_curve){
			.size = sizeof(struct mr_throttle_curve),
			.kind = MR_THROTTLE_KERNEL,
			.max_delay_ns = MR_THROTTLE_KERNEL_MAX_DELAY_NS,
		};
}

/* mm/memcontrol.c reclaim_high(): each level from g up, below the root,
 * that is above its high reclaims nr pages (at least SWAP_CLUSTER_MAX,
 * as try_to_free_mem_cgroup_pages() does). Returns the pages reclaimed. */
static uint64_t reclaim_high(struct sim_machine *m, struct sim_memcg *g,
			     uint64_t nr)
{
	struct sim_reclaim_result res;
	uint64_t total = 0;

	for (; g && g->parent; g = g->parent) {
		if (!above_high(g))
			continue;
		sim_memcg_count(g, SIM_EV_HIGH, 1);
		sim_reclaim(m, g, nr > SIM_SWAP_CLUSTER_MAX ? nr :
			    SIM_SWAP_CLUSTER_MAX, SIM_RECLAIM_HIGH, true, false,
			    &res);
		total += res.reclaimed;
	}
	return total;
}

/* The 5.6 calculate_high_delay() (e26733e0d0ec, 5.6-rc7; fixed by
 * 9b8b17541f13, "mm, memcg: do not high throttle allocators based on
 * wraparound", 5.7-rc1) in its own unsigned 64-bit arithmetic, at HZ
 * 1000: every level below the root counts, the group itself included, and
 * one whose usage is below its high gives a wrapped usage - high. For a
 * finite high that is about 2^64 / high, whose square overflows to a large
 * number of jiffies: the 2 s clamp, slept by a task whose reclaim has just
 * brought usage under high. A high of "max" is PAGE_COUNTER_MAX there, and
 * its wrapped overage comes out near 0. */
#define PAGE_COUNTER_MAX_56 (INT64_MAX / SIM_PAGE_SIZE)
#define HZ_56 1000ULL
static uint64_t delay_buggy_56(const struct sim_memcg *g, uint64_t nr_pages)
{
	uint64_t usage, high, overage, max_overage = 0, jiffies;

	for (; g && g->parent; g = g->parent) {
		usage = g->usage;
		high = g->knob[SIM_KNOB_HIGH] == SIM_UNLIMITED ?
		       PAGE_COUNTER_MAX_56 : g->knob[SIM_KNOB_HIGH];
		if (high < 1)
			high = 1;
		overage = usage - high;
		overage <<= 20;                 /* DELAY_PRECISION_SHIFT */
		overage /= high;
		if (overage > max_overage)
			max_overage = overage;
	}
	if (!max_overage)
		return 0;
	jiffies = max_overage * max_overage * HZ_56;
	jiffies >>= 20 + 14;            /* PRECISION + SCALING_SHIFT */
	jiffies = jiffies * nr_pages / CHARGE_BATCH;
	if (jiffies > 2 * HZ_56)        /* MEMCG_MAX_HIGH_DELAY_JIFFIES */
		jiffies = 2 * HZ_56;
	return jiffies * (1000000000ULL / HZ_56);
}

/* Since 5.8: the largest overage of g and its ancestors below the root
 * through the curve (the library's mr_throttle_delay_ns(), whose
 * MR_THROTTLE_KERNEL is the kernel's own), 0 at or below high. */
static uint64_t delay_curve(const struct sim_machine *m,
			    const struct sim_memcg *g, uint64_t nr_pages)
{
	uint64_t worst = 0, d;

	for (; g && g->parent; g = g->parent) {
		if (g->knob[SIM_KNOB_HIGH] == SIM_UNLIMITED)
			continue;
		if (mr_throttle_delay_ns(&m->high_curve, sim_bytes(g->usage),
					 sim_bytes(g->knob[SIM_KNOB_HIGH]),
					 sim_bytes(nr_pages), &d) == 0 &&
		    d > worst)
			worst = d;
	}
	return worst;
}

/* mem_cgroup_handle_over_high(): reclaim the batches charged above high,
 * then sleep the penalty unless it is 10 ms or less (HZ / 100). 5.6 did
 * one reclaim; since 5.8 (b3ff92916af3, "mm, memcg: reclaim more
 * aggressively before high allocator throttling") it reclaims
 * SWAP_CLUSTER_MAX more while that makes progress, or up to
 * MAX_RECLAIM_RETRIES times without, before it sleeps. */
void sim_memcg_handle_high(struct sim_machine *m)
{
	struct sim_task *t = m->current;
	int retries = RECLAIM_RETRIES;
	uint64_t nr, to_reclaim, reclaimed, delay;
	struct sim_memcg *g, *c;
	bool unjust = true;

	if (!t || !t->nr_pages_over_high)
		return;
	nr = to_reclaim = t->nr_pages_over_high;
	t->nr_pages_over_high = 0;
	g = t->memcg;
	for (;;) {
		reclaimed = reclaim_high(m, g, to_reclaim);
		delay = m->high_mode == SIM_HIGH_BUGGY_56 ?
			delay_buggy_56(g, nr) : delay_curve(m, g, nr);
		if (delay <= MIN_THROTTLE_NS)
			return;
		if (m->high_mode == SIM_HIGH_BUGGY_56 ||
		    !(reclaimed || retries-- > 0))
			break;
		to_reclaim = SIM_SWAP_CLUSTER_MAX;
	}
	for (c = g; c && c->parent; c = c->parent)
		unjust = unjust && !above_high(c);
	t->stats.throttle_ns += delay;
	t->stats.throttle_count++;
	t->stats.throttle_unjust_count += unjust;
	if (delay > t->stats.throttle_max_ns)
		t->stats.throttle_max_ns = delay;
	sim_stall_begin(m);
	sim_sleep(m, delay);
	sim_stall_end(m);
}

void sim_memcg_set_thp_mode(struct sim_machine *m, int mode, int policy)
{
	m->thp_mode = mode;
	m->thp_policy = policy;
}

void sim_memcg_set_soft_mode(struct sim_machine *m, int mode)
{
	m->soft_mode = mode;
}
