/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's Prometheus metrics (memreclaimd-metrics.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memreclaimd-log.h"
#include "memreclaimd-metrics.h"
#include "memreclaimd-stats.h"

#define P "memreclaimd_"

const char *const mrd_metric_names[] = {
	P "build_info", P "groups", P "groups_refused",
	P "config_reloads_total", P "config_last_reload_success_timestamp_seconds",
	P "cpu_seconds_total",
	P "group_usage_bytes", P "group_limit_bytes",
	P "group_limit_hits_total",
	P "group_margin_bytes", P "group_hysteresis_bytes",
	P "group_margin_adaptive", P "group_margin_sized_bytes",
	P "group_margin_strength_ratio", P "group_charge_rate_bytes_per_second",
	P "group_reclaim_calls_total", P "group_reclaim_empty_calls_total",
	P "group_reclaim_asked_bytes_total", P "group_reclaim_freed_bytes_total",
	P "group_reclaim_seconds_total",
	P "group_pressure_stalled_seconds_total",
	P "group_proactive_enabled", P "group_proactive_target_bytes",
	P "group_proactive_floor_bytes", P "group_proactive_stall_seconds",
	P "group_proactive_refault_ratio", P "group_proactive_pauses_total",
	P "group_proactive_external_high_changes_total",
	NULL,
};

/* A label value, escaped as the format says: \\, \" and \n. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample_start(FILE *f, const char *name, const char *cgroup)
{
	fprintf(f, "%s{cgroup=\"", name);
	label(f, cgroup);
	fputc('"', f);
}

static void sample_u64(FILE *f, const char *name, const char *cgroup,
		       uint64_t v)
{
	sample_start(f, name, cgroup);
	fprintf(f, "} %" PRIu64 "\n", v);
}

static void sample_f(FILE *f, const char *name, const char *cgroup, double v)
{
	sample_start(f, name, cgroup);
	fprintf(f, "} %.9g\n", v);
}

/* One group's snapshot, taken under the lock. */
struct snap {
	const char *path;
	struct mrd_snapshot s;
};

/* How a group family's value is stored in struct mrd_snapshot, and how
 * it is shown. */
enum field_kind {
	FIELD_U64,        /* uint64_t, shown as is */
	FIELD_PPM_RATIO,  /* uint32_t in ppm, shown as 0 to 1 */
	FIELD_NS_SECONDS, /* uint64_t in ns, shown in seconds */
};

/* A member's offset in struct mrd_snapshot, which fails to compile
 * unless the member has the size its kind reads. */
#define AT(member, size) \
	(offsetof(struct mrd_snapshot, member) + \
	 0 * sizeof(char[sizeof(((struct mrd_snapshot *)0)->member) == (size) ? \
			 1 : -1]))
#define U64_AT(member) AT(member, sizeof(uint64_t))
#define U32_AT(member) AT(member, sizeof(uint32_t))

/* The families of one value a group, read from the snapshot at off. */
static const struct group_field {
	const char *name, *type, *help;
	size_t off;
	enum field_kind kind;
} group_fields[] = {
	{ P "group_usage_bytes", "gauge",
	  "Memory charged to the group (v1 memory.usage_in_bytes, v2 memory.current).",
	  U64_AT(lim.usage_bytes), FIELD_U64 },
	{ P "group_limit_hits_total", "counter",
	  "Charges that met the limit (v1 memory.failcnt, v2 memory.events max).",
	  U64_AT(lim.limit_hits), FIELD_U64 },
	{ P "group_margin_bytes", "gauge",
	  "The margin in force between usage and the limit; 0 when none.",
	  U64_AT(ms.margin_bytes), FIELD_U64 },
	{ P "group_hysteresis_bytes", "gauge",
	  "How far below limit - margin each wake-up reclaims.",
	  U64_AT(ms.hysteresis_bytes), FIELD_U64 },
	{ P "group_margin_sized_bytes", "gauge",
	  "The adaptive margin as sized from charge rate x reaction x safety, before its strength; 0 when fixed.",
	  U64_AT(ms.sized_bytes), FIELD_U64 },
	{ P "group_margin_strength_ratio", "gauge",
	  "The adaptive margin's strength, 0 to 1 (benefit against cost); 0 when fixed.",
	  U32_AT(ms.strength_ppm), FIELD_PPM_RATIO },
	{ P "group_charge_rate_bytes_per_second", "gauge",
	  "The adaptive margin's smoothed charge rate (a lower bound on cgroup v1); 0 when fixed.",
	  U64_AT(ms.charge_bytes_per_s), FIELD_U64 },
	{ P "group_proactive_floor_bytes", "gauge",
	  "The floor the proactive controller never goes below: the largest of --min-size, memory.min, the effective memory.low and what reclaim cannot take.",
	  U64_AT(ps.floor_bytes), FIELD_U64 },
	{ P "group_proactive_stall_seconds", "gauge",
	  "PSI some memory stall in the proactive controller's last interval.",
	  U64_AT(ps.stall_ns), FIELD_NS_SECONDS },
	{ P "group_proactive_refault_ratio", "gauge",
	  "Refaults over what was reclaimed, in the proactive controller's last interval (0 to 1).",
	  U32_AT(ps.refault_ratio_ppm), FIELD_PPM_RATIO },
	{ P "group_proactive_external_high_changes_total", "counter",
	  "Changes of the group's memory.high by someone else seen by the proactive controller.",
	  U64_AT(ps.external_high_changes), FIELD_U64 },
};

