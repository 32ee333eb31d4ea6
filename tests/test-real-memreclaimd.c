/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd with a configuration, on real cgroup v1 groups: two parents
 * the test creates under MEMRECLAIM_TEST_PARENT, one matched by `*`, the
 * other by `**`; children created and removed while the daemon runs are
 * kept and dropped; SIGHUP reloads (a section that did not change leaves
 * its groups as they were, a changed one gets its new margin, a bad
 * configuration is refused and the old one stays in force, a section
 * removed releases its groups); the metrics file and the HTTP endpoint
 * parse with prometheus_client (tests/memreclaimd-metrics-check.py),
 * with the pressure of groups that have cgroup2 twins on this hybrid host
 * (hybrid-psi), and the proactive controller's of a group that runs it
 * beside its margin.
 * The daemon's margins are read back from its metrics file.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemonproc.h"
#include "memreclaim.h"
#include "mountinfo.h"
#include "realcg.h"

#define MiB (1024ULL * 1024)
/* Long enough for anything the daemon does in a wake-up, on a loaded
 * machine; the test waits for events, never for a time. */
#define WAIT_MS 15000

static char pa[PATH_MAX], pb[PATH_MAX];     /* the two parents */
static char twins[4][PATH_MAX];             /* cgroup2 twins, made last */
static int ntwins;
static char work[PATH_MAX];                 /* config and metrics */
static char conf[PATH_MAX + 16], prom[PATH_MAX + 16];
static struct daemonproc d;

static void mkgroup(const char *path, uint64_t limit)
{
	char v[32];

	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path,
		      strerror(errno));
	if (limit) {
		snprintf(v, sizeof(v), "%" PRIu64, limit);
		write_file(path, "memory.limit_in_bytes", v);
	}
}

/* Removes path and the groups below it, deepest first. */
static void rmtree(const char *path)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *dp = opendir(path);

	if (!dp)
		return;
	while ((e = readdir(dp)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			fmt(sub, sizeof(sub), "%s/%s", path, e->d_name);
			rmtree(sub);
		}
	closedir(dp);
	if (rmdir(path) < 0)
		fprintf(stderr, "rmdir %s: %s\n", path, strerror(errno));
}

static void setup(void)
{
	fmt(pa, sizeof(pa), "%s/memreclaim-test-%d-pa", parent, (int)getpid());
	fmt(pb, sizeof(pb), "%s/memreclaim-test-%d-pb", parent, (int)getpid());
	mkgroup(pa, 64 * MiB);
	mkgroup(pb, 64 * MiB);
	fmt(work, sizeof(work), "/tmp/memreclaimd-test-%d", (int)getpid());
	ck_assert_int_eq(mkdir(work, 0700), 0);
	fmt(conf, sizeof(conf), "%s/m.conf", work);
	ntwins = 0;
	fmt(prom, sizeof(prom), "%s/m.prom", work);
	d.pid = 0;
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];

	if (d.pid > 0 && kill(d.pid, 0) == 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
	}
	while (ntwins > 0) {
		ntwins--;
		if (rmdir(twins[ntwins]) < 0)
			fprintf(stderr, "rmdir %s: %s\n", twins[ntwins],
				strerror(errno));
	}
	rmtree(pa);
	rmtree(pb);
	fmt(cmd, sizeof(cmd), "rm -rf '%s'", work);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", work);
}

/* Writes the configuration: the [daemon] section the tests share
 * (statistics as JSON at start and end, the metrics file every second),
 * then `groups`, the [group] sections. */
static void write_conf(const char *groups)
{
	FILE *fp = fopen(conf, "we");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fprintf(fp, "[daemon]\nstats-interval = 0\n"
				 "stats-format = json\nmetrics-file = %s\n"
				 "metrics-interval = 1\n\n%s", prom, groups),
			 0);
	ck_assert_int_eq(fclose(fp), 0);
}

static void start(const char *port)
{
	char env_state[PATH_MAX + 32];
	char prog[] = "memreclaimd", opt[] = "--config", popt[] = "--metrics-port";
	char *argv[] = { prog, opt, conf, NULL, NULL, NULL };
	char *env[] = { env_state, NULL };

	if (port) {
		argv[3] = popt;
		argv[4] = (char *)(uintptr_t)port;
	}
	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	dp_start(&d, argv, env);
}

static void wait_err(size_t from, const char *what)
{
	ck_assert_msg(dp_wait_for(&d, WAIT_MS, true, from, what),
		      "stderr has no '%s':\n%s", what, dp_tail(d.ebuf + from));
}

