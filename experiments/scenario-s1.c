/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * S1: margin (asynchronous) reclaim keeps charges off the limit. A web
 * server in a group limited to 300 MiB serves a 600 MiB working set with
 * normally distributed access to 4 concurrent clients, 40960 requests;
 * once without background reclaim, once with the library's margin keeper
 * (mr_group_set_margin() on the simulated group, the worker as a task of
 * the machine). With the 2011 costs it reproduces the memcg async reclaim
 * RFC's table; with today's, the measurement on kernel 6.18: the reclaim
 * leaves the clients, yet the tail does not improve, as the margin's
 * missing cache costs re-reads. Both runs of a seed serve the same
 * sequence of requests (workload.h), so they differ only by the policy.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "scenario.h"
#include "workload.h"

#define MIB (1ULL << 20)
#define MS 1000000ULL
#define US 1000ULL
#define GROUP "/web"
#define LIMIT_BYTES (300 * MIB)
#define WORKING_SET_BYTES (600 * MIB)
#define CLIENTS 4u
#define REQUESTS 40960u
/* The group is the only user of memory: the machine's size only has to
 * leave it alone. */
#define RAM_BYTES (1024 * MIB)

/* One measurement's setup: the machine, the server and the margin its
 * keeper held. */
struct setup {
	const char *what;          /* for the table's header */
	unsigned cpus;
	uint64_t file_bytes;
	double sd_files;           /* of the file index, in files */
	uint64_t cpu_request_ns, cpu_request_sd_ns;
	uint64_t margin_bytes, hysteresis_bytes;
	const char *margin_source;
};

/* The RFC's test (Kamezawa, May 2011): httpd on an 8-CPU Xeon runs a CGI
 * script that reads a file chosen with normally distributed access. The
 * script's own time is the median and p90, equal in both published rows
 * (32 and 39 ms: mean 32 ms, sd 5.5 ms). The file sizes are not
 * published: 1 MiB, as in the 6.18 measurement. The sd is fitted to the
 * published reclaim at the limit (162238 pages freed; 57 files gives
 * 141750-166101 for seeds 1-5): the central 300 MiB takes 99% of the
 * requests. The async reclaim started at limit - 4 MiB and reclaimed to
 * limit - 8 MiB ("some margin > HPAGE_SIZE is required"). */
static const struct setup setup_2011 = {
	.what = "httpd running a CGI script per request, 8 CPUs",
	.cpus = 8,
	.file_bytes = 1 * MIB,
	.sd_files = 57,
	.cpu_request_ns = 32 * MS,
	.cpu_request_sd_ns = 5500 * US,
	.margin_bytes = 4 * MIB,
	.hysteresis_bytes = 4 * MIB,
	.margin_source = "the RFC's, from limit - 4 MiB down to limit - 8 MiB",
};

/* The measurement on 6.18: Apache serving 600 static files of 1 MiB on
 * a 2-core development machine, its prototype keeper holding a 32 MiB
 * margin, which "takes 11% of the cache away" (a small hysteresis). A
 * static file costs Apache about 0.1 ms beside the copy. The sd is fitted
 * to the published rise of re-reads with that margin (+35%; 96 files
 * gives +34-36% for seeds 1-5): the central 300 MiB takes 88% of the
 * requests. */
static const struct setup setup_today = {
	.what = "Apache serving static files, 2 CPUs",
	.cpus = 2,
	.file_bytes = 1 * MIB,
	.sd_files = 96,
	.cpu_request_ns = 100 * US,
	.cpu_request_sd_ns = 25 * US,
	.margin_bytes = 32 * MIB,
	.hysteresis_bytes = 4 * MIB,
	.margin_source = "the 6.18 measurement's, 32 MiB, reclaimed to "
			 "36 MiB below the limit",
};

enum { P50, P90, P95, P98, P99, PMAX, NPCT };
static const unsigned pct[NPCT] = { 50, 90, 95, 98, 99, 100 };
static const char *const pct_fig[NPCT] = {
	"p50_ms", "p90_ms", "p95_ms", "p98_ms", "p99_ms", "max_ms",
};

