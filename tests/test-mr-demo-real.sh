#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/mr-demo with examples/memreclaimd on this machine's cgroup v1
# memory controller (tests/kernel/host/examples-mr-demo runs it on cgroup
# v2), shortened: a 64 MiB limit, an 8 MiB margin, a 256 MiB data file,
# 20 touch rounds. It must run on the kernel in a group it creates below
# MEMRECLAIM_TEST_PARENT (default: the v1 memory mount), name its limit
# hits after cgroup v1's counter, memory.failcnt, and count some without
# memreclaimd (the reader streams 4 times the limit through the group).
# Hybrid PSI is cgroup v1's: on a hybrid host (a cgroup2 mount with PSI
# beside the v1 one) mr-demo asks for it and reports the memory stall
# time of the group's cgroup2 twin, without a message of the library's;
# elsewhere the stall figures are null. Counts only, no times.
# Skipped (77) with MEMRECLAIM_SKIP_REAL_KERNEL, without root or without a
# v1 memory controller; under CI=true those fail instead.
set -u
top_builddir=${top_builddir:-.}
demo=$top_builddir/examples/mr-demo
daemon=$top_builddir/examples/memreclaimd
[ -x "$demo" ] && [ -x "$daemon" ] || { echo "no $demo or $daemon"; exit 99; }

skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: real-kernel test cannot run under CI: $1"
		exit 1
	fi
	echo "SKIP: $1"
	exit 77
}

[ -z "${MEMRECLAIM_SKIP_REAL_KERNEL:-}" ] || { echo "SKIP: real-kernel tests disabled"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root"
# The v1 memory mount: the mount point of a cgroup (v1) line with the
# memory option in /proc/self/mountinfo.
v1=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break }
	$(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)memory(,|$)/ { print $5; exit }' \
	/proc/self/mountinfo)
[ -n "$v1" ] || skip "no cgroup v1 memory controller is mounted"
parent=${MEMRECLAIM_TEST_PARENT:-$v1}
dir=${MEMRECLAIM_TEST_DATA_DIR:-/var/tmp}
# A cgroup2 mount with PSI: the library makes the twins there.
v2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break }
	$(i + 1) == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
hybrid=false
[ -n "$v2" ] && [ -r "$v2/memory.pressure" ] && hybrid=true

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }
# The number, or null, of key in a run's JSON.
field() { sed -n "s/.*\"$1\":\([0-9][0-9]*\|null\).*/\1/p" <<<"$2" | head -n 1; }

MEMRECLAIM_TEST_PARENT=$parent "$demo" --memreclaimd "$daemon" --limit 64M \
	--margin 8M --file-size 256M --rounds 20 --dir "$dir" --json \
	>"$tmp/out" 2>"$tmp/err"
status=$?
echo "mr-demo said (stderr):"
sed 's/^/# /' "$tmp/err"
cat "$tmp/out"
if grep -q '"simulator":true' "$tmp/out"; then
	skip "mr-demo found no writable memory cgroup below $parent"
fi
if [ $status -eq 0 ] && grep -q '"simulator":false' "$tmp/out" &&
   grep -q "\"cgroup\":\"$parent/memreclaim-demo-" "$tmp/out"; then
	ok "on the kernel, in a group it created below $parent"
else
	fail "exit $status, not on the kernel or not below $parent"
fi
if grep -q '"limit_hits_counter":"memory.failcnt"' "$tmp/out"; then
	ok "its limit hits named after cgroup v1's counter, memory.failcnt"
else
	fail "no \"limit_hits_counter\":\"memory.failcnt\""
fi
mapfile -t runs < <(sed 's/},{/}\n{/g' "$tmp/out" | grep -o '"memreclaimd":[a-z]*.*"margin_intervals":[a-z0-9]*')
without=$(field limit_hits_growth "${runs[0]:-}")
if [ "${without:-0}" != null ] && [ "${without:-0}" -gt 0 ]; then
	ok "without memreclaimd the workload met the limit ($without times)"
else
	fail "no limit hits without memreclaimd (${without:-none})"
fi
stall=$(field memory_stall_some_us "${runs[0]:-}")
if $hybrid; then
	if [ -n "$stall" ] && [ "$stall" != null ] &&
	   ! grep -q "hybrid PSI" "$tmp/err"; then
		ok "hybrid host: the twin's memory stall time ($stall us), no message of hybrid PSI"
	else
		fail "hybrid host: stall '${stall:-none}', or a message of hybrid PSI"
	fi
else
	if [ "$stall" = null ]; then
		ok "no cgroup2 mount with PSI: no stall figures"
	else
		fail "no cgroup2 mount with PSI, yet stall '${stall:-none}'"
	fi
fi
# Its own group and file only: other runs of mr-demo may be about.
cg=$(sed -n 's/.*"cgroup":"\([^"]*\)".*/\1/p' "$tmp/out")
if [ -n "$cg" ] && [ ! -e "$cg" ] && [ ! -e "$dir/${cg##*/}.data" ]; then
	ok "it removed its group and its data file"
else
	fail "its group or data file is left (${cg:-no group})"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