static void group_field(FILE *f, const struct group_field *fd,
			const struct snap *v, size_t n)
{
	const char *base;
	uint64_t u64;
	uint32_t u32;
	size_t i;

	family(f, fd->name, fd->type, fd->help);
	for (i = 0; i < n; i++) {
		base = (const char *)&v[i].s + fd->off;
		switch (fd->kind) {
		case FIELD_U64:
			memcpy(&u64, base, sizeof(u64));
			sample_u64(f, fd->name, v[i].path, u64);
			break;
		case FIELD_PPM_RATIO:
			memcpy(&u32, base, sizeof(u32));
			sample_f(f, fd->name, v[i].path, u32 / 1e6);
			break;
		case FIELD_NS_SECONDS:
			memcpy(&u64, base, sizeof(u64));
			sample_f(f, fd->name, v[i].path, u64 / 1e9);
			break;
		}
	}
}

static void per_group(FILE *f, const struct snap *v, size_t n)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(group_fields) / sizeof(group_fields[0]); i++)
		group_field(f, &group_fields[i], v, n);
	family(f, P "group_limit_bytes", "gauge",
	       "The group's binding limit (its own or an ancestor's); +Inf when none.");
	for (i = 0; i < n; i++) {
		if (v[i].s.lim.limit_bytes == MR_UNLIMITED) {
			sample_start(f, P "group_limit_bytes", v[i].path);
			fputs("} +Inf\n", f);
		} else {
			sample_u64(f, P "group_limit_bytes", v[i].path,
				   v[i].s.lim.limit_bytes);
		}
	}
	family(f, P "group_margin_adaptive", "gauge",
	       "1 when the margin is adaptive, 0 when fixed.");
	for (i = 0; i < n; i++)
		sample_u64(f, P "group_margin_adaptive", v[i].path,
			   v[i].s.ms.adaptive ? 1 : 0);
	family(f, P "group_proactive_enabled", "gauge",
	       "The proactive controller: 0 off, 1 on, 2 a dry run.");
	for (i = 0; i < n; i++)
		sample_u64(f, P "group_proactive_enabled", v[i].path,
			   !v[i].s.ps.enabled ? 0 : v[i].s.ps.dry_run ? 2 : 1);
	family(f, P "group_proactive_target_bytes", "gauge",
	       "The size the proactive controller aimed at in its last interval (a dry run: the size it would take the group to); 0 when off.");
	for (i = 0; i < n; i++)
		sample_u64(f, P "group_proactive_target_bytes", v[i].path,
			   v[i].s.ps.dry_run ? v[i].s.ps.dry_run_bytes :
			   v[i].s.ps.target_bytes);
	family(f, P "group_proactive_pauses_total", "counter",
	       "Intervals the proactive controller took no step, by reason (pressure, refaults, io, external: memory.high changed by someone else).");
	for (i = 0; i < n; i++) {
		const struct mr_proactive_stats *ps = &v[i].s.ps;
		const char *why[] = { "pressure", "refaults", "io",
				      "external" };
		uint64_t cnt[] = { ps->pauses_pressure, ps->pauses_refaults,
				   ps->pauses_io, ps->pauses_external };

		for (r = 0; r < 4; r++) {
			sample_start(f, P "group_proactive_pauses_total",
				     v[i].path);
			fprintf(f, ",reason=\"%s\"} %" PRIu64 "\n", why[r],
				cnt[r]);
		}
	}

	static const struct {
		const char *name, *help;
	} rec[] = {
		{ P "group_reclaim_calls_total",
		  "Reclaim calls made to the kernel, by reason (margin: the worker; requested: mr_group_reclaim; soft: soft-limit order; proactive: the proactive controller)." },
		{ P "group_reclaim_empty_calls_total",
		  "Reclaim calls that freed nothing, by reason." },
		{ P "group_reclaim_asked_bytes_total",
		  "Bytes asked of the reclaim calls, by reason." },
		{ P "group_reclaim_freed_bytes_total",
		  "Fall in usage across the reclaim calls, by reason." },
		{ P "group_reclaim_seconds_total",
		  "Time spent in reclaim calls, by reason." },
	};
	for (size_t m = 0; m < sizeof(rec) / sizeof(rec[0]); m++) {
		family(f, rec[m].name, "counter", rec[m].help);
		for (i = 0; i < n; i++) {
			for (r = 0; r < MRD_REASONS; r++) {
				const struct mr_reclaim_stats *st =
					&v[i].s.rs[r];

				sample_start(f, rec[m].name, v[i].path);
				fprintf(f, ",reason=\"%s\"} ",
					mrd_reason_names[r]);
				switch (m) {
				case 0: fprintf(f, "%" PRIu64 "\n", st->calls); break;
				case 1: fprintf(f, "%" PRIu64 "\n", st->empty_calls); break;
				case 2: fprintf(f, "%" PRIu64 "\n", st->asked_bytes); break;
				case 3: fprintf(f, "%" PRIu64 "\n", st->freed_bytes); break;
				default: fprintf(f, "%.9f\n", st->elapsed_ns / 1e9); break;
				}
			}
		}
	}
	family(f, P "group_pressure_stalled_seconds_total", "counter",
	       "PSI: time some (or all) of the group's tasks stalled on memory; groups without PSI have no series.");
	for (i = 0; i < n; i++) {
		if (!v[i].s.psi_ok)
			continue;
		if (v[i].s.psi.present & MR_PRESSURE_SOME) {
			sample_start(f, P "group_pressure_stalled_seconds_total",
				     v[i].path);
			fprintf(f, ",kind=\"some\"} %.6f\n",
				v[i].s.psi.some.total_us / 1e6);
		}
		if (v[i].s.psi.present & MR_PRESSURE_FULL) {
			sample_start(f, P "group_pressure_stalled_seconds_total",
				     v[i].path);
			fprintf(f, ",kind=\"full\"} %.6f\n",
				v[i].s.psi.full.total_us / 1e6);
		}
	}
}

