/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's group patterns and configuration files, without a cgroup:
 * patterns parsed, normalized and matched component by component (`*`
 * within one, `**` across one or more), the states the discovery walks
 * with; configuration files and drop-ins merged in order, and every
 * mistake refused with its file and line.
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

#include "memreclaimd-config.h"
#include "memreclaimd-pattern.h"

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

/* Loads dir/name with stderr in errlog; returns the result, and the
 * messages in *msgs (a static buffer). */
static int load(const char *name, struct mrd_config *c, const char **msgs)
{
	static char buf[16384];
	char path[PATH_MAX];
	int saved, fd, r;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fflush(stderr);
	saved = dup(2);
	fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
	r = mrd_config_load(path, c);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fd = open(errlog, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	*msgs = buf;
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
		{ "[group a]\npath = /a/*\nhysteresis = 1M\n", "m.conf:1: [group a]: --hysteresis goes with a fixed --margin" },
		{ "[group a]\npath = /a/*\nmargin = 4M\nbatch = 5000\n", "multiple of 4K" },
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
		{ "[group a]\npath = /a\nproactive = yes\n", "m.conf:3: proactive 'yes': expected on, off or dry-run" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 10ms\n", "m.conf:4: pressure-target '10ms': not STALL/WINDOW" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 10/6s\n", "not STALL/WINDOW" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 1ms/700s\n", "the window must be 1s to 600s" },
		{ "[group a]\npath = /a\nproactive = on\npressure-target = 7s/6s\n", "the stall 1us to the window" },
		{ "[group a]\npath = /a\nmin-size = 64M\n", "--min-size goes with the proactive controller" },
		{ "[group a]\npath = /a\nproactive = off\npressure-target = 10ms/6s\n", "--pressure-target goes with the proactive controller" },
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
		ck_assert_uint_eq(c.nsections, 12345);
	}
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

int main(void)
{
	Suite *s = suite_create("memreclaimd-config");
	TCase *tp = tcase_create("patterns"), *tf = tcase_create("files");
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
	suite_add_tcase(s, tf);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
