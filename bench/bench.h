/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every program of `make bench` shares: the clock, and the one output
 * format, a JSON object per line on stdout (bench/run also appends it to
 * bench/results.jsonl):
 *
 *   {"bench": "...", "figure": "...", "value": N, "unit": "...",
 *    "baseline": {"name": "...", "value": N, "unit": "..."}}
 *
 * with the baseline measured in the same run ("baseline": null where a
 * figure has none). A figure measured in paired rounds may add, after the
 * baseline (bench_emit_ci()),
 *
 *   "ratio": R, "ci95": [LO, HI]
 *
 * the ratio of value to baseline estimated from the rounds and its 95%
 * interval, each null where it cannot be computed; the program's comment
 * says how. Names are constant ASCII strings of the programs, so no
 * escaping beyond quotes and backslashes is needed.
 */
#ifndef MEMRECLAIM_BENCH_H
#define MEMRECLAIM_BENCH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in ns. */
static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleeps ms milliseconds (0 or more; a signal cuts it short). */
static inline void bench_sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
				      .tv_nsec = ms % 1000 * 1000000 }, NULL);
}

/* The environment variable name, or dflt where it is unset or empty. */
static inline const char *bench_env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* CPU time (user + system) of the calling process, in ns. */
static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void bench_put_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/* A number, or null where it is not one (NaN, infinite). */
static inline void bench_put_number(double v)
{
	if (!isfinite(v))
		fputs("null", stdout);
	else
		printf("%.3f", v);
}

/* The fields of a result line up to its baseline, without the closing
 * brace. Values print with up to 6 significant digits beyond the integer
 * part (%.6g would round large counts; %.3f keeps integers exact up to
 * 2^53). */
static inline void bench_emit_fields(const char *bench, const char *figure,
				     double value, const char *unit,
				     const char *base_name, double base_value,
				     const char *base_unit)
{
	fputs("{\"bench\": ", stdout);
	bench_put_string(bench);
	fputs(", \"figure\": ", stdout);
	bench_put_string(figure);
	fputs(", \"value\": ", stdout);
	bench_put_number(value);
	fputs(", \"unit\": ", stdout);
	bench_put_string(unit);
	fputs(", \"baseline\": ", stdout);
	if (base_name) {
		fputs("{\"name\": ", stdout);
		bench_put_string(base_name);
		fputs(", \"value\": ", stdout);
		bench_put_number(base_value);
		fputs(", \"unit\": ", stdout);
		bench_put_string(base_unit);
		putchar('}');
	} else {
		fputs("null", stdout);
	}
}

/* One result line. base_name NULL: no baseline. */
static inline void bench_emit(const char *bench, const char *figure,
			      double value, const char *unit,
			      const char *base_name, double base_value,
			      const char *base_unit)
{
	bench_emit_fields(bench, figure, value, unit, base_name, base_value,
			  base_unit);
	fputs("}\n", stdout);
	fflush(stdout);
}

/* One result line with the ratio of value to baseline and its 95%
 * interval [lo, hi] as the rounds estimate them; NaN prints null. */
static inline void bench_emit_ci(const char *bench, const char *figure,
				 double value, const char *unit,
				 const char *base_name, double base_value,
				 const char *base_unit, double ratio,
				 double lo, double hi)
{
	bench_emit_fields(bench, figure, value, unit, base_name, base_value,
			  base_unit);
	fputs(", \"ratio\": ", stdout);
	bench_put_number(ratio);
	fputs(", \"ci95\": ", stdout);
	if (isnan(lo) || isnan(hi)) {
		fputs("null", stdout);
	} else {
		putchar('[');
		bench_put_number(lo);
		fputs(", ", stdout);
		bench_put_number(hi);
		putchar(']');
	}
	fputs("}\n", stdout);
	fflush(stdout);
}

#endif
