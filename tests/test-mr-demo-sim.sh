#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/mr-demo on the simulator (MEMRECLAIM_BACKEND=sim, seed 1): its
# table has the three runs in order (without memreclaimd, its fixed
# margin, --margin auto) with the adaptive run's final margin and
# strength, its JSON the same figures, and --margin is the fixed run's
# size (auto is refused: the adaptive run is always made). Counts and
# sizes only, no times.
set -u
top_builddir=${top_builddir:-.}
demo=$top_builddir/examples/mr-demo
[ -x "$demo" ] || { echo "no $demo"; exit 99; }

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	echo "ok: $1"
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $1"
}

# Runs mr-demo on the simulator with the arguments; its stdout, stderr
# and exit status in $tmp/out, $tmp/err, $status.
run() {
	MEMRECLAIM_BACKEND=sim "$demo" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# The column (3: limit hits ... 13: strength) of the table's row
# whose name is "$1 $2".
cell() {
	awk -v a="$1" -v b="$2" -v c="$3" \
		'$1 == a && $2 == b && $3 ~ /^[0-9]+$/ { print $c; exit }' "$tmp/out"
}

# -- the table
run
if [ $status -eq 0 ] && grep -q '^Ran on the simulator' "$tmp/out"; then
	ok "the table: exit 0, on the simulator"
else
	fail "the table: exit $status"; cat "$tmp/out" "$tmp/err"
fi
if grep -Eq '^run +limit hits .* worker CPU s +margin MiB +strength$' "$tmp/out"; then
	ok "the table has the columns margin MiB and strength"
else
	fail "no columns margin MiB, strength"; cat "$tmp/out"
fi
rows=$(awk '($2 == "memreclaimd" || $1 == "memreclaimd") && $3 ~ /^[0-9]+$/ { print $1 "-" $2 }' "$tmp/out" | tr '\n' ' ')
if [ "$rows" = "without-memreclaimd memreclaimd-fixed memreclaimd-auto " ]; then
	ok "three runs, in order: without, fixed, auto"
else
	fail "runs: '$rows'"; cat "$tmp/out"
fi
if [ "$(cell without memreclaimd 9)" = - ] &&
   [ "$(cell without memreclaimd 12)" = - ] &&
   [ "$(cell without memreclaimd 13)" = - ]; then
	ok "without memreclaimd: no worker, margin or strength"
else
	fail "without memreclaimd's row"; cat "$tmp/out"
fi
if [ "$(cell memreclaimd fixed 12)" = 32.00 ] &&
   [ "$(cell memreclaimd fixed 13)" = - ] &&
   [ "$(cell memreclaimd fixed 9)" -gt 0 ]; then
	ok "memreclaimd fixed: margin 32.00 MiB, no strength, worker calls"
else
	fail "memreclaimd fixed's row"; cat "$tmp/out"
fi
# The simulator's 3000 rounds last past the adaptive margin's first
# interval (at its floor): the worker reclaimed, and fewer charges met
# the limit than without it.
margin=$(cell memreclaimd auto 12)
strength=$(cell memreclaimd auto 13)
if [ "$(cell memreclaimd auto 5)" = 3000 ] &&
   [ "$(cell memreclaimd auto 9)" -gt 0 ] &&
   [ "$(cell memreclaimd auto 3)" -lt "$(cell without memreclaimd 3)" ] &&
   echo "$margin" | grep -Eq '^[0-9]+\.[0-9]{2}$' &&
   echo "$strength" | grep -Eq '^(0\.[0-9]{3}|1\.000)$'; then
	ok "memreclaimd auto: 3000 rounds, worker calls, fewer limit hits, margin $margin MiB, strength $strength"
else
	fail "memreclaimd auto's row"; cat "$tmp/out"
fi
if grep -q "^limit hits (simulated failcnt_count) without / with memreclaimd's fixed margin: " "$tmp/out" &&
   grep -q "^limit hits (simulated failcnt_count) without / with memreclaimd's adaptive margin: " "$tmp/out" &&
   grep -q "^limit hits: the growth of simulated failcnt_count, " "$tmp/out"; then
	ok "the limit hits' ratio of each margin, named after the simulator's counter"
else
	fail "no limit hits' ratios, or not named after the simulator's counter"; cat "$tmp/out"
fi
if grep -Eq '^memreclaimd auto sized its margin [0-9]+ times in its run\.$' "$tmp/out"; then
	ok "the adaptive margin's intervals, enough to settle"
else
	fail "no count of the adaptive margin's intervals, or too few"; cat "$tmp/out"
fi

# -- JSON
run --json
if [ $status -ne 0 ]; then
	fail "--json: exit $status"; cat "$tmp/err"
elif command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["simulator"] is True and d["touch_rounds_per_run"] == 3000, d
w, f, a = d["runs"]
assert [r["memreclaimd"] for r in d["runs"]] == [False, True, True]
assert [r["margin_adaptive"] for r in d["runs"]] == [None, False, True]
assert w["margin_bytes"] is None and w["margin_strength_ppm"] is None, w
assert f["margin_bytes"] == 32 << 20 and f["margin_strength_ppm"] is None, f
assert a["margin_bytes"] <= 256 << 20 and 0 <= a["margin_strength_ppm"] <= 10**6, a
assert a["worker_calls"] > 0 and a["limit_hits_growth"] < w["limit_hits_growth"], a
assert a["margin_intervals"] >= 8 and f["margin_intervals"] is None, a
assert "limit_hits_ratio" in d and "limit_hits_ratio_adaptive" in d, d
assert d["limit_hits_counter"] == "simulated failcnt_count", d
' "$tmp/out"; then
		ok "--json: three runs, the adaptive one with its margin and strength"
	else
		fail "--json"; cat "$tmp/out"
	fi
elif [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
     grep -q '"margin_adaptive":true,.*"margin_strength_ppm":[0-9]' "$tmp/out"; then
	ok "--json: one line, an adaptive run with its strength (no python3: not parsed)"
else
	fail "--json"; cat "$tmp/out"
fi

# -- --margin is the fixed run's size
run --margin auto
if [ $status -eq 2 ] && grep -q "mr-demo: --margin 'auto': not a size" "$tmp/err"; then
	ok "--margin auto: exit 2 (the adaptive run is always made)"
else
	fail "--margin auto: exit $status"; cat "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
