/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator as a backend of the library: the same table as cgroup1,
 * over a group of the mr_sim_t bound to the context (mr_sim_attach()),
 * registered with the core when the simulator's code is loaded.
 * Reclaim is the model's memory.reclaim (a sized request, no limit
 * lowered, with an optional swappiness); thresholds and memory.events
 * wake an eventfd, as the kernel's do, and the library worker task of the
 * simulator (libworker.c). memory.events and memory.pressure are the
 * model's counters and stall times; a PSI trigger is the model's
 * (sim_memcg_psi_trigger_open(): POLLIN where the kernel gives POLLPRI).
 * A removed group (sim_memcg_remove()) answers -ENOENT to every op.
 */
#include "config.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend.h"
#include "sim.h"

struct sim_priv {
	struct mr_sim *sim;
	struct sim_memcg *g;
	int efd;
	int swappiness;           /* of reclaim calls; -1: the default */
};

static int sim_probe(const char *path)
{
	/* Chosen by name only; whether the path exists is known at open,
	 * from the context's simulator. */
	(void)path;
	return 1;
}

/* A threshold crossing or a memory.events change. */
static void on_event(void *arg)
{
	struct sim_priv *p = arg;
	uint64_t one = 1;

	if (p->efd >= 0 && write(p->efd, &one, sizeof(one)) < 0) {
		/* The counter is saturated: an event is pending already. */
	}
	p->sim->events_pending++;
	sim_wake_all(p->sim->m, &p->sim->events);
}

static int sim_open(void *priv, const char *path,
		    const struct mri_open_env *env)
{
	struct sim_priv *p = priv;
	int r;

	if (!env->backend_arg)
		return -ENODEV;
	p->sim = env->backend_arg;
	p->swappiness = -1;
	p->g = sim_memcg_find(p->sim->m, path);
	if (!p->g)
		return -ENOENT;
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0)
		return -errno;
	r = sim_memcg_set_events_fn(p->g, p, on_event, p);
	if (r < 0) {
		close(p->efd);
		return r;
	}
	/* The eventfd stays for the life of the handle. */
	r = mri_event_sink_set(&env->events, p->efd, EPOLLIN);
	if (r < 0) {
		sim_memcg_set_events_fn(p->g, p, NULL, NULL);
		close(p->efd);
		return r;
	}
	p->sim->open_groups++;
	return 0;
}

static int sim_close(void *priv)
{
	struct sim_priv *p = priv;
	unsigned id = sim_memcg_id(p->g);

	sim_memcg_set_threshold(p->g, p, SIM_UNLIMITED, NULL, NULL);
	sim_memcg_set_events_fn(p->g, p, NULL, NULL);
	if (p->sim->keeper[id] == p)
		p->sim->keeper[id] = NULL;
	if (p->efd >= 0)
		close(p->efd);
	p->sim->open_groups--;
	return 0;
}

static int sim_read_usage(void *priv, uint64_t *usage_bytes)
{
	struct sim_priv *p = priv;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	*usage_bytes = sim_bytes(sim_memcg_usage(p->g));
	return 0;
}

static int sim_read_limits(void *priv, struct mr_limits *out)
{
	struct sim_priv *p = priv;
	struct sim_memcg *g = p->g;
	uint64_t own = sim_memcg_get(g, SIM_KNOB_MAX);
	uint64_t binding = sim_memcg_binding_max(g);
	const struct sim_memcg *b;
	uint64_t elow, emin;
	unsigned levels;

	if (sim_memcg_removed(g))
		return -ENOENT;
	b = sim_memcg_binding_group(g, &levels);
	out->usage_bytes = sim_bytes(sim_memcg_usage(g));
	out->limit_bytes = sim_bytes(binding);
	out->own_limit_bytes = sim_bytes(own);
	out->limit_hits = sim_memcg_counter(g, SIM_FAILCNT);
	out->flags = binding < own ? MR_LIMITS_ANCESTOR_BINDS : 0;
	out->present = MR_LIMITS_HAS_HIGH | MR_LIMITS_HAS_PROTECTION |
		       MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_SWAP |
		       MR_LIMITS_HAS_BINDING;
	/* The whole machine is visible: the root is the top. */
	out->binding_level = levels;
	out->binding_usage_bytes = sim_bytes(sim_memcg_usage(b));
	if (binding == SIM_UNLIMITED)
		out->headroom_bytes = MR_UNLIMITED;
	else
		out->headroom_bytes = sim_memcg_usage(b) < binding ?
				      sim_bytes(binding - sim_memcg_usage(b)) :
				      0;
	out->high_bytes = sim_bytes(sim_memcg_binding_high(g));
	out->own_high_bytes = sim_bytes(sim_memcg_get(g, SIM_KNOB_HIGH));
	out->low_bytes = sim_bytes(sim_memcg_get(g, SIM_KNOB_LOW));
	out->min_bytes = sim_bytes(sim_memcg_get(g, SIM_KNOB_MIN));
	/* Against global reclaim: rooted at the machine's root. */
	sim_memcg_protection(sim_root(p->sim->m), g, &elow, &emin);
	out->effective_low_bytes = sim_bytes(elow);
	out->effective_min_bytes = sim_bytes(emin);
	out->peak_bytes = sim_bytes(sim_memcg_peak(g));
	out->swap_usage_bytes = sim_bytes(sim_memcg_swap(g));
	/* The model has no memory.swap.max. */
	out->swap_limit_bytes = MR_UNLIMITED;
	/* Its limit reclaim swaps while the device has room, at the
	 * model's swappiness (vmscan.c, can_swap()). */
	out->swap_free_bytes = sim_bytes(sim_machine_swap_free(p->sim->m));
	out->swappiness = SIM_SWAPPINESS_DEFAULT;
	out->present |= MR_LIMITS_HAS_SWAP_FREE;
	return 0;
}