static void daemon_families(FILE *f, const struct mrd_counters *c,
			    size_t kept, size_t refused)
{
	uint64_t user_ns, sys_ns;

	family(f, P "build_info", "gauge",
	       "Always 1; the versions of memreclaimd and the library it runs with.");
	fprintf(f, P "build_info{version=\"%s\",library_version=\"%s\"} 1\n",
		PACKAGE_VERSION, mr_version());
	family(f, P "groups", "gauge", "Groups whose margin memreclaimd keeps.");
	fprintf(f, P "groups %zu\n", kept);
	family(f, P "groups_refused", "gauge",
	       "Groups a [group] section matches that could not be opened or configured (logged).");
	fprintf(f, P "groups_refused %zu\n", refused);
	family(f, P "config_reloads_total", "counter",
	       "Configuration reloads (SIGHUP), by result; a failed one leaves the former configuration in force.");
	fprintf(f, P "config_reloads_total{result=\"success\"} %" PRIu64 "\n"
		P "config_reloads_total{result=\"failure\"} %" PRIu64 "\n",
		c->reloads_ok, c->reloads_failed);
	family(f, P "config_last_reload_success_timestamp_seconds", "gauge",
	       "When the configuration in force was loaded (seconds since the epoch).");
	fprintf(f, P "config_last_reload_success_timestamp_seconds %.3f\n",
		c->last_reload_ok_s);
	mrd_self_cpu_ns(&user_ns, &sys_ns);
	family(f, P "cpu_seconds_total", "counter",
	       "CPU time of the memreclaimd process (its margin worker included), by mode.");
	fprintf(f, P "cpu_seconds_total{mode=\"user\"} %.6f\n"
		P "cpu_seconds_total{mode=\"system\"} %.6f\n",
		user_ns / 1e9, sys_ns / 1e9);
}