/* The value of a sample in the metrics file ("name{cgroup=...}" or a
 * daemon series as written); -1 when it has none. */
static double sample(const char *series)
{
	char line[PATH_MAX + 256];
	double v = -1;
	size_t len = strlen(series);
	FILE *f = fopen(prom, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, series, len) == 0 && line[len] == ' ')
			v = strtod(line + len + 1, NULL);
	fclose(f);
	return v;
}

static double group_sample(const char *name, const char *path)
{
	char s[PATH_MAX + 128];

	fmt(s, sizeof(s), "memreclaimd_%s{cgroup=\"%s\"}", name, path);
	return sample(s);
}

/* Waits until the metrics file says series == v. */
static void wait_sample(const char *name, const char *path, double v)
{
	unsigned long long end = dp_mono_ms() + WAIT_MS;
	double got;

	for (;;) {
		got = path ? group_sample(name, path) : sample(name);
		if (got == v)
			return;
		ck_assert_msg(dp_mono_ms() < end, "%s{%s} is %g, not %g; "
			      "stderr:\n%s", name, path ? path : "", got, v,
			      dp_tail(d.ebuf));
		dp_wait_for(&d, 100, false, 0, NULL);
	}
}

static void stop_ok(void)
{
	int status;

	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	status = dp_exit(&d);
	d.pid = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "wait status %#x", status);
}

/* `*` takes the children of one parent, `**` every group below the
 * other; groups created while the daemon runs are kept, removed ones
 * dropped, and the parents themselves are never taken. */
START_TEST(groups_found_as_created_and_dropped_as_removed)
{
	char a1[PATH_MAX], a2[PATH_MAX], b1[PATH_MAX], b2[PATH_MAX];
	char groups[PATH_MAX * 3];
	size_t mark;

	fmt(a1, sizeof(a1), "%s/a1", pa);
	fmt(a2, sizeof(a2), "%s/a2", pa);
	fmt(b1, sizeof(b1), "%s/b1", pb);
	fmt(b2, sizeof(b2), "%s/b2", b1);
	mkgroup(a1, 32 * MiB);
	fmt(groups, sizeof(groups), "[group a]\npath = %s/*\nmargin = 4M\n\n"
	    "[group b]\npath = %s/**\nmargin = 8M\nhysteresis = 2M\n"
	    "batch = auto\n", pa, pb);
	write_conf(groups);
	start(NULL);
	dp_wait_records(&d, "start", a1, 1, WAIT_MS);
	mkgroup(a2, 32 * MiB);
	mkgroup(b1, 32 * MiB);
	mkgroup(b2, 16 * MiB);
	dp_wait_records(&d, "start", a2, 1, WAIT_MS);
	dp_wait_records(&d, "start", b1, 1, WAIT_MS);
	dp_wait_records(&d, "start", b2, 1, WAIT_MS);
	wait_sample("group_margin_bytes", a2, 4 * MiB);
	wait_sample("group_margin_bytes", b2, 8 * MiB);
	wait_sample("group_hysteresis_bytes", b2, 2 * MiB);
	wait_sample("memreclaimd_groups", NULL, 4);
	ck_assert_int_eq(dp_count_records(&d, "start", pa), 0);
	ck_assert_int_eq(dp_count_records(&d, "start", pb), 0);
	mark = d.elen;
	ck_assert_int_eq(rmdir(b2), 0);
	wait_err(mark, "/b1/b2: cgroup removed; dropped");
	ck_assert_int_eq(rmdir(a1), 0);
	wait_err(mark, "/a1: cgroup removed; dropped");
	wait_sample("memreclaimd_groups", NULL, 2);
	ck_assert_double_eq(group_sample("group_margin_bytes", a1), -1);
	/* A child of a removed and recreated level is found again. */
	mkgroup(b2, 16 * MiB);
	dp_wait_records(&d, "start", b2, 2, WAIT_MS);
	stop_ok();
	ck_assert_int_eq(dp_count_records(&d, "final", a2), 1);
	ck_assert_int_eq(dp_count_records(&d, "final", b1), 1);
	ck_assert_int_eq(dp_count_records(&d, "final", b2), 1);
	/* The limits the daemon found are those it left. */
	ck_assert_str_eq(read_text(a2, "memory.limit_in_bytes"), "33554432\n");
	ck_assert_str_eq(read_text(b2, "memory.limit_in_bytes"), "16777216\n");
}
END_TEST

