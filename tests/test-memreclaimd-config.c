/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's group patterns and configuration files, without a cgroup:
 * patterns parsed, normalized and matched component by component (`*`
 * within one, `**` across one or more), the states the discovery walks
 * with; configuration files and drop-ins merged in order, and every
 * mistake refused with its file and line; the runtime sections and the
 * drop-ins container runtimes' hooks write (memreclaimd-dropin.h), read
 * back and every malformed one refused; a section's policy applied to a
 * simulated group as the daemon applies it (memreclaimd-groups.h,
 * policyopt.h): a min-size not below the group's limit refused, naming
 * the group, the size and the limit; a reconfigure refused half way put
 * back whole.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memreclaim-sim.h>

#include "memreclaimd-config.h"
#include "memreclaimd-dropin.h"
#include "memreclaimd-groups.h"
#include "memreclaimd-pattern.h"
#include "policyopt.h"

/* ---------------------------------------------------------------- patterns */

static struct mrd_pattern pat(const char *text)
{
	struct mrd_pattern p;
	const char *why;

	ck_assert_msg(mrd_pattern_parse(text, &p, &why) == 0, "%s: %s", text,
		      why);
	return p;
}

START_TEST(pattern_refusals)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "relative/path", "not an absolute path" },
		{ "", "not an absolute path" },
		{ "/a/../b", "\".\" or \"..\"" },
		{ "/a/./b", "\".\" or \"..\"" },
		{ "/a/b**", "whole component" },
		{ "/a/**x/c", "whole component" },
		{ "/a/pod[0-9", "without its" },
		{ "/", "root directory" },
		{ "///", "root directory" },
	};
	struct mrd_pattern p;
	const char *why;
	char deep[1024] = "";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(mrd_pattern_parse(bad[i].text, &p, &why),
				 -EINVAL);
		ck_assert_msg(why && strstr(why, bad[i].why), "%s: %s",
			      bad[i].text, why);
	}
	for (i = 0; i < 64; i++)
		strcat(deep, "/d");
	ck_assert_int_eq(mrd_pattern_parse(deep, &p, &why), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "more than 63"));
	deep[63 * 2] = '\0';
	ck_assert_int_eq(mrd_pattern_parse(deep, &p, &why), 0);
	ck_assert_uint_eq(p.n, 63);
	mrd_pattern_free(&p);
}
END_TEST

START_TEST(pattern_normal_form)
{
	struct mrd_pattern p = pat("//sys/fs//cgroup/memory/kubepods/**/");

	ck_assert_str_eq(p.text, "/sys/fs/cgroup/memory/kubepods/**");
	ck_assert_uint_eq(p.n, 6);
	ck_assert(p.wild);
	mrd_pattern_free(&p);
	p = pat("/sys/fs/cgroup/memory/db");
	ck_assert(!p.wild);
	mrd_pattern_free(&p);
}
END_TEST

START_TEST(pattern_star_is_one_component)
{
	struct mrd_pattern p = pat("/m/machine.slice/*");

	ck_assert(mrd_pattern_match(&p, "/m/machine.slice/vm1.scope"));
	ck_assert(!mrd_pattern_match(&p, "/m/machine.slice"));
	ck_assert(!mrd_pattern_match(&p, "/m/machine.slice/vm1.scope/sub"));
	ck_assert(!mrd_pattern_match(&p, "/m/other.slice/vm1.scope"));
	/* The parent can lead to a match; a match leads nowhere further. */
	ck_assert(mrd_pattern_descends(&p, mrd_pattern_state(&p, "/m")));
	ck_assert(mrd_pattern_descends(&p,
		mrd_pattern_state(&p, "/m/machine.slice")));
	ck_assert(!mrd_pattern_descends(&p,
		mrd_pattern_state(&p, "/m/machine.slice/vm1.scope")));
	ck_assert_uint_eq(mrd_pattern_state(&p, "/m/other.slice"), 0);
	ck_assert(mrd_pattern_literal_only(&p, mrd_pattern_state(&p, "/m")));
	ck_assert(!mrd_pattern_literal_only(&p,
		mrd_pattern_state(&p, "/m/machine.slice")));
	mrd_pattern_free(&p);

	p = pat("/m/pod-[0-9]?/c*");
	ck_assert(mrd_pattern_match(&p, "/m/pod-12/cri"));
	ck_assert(!mrd_pattern_match(&p, "/m/pod-x2/cri"));
	ck_assert(!mrd_pattern_match(&p, "/m/pod-12/x"));
	mrd_pattern_free(&p);
}
END_TEST

START_TEST(pattern_double_star_any_depth)
{
	struct mrd_pattern p = pat("/m/kubepods/**");
	uint64_t st;

	ck_assert(!mrd_pattern_match(&p, "/m/kubepods"));
	ck_assert(mrd_pattern_match(&p, "/m/kubepods/burstable"));
	ck_assert(mrd_pattern_match(&p, "/m/kubepods/burstable/pod1"));
	ck_assert(mrd_pattern_match(&p, "/m/kubepods/burstable/pod1/c1"));
	/* Matched, and still descending: its children match too. */
	st = mrd_pattern_state(&p, "/m/kubepods/burstable/pod1");
	ck_assert(mrd_pattern_matched(&p, st));
	ck_assert(mrd_pattern_descends(&p, st));
	mrd_pattern_free(&p);

	/* `**` in the middle: one or more levels, then the last component. */
	p = pat("/m/kubepods/**/cri-*");
	ck_assert(!mrd_pattern_match(&p, "/m/kubepods/cri-1"));
	ck_assert(mrd_pattern_match(&p, "/m/kubepods/pod1/cri-1"));
	ck_assert(mrd_pattern_match(&p, "/m/kubepods/burstable/pod1/cri-1"));
	ck_assert(!mrd_pattern_match(&p, "/m/kubepods/burstable/pod1"));
	ck_assert(!mrd_pattern_match(&p, "/m/kubepods/pod1/cri-1/x"));
	/* cri-1 matches and, under `**`, may still hold a cri-* below. */
	st = mrd_pattern_state(&p, "/m/kubepods/pod1/cri-1");
	ck_assert(mrd_pattern_matched(&p, st));
	ck_assert(mrd_pattern_descends(&p, st));
	mrd_pattern_free(&p);
}
END_TEST