#define SET(field, bit, value)                                            \
	do {                                                              \
		out->field = (value);                                     \
		out->present |= 1ULL << (bit);                            \
	} while (0)

static int sim_read_memstat(void *priv, struct mr_memstat *out)
{
	struct sim_priv *p = priv;
	struct sim_memcg *g = p->g;
	uint64_t ia = sim_memcg_lru(g, SIM_LRU_INACTIVE_ANON);
	uint64_t aa = sim_memcg_lru(g, SIM_LRU_ACTIVE_ANON);
	uint64_t ifl = sim_memcg_lru(g, SIM_LRU_INACTIVE_FILE);
	uint64_t af = sim_memcg_lru(g, SIM_LRU_ACTIVE_FILE);

	if (sim_memcg_removed(g))
		return -ENOENT;
	out->present = 0;
	SET(anon_bytes, MR_MEMSTAT_ANON, sim_bytes(ia + aa));
	SET(file_bytes, MR_MEMSTAT_FILE, sim_bytes(ifl + af));
	SET(shmem_bytes, MR_MEMSTAT_SHMEM, 0);
	SET(file_mapped_bytes, MR_MEMSTAT_FILE_MAPPED, 0);
	SET(file_dirty_bytes, MR_MEMSTAT_FILE_DIRTY,
	    sim_bytes(sim_memcg_dirty(g)));
	SET(file_writeback_bytes, MR_MEMSTAT_FILE_WRITEBACK,
	    sim_bytes(sim_memcg_writeback(g)));
	SET(inactive_anon_bytes, MR_MEMSTAT_INACTIVE_ANON, sim_bytes(ia));
	SET(active_anon_bytes, MR_MEMSTAT_ACTIVE_ANON, sim_bytes(aa));
	SET(inactive_file_bytes, MR_MEMSTAT_INACTIVE_FILE, sim_bytes(ifl));
	SET(active_file_bytes, MR_MEMSTAT_ACTIVE_FILE, sim_bytes(af));
	SET(unevictable_bytes, MR_MEMSTAT_UNEVICTABLE, 0);
	SET(pgfault, MR_MEMSTAT_PGFAULT, sim_memcg_counter(g, SIM_PGFAULT));
	SET(pgmajfault, MR_MEMSTAT_PGMAJFAULT,
	    sim_memcg_counter(g, SIM_PGMAJFAULT));
	SET(pgscan_bytes, MR_MEMSTAT_PGSCAN,
	    sim_bytes(sim_memcg_counter(g, SIM_PGSCAN)));
	SET(pgsteal_bytes, MR_MEMSTAT_PGSTEAL,
	    sim_bytes(sim_memcg_counter(g, SIM_PGSTEAL)));
	SET(workingset_refault_anon_bytes, MR_MEMSTAT_WORKINGSET_REFAULT_ANON,
	    sim_bytes(sim_memcg_counter(g, SIM_REFAULT_ANON)));
	SET(workingset_refault_file_bytes, MR_MEMSTAT_WORKINGSET_REFAULT_FILE,
	    sim_bytes(sim_memcg_counter(g, SIM_REFAULT_FILE)));
	return 0;
}

#undef SET