/* One run's figures. */
struct outcome {
	double mean_ms, pct_ms[NPCT];
	double elapsed_s;
	double limit_reclaim_s;
	uint64_t limit_scanned, limit_freed;
	double worker_reclaim_s;
	uint64_t worker_scanned, worker_freed;
	uint64_t refaults, failcnt;
};

/* The published rows (2011). */
static const double ref_ms[2][1 + NPCT] = {
	{ 37, 32, 39, 60, 100, 133, 1793 },
	{ 35, 32, 39, 49, 71, 86, 678 },
};
static const struct outcome ref_2011[2] = {
	{ .limit_reclaim_s = 13.85, .limit_scanned = 388463,
	  .limit_freed = 162238 },
	{ .worker_scanned = 1295556, .worker_freed = 122450,
	  .worker_reclaim_s = 0.64 },
};

static const char *const policy[2] = { "without", "margin" };

static void stop_worker(void *arg)
{
	sim_libworker_stop(arg);
}

static struct sim_web_params web_params(const struct setup *s,
					const struct sim_costs *costs)
{
	unsigned files = (unsigned)(WORKING_SET_BYTES / s->file_bytes);

	return (struct sim_web_params){
		.files = files,
		.file_pages = s->file_bytes / SIM_PAGE_SIZE,
		.sd_files = s->sd_files,
		.clients = CLIENTS,
		.requests = REQUESTS,
		.cpu_request_ns = s->cpu_request_ns,
		.cpu_request_sd_ns = s->cpu_request_sd_ns,
		/* Sending a page is a copy of it. */
		.cpu_page_ns = costs->copy_page_ns,
	};
}

static void collect(struct sim_web *web, struct sim_memcg *g,
		    mr_group_t *grp, struct outcome *out)
{
	const struct sim_web_result *res = sim_web_result(web);
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	unsigned i;

	out->mean_ms = sim_web_mean_ns(web) / 1e6;
	for (i = 0; i < NPCT; i++)
		out->pct_ms[i] = (double)sim_web_percentile_ns(web, pct[i]) /
				 1e6;
	out->elapsed_s = (double)(res->end_ns - res->start_ns) / 1e9;
	out->limit_reclaim_s = (double)res->clients.direct_reclaim_ns / 1e9;
	out->limit_scanned = sim_memcg_counter(g, SIM_PGSCAN_DIRECT);
	out->limit_freed = sim_memcg_counter(g, SIM_PGSTEAL_DIRECT);
	/* The worker's reclaim is the rest: nothing else reclaims the
	 * group (the machine has room to spare). */
	out->worker_scanned = sim_memcg_counter(g, SIM_PGSCAN) -
			      out->limit_scanned;
	out->worker_freed = sim_memcg_counter(g, SIM_PGSTEAL) -
			    out->limit_freed;
	if (mr_group_read_reclaim_stats(grp, MR_REASON_MARGIN, &st) == 0)
		out->worker_reclaim_s = (double)st.elapsed_ns / 1e9;
	out->refaults = sim_memcg_counter(g, SIM_REFAULT_FILE);
	out->failcnt = sim_memcg_counter(g, SIM_FAILCNT);
}

