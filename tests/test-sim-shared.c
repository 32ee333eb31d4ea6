/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The simulator through the shared libraries and the public headers
 * alone: libmemreclaim-sim.so registers the backend "sim" with
 * libmemreclaim.so when it is loaded, a context attached to a simulator
 * opens a simulated group by that name, and the core keeps the worker
 * thread off the context (the backend's virtual clock). make installcheck
 * builds this file against the installation with pkg-config. */
#include <errno.h>
#include <stdio.h>

#include <memreclaim.h>
#include <memreclaim-sim.h>

#define MiB (1024ULL * 1024)

static int fail(const char *what, int r)
{
	fprintf(stderr, "test-sim-shared: %s: %d (%s)\n", what, r,
		mr_strerror(r));
	return 1;
}

int main(void)
{
	struct mr_sim_config c = { .size = sizeof(c), .seed = 1,
				   .ram_bytes = 256 * MiB };
	struct mr_limits l = { .size = sizeof(l) };
	uint64_t usage = 1;
	mr_group_t *g = NULL;
	mr_ctx_t *ctx = NULL;
	mr_sim_t *sim = NULL;
	int r;

	r = mr_sim_new(&c, &sim);
	if (r < 0)
		return fail("mr_sim_new", r);
	r = mr_sim_create_group(sim, "/g");
	if (r < 0)
		return fail("mr_sim_create_group", r);
	r = mr_sim_set_knob(sim, "/g", MR_SIM_MAX, 64 * MiB);
	if (r < 0)
		return fail("mr_sim_set_knob", r);
	r = mr_ctx_new(&ctx);
	if (r < 0)
		return fail("mr_ctx_new", r);
	/* Registered but not attached: no simulator to open it in. */
	r = mr_group_open(ctx, "/g", "sim", &g);
	if (r != -ENODEV)
		return fail("mr_group_open before mr_sim_attach", r);
	r = mr_sim_attach(sim, ctx);
	if (r < 0)
		return fail("mr_sim_attach", r);
	r = mr_group_open(ctx, "/g", "sim", &g);
	if (r < 0)
		return fail("mr_group_open", r);
	r = mr_group_read_usage(g, &usage);
	if (r < 0 || usage != 0)
		return fail("mr_group_read_usage (usage 0)", r < 0 ? r : -EIO);
	r = mr_group_read_limits(g, &l);
	if (r < 0 || l.limit_bytes != 64 * MiB)
		return fail("mr_group_read_limits (64 MiB)", r < 0 ? r : -EIO);
	r = mr_ctx_worker_start(ctx);
	if (r != -EOPNOTSUPP)
		return fail("mr_ctx_worker_start on a simulator", r);
	r = mr_group_close(g);
	if (r < 0)
		return fail("mr_group_close", r);
	r = mr_sim_attach(NULL, ctx);
	if (r < 0)
		return fail("mr_sim_attach(NULL)", r);
	mr_ctx_free(ctx);
	r = mr_sim_free(sim);
	if (r < 0)
		return fail("mr_sim_free", r);
	return 0;
}