START_TEST(pattern_literal_names_one_group)
{
	struct mrd_pattern p = pat("/m/db");

	ck_assert(mrd_pattern_match(&p, "/m/db"));
	ck_assert(!mrd_pattern_match(&p, "/m/db2"));
	ck_assert(!mrd_pattern_match(&p, "/m/db/x"));
	ck_assert(!mrd_pattern_match(&p, "/m"));
	ck_assert(mrd_pattern_literal_only(&p, mrd_pattern_state(&p, "/m")));
	ck_assert_str_eq(mrd_pattern_component(&p, 1), "db");
	mrd_pattern_free(&p);
}
END_TEST

/* ---------------------------------------------------------------- files */

static char dir[256];
static char errlog[300];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/memreclaimd-config-test-%d",
		 (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(errlog, sizeof(errlog), "%s.err", dir);
}

static void teardown(void)
{
	char cmd[PATH_MAX * 2 + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, errlog);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* stderr into errlog, until capture_end(): returns the saved stderr. */
static int capture_begin(void)
{
	int saved, fd;

	fflush(stderr);
	saved = dup(2);
	ck_assert_int_ge(saved, 0);
	fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

/* stderr back; what was written to it meanwhile (a static buffer). */
static const char *capture_end(int saved)
{
	static char buf[16384];
	ssize_t n;
	int fd;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fd = open(errlog, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Loads dir/name with stderr in errlog; returns the result, and the
 * messages in *msgs (a static buffer). */
static int load(const char *name, struct mrd_config *c, const char **msgs)
{
	char path[PATH_MAX];
	int saved, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	saved = capture_begin();
	r = mrd_config_load(path, c);
	*msgs = capture_end(saved);
	return r;
}

START_TEST(config_main_and_dropins_merge_in_order)
{
	struct mrd_config c;
	const char *msgs;
	const struct mrd_section *s;

	put("m.conf",
	    "# memreclaimd\n"
	    "[daemon]\n"
	    "worker-sched = nice:5\n"
	    "stats-interval = 30\n"
	    "metrics-file = /run/memreclaimd/memreclaimd.prom\n"
	    "\n"
	    "[group web]\n"
	    "path = /m/web/*\n"
	    "margin = 8M\n"
	    "hysteresis = 2M\n"
	    "\n"
	    "[group kubepods]\n"
	    "path = /m/kubepods/**\n"
	    "margin = auto\n"
	    "batch = auto\n");
	ck_assert_int_eq(mkdir(strcat(strcpy((char[PATH_MAX]){ 0 }, dir),
				      "/m.conf.d"), 0700), 0);
	/* Read in lexical order: 20 replaces what 10 set. */
	put("m.conf.d/20-late.conf", "[group web]\nmargin = 16M\n"
	    "[daemon]\nstats-format = json\nmetrics-port = 9469\n"
	    "hybrid-psi = yes\n");
	put("m.conf.d/10-early.conf", "[group web]\nmargin = 12M\n"
	    "[group db]\npath = /m/db\nmargin = 5%\n"
	    "[daemon]\nstats-interval = 5\n");
	/* Not a .conf: ignored, with its mistake. */
	put("m.conf.d/README", "not ini at all\n");
	put("m.conf.d/30-off.conf.disabled", "[bogus]\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert_str_eq(msgs, "");
	ck_assert_int_eq(c.daemon.sched, MR_SCHED_NICE);
	ck_assert_int_eq(c.daemon.nice, 5);
	ck_assert_uint_eq(c.daemon.stats_interval_s, 5);
	ck_assert(c.daemon.json);
	ck_assert_uint_eq(c.daemon.metrics_port_n, 9469);
	ck_assert(c.daemon.hybrid_psi_on);
	ck_assert_str_eq(c.daemon.metrics_file.text,
			 "/run/memreclaimd/memreclaimd.prom");
	ck_assert_uint_eq(c.daemon.metrics_interval_s,
			  MRD_DEFAULT_METRICS_INTERVAL_S);
	ck_assert_uint_eq(c.nsections, 3);
	/* Sections in order of first appearance; the main file first. */
	ck_assert_str_eq(c.sections[0].pattern.text, "/m/web/*");
	ck_assert_str_eq(c.sections[1].pattern.text, "/m/kubepods/**");
	ck_assert_str_eq(c.sections[2].pattern.text, "/m/db");
	s = &c.sections[0];
	ck_assert_str_eq(s->margin.text, "16M");
	ck_assert_ptr_nonnull(strstr(s->margin.where, "20-late.conf:2"));
	ck_assert_uint_eq(s->policy.margin.bytes, 16ULL << 20);
	ck_assert_uint_eq(s->policy.hysteresis.bytes, 2ULL << 20);
	ck_assert(!s->policy.margin_auto);
	s = &c.sections[1];
	ck_assert(s->policy.margin_auto);
	ck_assert(s->policy.batch_auto);
	s = &c.sections[2];
	ck_assert(s->policy.margin.is_ppm);
	ck_assert_uint_eq(s->policy.margin.ppm, 50000);
	/* The first matching section wins. */
	ck_assert_ptr_eq(mrd_config_section_for(&c, "/m/web/a"),
			 &c.sections[0]);
	ck_assert_ptr_eq(mrd_config_section_for(&c, "/m/db"), &c.sections[2]);
	ck_assert_ptr_null(mrd_config_section_for(&c, "/m/db/x"));
	/* Equal keys, equal policy key: what a reload compares. */
	ck_assert_str_eq(c.sections[0].name, "web");
	ck_assert_ptr_nonnull(strstr(c.sections[0].where, "m.conf:7"));
	ck_assert_str_eq(c.sections[1].policy_key,
			 "path=/m/kubepods/**\nmargin=auto\nhysteresis=\n"
			 "batch=auto\nproactive=\npressure-target=\n"
			 "min-size=");
	mrd_config_free(&c);
}
END_TEST

START_TEST(config_default_margin_is_auto)
{
	struct mrd_config c;
	const char *msgs;

	put("m.conf", "[group a]\npath=/m/a\nbatch = 256K\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert(c.sections[0].policy.margin_auto);
	ck_assert_uint_eq(c.sections[0].policy.batch.bytes, 256 * 1024);
	ck_assert_uint_eq(c.daemon.stats_interval_s,
			  MRD_DEFAULT_STATS_INTERVAL_S);
	ck_assert(!c.daemon.json);
	ck_assert_ptr_null(c.daemon.metrics_file.text);
	ck_assert(!c.daemon.hybrid_psi_on);
	mrd_config_free(&c);
}
END_TEST

/* The proactive controller's keys: alone it keeps no margin, beside a
 * margin both; its target and minimum size parsed. */
START_TEST(config_proactive_keys)
{
	struct mrd_config c;
	const char *msgs;
	const struct policy_opts *p;

	put("m.conf", "[group alone]\npath = /m/a\nproactive = on\n"
	    "pressure-target = 20ms/10s\nmin-size = 64M\n"
	    "[group both]\npath = /m/b\nproactive = dry-run\n"
	    "margin = auto\n"
	    "[group off]\npath = /m/c\nproactive = off\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert_str_eq(msgs, "");
	p = &c.sections[0].policy;
	ck_assert_int_eq(p->proactive, POLICYOPT_PROACTIVE_ON);
	ck_assert(!p->margin.set);
	ck_assert(p->pressure_target_set);
	ck_assert_uint_eq(p->stall_ns, 20000000ULL);
	ck_assert_uint_eq(p->window_ns, 10000000000ULL);
	ck_assert_uint_eq(p->min_size.bytes, 64ULL << 20);
	p = &c.sections[1].policy;
	ck_assert_int_eq(p->proactive, POLICYOPT_PROACTIVE_DRY_RUN);
	ck_assert(p->margin_auto);
	ck_assert(!p->pressure_target_set);
	p = &c.sections[2].policy;
	ck_assert_int_eq(p->proactive, POLICYOPT_PROACTIVE_OFF);
	ck_assert(p->margin_auto);
	ck_assert_str_eq(c.sections[0].policy_key,
			 "path=/m/a\nmargin=\nhysteresis=\nbatch=\n"
			 "proactive=on\npressure-target=20ms/10s\n"
			 "min-size=64M");
	mrd_config_free(&c);
}
END_TEST

/* Each mistake is refused with its file and line; *c is left as it was. */
START_TEST(config_mistakes_named_by_file_and_line)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[daemon]\nbogus = 1\n", "m.conf:2: [daemon] has no key 'bogus'" },
		{ "[group a]\npath = /a/*\nmargn = 4M\n",
		  "m.conf:3: [group] has no key 'margn'" },
		{ "[gruop a]\nmargin = 4M\n", "m.conf:1: [gruop a]: not a section" },
		{ "[gruop a]\n", "m.conf:1: [gruop a]: not a section" },
		{ "[group /a/*]\nmargin = 4M\n", "m.conf:1: [group /a/*]: a group's NAME is letters" },
		{ "[group a234567890123456789012345678901234567890123456]\npath=/a\n",
		  "m.conf:1: a section name longer than 49 bytes" },
		{ "margin = 4M\n", "m.conf:1: key outside any section" },
		{ "[group a]\npath = a/*\n", "m.conf:2: path 'a/*': not an absolute path" },
		{ "[group a]\npath = /a/**x\n", "m.conf:2: path '/a/**x': \"**\" must be a whole component" },
		{ "[group a]\nmargin = 4M\n", "m.conf:1: [group a] has no path" },
		{ "[group a]\npath = /a\n[group b]\n# nothing\n", "m.conf:3: [group b] has no path" },
		{ "[group a]\npath = /a/*\nmargin = 4x\n", "m.conf:3: margin '4x': not a size" },
		{ "[group a]\npath = /a/*\nmargin = 1000\n", "margin '1000': a margin in bytes must be at least 4096" },
		/* The checks of the policy as a whole name the key they refuse
		 * as the file spells it, with its file and line, never the
		 * command line's option. */
		{ "[group a]\npath = /a/*\nhysteresis = 1M\n", "m.conf:3: hysteresis goes with a fixed margin: margin = auto (the default) sizes its own" },
		{ "[group a]\npath = /a/*\nmargin = sized\n\nhysteresis = 1M\n", "m.conf:5: hysteresis goes with a fixed margin" },
		{ "[group a]\npath = /a/*\nmargin = 4M\nbatch = 5000\n", "m.conf:4: batch must be a multiple of 4K from 4K to 1024G" },
		{ "[group a]\npath = /a/*\nmargin = 4M\nbatch = 0%\n", "m.conf:4: batch must be above 0%" },
		{ "[group a]\npath = /a/*\nmargin = 0\n", "m.conf:3: margin '0': must be above 0 (and below 100%)" },
		{ "[group a]\npath = /a/*\nmargin = 100%\n", "m.conf:3: margin '100%': must be above 0 (and below 100%)" },
		{ "[group a]\npath = /a/*\nmargin = 4M\nhysteresis = 100%\n", "m.conf:4: hysteresis must be below 100%" },
		{ "[group a]\npath = /a/*\nproactive = on\nbatch = 1M\n", "m.conf:4: batch goes with margin" },
		{ "[daemon]\nworker-sched = fast\n", "m.conf:2: worker-sched 'fast': expected idle or nice:N" },
		{ "[daemon]\nworker-sched = nice:30\n", "nice level must be -20..19" },
		{ "[daemon]\nstats-interval = 1m\n", "not a whole number of seconds" },
		{ "[daemon]\nmetrics-interval = 0\n", "must be at least 1" },
		{ "[daemon]\nmetrics-port = 70000\n", "expected a TCP port" },
		{ "[daemon]\nmetrics-file = relative.prom\n", "metrics-file 'relative.prom': not an absolute path" },
		{ "[daemon]\nbackend = sim\n", "backend 'sim': expected auto, cgroup1 or cgroup2" },
		{ "[daemon]\nstats-format = yaml\n", "expected text or json" },
		{ "[daemon]\nhybrid-psi = on\n", "m.conf:2: hybrid-psi 'on': expected yes or no" },
		{ "[daemon]\nno equals sign here\n", "m.conf:2: not a [section], a key = value" },
		{ "[daemon]\nruntime-dir = run/groups.d\n", "m.conf:2: runtime-dir 'run/groups.d': not an absolute path" },
		{ "[group a]\npath = /a/*\nruntime = maybe\n", "m.conf:3: runtime 'maybe': expected yes or no" },
		{ "[group a]\npath = /a\nproactive = yes\n", "m.conf:3: proactive 'yes': expected on, off or dry-run" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 10ms\n", "m.conf:4: pressure-target '10ms': not STALL/WINDOW" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 10/6s\n", "not STALL/WINDOW" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 1ms/700s\n", "m.conf:4: pressure-target: the window must be 1s to 600s" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 7s/6s\n", "the stall 1us to the window" },
		{ "[group a]\npath = /a\nmin-size = 64M\n", "m.conf:3: min-size goes with the proactive controller (proactive = on or dry-run)" },
		{ "[group a]\npath = /a\nproactive = off\npressure-target = 10ms/6s\n", "m.conf:4: pressure-target goes with the proactive controller (proactive = on or dry-run)" },
		{ "[group a]\npath = /a\nproactive = on\nmin-size = 5%\n", "min-size '5%': not a size (bytes, K, M or G)" },
	};
	struct mrd_config c = { .nsections = 12345 };
	const char *msgs;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("m.conf", bad[i].text);
		ck_assert_int_eq(load("m.conf", &c, &msgs), -EINVAL);
		ck_assert_msg(strstr(msgs, bad[i].msg), "case %zu: want '%s', "
			      "got: %s", i, bad[i].msg, msgs);
		/* A file's mistake never names a command-line option. */
		ck_assert_msg(!strstr(msgs, "--"), "case %zu: %s", i, msgs);
		ck_assert_uint_eq(c.nsections, 12345);
	}
}
END_TEST

/* runtime = yes: a policy by NAME, which the walk's lookup skips. */
START_TEST(config_runtime_sections)
{
	struct mrd_config c;
	const char *msgs;

	put("m.conf", "[daemon]\nruntime-dir = /run/x/groups.d\n"
	    "[group ctr]\npath = /m/machine/*\nruntime = yes\nmargin = 8M\n"
	    "[group walk]\npath = /m/machine/*\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert_str_eq(mrd_daemon_runtime_dir(&c.daemon), "/run/x/groups.d");
	ck_assert_ptr_eq(mrd_config_runtime_section(&c, "ctr"),
			 &c.sections[0]);
	ck_assert_ptr_null(mrd_config_runtime_section(&c, "walk"));
	ck_assert_ptr_null(mrd_config_runtime_section(&c, "nope"));
	ck_assert_ptr_eq(mrd_config_section_for(&c, "/m/machine/a"),
			 &c.sections[1]);
	mrd_config_free(&c);
	put("m.conf", "[group a]\npath = /a\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert_str_eq(mrd_daemon_runtime_dir(&c.daemon),
			 MRD_DEFAULT_RUNTIME_DIR);
	mrd_config_free(&c);
}
END_TEST

START_TEST(dropin_names)
{
	char id[MRD_CONTAINER_ID_MAX + 1], longid[MRD_CONTAINER_ID_MAX + 2];

	ck_assert(mrd_container_id_ok("4f6a0c_x+y-z.1"));
	ck_assert(!mrd_container_id_ok(""));
	ck_assert(!mrd_container_id_ok(".hidden"));
	ck_assert(!mrd_container_id_ok("a/b"));
	ck_assert(!mrd_container_id_ok("../x"));
	ck_assert(!mrd_container_id_ok("a b"));
	ck_assert(!mrd_container_id_ok("a\nb"));
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	ck_assert(!mrd_container_id_ok(longid));
	longid[sizeof(longid) - 2] = '\0';
	ck_assert(mrd_container_id_ok(longid));
	ck_assert(mrd_dropin_id("abc.conf", id, sizeof(id)));
	ck_assert_str_eq(id, "abc");
	ck_assert(!mrd_dropin_id(".abc.XXXXXX", id, sizeof(id)));
	ck_assert(!mrd_dropin_id(".conf", id, sizeof(id)));
	ck_assert(!mrd_dropin_id("abc.conf~", id, sizeof(id)));
	ck_assert(!mrd_dropin_id("a b.conf", id, sizeof(id)));
}
END_TEST

/* Written and read back whole; every malformed one refused, saying why;
 * removed, and removed again with nothing there. */
START_TEST(dropin_write_read_refuse)
{
	static const struct {
		const char *text, *why;
		int err;
	} bad[] = {
		{ "cgroup = /m/a\n", "missing", -EINVAL },
		{ "policy = p\n", "missing", -EINVAL },
		{ "cgroup = /m/a\npolicy = p\nmargin = 1M\n",
		  "a key other than", -EINVAL },
		{ "cgroup = /m/a\ncgroup = /m/b\npolicy = p\n", "twice",
		  -EINVAL },
		{ "cgroup = m/a\npolicy = p\n", "absolute", -EINVAL },
		/* Another spelling of a group's path: it would be kept
		 * twice, under two keys. */
		{ "cgroup = /m//a\npolicy = p\n", "normal form", -EINVAL },
		{ "cgroup = /m/a/\npolicy = p\n", "normal form", -EINVAL },
		{ "cgroup = /m/./a\npolicy = p\n", "normal form", -EINVAL },
		{ "cgroup = /m/../a\npolicy = p\n", "normal form", -EINVAL },
		{ "cgroup = /\npolicy = p\n", "normal form", -EINVAL },
		{ "cgroup = /m/a\npolicy = a/b\n", "[group] NAME", -EINVAL },
		{ "[container]\ncgroup = /m/a\npolicy = p\n",
		  "not key = value", -EINVAL },
	};
	struct mrd_dropin d = { .cgroup = "/m/machine/abc", .policy = "ctr" };
	struct mrd_dropin back;
	char big[MRD_DROPIN_MAX_BYTES + 64], path[PATH_MAX];
	const char *why;
	int dfd;
	size_t i;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(mrd_dropin_write(dfd, "abc", &d), 0);
	ck_assert_int_eq(mrd_dropin_write(dfd, "../abc", &d), -EINVAL);
	ck_assert_int_eq(mrd_dropin_read(dfd, "abc.conf", &back, &why), 0);
	ck_assert_str_eq(back.cgroup, d.cgroup);
	ck_assert_str_eq(back.policy, d.policy);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("x.conf", bad[i].text);
		ck_assert_int_eq(mrd_dropin_read(dfd, "x.conf", &back, &why),
				 bad[i].err);
		ck_assert_msg(why && strstr(why, bad[i].why), "case %zu: %s",
			      i, why);
	}
	memset(big, '#', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("x.conf", big);
	ck_assert_int_eq(mrd_dropin_read(dfd, "x.conf", &back, &why), -EFBIG);
	snprintf(path, sizeof(path), "%s/link.conf", dir);
	ck_assert_int_eq(symlink("abc.conf", path), 0);
	ck_assert_int_eq(mrd_dropin_read(dfd, "link.conf", &back, &why),
			 -EINVAL);
	snprintf(path, sizeof(path), "%s/d.conf", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(mrd_dropin_read(dfd, "d.conf", &back, &why), -EINVAL);
	ck_assert_int_eq(mrd_dropin_read(dfd, "gone.conf", &back, &why),
			 -ENOENT);
	ck_assert_int_eq(mrd_dropin_remove(dfd, "abc"), 0);
	ck_assert_int_eq(mrd_dropin_read(dfd, "abc.conf", &back, &why),
			 -ENOENT);
	ck_assert_int_eq(mrd_dropin_remove(dfd, "abc"), 0);
	ck_assert_int_eq(mrd_dropin_remove(dfd, "../abc"), -EINVAL);
	close(dfd);
}
END_TEST

/* mrd_runtime_dir_open() with stderr in errlog: the fd or -errno, and
 * the messages in dir_msgs (a static buffer). */
static const char *dir_msgs;

static int open_runtime_dir(const char *path, bool create)
{
	int saved = capture_begin(), r;

	r = mrd_runtime_dir_open("test", path, create);
	dir_msgs = capture_end(saved);
	return r;
}

/* The runtime directory: made with its parent when missing; a symbolic
 * link, a file, a directory writable by others or owned by another user
 * refused, each saying why; and what is checked is the directory opened,
 * not the path: one put at the path after the check is never written. */
START_TEST(runtime_dir_checked_through_its_fd)
{
	char rd[PATH_MAX], other[PATH_MAX], moved[PATH_MAX], p[PATH_MAX * 2];
	struct mrd_dropin d = { .cgroup = "/m/a", .policy = "p" };
	struct stat st;
	int fd;

	snprintf(rd, sizeof(rd), "%s/run/groups.d", dir);
	ck_assert_int_eq(open_runtime_dir(rd, false), -ENOENT);
	fd = open_runtime_dir(rd, true);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(stat(rd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	close(fd);

	snprintf(other, sizeof(other), "%s/link", dir);
	ck_assert_int_eq(symlink(rd, other), 0);
	ck_assert_int_eq(open_runtime_dir(other, true), -ELOOP);
	ck_assert_ptr_nonnull(strstr(dir_msgs, "a symbolic link"));
	snprintf(other, sizeof(other), "%s/file", dir);
	put("file", "");
	ck_assert_int_eq(open_runtime_dir(other, true), -ENOTDIR);
	ck_assert_int_eq(chmod(rd, 0775), 0);
	ck_assert_int_eq(open_runtime_dir(rd, false), -EPERM);
	ck_assert_ptr_nonnull(strstr(dir_msgs, "writable by no one "
				     "else"));
	ck_assert_int_eq(chmod(rd, 0755), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(rd, 65534, (gid_t)-1), 0);
		ck_assert_int_eq(open_runtime_dir(rd, false), -EPERM);
		ck_assert_int_eq(chown(rd, 0, (gid_t)-1), 0);
	}

	/* Checked, then replaced at its path by another directory: the
	 * drop-in goes to the one checked. */
	fd = open_runtime_dir(rd, false);
	ck_assert_int_ge(fd, 0);
	snprintf(moved, sizeof(moved), "%s/run/checked", dir);
	ck_assert_int_eq(rename(rd, moved), 0);
	ck_assert_int_eq(mkdir(rd, 0777), 0);
	ck_assert_int_eq(mrd_dropin_write(fd, "c1", &d), 0);
	snprintf(p, sizeof(p), "%s/c1.conf", moved);
	ck_assert_int_eq(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/c1.conf", rd);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(mrd_dropin_remove(fd, "c1"), 0);
	snprintf(p, sizeof(p), "%s/c1.conf", moved);
	ck_assert_int_eq(access(p, F_OK), -1);
	close(fd);
}
END_TEST

START_TEST(config_mistake_in_a_dropin)
{
	struct mrd_config c;
	const char *msgs;
	char d[PATH_MAX];

	put("m.conf", "[group a]\npath = /a/*\nmargin = 4M\n");
	snprintf(d, sizeof(d), "%s/m.conf.d", dir);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	put("m.conf.d/50-x.conf", "\n\n[group a]\nmargin = -1\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), -EINVAL);
	ck_assert_msg(strstr(msgs, "m.conf.d/50-x.conf:4: margin '-1'"),
		      "%s", msgs);
	/* A drop-in that makes another file's key wrong: the key refused
	 * is named where it was given. */
	put("m.conf", "[group a]\npath = /a/*\nmargin = 4M\nhysteresis = 1M\n");
	put("m.conf.d/50-x.conf", "[group a]\nmargin = auto\n");
	ck_assert_int_eq(load("m.conf", &c, &msgs), -EINVAL);
	ck_assert_msg(strstr(msgs, "/m.conf:4: hysteresis goes with a fixed "
			     "margin"), "%s", msgs);
}
END_TEST

START_TEST(config_missing_file_and_long_lines)
{
	struct mrd_config c;
	const char *msgs;
	char *text;
	size_t i;

	ck_assert_int_eq(load("none.conf", &c, &msgs), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msgs, "none.conf: No such file"));
	/* A path as long as a path (not libinih's default 200 bytes). */
	text = malloc(20000);
	ck_assert_ptr_nonnull(text);
	strcpy(text, "[group long]\npath = /m");
	for (i = 0; i < 60; i++)
		strcat(text, "/abcdefghijklmnopqrs");
	strcat(text, "/*\nmargin = 4M\n");
	put("m.conf", text);
	ck_assert_int_eq(load("m.conf", &c, &msgs), 0);
	ck_assert_uint_eq(c.sections[0].pattern.n, 62);
	mrd_config_free(&c);
	strcpy(text, "[group long]\npath = /m/");
	for (i = 0; i < 500; i++)
		strcat(text, "abcdefghijklmnopqrs");
	strcat(text, "/*\nmargin = 4M\n");
	put("m.conf", text);
	ck_assert_int_eq(load("m.conf", &c, &msgs), -EINVAL);
	ck_assert_msg(strstr(msgs, "m.conf:2: a line longer than 8190 bytes"),
		      "%s", msgs);
	free(text);
}
END_TEST

START_TEST(daemon_settings_from_the_command_line)
{
	struct mrd_daemon d;

	mrd_daemon_defaults(&d);
	ck_assert_int_eq(mrd_daemon_set(&d, "worker-sched", "idle", "--sched"), 0);
	ck_assert_int_eq(d.sched, MR_SCHED_IDLE);
	ck_assert_int_eq(mrd_daemon_set(&d, "worker-sched", "nice:-3", "--sched"), 0);
	ck_assert_int_eq(d.sched, MR_SCHED_NICE);
	ck_assert_int_eq(d.nice, -3);
	ck_assert_str_eq(d.worker_sched.text, "nice:-3");
	ck_assert_int_eq(mrd_daemon_set(&d, "stats-interval", "0", "--x"), 0);
	ck_assert_uint_eq(d.stats_interval_s, 0);
	ck_assert_int_eq(mrd_daemon_set(&d, "stats-interval", "31536001", "--x"),
			 -EINVAL);
	ck_assert_uint_eq(d.stats_interval_s, 0);
	ck_assert_int_eq(mrd_daemon_set(&d, "nonsense", "1", "--x"), -EINVAL);
	mrd_daemon_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- policy */

#define MIB (1ULL << 20)

/* A simulated machine: /app with a 64 MiB limit, /free with none; a
 * context bound to it; the daemon's group table on that context. */
static mr_sim_t *sim;
static mr_ctx_t *ctx;
static struct mrd_groups gs;
static struct mrd_config pcfg;

static void policy_setup(void)
{
	struct mr_sim_config c = { .size = sizeof(c), .seed = 1,
				   .ram_bytes = 512 * MIB };

	setup();
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/app"), 0);
	ck_assert_int_eq(mr_sim_set_knob(sim, "/app", MR_SIM_MAX, 64 * MIB),
			 0);
	ck_assert_int_eq(mr_sim_create_group(sim, "/free"), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	mrd_groups_init(&gs, ctx, NULL, NULL);
	pcfg = (struct mrd_config){ 0 };
}

static void policy_teardown(void)
{
	mrd_groups_free(&gs);
	mrd_config_free(&pcfg);
	mr_ctx_free(ctx);
	mr_sim_free(sim);
	teardown();
}

/* Loads text as the configuration of the table, on the simulator (the
 * daemon itself takes real backends alone, and refuses backend = sim). */
static void policies(const char *text)
{
	const char *msgs;

	put("m.conf", text);
	ck_assert_msg(load("m.conf", &pcfg, &msgs) == 0, "%s", msgs);
	pcfg.daemon.backend.text = strdup("sim");
	ck_assert_ptr_nonnull(pcfg.daemon.backend.text);
	ck_assert_int_eq(mrd_groups_apply(&gs, &pcfg), 0);
}

/* mrd_groups_take() with stderr in errlog: its result, and the messages
 * in *msgs (a static buffer). */
static int take(const char *id, const char *path, const char *section,
		const char **msgs)
{
	const struct mrd_section *s = mrd_config_runtime_section(&pcfg,
								  section);
	int saved, r;

	ck_assert_ptr_nonnull(s);
	saved = capture_begin();
	r = mrd_groups_take(&gs, id, path, s);
	*msgs = capture_end(saved);
	return r;
}

static struct mr_proactive_stats proactive_of(mr_group_t *g)
{
	struct mr_proactive_stats st;

	ck_assert_int_eq(mr_group_read_proactive_stats(g, &st, sizeof(st)), 0);
	return st;
}

static struct mr_margin_stats margin_of(mr_group_t *g)
{
	struct mr_margin_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(mr_group_read_margin_stats(g, &st), 0);
	return st;
}

/* A min-size the group's limit leaves no room under: the proactive
 * controller could never do anything. Refused when the policy is applied
 * to the group (the limit is the group's), naming the group, the size and
 * the limit, and the group is left alone; a group with no limit takes
 * it. Regression: it was taken silently. */
START_TEST(policy_min_size_not_below_the_limit)
{
	struct policy_opts p = { 0 };
	struct mr_limits lim = { .size = sizeof(lim) };
	const char *msgs;
	mr_group_t *h;
	int saved, r;

	policies("[group big]\npath = /**\nruntime = yes\nproactive = on\n"
		 "min-size = 128M\n"
		 "[group full]\npath = /**\nruntime = yes\n"
		 "proactive = on\nmin-size = 64M\n"
		 "[group fits]\npath = /**\nruntime = yes\n"
		 "proactive = dry-run\nmin-size = 32M\n");
	ck_assert_int_eq(take("c1", "/app", "big", &msgs), -EINVAL);
	ck_assert_msg(strstr(msgs, "memreclaimd: /app: ") &&
		      strstr(msgs, "/m.conf:5: min-size 134217728 bytes (128.0 "
			     "MiB) is not below the limit of /app (67108864 "
			     "bytes, 64.0 MiB)"), "%s", msgs);
	ck_assert_uint_eq(gs.n, 0);
	ck_assert_int_eq(take("c1", "/app", "full", &msgs), -EINVAL);
	ck_assert_msg(strstr(msgs, "/m.conf:10: min-size 67108864 bytes (64.0 "
			     "MiB) is not below the limit of /app"), "%s", msgs);
	ck_assert_uint_eq(gs.n, 0);
	ck_assert_int_eq(take("c1", "/app", "fits", &msgs), 0);
	ck_assert_uint_eq(gs.n, 1);
	ck_assert_int_eq(proactive_of(gs.v[0]->g).enabled, 1);
	ck_assert_uint_eq(gs.v[0]->applied.pro.min_bytes, 32 * MIB);
	ck_assert_int_eq(take("c2", "/free", "big", &msgs), 0);
	ck_assert_int_eq(proactive_of(gs.v[1]->g).enabled, 1);

	/* On the command line: the option, and nothing set. */
	ck_assert_int_eq(policyopt_parse("memreclaimd", "proactive", "on", &p),
			 0);
	ck_assert_int_eq(policyopt_parse("memreclaimd", "min-size", "1G", &p),
			 0);
	ck_assert_int_eq(policyopt_check("memreclaimd", &p), 0);
	ck_assert_int_eq(mr_group_open(ctx, "/app", "sim", &h), 0);
	ck_assert_int_eq(mr_group_read_limits(h, &lim), 0);
	saved = capture_begin();
	r = policyopt_apply("memreclaimd", h, "/app", &p, &lim, NULL, NULL);
	msgs = capture_end(saved);
	ck_assert_int_eq(r, -ERANGE);
	ck_assert_msg(strstr(msgs, "memreclaimd: --min-size 1073741824 bytes "
			     "(1024.0 MiB) is not below the limit of /app "
			     "(67108864 bytes, 64.0 MiB)"), "%s", msgs);
	ck_assert_int_eq(proactive_of(h).enabled, 0);
	ck_assert_int_eq(mr_group_close(h), 0);
}
END_TEST

/* A reconfigure (a drop-in's section changed, as on a reload) that a
 * setter refuses half way: the batch and the proactive controller were
 * set, then the margin is refused (another manager keeps one). The group
 * keeps its whole former policy, the settings made put back last first,
 * each said, with the group and the cause; once the other manager lets
 * go, the same reconfigure is made whole. Regression: a reconfigure that
 * failed half way kept what it had set. */
START_TEST(policy_reconfigure_all_or_nothing)
{
	const char *msgs, *back_pro, *back_batch;
	struct mrd_group *grp;
	mr_group_t *other;
	char *old_key;

	policies("[group old]\npath = /**\nruntime = yes\n"
		 "proactive = dry-run\nmin-size = 8M\n"
		 "[group new]\npath = /**\nruntime = yes\nproactive = on\n"
		 "margin = 8M\nhysteresis = 4M\nbatch = 1M\n");
	ck_assert_int_eq(take("c1", "/app", "old", &msgs), 0);
	grp = gs.v[0];
	old_key = strdup(grp->key);
	ck_assert_ptr_nonnull(old_key);
	ck_assert_int_eq(mr_group_open(ctx, "/app", "sim", &other), 0);
	ck_assert_int_eq(mr_group_set_margin(other, 4 * MIB, 0, 0), 0);

	ck_assert_int_eq(take("c1", "/app", "new", &msgs), -EBUSY);
	ck_assert_msg(strstr(msgs, "memreclaimd: /app: another manager, in "
			     "this or another process, already keeps a margin "
			     "on /app"), "%s", msgs);
	back_pro = strstr(msgs, "memreclaimd: /app: the former proactive "
			  "controller put back");
	back_batch = strstr(msgs, "memreclaimd: /app: the former batch put "
			    "back");
	ck_assert_msg(back_pro && back_batch && back_pro < back_batch, "%s",
		      msgs);
	ck_assert_msg(strstr(msgs, "/app: the policy of [group new] (") &&
		      strstr(msgs, ") not applied: the group is busy") &&
		      strstr(msgs, "; it keeps its former policy"), "%s", msgs);
	/* The former policy whole: a dry run at 8M, no margin, its key. */
	ck_assert_int_eq(proactive_of(grp->g).enabled, 1);
	ck_assert_int_eq(proactive_of(grp->g).dry_run, 1);
	ck_assert_int_eq(margin_of(grp->g).margin_bytes, 0);
	ck_assert_str_eq(grp->key, old_key);
	ck_assert(grp->applied.proactive);
	ck_assert_uint_eq(grp->applied.pro.flags, MR_PROACTIVE_DRY_RUN);
	ck_assert(!grp->applied.margin_set);
	ck_assert_uint_eq(grp->applied.batch, 0);

	/* The other manager lets go: the reconfigure is made whole. */
	ck_assert_int_eq(mr_group_set_margin(other, 0, 0, 0), 0);
	ck_assert_int_eq(take("c1", "/app", "new", &msgs), 0);
	ck_assert_int_eq(proactive_of(grp->g).enabled, 1);
	ck_assert_int_eq(proactive_of(grp->g).dry_run, 0);
	ck_assert_uint_eq(margin_of(grp->g).margin_bytes, 8 * MIB);
	ck_assert_uint_eq(margin_of(grp->g).hysteresis_bytes, 4 * MIB);
	ck_assert_uint_eq(grp->applied.batch, 1 * MIB);
	ck_assert_str_ne(grp->key, old_key);
	/* And back: the margin it no longer names is turned off, its claim
	 * given up. */
	ck_assert_int_eq(take("c1", "/app", "old", &msgs), 0);
	ck_assert_uint_eq(margin_of(grp->g).margin_bytes, 0);
	ck_assert_int_eq(proactive_of(grp->g).dry_run, 1);
	ck_assert_int_eq(mr_group_set_margin(other, 4 * MIB, 0, 0), 0);
	ck_assert_int_eq(mr_group_close(other), 0);
	free(old_key);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memreclaimd-config");
	TCase *tp = tcase_create("patterns"), *tf = tcase_create("files");
	TCase *tpol = tcase_create("policy");
	SRunner *sr;
	int failed;

	tcase_add_test(tp, pattern_refusals);
	tcase_add_test(tp, pattern_normal_form);
	tcase_add_test(tp, pattern_star_is_one_component);
	tcase_add_test(tp, pattern_double_star_any_depth);
	tcase_add_test(tp, pattern_literal_names_one_group);
	tcase_add_test(tp, daemon_settings_from_the_command_line);
	suite_add_tcase(s, tp);
	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, config_main_and_dropins_merge_in_order);
	tcase_add_test(tf, config_default_margin_is_auto);
	tcase_add_test(tf, config_proactive_keys);
	tcase_add_test(tf, config_mistakes_named_by_file_and_line);
	tcase_add_test(tf, config_mistake_in_a_dropin);
	tcase_add_test(tf, config_missing_file_and_long_lines);
	tcase_add_test(tf, config_runtime_sections);
	tcase_add_test(tf, dropin_names);
	tcase_add_test(tf, dropin_write_read_refuse);
	tcase_add_test(tf, runtime_dir_checked_through_its_fd);
	suite_add_tcase(s, tf);
	tcase_add_checked_fixture(tpol, policy_setup, policy_teardown);
	tcase_add_test(tpol, policy_min_size_not_below_the_limit);
	tcase_add_test(tpol, policy_reconfigure_all_or_nothing);
	suite_add_tcase(s, tpol);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