/* One machine, one policy. */
static int run_one(uint64_t seed, const struct sim_costs *costs,
		   const struct setup *s, bool margin, struct outcome *out)
{
	struct mr_sim_config cfg = {
		.size = sizeof(cfg),
		.seed = seed,
		.ram_bytes = RAM_BYTES,
		.cpus = s->cpus,
		.costs = costs->name,
	};
	struct sim_web_params wp = web_params(s, costs);
	struct sim_libworker *worker = NULL;
	struct sim_web *web = NULL;
	mr_group_t *grp = NULL;
	mr_ctx_t *ctx = NULL;
	struct sim_memcg *g;
	mr_sim_t *sim;
	char why[256];
	int r;

	memset(out, 0, sizeof(*out));
	r = mr_sim_new(&cfg, &sim);
	if (r < 0)
		return r;
	r = mr_sim_create_group(sim, GROUP);
	if (r == 0)
		r = mr_sim_set_knob(sim, GROUP, MR_SIM_MAX, LIMIT_BYTES);
	if (r == 0)
		r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_sim_attach(sim, ctx);
	if (r == 0)
		r = mr_group_open(ctx, GROUP, "sim", &grp);
	if (r == 0 && margin)
		r = mr_group_set_margin(grp, s->margin_bytes, 0,
					s->hysteresis_bytes);
	/* memreclaimd's --batch auto: a wake-up frees its excess in a few
	 * calls, not in SWAP_CLUSTER_MAX steps. */
	if (r == 0 && margin)
		r = mr_group_set_batch_proportional(grp,
						    MR_BATCH_DEFAULT_SHARE_PPM,
						    MR_BATCH_DEFAULT_MAX_BYTES,
						    MR_BATCH_DEFAULT_MAX_PPM);
	if (r == 0 && margin) {
		worker = sim_libworker_start(sim, ctx);
		if (!worker)
			r = -ENOMEM;
	}
	g = sim_memcg_find(sim->m, GROUP);
	if (r == 0) {
		web = sim_web_start(sim->m, g, &wp, 0,
				    worker ? stop_worker : NULL, worker);
		if (!web) {
			r = -ENOMEM;
			if (worker)
				sim_libworker_stop(worker);
		}
	}
	/* A worker stopped after a failed start still has to end. */
	if (r == 0 || worker)
		sim_run(sim->m, SIM_UNLIMITED);
	if (r == 0)
		r = sim_web_result(web)->error;
	if (r == 0)
		collect(web, g, grp, out);
	if (r == 0)
		r = sim_check_invariants(sim->m, why, sizeof(why));
	sim_web_free(web);
	mr_group_close(grp);
	mr_ctx_free(ctx);
	mr_sim_free(sim);
	return r;
}

static int add_figures(struct sim_report *rep, const char *pol,
		       const struct outcome *o)
{
	const struct {
		const char *name;
		double value;
	} f[] = {
		{ "mean_ms", o->mean_ms },
		{ pct_fig[P50], o->pct_ms[P50] },
		{ pct_fig[P90], o->pct_ms[P90] },
		{ pct_fig[P95], o->pct_ms[P95] },
		{ pct_fig[P98], o->pct_ms[P98] },
		{ pct_fig[P99], o->pct_ms[P99] },
		{ pct_fig[PMAX], o->pct_ms[PMAX] },
		{ "elapsed_s", o->elapsed_s },
		{ "limit_reclaim_s", o->limit_reclaim_s },
		{ "limit_scanned_pages", (double)o->limit_scanned },
		{ "limit_freed_pages", (double)o->limit_freed },
		{ "worker_reclaim_s", o->worker_reclaim_s },
		{ "worker_scanned_pages", (double)o->worker_scanned },
		{ "worker_freed_pages", (double)o->worker_freed },
		{ "refault_file_pages", (double)o->refaults },
		{ "failcnt_count", (double)o->failcnt },
	};
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < sizeof(f) / sizeof(f[0]); i++)
		r = sim_report_add(rep, pol, f[i].name, f[i].value);
	return r;
}

/* Two decimals below 10 ms (today's latencies), one above. */
static void ms_cell(struct sim_report *rep, double ms)
{
	sim_report_printf(rep, ms < 10.0 ? " %.2f |" : " %.1f |", ms);
}

static void latency_row(struct sim_report *rep, const char *label,
			double mean, const double *p)
{
	unsigned i;

	sim_report_printf(rep, "| %s |", label);
	ms_cell(rep, mean);
	for (i = 0; i < NPCT; i++)
		ms_cell(rep, p[i]);
	sim_report_printf(rep, "\n");
}

static void reclaim_row(struct sim_report *rep, const char *label,
			const struct outcome *o, bool counts)
{
	sim_report_printf(rep, "| %s | %llu | %llu | %.2f | %llu | %llu | "
			  "%.2f |", label,
			  (unsigned long long)o->limit_scanned,
			  (unsigned long long)o->limit_freed,
			  o->limit_reclaim_s,
			  (unsigned long long)o->worker_scanned,
			  (unsigned long long)o->worker_freed,
			  o->worker_reclaim_s);
	if (counts)
		sim_report_printf(rep, " %llu | %llu |\n",
				  (unsigned long long)o->refaults,
				  (unsigned long long)o->failcnt);
	else
		sim_report_printf(rep, " - | - |\n");
}

