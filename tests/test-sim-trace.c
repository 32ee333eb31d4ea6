/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trace replay on the simulator: parse errors with their line numbers
 * (and no trace to run), small traces whose figures are known exactly,
 * determinism, the setup callback's policy, and the example traces.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments.h"
#include "memreclaim.h"
#include "sim.h"

#define KiB 1024ULL
#define MiB (1024 * KiB)

/* ---------------------------------------------------------------- figures */

struct fig {
	char policy[64];
	char name[64];
	double value;
};

struct figs {
	struct fig v[512];
	size_t n;
};

static void collect(const char *policy, const char *name, double value,
		    void *userdata)
{
	struct figs *f = userdata;

	ck_assert_uint_lt(f->n, sizeof(f->v) / sizeof(f->v[0]));
	snprintf(f->v[f->n].policy, sizeof(f->v[0].policy), "%s", policy);
	snprintf(f->v[f->n].name, sizeof(f->v[0].name), "%s", name);
	f->v[f->n++].value = value;
}

static double get(const struct figs *f, const char *policy, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (strcmp(f->v[i].policy, policy) == 0 &&
		    strcmp(f->v[i].name, name) == 0)
			return f->v[i].value;
	}
	ck_abort_msg("no figure %s %s", policy, name);
	return NAN;
}

static mr_sim_trace_t *parse(const char *text)
{
	mr_sim_trace_t *t = NULL;
	char err[256];
	int r = mr_sim_trace_parse(text, strlen(text), &t, err, sizeof(err));

	ck_assert_msg(r == 0, "parse: %s", err);
	return t;
}

/* Runs text once with seed 1 and today's costs. */
static void run(const char *text, mr_sim_setup_fn setup, void *data,
		struct figs *f)
{
	mr_sim_trace_t *t = parse(text);

	f->n = 0;
	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, setup, data, collect, f),
			 0);
	mr_sim_trace_free(t);
}

/* ---------------------------------------------------------------- errors */

