/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's margin worker as a task of the simulated machine. The
 * thread of mr_ctx_worker_start() would run in real time, beside the
 * simulation; this task runs the same round, mr_ctx_worker_dispatch(), in
 * virtual time: it sleeps until one of the context's simulated groups
 * signals an event (a usage threshold, memory.events) or the safety tick
 * passes, pays the wake-up latency, and dispatches. The reclaim it asks
 * for costs the worker's time, not the faulting tasks'.
 */
#include "config.h"

#include <stdlib.h>

#include "sim.h"

struct sim_libworker {
	struct mr_sim *sim;
	mr_ctx_t *ctx;
	bool stop;
};

static void worker(struct sim_task *t, void *arg)
{
	struct sim_libworker *w = arg;
	struct sim_machine *m = w->sim->m;
	unsigned flags = MR_DISPATCH_ALL;
	uint64_t last_all_ns = 0;
	bool woken;
	int r;

	(void)t;
	while (!w->stop) {
		if (flags & MR_DISPATCH_ALL)
			last_all_ns = sim_now(m);
		r = mr_ctx_worker_dispatch(w->ctx, flags);
		if (r == 1 && !w->stop) {
			/* A group is still above its margin: at once, after
			 * the events that came meanwhile. */
			flags = sim_now(m) - last_all_ns >=
				MR_WORKER_SAFETY_NS ? MR_DISPATCH_ALL : 0;
			sim_sleep(m, 0);
			continue;
		}
		w->sim->events_pending = 0;
		woken = sim_wait(m, &w->sim->events, MR_WORKER_SAFETY_NS);
		/* The safety round every MR_WORKER_SAFETY_NS, busy or not,
		 * as the thread's (lib/core/worker.c): steady events must
		 * not starve it (the proactive controller's intervals
		 * ride on it). */
		flags = !woken || sim_now(m) - last_all_ns >=
				  MR_WORKER_SAFETY_NS ? MR_DISPATCH_ALL : 0;
		if (woken && !w->stop)
			sim_sleep(m, sim_machine_costs(m)->worker_wakeup_ns);
	}
	free(w);
}

struct sim_libworker *sim_libworker_start(struct mr_sim *sim, mr_ctx_t *ctx)
{
	struct sim_libworker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->sim = sim;
	w->ctx = ctx;
	if (!sim_task_spawn(sim->m, "memreclaim", sim_root(sim->m),
			    sim_now(sim->m), worker, w)) {
		free(w);
		return NULL;
	}
	return w;
}

void sim_libworker_stop(struct sim_libworker *w)
{
	w->stop = true;
	sim_wake_all(w->sim->m, &w->sim->events);
}