/* SIGHUP: a section that did not change keeps its groups as they are
 * (not reopened), a changed one gets its new margin on the same handle,
 * a bad configuration is refused and the old one goes on (its patterns
 * still find new groups), a removed section releases its groups. */
START_TEST(reload_keeps_changes_and_refuses)
{
	char a1[PATH_MAX], a2[PATH_MAX], b1[PATH_MAX];
	char groups[PATH_MAX * 3];
	size_t mark;

	fmt(a1, sizeof(a1), "%s/a1", pa);
	fmt(a2, sizeof(a2), "%s/a2", pa);
	fmt(b1, sizeof(b1), "%s/b1", pb);
	mkgroup(a1, 32 * MiB);
	mkgroup(b1, 32 * MiB);
	fmt(groups, sizeof(groups), "[group a]\npath = %s/*\nmargin = 4M\n\n"
	    "[group b]\npath = %s/*\nmargin = 8M\n", pa, pb);
	write_conf(groups);
	start(NULL);
	dp_wait_records(&d, "start", a1, 1, WAIT_MS);
	dp_wait_records(&d, "start", b1, 1, WAIT_MS);
	wait_sample("group_margin_bytes", b1, 8 * MiB);

	/* b changes, a does not. */
	fmt(groups, sizeof(groups), "[group a]\npath = %s/*\nmargin = 4M\n\n"
	    "[group b]\npath = %s/*\nmargin = 12M\n", pa, pb);
	write_conf(groups);
	mark = d.elen;
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	wait_err(mark, "reloaded ");
	wait_sample("group_margin_bytes", b1, 12 * MiB);
	wait_sample("memreclaimd_config_reloads_total{result=\"success\"}",
		    NULL, 1);
	ck_assert_double_eq(group_sample("group_margin_bytes", a1), 4 * MiB);
	ck_assert_int_eq(dp_count_records(&d, "start", a1), 1);
	ck_assert_int_eq(dp_count_records(&d, "start", b1), 1);
	ck_assert_int_eq(dp_count_records(&d, "final", a1), 0);

	/* A mistake: refused, named, and the configuration in force stays. */
	fmt(groups, sizeof(groups), "[group a]\npath = %s/*\nmargin = 5x\n\n"
	    "[group b]\npath = %s/*\nmargin = 2M\n", pa, pb);
	write_conf(groups);
	mark = d.elen;
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	wait_err(mark, "reload refused");
	ck_assert_msg(strstr(d.ebuf + mark, "m.conf:9: margin '5x': not a size"),
		      "%s", dp_tail(d.ebuf + mark));
	wait_sample("memreclaimd_config_reloads_total{result=\"failure\"}",
		    NULL, 1);
	ck_assert_int_eq(kill(d.pid, 0), 0);
	mkgroup(a2, 32 * MiB);
	dp_wait_records(&d, "start", a2, 1, WAIT_MS);
	wait_sample("group_margin_bytes", a2, 4 * MiB);
	ck_assert_double_eq(group_sample("group_margin_bytes", b1), 12 * MiB);

	/* b goes: its group is let go, with its final record. */
	fmt(groups, sizeof(groups), "[group a]\npath = %s/*\nmargin = 4M\n",
	    pa);
	write_conf(groups);
	mark = d.elen;
	ck_assert_int_eq(kill(d.pid, SIGHUP), 0);
	wait_err(mark, "no longer matched by any [group] section; released");
	dp_wait_records(&d, "final", b1, 1, WAIT_MS);
	wait_sample("memreclaimd_groups", NULL, 2);
	ck_assert_int_eq(dp_count_records(&d, "start", a1), 1);
	stop_ok();
}
END_TEST

/* A free TCP port on 127.0.0.1 (the daemon binds it a moment later). */
static unsigned free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* Makes the cgroup2 twin of the v1 group path and of its parent (in
 * this order; teardown removes them the other way), as systemd's hybrid
 * layout has them. Returns false, saying why, where this host has no
 * place for them. */