/* What the model shows and why, under the table. */
static const char note_2011[] =
	"A file page deactivated while still read keeps PG_referenced and\n"
	"goes back to the active list at its next read, so the hot files stay\n"
	"active and the inactive list is short (about 9400-10100 pages when\n"
	"a client reclaims). Without margin, a client whose charges meet the\n"
	"limit while it is below about 8800 pages does not free its 32 pages\n"
	"by priority 9, and the kernels of 2011 napped HZ/10 after each short\n"
	"pass below DEF_PRIORITY - 2 (congestion_wait() in\n"
	"do_try_to_free_pages()): a fifth to two fifths of the clients'\n"
	"reclaims nap, about one nap per miss, and that lifts p99 and the\n"
	"max; with the margin the clients never reclaim. Those naps add up to\n"
	"6-9 times the reference's 13.85 s of limit reclaim: its tail cannot\n"
	"all have been its clients' own reclaim (1% of 40960 requests 100 ms\n"
	"late is 41 s), the model's is.\n"
	"Scanned pages are pgscan (the inactive list); the RFC's counters\n"
	"included the active list's. The worker's time uses the 2011 set's\n"
	"per-page costs, fitted to S4, well below the RFC worker's.\n\n";

static const char note_today[] =
	"The margin takes the reclaim out of the clients but keeps about\n"
	"34 MiB of cache out of the group: re-reads rise, the disk (the\n"
	"bottleneck at this miss rate) queues longer, the mean gets worse and\n"
	"the tail does not improve. The model has no latency noise: its max\n"
	"is the deepest disk queue plus, without margin, the reclaim of one\n"
	"miss, so \"no improvement\" of the max is checked as at least\n"
	"0.8x.\n\n";

static void print_table(struct sim_report *rep, uint64_t seed,
			const struct sim_costs *costs, const struct setup *s,
			const struct outcome *o, bool is2011)
{
	unsigned i;

	sim_report_printf(rep,
		"S1: %s, in a group limited to %llu MiB;\n%llu MiB of files "
		"of %llu KiB, normally distributed access (sd %.0f files), "
		"%u clients,\n%u requests; costs %s, seed %llu.\nMargin: %s;\n"
		"kept by the library's worker, in proportional batches.\n\n"
		"Request latency (ms):\n\n"
		"| | mean | p50 | p90 | p95 | p98 | p99 | max |\n"
		"|---|---|---|---|---|---|---|---|\n",
		s->what, (unsigned long long)(LIMIT_BYTES / MIB),
		(unsigned long long)(WORKING_SET_BYTES / MIB),
		(unsigned long long)(s->file_bytes / 1024), s->sd_files,
		CLIENTS, REQUESTS, costs->name, (unsigned long long)seed,
		s->margin_source);
	latency_row(rep, "without", o[0].mean_ms, o[0].pct_ms);
	latency_row(rep, "with margin", o[1].mean_ms, o[1].pct_ms);
	for (i = 0; is2011 && i < 2; i++)
		latency_row(rep, i ? "with margin (2011)" : "without (2011)",
			    ref_ms[i][0], &ref_ms[i][1]);
	sim_report_printf(rep,
		"\nReclaim at the limit by the charging tasks (pages scanned, "
		"freed, their time)\nand by the margin worker; file refaults "
		"and failcnt:\n\n"
		"| | limit scanned | limit freed | limit s | worker scanned | "
		"worker freed | worker s | refaults | failcnt |\n"
		"|---|---|---|---|---|---|---|---|---|\n");
	reclaim_row(rep, "without", &o[0], true);
	reclaim_row(rep, "with margin", &o[1], true);
	for (i = 0; is2011 && i < 2; i++)
		reclaim_row(rep, i ? "with margin (2011)" : "without (2011)",
			    &ref_2011[i], false);
	sim_report_printf(rep, "\nRun time (virtual): %.1f s without, "
			  "%.1f s with margin.\n\n", o[0].elapsed_s,
			  o[1].elapsed_s);
	sim_report_printf(rep, "%s", is2011 ? note_2011 : note_today);
}