static const struct {
	const char *text;
	const char *err;
} bad[] = {
	{ "", "line 1: end of trace, but no 'machine' line" },
	{ "# only a comment\n\n",
	  "line 3: end of trace, but no 'machine' line" },
	{ "group /a\n", "line 1: expected 'machine' first, got 'group'" },
	{ "machine cpus 2\n",
	  "line 1: expected 'machine ram SIZE [cpus N] [swap none|SIZE "
	  "disk|zswap]': ram is required" },
	{ "machine ram 1X\n",
	  "line 1: expected a RAM size (bytes, or a number with K, M, G or "
	  "T), got '1X'" },
	{ "machine ram 8M\n", "line 1: ram must be 16M .. 8T" },
	{ "machine ram 1G swap 1G\n",
	  "line 1: expected 'swap none' or 'swap SIZE disk|zswap'" },
	{ "machine ram 1G cpus 2.5\n",
	  "line 1: expected cpus 1 .. 4096, got '2.5'" },
	{ "machine ram 1G\nmachine ram 1G\n",
	  "line 2: a second 'machine' line: one, at the start" },
	{ "machine ram 1G\ngroup /a/b\n",
	  "line 2: group '/a/b': its parent '/a' is not declared before it" },
	{ "machine ram 1G\ngroup /a max 1G max 2G\n",
	  "line 2: expected a knob max, high, low, min or soft, each once; "
	  "got 'max'" },
	{ "machine ram 1G\ngroup /a low none\n",
	  "line 2: expected a size (bytes, or a number with K, M, G or T), "
	  "got 'none'" },
	{ "machine ram 1G\ngroup /a/\n",
	  "line 2: group '/a/': expected an absolute path like /a/b, without "
	  "'.', '..', '//' or a trailing '/'" },
	{ "machine ram 1G\nfile f 1M\ngroup /a\n",
	  "line 3: 'group' after files, regions or tasks: groups come right "
	  "after 'machine'" },
	{ "machine ram 1G\nfile f 1M\nregion f 1M\n",
	  "line 3: 'f' declared twice (files and regions share their names)" },
	{ "machine ram 1G\nfile f 0\n", "line 2: file 'f' of size 0" },
	{ "machine ram 1G\ntask a /nope 0s\n",
	  "line 2: task 'a': no group '/nope' (declare it with 'group', or "
	  "use /)" },
	{ "machine ram 1G\ntask a / 5\n",
	  "line 2: expected a start time (a number with ns, us, ms or s), "
	  "got '5'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 1M 4K\nend\n",
	  "line 4: read past the end of file 'f' (1048576 bytes)" },
	{ "machine ram 1G\nregion h 1M\ntask a / 0s\n  read h 0 4K\nend\n",
	  "line 4: read: 'h' is a region, not a file" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  anon f 0 4K\nend\n",
	  "line 4: anon: 'f' is a file, not a region" },
	{ "machine ram 1G\ntask a / 0s\n  mmap x\nend\n",
	  "line 3: unknown operation 'mmap'; expected read, write, fsync, "
	  "unlink, drop, anon, free, cpu, sleep, at, begin, end, req or "
	  "repeat" },
	{ "machine ram 1G\nfile f 1M\nread f 0 4K\n",
	  "line 3: 'read' outside a task: operations go between 'task' and "
	  "its 'end'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 0\nend\n",
	  "line 4: expected 'read FILE OFF LEN' (OFF: a size, next, uniform "
	  "or normal SD)" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 0 0\nend\n",
	  "line 4: a length of 0" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f normal 2M 4K\n"
	  "end\n",
	  "line 4: normal: the standard deviation must be above 0 and at "
	  "most the size of 'f'" },
	{ "machine ram 1G\ntask a / 0s\n  cpu 1 ms\nend\n",
	  "line 3: expected 'cpu [exp] TIME'" },
	{ "machine ram 1G\ntask a / 0s\n  sleep exp 0s\nend\n",
	  "line 3: an exponential time of mean 0" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  fsync f now\nend\n",
	  "line 4: expected 'fsync FILE', got 'now' after it" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  repeat 2\n"
	  "    read f 0 4K\n",
	  "line 6: end of trace inside 'repeat' (line 4) of task 'a': "
	  "expected 'end'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 0 4K",
	  "line 4: end of trace inside task 'a' (line 3): expected 'end'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 0 4K\n"
	  "  task b / 0s\nend\n",
	  "line 5: 'task' inside task 'a' (line 3): close it with 'end' "
	  "first" },
	{ "machine ram 1G\ntask a / 0s\n  end x\nend\n",
	  "line 3: 'end x' without 'begin x'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  repeat 2\n"
	  "    begin x\n    read f 0 4K\n  end\nend\n",
	  "line 7: request 'x' begun at line 5 is not ended in this repeat "
	  "(line 4)" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  begin x\n  repeat 2\n"
	  "    read f 0 4K\n    end x\n  end\nend\n",
	  "line 7: 'end x' is not in the block of its 'begin' (line 4)" },
	{ "machine ram 1G\ntask a / 0s\n  req x\n    req x\n      cpu 1ms\n"
	  "    end\n  end\nend\n",
	  "line 4: request 'x' is already open (line 3)" },
	{ "machine ram 1G\ntask a / 0s\n  req x\n  end\nend\n",
	  "line 4: empty 'req' block (line 3)" },
	{ "machine ram 1G\ntask a / 0s\n  begin bad/name\nend\n",
	  "line 3: request name 'bad/name': only letters, digits, '_', '.' "
	  "and '-'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  repeat 0\n"
	  "    read f 0 4K\n  end\nend\n",
	  "line 4: expected 'repeat N' (N: 1 .. 1000000000) or 'repeat "
	  "forever', got '0'" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  repeat forever\n"
	  "    read f 0 4K\n  end\nend\n",
	  "line 4: 'repeat forever' in task 'a', which is not background: it "
	  "would never end" },
	{ "machine ram 1G\ntask a / 0s\n  cpu 1ms\nend\n"
	  "task b / 0s background\n  repeat forever\n    at 1s\n  end\n"
	  "end\n",
	  "line 8: 'repeat forever' (line 6) holds no operation that takes "
	  "time (a read, write or anon of a length, a cpu or sleep of a "
	  "time)" },
	{ "machine ram 1G\ntask b / 0s background\n  cpu 1ms\nend\n",
	  "line 5: end of trace, but no task that is not background" },
	{ "machine ram 1G\ntask a / 0s\nend\n",
	  "line 3: task 'a' (line 2) has no operation" },
	{ "machine ram 1G\ntask a / 0s\n  cpu 1ms\nend\ntask a / 0s\n",
	  "line 5: task 'a' declared twice" },
	{ "machine ram 1G\nend\n", "line 2: 'end' outside any task" },
	{ "machine ram 1G\nlimit 1G\n",
	  "line 2: unknown statement 'limit'; expected machine, group, file, "
	  "region or task" },
	/* Bounds of a task, its repeats unrolled: a million hours of sleep
	 * refused at the outer repeat's end; 2^29 passes of 2^35 ns, whose
	 * product wraps to 0 in 64 bits; 10^9 passes of 22 operations; a
	 * start past the bound. */
	{ "machine ram 1G\ntask a / 0s\n  repeat 1000\n    repeat 1000\n"
	  "      sleep 3600s\n    end\n  end\nend\n",
	  "line 7: task 'a' would run more than 10^16 ns (about 116 days) of "
	  "start, cpu, sleep and at times, its repeats unrolled: the repeat "
	  "block of line 3 passes it" },
	{ "machine ram 1G\ntask a / 0s\n  repeat 536870912\n"
	  "    sleep 34359738368ns\n  end\nend\n",
	  "line 5: task 'a' would run more than 10^16 ns (about 116 days) of "
	  "start, cpu, sleep and at times, its repeats unrolled: the repeat "
	  "block of line 3 passes it" },
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  repeat 1000000000\n"
	  "    repeat 10\n      read f 0 4K\n    end\n  end\nend\n",
	  "line 8: task 'a' would run more than 10^10 operations, its repeats "
	  "unrolled: the repeat block of line 4 passes it" },
	{ "machine ram 1G\ntask a / 0s\n  at 10000001s\nend\n",
	  "line 3: task 'a' would run more than 10^16 ns (about 116 days) of "
	  "start, cpu, sleep and at times, its repeats unrolled: this "
	  "operation passes it" },
	{ "machine ram 1G\ntask a / 10000001s\n  cpu 1ms\nend\n",
	  "line 2: task 'a' starts after 10^16 ns (about 116 days), the most "
	  "a task that is not background may run" },
	/* The whole trace is good but for its last line: nothing runs. */
	{ "machine ram 1G\nfile f 1M\ntask a / 0s\n  read f 0 1M\nend\n"
	  "task b / 0s\n  read f 0 1M\nend\n?\n",
	  "line 9: unknown statement '?'; expected machine, group, file, "
	  "region or task" },
};

