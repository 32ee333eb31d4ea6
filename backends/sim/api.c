/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The public mr_sim_* functions: a simulated machine and its groups. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sim.h"

MR_SIM_EXPORT int mr_sim_new(const struct mr_sim_config *config,
			     mr_sim_t **ret)
{
	struct sim_config c = { 0 };
	struct mr_sim *sim;

	if (!config || !ret ||
	    config->size < offsetof(struct mr_sim_config, costs) +
			   sizeof(config->costs))
		return -EINVAL;
	c.seed = config->seed;
	c.ram_pages = sim_pages(config->ram_bytes ? config->ram_bytes :
						    1ULL << 30);
	c.cpus = config->cpus ? config->cpus : 2;
	c.swap_pages = sim_pages(config->swap_bytes);
	c.swap_kind = config->swap_kind;
	c.costs = sim_costs_find(config->costs ? config->costs : "today");
	if (!c.costs || sim_bytes(c.ram_pages) < SIM_MIN_RAM_BYTES ||
	    sim_bytes(c.ram_pages) > SIM_MAX_RAM_BYTES || c.cpus > SIM_MAX_CPUS ||
	    config->swap_bytes == MR_UNLIMITED ||
	    c.swap_kind < MR_SIM_SWAP_NONE || c.swap_kind > MR_SIM_SWAP_ZSWAP ||
	    (c.swap_kind == MR_SIM_SWAP_NONE) != (c.swap_pages == 0))
		return -EINVAL;
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	sim->m = sim_machine_new(&c);
	if (!sim->m) {
		free(sim);
		return -ENOMEM;
	}
	*ret = sim;
	return 0;
}

MR_SIM_EXPORT int mr_sim_free(mr_sim_t *sim)
{
	if (!sim)
		return 0;
	if (sim->open_groups)
		return -EBUSY;
	sim_machine_free(sim->m);
	free(sim);
	return 0;
}

MR_SIM_EXPORT int mr_sim_create_group(mr_sim_t *sim, const char *path)
{
	if (!sim || !path || strcmp(path, "/") == 0)
		return !sim || !path ? -EINVAL : -EEXIST;
	return sim_memcg_create(sim->m, path, NULL);
}

MR_SIM_EXPORT int mr_sim_set_knob(mr_sim_t *sim, const char *path,
				  int knob, uint64_t bytes)
{
	static const int knobs[] = {
		[MR_SIM_MAX] = SIM_KNOB_MAX,
		[MR_SIM_HIGH] = SIM_KNOB_HIGH,
		[MR_SIM_LOW] = SIM_KNOB_LOW,
		[MR_SIM_MIN] = SIM_KNOB_MIN,
		[MR_SIM_SOFT] = SIM_KNOB_SOFT,
	};
	struct sim_memcg *g;

	if (!sim || !path || knob < 0 ||
	    knob >= (int)(sizeof(knobs) / sizeof(knobs[0])))
		return -EINVAL;
	g = sim_memcg_find(sim->m, path);
	if (!g)
		return -ENOENT;
	return sim_memcg_set(g, knobs[knob], sim_pages(bytes));
}

MR_SIM_EXPORT uint64_t mr_sim_now_ns(const mr_sim_t *sim)
{
	return sim ? sim_now(sim->m) : 0;
}

MR_SIM_EXPORT int mr_sim_attach(mr_sim_t *sim, mr_ctx_t *ctx)
{
	return mri_ctx_set_backend_arg(ctx, &mri_backend_sim, sim);
}