static double ratio(double a, double b)
{
	return b > 0.0 ? a / b : (a > 0.0 ? 1e9 : 1.0);
}

/* The 2011 band (the reference results of docs/simulator.md, S1). */
static bool band_2011(struct sim_report *rep, const struct outcome *o)
{
	bool ok = true;
	double r;

	r = ratio(o[1].pct_ms[P99], o[0].pct_ms[P99]);
	ok &= sim_report_band(rep, r <= 0.75,
		"margin p99 %.2fx of without (at most 0.75x)", r);
	r = ratio(o[1].pct_ms[PMAX], o[0].pct_ms[PMAX]);
	ok &= sim_report_band(rep, r <= 0.5,
		"margin max %.2fx of without (at most 0.5x)", r);
	r = ratio(o[1].pct_ms[P50], o[0].pct_ms[P50]);
	ok &= sim_report_band(rep, r >= 0.95 && r <= 1.05,
		"margin p50 %.3fx of without (within 5%%)", r);
	r = ratio(o[1].limit_reclaim_s, o[0].limit_reclaim_s);
	ok &= sim_report_band(rep, r <= 0.1,
		"margin limit-reclaim time %.4fx of without (at most 0.1x)",
		r);
	return ok;
}

/* What the 6.18 measurement showed, as a band: the reclaim leaves the
 * clients (their limit-reclaim time near zero, failcnt collapsed), yet
 * the tail does not improve and refaults rise. */
static bool band_today(struct sim_report *rep, const struct outcome *o)
{
	bool ok = true;
	double r;

	r = ratio(o[1].limit_reclaim_s, o[0].limit_reclaim_s);
	ok &= sim_report_band(rep, r <= 0.05,
		"margin limit-reclaim time %.4fx of without (near zero: at "
		"most 0.05x; 6.9 s -> 0 s)", r);
	r = ratio((double)o[1].failcnt, (double)o[0].failcnt);
	ok &= sim_report_band(rep, r <= 0.01,
		"margin failcnt %.4fx of without (collapsed: at most 0.01x; "
		"1.1 million -> a few hundred)", r);
	r = ratio(o[1].pct_ms[P99], o[0].pct_ms[P99]);
	ok &= sim_report_band(rep, r >= 0.9,
		"margin p99 %.2fx of without (no improvement: at least 0.9x)",
		r);
	r = ratio(o[1].pct_ms[PMAX], o[0].pct_ms[PMAX]);
	ok &= sim_report_band(rep, r >= 0.8,
		"margin max %.2fx of without (no improvement: at least 0.8x)",
		r);
	r = ratio((double)o[1].refaults, (double)o[0].refaults);
	ok &= sim_report_band(rep, r >= 1.1,
		"margin refaults %.2fx of without (rise: at least 1.1x; "
		"+35%% measured)", r);
	return ok;
}

static int run(uint64_t seed, const struct sim_costs *costs,
	       struct sim_report *rep)
{
	bool is2011 = strcmp(costs->name, "2011") == 0;
	bool istoday = strcmp(costs->name, "today") == 0;
	const struct setup *s = is2011 ? &setup_2011 : &setup_today;
	struct outcome o[2];
	unsigned i;
	int r = 0;

	for (i = 0; r == 0 && i < 2; i++)
		r = run_one(seed, costs, s, i == 1, &o[i]);
	for (i = 0; r == 0 && i < 2; i++)
		r = add_figures(rep, policy[i], &o[i]);
	if (r < 0)
		return r;
	print_table(rep, seed, costs, s, o, is2011);
	if (is2011)
		rep->verdict = band_2011(rep, o) ? MR_SIM_INSIDE :
						   MR_SIM_OUTSIDE;
	else if (istoday)
		rep->verdict = band_today(rep, o) ? MR_SIM_INSIDE :
						    MR_SIM_OUTSIDE;
	else
		rep->verdict = MR_SIM_NO_REFERENCE;
	return 0;
}

const struct sim_scenario sim_scenario_s1 = {
	.name = "S1",
	.title = "margin (async) reclaim keeps charges off the limit",
	.default_costs = "2011",
	.run = run,
};