START_TEST(parse_errors)
{
	mr_sim_trace_t *t = NULL;
	char err[256];

	ck_assert_int_eq(mr_sim_trace_parse(bad[_i].text, strlen(bad[_i].text),
					    &t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, bad[_i].err);
	/* No trace: nothing can run, not even the good part. */
	ck_assert_ptr_null(t);
}
END_TEST

/* At the bounds: 10^16 ns exactly parses, a ns more does not; a req
 * block counts what it holds; a background task is not bounded. */
START_TEST(expanded_bounds)
{
	static const char *const good[] = {
		"machine ram 1G\ntask a / 0s\n  repeat 1000000\n"
		"    sleep 10s\n  end\nend\n",
		"machine ram 1G\ntask a / 5000000s\n  repeat 5\n"
		"    req r\n      sleep 1000000s\n    end\n  end\nend\n",
		"machine ram 1G\ntask a / 0s\n  cpu 1ms\nend\n"
		"task b / 0s background\n  repeat 1000000000\n"
		"    repeat 1000000000\n      sleep 1s\n    end\n  end\n"
		"end\n",
	};
	static const char *const over =
		"machine ram 1G\ntask a / 1ns\n  repeat 1000000\n"
		"    sleep 10s\n  end\nend\n";
	mr_sim_trace_t *t = NULL;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		mr_sim_trace_free(parse(good[i]));
	ck_assert_int_eq(mr_sim_trace_parse(over, strlen(over), &t, err,
					    sizeof(err)), -EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err, "line 5: task 'a' would run more than 10^16 ns "
			 "(about 116 days) of start, cpu, sleep and at "
			 "times, its repeats unrolled: the repeat block of "
			 "line 3 passes it");
}
END_TEST

START_TEST(parse_misuse)
{
	static const char nul[] = "machine ram 1G\nfile f\0 1M\n";
	mr_sim_trace_t *t = NULL;
	char err[16];

	ck_assert_int_eq(mr_sim_trace_parse(NULL, 0, &t, NULL, 0), -EINVAL);
	ck_assert_int_eq(mr_sim_trace_parse("", 0, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(mr_sim_trace_parse(nul, sizeof(nul) - 1, &t, err,
					    sizeof(err)), -EINVAL);
	/* Truncated, NUL-terminated. */
	ck_assert_str_eq(err, "line 2: a NUL b");
	ck_assert_ptr_null(t);
	/* Not NUL-terminated: the length is what counts. */
	ck_assert_int_eq(mr_sim_trace_parse("machine ram 1G\ntask a / 0s\n"
					    "  cpu 1ms\nend\nXXX", 41, &t,
					    NULL, 0), 0);
	ck_assert_int_eq(mr_sim_trace_run(NULL, 1, NULL, NULL, NULL, NULL,
					  NULL), -EINVAL);
	ck_assert_int_eq(mr_sim_trace_run(t, 1, "1999", NULL, NULL, NULL,
					  NULL), -EINVAL);
	ck_assert_int_eq(mr_sim_trace_run(t, 1, "2011", NULL, NULL, NULL,
					  NULL), 0);
	mr_sim_trace_free(t);
	mr_sim_trace_free(NULL);
}
END_TEST

/* ---------------------------------------------------------------- exact */

/* A file read twice: one disk read, then a hit; the time is the costs'
 * sum, on one CPU. */
START_TEST(read_twice)
{
	const struct sim_costs *c = sim_costs_find("today");
	struct figs f;
	uint64_t ns;

	run("machine ram 64M cpus 1\n"
	    "file f 1M\n"
	    "task a / 0s\n"
	    "  read f 0 1M\n"
	    "  read f 0 1M\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_eq(get(&f, "machine", "pgmajfault_count"), 1);
	ck_assert_double_eq(get(&f, "machine", "refault_file_pages"), 0);
	ck_assert_double_eq(get(&f, "machine", "failcnt_count"), 0);
	/* One readahead request, 256 faults, two copies of 256 pages. */
	ns = c->disk_latency_ns + 256 * c->disk_page_ns +
	     256 * c->minor_fault_ns + 2 * 256 * c->copy_page_ns;
	ck_assert_double_eq(get(&f, "machine", "elapsed_s"), (double)ns / 1e9);
}
END_TEST

/* A write then fsync: no disk read, one merged write request waited
 * for, and a read after it hits the cache. */
START_TEST(write_fsync)
{
	const struct sim_costs *c = sim_costs_find("today");
	struct figs f;
	uint64_t ns;

	run("machine ram 64M cpus 1\n"
	    "file f 1M\n"
	    "task a / 0s\n"
	    "  write f 0 1M\n"
	    "  fsync f\n"
	    "  read f 0 1M\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_eq(get(&f, "machine", "pgmajfault_count"), 0);
	ns = 256 * c->minor_fault_ns + 256 * c->copy_page_ns +
	     c->disk_latency_ns + 256 * c->disk_page_ns +
	     256 * c->copy_page_ns;
	ck_assert_double_eq(get(&f, "machine", "elapsed_s"), (double)ns / 1e9);
}
END_TEST

/* Unlink and drop take the file out of the cache, shadow entries too:
 * reading it again is a major fault but no refault. */
START_TEST(unlink_and_drop)
{
	struct figs f;

	run("machine ram 64M cpus 1\n"
	    "file f 1M\n"
	    "file g 1M\n"
	    "task a / 0s\n"
	    "  read f 0 1M\n"
	    "  unlink f\n"
	    "  read f 0 1M\n"
	    "  write g 0 4K\n"
	    "  read g 4K 1020K\n"
	    "  drop g\n"
	    "  read g 0 1M\n"
	    "end\n", NULL, NULL, &f);
	/* f twice; g once after the write, then once whole after the drop
	 * (the dirty page went to writeback and stayed). */
	ck_assert_double_eq(get(&f, "machine", "pgmajfault_count"), 4);
	ck_assert_double_eq(get(&f, "machine", "refault_file_pages"), 0);
}
END_TEST

/* Reads through a limit smaller than the file: charges meet the limit
 * and the reader reclaims. */
START_TEST(limit_exceeded)
{
	struct figs f;

	run("machine ram 64M cpus 1\n"
	    "group /g max 4M\n"
	    "file f 8M\n"
	    "task a /g 0s\n"
	    "  repeat 8\n"
	    "    read f next 1M\n"
	    "  end\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_gt(get(&f, "/g", "failcnt_count"), 0);
	ck_assert_double_gt(get(&f, "/g", "limit_reclaim_s"), 0);
	/* 8 MiB went through a 4 MiB limit: at least 4 MiB freed. */
	ck_assert_double_ge(get(&f, "/g", "pgsteal_pages"), 1024);
	ck_assert_double_ge(get(&f, "/g", "pgscan_pages"),
			    get(&f, "/g", "pgsteal_pages"));
	ck_assert_double_eq(get(&f, "/g", "pgmajfault_count"), 8);
	ck_assert_double_eq(get(&f, "/g", "oom_count"), 0);
	ck_assert_double_eq(get(&f, "/g", "margin_calls_count"), 0);
	/* The machine counts its groups. */
	ck_assert_double_eq(get(&f, "machine", "failcnt_count"),
			    get(&f, "/g", "failcnt_count"));
}
END_TEST

/* Anonymous memory beyond the limit with no swap: the task is killed;
 * freeing a region gives its pages back. */
START_TEST(oom_and_free)
{
	struct figs f;

	run("machine ram 64M cpus 1\n"
	    "group /g max 4M\n"
	    "group /h max 4M\n"
	    "region big 8M\n"
	    "region r 3M\n"
	    "task hog /g 0s\n"
	    "  anon big 0 8M\n"
	    "  cpu 1s\n"
	    "end\n"
	    "task cycler /h 0s\n"
	    "  repeat 4\n"
	    "    anon r 0 3M\n"
	    "    free r\n"
	    "  end\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_eq(get(&f, "/g", "oom_count"), 1);
	ck_assert_double_eq(get(&f, "machine", "oom_count"), 1);
	/* Killed at its charge, before its cpu 1s. */
	ck_assert_double_lt(get(&f, "/g", "elapsed_s"), 1);
	ck_assert_double_eq(get(&f, "/h", "oom_count"), 0);
	ck_assert_double_eq(get(&f, "/h", "failcnt_count"), 0);
}
END_TEST

/* Request latencies: nearest-rank percentiles, per request name, per
 * group and for the machine. */
START_TEST(request_latency)
{
	struct figs f;

	run("machine ram 64M cpus 1\n"
	    "group /a\n"
	    "task t /a 0s\n"
	    "  req r\n    sleep 4ms\n  end\n"
	    "  begin r\n  sleep 1ms\n  end r\n"
	    "  req r\n    sleep 3ms\n  end\n"
	    "  req r\n    sleep 2ms\n  end\n"
	    "  begin other\n  sleep 5ms\n  end other\n"
	    "end\n"
	    "task u / 1ms\n"
	    "  req r\n    sleep 10ms\n  end\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_eq(get(&f, "/a", "req_r_count"), 4);
	ck_assert_double_eq(get(&f, "/a", "req_r_mean_ms"), 2.5);
	ck_assert_double_eq(get(&f, "/a", "req_r_p50_ms"), 2);
	ck_assert_double_eq(get(&f, "/a", "req_r_p90_ms"), 4);
	ck_assert_double_eq(get(&f, "/a", "req_r_p99_ms"), 4);
	ck_assert_double_eq(get(&f, "/a", "req_r_max_ms"), 4);
	ck_assert_double_eq(get(&f, "/a", "req_other_max_ms"), 5);
	ck_assert_double_eq(get(&f, "/a", "elapsed_s"), 0.015);
	ck_assert_double_eq(get(&f, "machine", "req_r_count"), 5);
	ck_assert_double_eq(get(&f, "machine", "req_r_p50_ms"), 3);
	ck_assert_double_eq(get(&f, "machine", "req_r_max_ms"), 10);
	ck_assert_double_eq(get(&f, "machine", "elapsed_s"), 0.015);
}
END_TEST

/* Figures of 2040 groups, 40 parents of 50 children each: every
 * subtree's requests and times are its own and its descendants'. */
#define PARENTS 40
#define CHILDREN 50

struct many {
	/* [p][0]: /pP; [p][1 + c]: /pP/cC; [PARENTS][0]: the machine. */
	double count[PARENTS + 1][CHILDREN + 1];
	double p50[PARENTS + 1][CHILDREN + 1];
	double mean[PARENTS + 1][CHILDREN + 1];
	double max[PARENTS + 1][CHILDREN + 1];
	double elapsed[PARENTS + 1][CHILDREN + 1];
	size_t figures;
};

static void collect_many(const char *policy, const char *name,
			 double value, void *userdata)
{
	struct many *m = userdata;
	int p = PARENTS, c = -1, n = 0;

	m->figures++;
	if (strcmp(policy, "machine") != 0 &&
	    sscanf(policy, "/p%d%n/c%d%n", &p, &n, &c, &n) < 1)
		ck_abort_msg("policy %s", policy);
	ck_assert(p >= 0 && p <= PARENTS && c >= -1 && c < CHILDREN);
	if (strcmp(name, "req_r_count") == 0)
		m->count[p][c + 1] = value;
	else if (strcmp(name, "req_r_p50_ms") == 0)
		m->p50[p][c + 1] = value;
	else if (strcmp(name, "req_r_mean_ms") == 0)
		m->mean[p][c + 1] = value;
	else if (strcmp(name, "req_r_max_ms") == 0)
		m->max[p][c + 1] = value;
	else if (strcmp(name, "elapsed_s") == 0)
		m->elapsed[p][c + 1] = value;
}

START_TEST(figures_of_many_groups)
{
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	struct many *m = calloc(1, sizeof(*m));
	mr_sim_trace_t *t = NULL;
	char err[256];
	int p, c;

	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(m);
#define PUT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
	PUT("machine ram 1G cpus 4\n");
	for (p = 0; p < PARENTS; p++) {
		PUT("group /p%d\n", p);
		for (c = 0; c < CHILDREN; c++)
			PUT("group /p%d/c%d\n", p, c);
	}
	/* Tasks in reverse, so that no order of declaration is relied on:
	 * a child's request takes c + 1 ms, a parent's own 100 ms. */
	for (p = PARENTS; p-- > 0;) {
		for (c = CHILDREN; c-- > 0;)
			PUT("task t%d.%d /p%d/c%d 0s\n  req r\n    sleep %dms\n"
			    "  end\nend\n", p, c, p, c, c + 1);
		PUT("task t%d /p%d 0s\n  req r\n    sleep 100ms\n  end\nend\n",
		    p, p);
	}
#undef PUT
	ck_assert_uint_lt(len, cap);
	ck_assert_int_eq(mr_sim_trace_parse(text, len, &t, err, sizeof(err)),
			 0);
	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, NULL, NULL,
					  collect_many, m), 0);
	/* 13 figures and 8 of the request per group and the machine. */
	ck_assert_uint_eq(m->figures, (PARENTS * (CHILDREN + 1) + 1) * 21);
	for (p = 0; p < PARENTS; p++) {
		for (c = 0; c < CHILDREN; c++) {
			ck_assert_double_eq(m->count[p][c + 1], 1);
			ck_assert_double_eq(m->max[p][c + 1], c + 1);
			ck_assert_double_eq(m->elapsed[p][c + 1],
					    (c + 1) / 1000.0);
		}
		/* 1 .. 50 ms and 100 ms: the 26th of 51 is 26 ms. */
		ck_assert_double_eq(m->count[p][0], CHILDREN + 1);
		ck_assert_double_eq(m->p50[p][0], 26);
		ck_assert_double_eq_tol(m->mean[p][0], 1375.0 / 51, 1e-9);
		ck_assert_double_eq(m->max[p][0], 100);
		ck_assert_double_eq(m->elapsed[p][0], 0.1);
	}
	ck_assert_double_eq(m->count[PARENTS][0], PARENTS * (CHILDREN + 1));
	ck_assert_double_eq(m->p50[PARENTS][0], 26);
	ck_assert_double_eq(m->max[PARENTS][0], 100);
	ck_assert_double_eq(m->elapsed[PARENTS][0], 0.1);
	mr_sim_trace_free(t);
	free(text);
	free(m);
}
END_TEST

/* at waits for an absolute time; a background task stops when the
 * others have ended, even in the middle of a sleep. */
START_TEST(at_and_background)
{
	struct figs f;

	run("machine ram 64M cpus 1\n"
	    "file f 1M\n"
	    "task main / 0s\n"
	    "  cpu 1ms\n"
	    "  at 10ms\n"
	    "  at 5ms\n"
	    "end\n"
	    "task tick / 0s background\n"
	    "  repeat forever\n"
	    "    req tick\n      read f next 64K\n    end\n"
	    "    sleep 3ms\n"
	    "  end\n"
	    "end\n", NULL, NULL, &f);
	ck_assert_double_eq(get(&f, "machine", "elapsed_s"), 0.010);
	/* At 0, 3, 6 and 9 ms. */
	ck_assert_double_eq(get(&f, "machine", "req_tick_count"), 4);
}
END_TEST

/* ---------------------------------------------------------------- policy */

static const char streaming[] =
	"machine ram 256M cpus 2\n"
	"group /svc max 64M\n"
	"file data 256M\n"
	"task reader /svc 0s\n"
	"  repeat 256\n"
	"    req chunk\n"
	"      read data next 1M\n"
	"    end\n"
	"  end\n"
	"end\n";

struct setup_seen {
	size_t calls, ngroups;
	char path[64];
	int ret;                  /* what setup returns after its margin */
};

static int apply_margin(mr_ctx_t *ctx, mr_group_t *const *groups,
			size_t ngroups, void *userdata)
{
	struct setup_seen *s = userdata;

	ck_assert_ptr_nonnull(ctx);
	s->calls++;
	s->ngroups = ngroups;
	snprintf(s->path, sizeof(s->path), "%s", mr_group_path(groups[0]));
	ck_assert_str_eq(mr_group_backend(groups[0]), "sim");
	/* As memreclaimd --margin 8M --batch auto. */
	ck_assert_int_eq(mr_group_set_margin(groups[0], 8 * MiB, 0, 8 * MiB),
			 0);
	ck_assert_int_eq(mr_group_set_batch_proportional(groups[0],
			 MR_BATCH_DEFAULT_SHARE_PPM, MR_BATCH_DEFAULT_MAX_BYTES,
			 MR_BATCH_DEFAULT_MAX_PPM), 0);
	return s->ret;
}

START_TEST(setup_margin)
{
	struct setup_seen seen = { 0 };
	struct figs base, margin;

	run(streaming, NULL, NULL, &base);
	run(streaming, apply_margin, &seen, &margin);
	ck_assert_uint_eq(seen.calls, 1);
	ck_assert_uint_eq(seen.ngroups, 1);
	ck_assert_str_eq(seen.path, "/svc");

	ck_assert_double_eq(get(&base, "/svc", "margin_calls_count"), 0);
	ck_assert_double_eq(get(&base, "/svc", "margin_freed_bytes"), 0);
	ck_assert_double_gt(get(&base, "/svc", "failcnt_count"), 0);
	ck_assert_double_gt(get(&margin, "/svc", "margin_calls_count"), 0);
	ck_assert_double_gt(get(&margin, "/svc", "margin_reclaim_s"), 0);
	/* It freed about all that went beyond the limit, so the reader
	 * meets the limit much less, and reclaims less itself. */
	ck_assert_double_ge(get(&margin, "/svc", "margin_freed_bytes"),
			    (double)(192 * MiB - 16 * MiB));
	ck_assert_double_lt(get(&margin, "/svc", "failcnt_count") * 10,
			    get(&base, "/svc", "failcnt_count"));
	ck_assert_double_lt(get(&margin, "/svc", "limit_reclaim_s"),
			    get(&base, "/svc", "limit_reclaim_s"));
	ck_assert_double_eq(get(&margin, "machine", "margin_calls_count"),
			    get(&margin, "/svc", "margin_calls_count"));
}
END_TEST

START_TEST(setup_error)
{
	struct setup_seen seen = { .ret = -ENOTSUP };
	mr_sim_trace_t *t = parse(streaming);
	struct figs f = { .n = 0 };

	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, apply_margin, &seen,
					  collect, &f), -ENOTSUP);
	ck_assert_uint_eq(seen.calls, 1);
	ck_assert_uint_eq(f.n, 0);
	mr_sim_trace_free(t);
}
END_TEST

/* ---------------------------------------------------------------- examples */

static char *slurp(const char *name, size_t *len)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *buf;
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), "%s/examples/traces/%s", top ? top : ".",
		 name);
	fp = fopen(path, "re");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	ck_assert_int_ge(n, 0);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static mr_sim_trace_t *example(const char *name)
{
	mr_sim_trace_t *t = NULL;
	char err[256];
	size_t len;
	char *text = slurp(name, &len);

	ck_assert_msg(mr_sim_trace_parse(text, len, &t, err, sizeof(err)) == 0,
		      "%s: %s", name, err);
	free(text);
	return t;
}

START_TEST(all_ops_example)
{
	mr_sim_trace_t *t = example("all-ops.trace");
	struct figs f = { .n = 0 };

	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, NULL, NULL, collect, &f),
			 0);
	ck_assert_double_eq(get(&f, "/app", "req_query_count"), 100);
	ck_assert_double_eq(get(&f, "/app", "req_cleanup_count"), 1);
	ck_assert_double_ge(get(&f, "machine", "elapsed_s"), 2);
	mr_sim_trace_free(t);
}
END_TEST

