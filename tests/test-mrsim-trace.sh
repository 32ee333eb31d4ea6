#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# mrsim --trace: examples/traces/web.trace without and with memreclaimd's
# policy (--margin 32M --batch auto); its table, its JSON line, the same
# output for the same seed, and the exit status of a bad trace (2, the
# line named) and of a margin no group can take (2, said why).
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
mrsim=$top_builddir/examples/mrsim
web=$top_srcdir/examples/traces/web.trace
[ -x "$mrsim" ] || { echo "no $mrsim"; exit 99; }
[ -f "$web" ] || { echo "no $web"; exit 99; }

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

# Runs mrsim with the arguments; its stdout, stderr and exit status in
# $tmp/out, $tmp/err, $status.
run() {
	"$mrsim" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# A figure of the table: the column (3: without, 4: with policy) of the
# row GROUP FIGURE.
figure() {
	awk -v g="$1" -v f="$2" -v c="$3" \
		'$1 == g && $2 == f { print $c; exit }' "$tmp/out"
}

# -- the table
run --trace "$web" --margin 32M --batch auto
if [ $status -eq 0 ]; then
	ok "the table: exit 0"
else
	fail "the table: exit $status"; cat "$tmp/err"
fi
if grep -Eq '^group +figure +without +with policy$' "$tmp/out"; then
	ok "the table has the columns without and with policy"
else
	fail "no header 'group figure without with policy'"; cat "$tmp/out"
fi
if grep -q '^policy /web (limit 314572800): margin 33554432, hysteresis 33554432, batch auto' "$tmp/out"; then
	ok "the policy of /web in bytes"
else
	fail "no policy line for /web"; cat "$tmp/out"
fi
# A large margin: the default hysteresis is cut to half of what lies
# below limit - margin (50 MiB of 100), never down to an empty group.
run --trace "$web" --margin 200M --batch auto --group /web
if grep -q '^policy /web (limit 314572800): margin 209715200, hysteresis 52428800, batch auto' "$tmp/out"; then
	ok "the default hysteresis of a large margin: half of limit - margin"
else
	fail "no policy line with hysteresis 52428800 for a 200M margin"; cat "$tmp/out" "$tmp/err"
fi
run --trace "$web" --margin 32M --batch auto
without=$(figure /web failcnt_count 3)
with=$(figure /web failcnt_count 4)
if [ -n "$without" ] && [ -n "$with" ] && [ "$with" -lt "$without" ]; then
	ok "/web failcnt_count: $without without, $with with the policy"
else
	fail "/web failcnt_count: '$without' without, '$with' with the policy"
fi
for row in "machine elapsed_s" "/web limit_reclaim_s" \
	   "/web margin_calls_count" "/web refault_file_pages" \
	   "/web psi_some_s" "/web req_page_p99_ms" "/batch req_chunk_max_ms"; do
	# shellcheck disable=SC2086
	if [ -n "$(figure $row 4)" ]; then
		ok "row $row"
	else
		fail "no row $row"
	fi
done
cp "$tmp/out" "$tmp/first"

# -- the same seed, the same output
run --trace "$web" --margin 32M --batch auto
if [ $status -eq 0 ] && cmp -s "$tmp/first" "$tmp/out"; then
	ok "the same seed twice: the same table"
else
	fail "the same seed twice: different output"
fi

# -- JSON
run --trace "$web" --seed 7 --margin 32M --batch auto --json
if [ $status -ne 0 ]; then
	fail "--json: exit $status"; cat "$tmp/err"
elif command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["trace"].endswith("web.trace") and d["costs"] == "today", d
assert d["seed"] == 7, d["seed"]
w, p = d["policies"]["without"], d["policies"]["with"]
assert p["/web/failcnt_count"] < w["/web/failcnt_count"]
assert w["/web/margin_calls_count"] == 0 < p["/web/margin_calls_count"]
assert "machine/elapsed_s" in w and "/batch/req_chunk_p99_ms" in p
assert d["applied"]["/web"]["margin_bytes"] == 32 << 20, d["applied"]
assert d["applied"]["/web"]["batch"] == "auto", d["applied"]
' "$tmp/out"; then
		ok "--json: one line that parses, keys GROUP/FIGURE"
	else
		fail "--json"; cat "$tmp/out"
	fi
elif [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
     grep -q '^{"trace":.*"policies":{"without":{"machine/elapsed_s":.*"with":{.*"/web/failcnt_count":' "$tmp/out"; then
	ok "--json: one line, keys GROUP/FIGURE (no python3: not parsed)"
else
	fail "--json"; cat "$tmp/out"
fi

# -- no policy: the baseline alone
run --trace "$web" --json
if [ $status -eq 0 ] && grep -q '"without":' "$tmp/out" &&
   ! grep -q '"with":' "$tmp/out"; then
	ok "no policy option: the baseline only"
else
	fail "no policy option: exit $status"; cat "$tmp/out" "$tmp/err"
fi

# -- a trace that does not parse: 2, the line named
cat >"$tmp/bad.trace" <<'EOF'
machine ram 1G
group /a max 64M
file f 10M
task t /a 0s
  read f 0 20M
end
EOF
run --trace "$tmp/bad.trace" --margin 8M
if [ $status -eq 2 ] && grep -q 'bad.trace: line 5: read past the end' "$tmp/err"; then
	ok "a bad trace: exit 2, line 5 named"
else
	fail "a bad trace: exit $status"; cat "$tmp/err"
fi

# -- a margin where no group has a limit: said, and 2
cat >"$tmp/nolimit.trace" <<'EOF'
machine ram 256M
group /a
file f 128M
task t /a 0s
  repeat 128
    read f next 1M
  end
end
EOF
run --trace "$tmp/nolimit.trace" --margin 8M
if [ $status -eq 2 ] && grep -q '/a: no limit, so no margin there' "$tmp/err" &&
   grep -q 'no group takes the policy' "$tmp/err"; then
	ok "--margin on groups without a limit: said, exit 2"
else
	fail "--margin on groups without a limit: exit $status"; cat "$tmp/err"
fi

# -- a margin not below a group's limit: as memreclaimd says it, and 2
run --trace "$web" --margin 200M
if [ $status -eq 2 ] && grep -q "/batch: --margin 200.0 MiB is not below the group's limit (128.0 MiB)" "$tmp/err"; then
	ok "--margin above a limit: exit 2"
else
	fail "--margin above a limit: exit $status"; cat "$tmp/err"
fi

# -- a margin below a page: refused before any group is touched, as
# mr_group_set_margin() would refuse it
run --trace "$web" --margin 4095
if [ $status -eq 2 ] && grep -q "mrsim: --margin '4095': a margin in bytes must be at least 4096" "$tmp/err"; then
	ok "--margin below a page: exit 2"
else
	fail "--margin below a page: exit $status"; cat "$tmp/err"
fi

# -- --group: only the groups named
run --trace "$web" --margin 32M --group /web
if [ $status -eq 0 ] && grep -q '^policy /batch (limit 134217728): none (not named by --group)$' "$tmp/out" &&
   [ "$(figure /batch margin_calls_count 4)" = 0 ]; then
	ok "--group /web: /batch left alone"
else
	fail "--group /web: exit $status"; cat "$tmp/out" "$tmp/err"
fi
run --trace "$web" --margin 32M --group /nope
if [ $status -eq 2 ] && grep -q "no such group" "$tmp/err"; then
	ok "--group of no group of the trace: exit 2"
else
	fail "--group /nope: exit $status"; cat "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