int mrd_metrics_render(struct mrd_groups *gs, const struct mrd_counters *c,
		       char **out, size_t *len)
{
	struct snap *v;
	size_t i, n = 0, refused = 0;
	FILE *f;
	int r = 0;

	pthread_mutex_lock(&gs->lock);
	v = calloc(gs->n ? gs->n : 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&gs->lock);
		return -ENOMEM;
	}
	for (i = 0; i < gs->n; i++) {
		if (!gs->v[i]->g) {
			refused++;
			continue;
		}
		/* A group in the middle of another manager's step, or just
		 * removed, is left out of this scrape. */
		if (mrd_snapshot_read(gs->v[i]->g, &v[n].s) < 0)
			continue;
		v[n].path = gs->v[i]->path;
		n++;
	}
	f = open_memstream(out, len);
	if (!f) {
		r = -ENOMEM;
		goto out;
	}
	daemon_families(f, c, gs->n - refused, refused);
	per_group(f, v, n);
	if (fclose(f) != 0)
		r = -ENOMEM;
out:
	pthread_mutex_unlock(&gs->lock);
	free(v);
	return r;
}

int mrd_metrics_write_file(struct mrd_groups *gs,
			   const struct mrd_counters *c, const char *path)
{
	char tmp[PATH_MAX];
	char *buf = NULL;
	size_t len = 0, done = 0;
	ssize_t w;
	int fd, r;

	r = mrd_metrics_render(gs, c, &buf, &len);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "%s: rendering the metrics: %s", path,
			strerror(-r));
		return r;
	}
	/* Beside it, so that the rename stays on one file system; a name
	 * the textfile collector skips (it reads *.prom alone), made new
	 * and unpredictable (mkostemp(): O_EXCL), so that whoever may write
	 * the directory cannot put a FIFO or a link in its place ahead of
	 * it (an open of a FIFO blocks the daemon). */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX.tmp", path) >=
	    sizeof(tmp)) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	fd = mkostemps(tmp, 4, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		close(fd);
		unlink(tmp);
		goto fail;
	}
	while (done < len) {
		w = write(fd, buf + done, len - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			unlink(tmp);
			goto fail;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0) {
		r = -errno;
		unlink(tmp);
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		goto fail;
	}
	free(buf);
	return 0;
fail:
	mrd_log(MR_LOG_ERR, "%s: writing the metrics: %s", path, strerror(-r));
	free(buf);
	return r;
}

struct mrd_http {
	struct MHD_Daemon *mhd;
	struct mrd_groups *gs;
	const struct mrd_counters *c;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	static const char not_found[] = "memreclaimd serves /metrics alone\n";
	struct mrd_http *h = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned status = MHD_HTTP_OK;
	char *buf = NULL;
	size_t len = 0;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return MHD_NO;
	if (*upload_data_size)
		return MHD_NO;
	if (strcmp(url, "/metrics") != 0) {
		resp = MHD_create_response_from_buffer(
			sizeof(not_found) - 1, (void *)not_found,
			MHD_RESPMEM_PERSISTENT);
		status = MHD_HTTP_NOT_FOUND;
	} else if (mrd_metrics_render(h->gs, h->c, &buf, &len) < 0) {
		return MHD_NO;
	} else {
		resp = MHD_create_response_from_buffer(len, buf,
						       MHD_RESPMEM_MUST_FREE);
		if (!resp)
			free(buf);
	}
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ?
				"text/plain; version=0.0.4; charset=utf-8" :
				"text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int mrd_http_start(struct mrd_groups *gs, const struct mrd_counters *c,
		   unsigned port, struct mrd_http **ret)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct mrd_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->gs = gs;
	h->c = c;
	h->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				  MHD_USE_ERROR_LOG,
				  (uint16_t)port, NULL, NULL, answer, h,
				  MHD_OPTION_SOCK_ADDR, &sin,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				  MHD_OPTION_END);
	if (!h->mhd) {
		mrd_log(MR_LOG_ERR, "metrics endpoint on 127.0.0.1:%u: could "
			"not listen (port in use?)", port);
		free(h);
		return -EADDRINUSE;
	}
	mrd_log(MR_LOG_INFO, "metrics on http://127.0.0.1:%u/metrics", port);
	*ret = h;
	return 0;
}

void mrd_http_stop(struct mrd_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->mhd);
	free(h);
}
