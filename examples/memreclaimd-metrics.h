/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's metrics in the Prometheus text exposition format
 * (version 0.0.4): per group, its usage, limit, margin (in force, and the
 * adaptive margin's sizing), limit hits, reclaim calls, bytes and time
 * per reason and memory pressure; the daemon's own CPU time, groups and
 * reloads. Names follow Prometheus' conventions (base units, `_bytes`,
 * `_seconds`, `_total` on counters), each family with HELP and TYPE. The
 * file form (mrd_metrics_write_file()) is for node_exporter's textfile
 * collector: written to a temporary file beside it and renamed over it,
 * so a scrape never reads half a file. The HTTP form serves GET /metrics
 * on 127.0.0.1 with libmicrohttpd, from its own thread.
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_METRICS_H
#define MR_EXAMPLES_MEMRECLAIMD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "memreclaimd-groups.h"

/* The daemon's own counters; guarded by the groups' lock. */
struct mrd_counters {
	uint64_t reloads_ok, reloads_failed;
	double last_reload_ok_s;     /* wall clock, seconds since the epoch */
};

/* Every metric family's name, NULL-terminated (for the tests). */
extern const char *const mrd_metric_names[];

/* Renders the metrics of gs and c into a new buffer (*out, *len; the
 * caller frees it), taking gs->lock. Returns 0 or -ENOMEM. */
int mrd_metrics_render(struct mrd_groups *gs, const struct mrd_counters *c,
		       char **out, size_t *len);

/* Writes the metrics to path through path's directory's temporary file
 * and a rename. Returns 0 or a negative errno (logged). */
int mrd_metrics_write_file(struct mrd_groups *gs,
			   const struct mrd_counters *c, const char *path);

struct mrd_http;

/* Serves the metrics on 127.0.0.1:port. Returns 0 (*ret set) or a
 * negative errno (logged). */
int mrd_http_start(struct mrd_groups *gs, const struct mrd_counters *c,
		   unsigned port, struct mrd_http **ret);

/* Stops serving; NULL is a no-op. */
void mrd_http_stop(struct mrd_http *h);

#endif /* MR_EXAMPLES_MEMRECLAIMD_METRICS_H */