static bool make_twin(const char *path)
{
	struct mri_cgroup_mount v1, v2;
	char twin[PATH_MAX], up[PATH_MAX];
	struct stat st;
	size_t len;

	if (mri_mount_find_memory_v1(MRI_MOUNTINFO, &v1) < 0 ||
	    mri_mount_find_v2(MRI_MOUNTINFO, &v2) < 0) {
		printf("no pressure checked: not a hybrid host\n");
		return false;
	}
	len = strlen(v1.mount_point);
	ck_assert_msg(strncmp(path, v1.mount_point, len) == 0 &&
		      path[len] == '/', "%s is not below %s", path,
		      v1.mount_point);
	fmt(twin, sizeof(twin), "%s%s", v2.mount_point, path + len);
	fmt(up, sizeof(up), "%s", twin);
	*strrchr(up, '/') = '\0';
	*strrchr(up, '/') = '\0';
	if (stat(up, &st) < 0) {
		printf("no pressure checked: %s, the twin of %s's parent's "
		       "parent, does not exist\n", up, path);
		return false;
	}
	fmt(up, sizeof(up), "%s", twin);
	*strrchr(up, '/') = '\0';
	ck_assert_msg(mkdir(up, 0755) == 0, "mkdir %s: %s", up,
		      strerror(errno));
	fmt(twins[ntwins++], sizeof(twins[0]), "%s", up);
	ck_assert_msg(mkdir(twin, 0755) == 0, "mkdir %s: %s", twin,
		      strerror(errno));
	fmt(twins[ntwins++], sizeof(twins[0]), "%s", twin);
	return true;
}

static void check_metrics(const char *source, const char *a1, const char *b1,
			  bool pressure)
{
	char cmd[PATH_MAX * 5];
	const char *top = getenv("top_srcdir");

	fmt(cmd, sizeof(cmd), "/usr/bin/python3 %s/tests/memreclaimd-metrics-check.py "
	    "%s --cgroup %s --cgroup %s --value group_margin_bytes,%s,%llu "
	    "--value group_margin_adaptive,%s,0 "
	    "--value group_margin_adaptive,%s,1 "
	    "--value group_limit_bytes,%s,%llu%s%s", top && *top ? top : ".",
	    source, a1, b1, a1, 4 * MiB, a1, b1, b1, 48 * MiB,
	    pressure ? " --pressure " : "", pressure ? a1 : "");
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* The metrics file and the HTTP endpoint, parsed by prometheus_client:
 * every family, every series of both groups. */
START_TEST(metrics_parse_with_prometheus_client)
{
	char a1[PATH_MAX], b1[PATH_MAX], port[16], url[PATH_MAX + 32];
	char groups[PATH_MAX * 3];
	bool pressure;

	if (access("/usr/bin/python3", X_OK) != 0)
		ck_abort_msg("/usr/bin/python3 is missing (scripts/lib.sh "
			     "installs python3-prometheus-client)");
	fmt(a1, sizeof(a1), "%s/a1", pa);
	fmt(b1, sizeof(b1), "%s/b1", pb);
	mkgroup(a1, 32 * MiB);
	mkgroup(b1, 48 * MiB);
	/* a1 has a twin and reports pressure; b1 has none and does not. */
	pressure = make_twin(a1);
	/* With a twin, a1 runs the proactive controller beside its
	 * margin. */
	fmt(groups, sizeof(groups), "%s[group a]\npath = %s/*\nmargin = 4M\n"
	    "%s\n[group b]\npath = %s/b1\nmargin = auto\n",
	    pressure ? "[daemon]\nhybrid-psi = yes\n" : "", pa,
	    pressure ? "proactive = on\nmin-size = 2M\n" : "", pb);
	write_conf(groups);
	fmt(port, sizeof(port), "%u", free_port());
	start(port);
	wait_sample("memreclaimd_groups", NULL, 2);
	if (pressure) {
		/* On, and its first measured interval's floor: min-size
		 * (the empty group has nothing else to keep). */
		wait_sample("group_proactive_enabled", a1, 1);
		wait_sample("group_proactive_floor_bytes", a1, 2 * MiB);
	}
	wait_sample("group_proactive_enabled", b1, 0);
	wait_err(0, "metrics on http://127.0.0.1:");
	fmt(url, sizeof(url), "--file %s", prom);
	check_metrics(url, a1, b1, pressure);
	fmt(url, sizeof(url), "--url http://127.0.0.1:%s/metrics", port);
	check_metrics(url, a1, b1, pressure);
	stop_ok();
	/* The last file, written at the stop, is whole too. */
	fmt(url, sizeof(url), "--file %s", prom);
	check_metrics(url, a1, b1, pressure);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("real-memreclaimd");
	TCase *tc = tcase_create("config");
	int r;

	r = rc_find_places("-memreclaimd");
	if (r)
		return r;
	rc_sweep_stale();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, groups_found_as_created_and_dropped_as_removed);
	tcase_add_test(tc, reload_keeps_changes_and_refuses);
	tcase_add_test(tc, metrics_parse_with_prometheus_client);
	suite_add_tcase(s, tc);
	return rc_run(s);
}