static int sim_reclaim_op(void *priv, uint64_t bytes, uint64_t *asked_bytes,
			  uint64_t *freed_bytes)
{
	struct sim_priv *p = priv;
	struct sim_machine *m = p->sim->m;
	struct sim_reclaim_result res;
	uint64_t pages = sim_pages(bytes), reclaimable;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	if (!pages)
		pages = 1;
	reclaimable = sim_memcg_lru(p->g, SIM_LRU_INACTIVE_FILE) +
		      sim_memcg_lru(p->g, SIM_LRU_ACTIVE_FILE);
	if (sim_machine_config(m)->swap_kind != SIM_SWAP_NONE &&
	    p->swappiness != 0)
		reclaimable += sim_memcg_lru(p->g, SIM_LRU_INACTIVE_ANON) +
			       sim_memcg_lru(p->g, SIM_LRU_ACTIVE_ANON);
	if (!reclaimable)
		return -EAGAIN;
	sim_reclaim_swappiness(m, p->g, pages, SIM_RECLAIM_PROACTIVE, true,
			       false, p->swappiness < 0 ?
			       SIM_SWAPPINESS_DEFAULT : p->swappiness, &res);
	/* What the call reclaimed, exactly: the fall in usage would count
	 * against it what the group's tasks charged while it ran. */
	*asked_bytes = sim_bytes(pages);
	*freed_bytes = sim_bytes(res.reclaimed);
	return 0;
}

static int sim_read_swap_usage(void *priv, uint64_t *swap_bytes)
{
	struct sim_priv *p = priv;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	*swap_bytes = sim_bytes(sim_memcg_swap(p->g));
	return 0;
}

/* Effective protection in a reclaim rooted root_level levels above the
 * group (the model's reclaim computes it so too, vmscan.c). */
static int sim_read_protection(void *priv, uint32_t root_level,
			       struct mr_protection *out)
{
	struct sim_priv *p = priv;
	const struct sim_memcg *root = p->g;
	uint64_t elow, emin;
	uint32_t level = 0;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	while (level != root_level && sim_memcg_parent(root)) {
		root = sim_memcg_parent(root);
		level++;
	}
	if (level != root_level && root_level != MR_RECLAIM_ROOT_TOP)
		return -EINVAL;
	sim_memcg_protection(root, p->g, &elow, &emin);
	out->root_level = level;
	out->low_bytes = sim_bytes(sim_memcg_get(p->g, SIM_KNOB_LOW));
	out->min_bytes = sim_bytes(sim_memcg_get(p->g, SIM_KNOB_MIN));
	out->effective_low_bytes = sim_bytes(elow);
	out->effective_min_bytes = sim_bytes(emin);
	return 0;
}

static int sim_claim_keeper(void *priv, bool claim)
{
	struct sim_priv *p = priv;
	unsigned i = sim_memcg_id(p->g);

	if (!claim) {
		if (p->sim->keeper[i] == p)
			p->sim->keeper[i] = NULL;
		return 0;
	}
	if (p->sim->keeper[i] && p->sim->keeper[i] != p)
		return -EBUSY;
	p->sim->keeper[i] = p;
	return 0;
}

static void sim_forget(void *priv)
{
	struct sim_priv *p = priv;

	if (p->efd >= 0)
		close(p->efd);
	p->efd = -1;
}

static int sim_set_usage_threshold(void *priv, uint64_t bytes)
{
	struct sim_priv *p = priv;

	if (sim_memcg_removed(p->g))
		return bytes == MR_UNLIMITED ? 0 : -ENOENT;
	return sim_memcg_set_threshold(p->g, p, sim_pages(bytes),
				       on_event, p);
}

static int sim_event_ack(void *priv)
{
	struct sim_priv *p = priv;
	uint64_t n;

	if (p->efd < 0)
		return 0;
	if (read(p->efd, &n, sizeof(n)) < 0)
		return errno == EAGAIN ? 0 : -errno;
	return 1;
}

static uint64_t sim_now_op(void *priv)
{
	struct sim_priv *p = priv;

	return sim_now(p->sim->m);
}

/* The running task's work, user and kernel: the waits of its reclaim
 * (dirty pages, naps) are not in it. 0 outside a task. */
static uint64_t sim_thread_cpu_op(void *priv)
{
	struct sim_priv *p = priv;
	struct sim_task *t = sim_current(p->sim->m);
	const struct sim_task_stats *st = t ? sim_task_stats(t) : NULL;

	return st ? st->user_ns + st->sys_ns : 0;
}

#define SET(field, bit, value)                                            \
	do {                                                              \
		out->field = (value);                                     \
		out->present |= 1ULL << (bit);                            \
	} while (0)

/* memory.events(.local): the model counts low, high, max, oom and
 * oom_kill; it has no memory.oom.group, so oom_group_kill is absent. */