/* The same seed gives the same figures, bit for bit; another seed draws
 * other offsets and times. */
START_TEST(web_deterministic)
{
	mr_sim_trace_t *t = example("web.trace");
	static struct figs a, b, c;
	size_t i;

	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, NULL, NULL, collect, &a),
			 0);
	ck_assert_int_eq(mr_sim_trace_run(t, 1, NULL, NULL, NULL, collect, &b),
			 0);
	ck_assert_int_eq(mr_sim_trace_run(t, 2, NULL, NULL, NULL, collect, &c),
			 0);
	ck_assert_uint_eq(a.n, b.n);
	ck_assert_int_eq(memcmp(a.v, b.v, a.n * sizeof(a.v[0])), 0);
	ck_assert_uint_eq(a.n, c.n);
	for (i = 0; i < a.n; i++) {
		if (a.v[i].value != c.v[i].value)
			break;
	}
	ck_assert_uint_lt(i, a.n);
	/* Figures: the machine's, then /web's, then /batch's. */
	ck_assert_str_eq(a.v[0].policy, "machine");
	ck_assert_str_eq(a.v[0].name, "elapsed_s");
	ck_assert_str_eq(a.v[a.n - 1].policy, "/batch");
	ck_assert_double_eq(get(&a, "/web", "req_page_count"), 6000);
	ck_assert_double_eq(get(&a, "/batch", "req_chunk_count"), 512);
	ck_assert_double_gt(get(&a, "/web", "failcnt_count"), 0);
	mr_sim_trace_free(t);
}
END_TEST

static Suite *sim_trace_suite(void)
{
	Suite *s = suite_create("sim-trace");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, parse_errors, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, parse_misuse);
	tcase_add_test(tc, expanded_bounds);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, read_twice);
	tcase_add_test(tc, write_fsync);
	tcase_add_test(tc, unlink_and_drop);
	tcase_add_test(tc, limit_exceeded);
	tcase_add_test(tc, oom_and_free);
	tcase_add_test(tc, request_latency);
	tcase_add_test(tc, figures_of_many_groups);
	tcase_add_test(tc, at_and_background);
	tcase_add_test(tc, setup_margin);
	tcase_add_test(tc, setup_error);
	tcase_add_test(tc, all_ops_example);
	tcase_add_test(tc, web_deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_trace_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