static int sim_read_events(void *priv, bool local, struct mr_events *out)
{
	struct sim_priv *p = priv;
	uint64_t (*get)(const struct sim_memcg *, int) =
		local ? sim_memcg_counter_local : sim_memcg_counter;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	out->present = 0;
	SET(low, MR_EVENT_LOW, get(p->g, SIM_EV_LOW));
	SET(high, MR_EVENT_HIGH, get(p->g, SIM_EV_HIGH));
	SET(max, MR_EVENT_MAX, get(p->g, SIM_EV_MAX));
	SET(oom, MR_EVENT_OOM, get(p->g, SIM_EV_OOM));
	SET(oom_kill, MR_EVENT_OOM_KILL, get(p->g, SIM_EV_OOM_KILL));
	out->oom_group_kill = 0;
	return 0;
}

#undef SET

static int sim_read_pressure(void *priv, struct mr_pressure *out)
{
	struct sim_priv *p = priv;
	uint64_t some_ns, full_ns;
	uint32_t avg[3];

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	sim_memcg_psi(p->g, &some_ns, &full_ns);
	out->present = MR_PRESSURE_SOME | MR_PRESSURE_FULL;
	sim_memcg_psi_avg(p->g, false, avg);
	out->some = (struct mr_psi_stat){ avg[0], avg[1], avg[2],
					  some_ns / 1000 };
	sim_memcg_psi_avg(p->g, true, avg);
	out->full = (struct mr_psi_stat){ avg[0], avg[1], avg[2],
					  full_ns / 1000 };
	return 0;
}

static int sim_psi_trigger_open(void *priv, int kind, uint64_t stall_us,
				uint64_t window_us)
{
	struct sim_priv *p = priv;

	if (kind != MR_PSI_SOME && kind != MR_PSI_FULL)
		return -EINVAL;
	return sim_memcg_psi_trigger_open(p->g, kind == MR_PSI_FULL,
					  stall_us * 1000, window_us * 1000);
}

/* A write of max or high, as a write to memory.max or memory.high made
 * with O_NONBLOCK: high is set without reclaim; a max below usage
 * reclaims down to it first and, when it cannot get there, fails with
 * -EBUSY leaving the limit as it was (sim_memcg_set(): cgroup v1's
 * mem_cgroup_resize_max(); v2 would OOM-kill instead). */
static int sim_write_limit(void *priv, int which, uint64_t bytes)
{
	struct sim_priv *p = priv;

	if (sim_memcg_removed(p->g))
		return -ENOENT;
	if (which != MRI_LIMIT_MAX && which != MRI_LIMIT_HIGH)
		return -EINVAL;
	return sim_memcg_set(p->g, which == MRI_LIMIT_MAX ? SIM_KNOB_MAX :
				   SIM_KNOB_HIGH, sim_pages(bytes));
}

/* The model's memory.reclaim takes swappiness= (as Linux 6.11 does). */
static int sim_set_swappiness(void *priv, int swappiness)
{
	struct sim_priv *p = priv;

	if (swappiness < -1 || swappiness > 200)
		return -EINVAL;
	if (sim_memcg_removed(p->g))
		return -ENOENT;
	p->swappiness = swappiness;
	return 0;
}

const struct mri_backend mri_backend_sim = {
	.name = "sim",
	.caps = MRI_CAP_RECLAIM | MRI_CAP_THRESHOLD | MRI_CAP_VIRTUAL_CLOCK,
	.priv_size = sizeof(struct sim_priv),
	.open_fds = 1,
	.probe = sim_probe,
	.open = sim_open,
	.close = sim_close,
	.read_usage = sim_read_usage,
	.read_limits = sim_read_limits,
	.read_memstat = sim_read_memstat,
	.reclaim = sim_reclaim_op,
	.claim_keeper = sim_claim_keeper,
	.forget = sim_forget,
	.set_usage_threshold = sim_set_usage_threshold,
	.event_ack = sim_event_ack,
	.now_ns = sim_now_op,
	.thread_cpu_ns = sim_thread_cpu_op,
	.read_swap_usage = sim_read_swap_usage,
	.read_events = sim_read_events,
	.read_pressure = sim_read_pressure,
	.psi_trigger_open = sim_psi_trigger_open,
	.write_limit = sim_write_limit,
	.set_swappiness = sim_set_swappiness,
	.read_protection = sim_read_protection,
};

/* The name "sim" exists wherever the simulator's code is in the process,
 * from before main() on, bound to a context or not (a context bound to no
 * simulator answers -ENODEV at open). Nothing is allocated: the registry
 * keeps a pointer to the table above. It fails only if another library
 * registered a table named "sim" first, or filled the registry: then
 * "sim" is not this backend, and mr_sim_attach() answers -EINVAL. */
__attribute__((constructor)) static void sim_backend_register(void)
{
	(void)mri_backend_register(&mri_backend_sim);
}
