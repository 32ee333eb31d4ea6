# SPDX-License-Identifier: LGPL-2.1-or-later
# The host-program tests' shell harness, sourced by tests/kernel/host/*:
# TAP-like output as tests/kernel/guest/guest.h prints it, and helpers for
# cgroup v2 groups. The tests run as root inside the kernel that
# `tests/kernel/run --host-programs` boots, in the build tree (their
# working directory), with cgroup2 at /sys/fs/cgroup (the memory
# controller enabled for the root's children) and an ext4 scratch disk at
# $MR_SCRATCH. Every group they use is one they create below the root and
# remove; every process they move is one they start.
#
# Output: "ok N - what" or "not ok N - what", "# " diagnostics, then "1..N"
# and a closing "N passed, N failed" line; done_testing's status is 0 only
# when every check passed.

CG_ROOT=/sys/fs/cgroup
checks=0
failures=0

# ok CONDITION-STATUS MESSAGE: one check. Usage: cmp ...; ok $? "what".
ok() {
	checks=$((checks + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $checks - $2"
	else
		failures=$((failures + 1))
		echo "not ok $checks - $2"
	fi
	return "$1"
}

diag() { echo "# $*"; }

# A setup step failed and nothing after it can be checked.
bail() {
	echo "Bail out! $*"
	done_testing
	exit 1
}

done_testing() {
	echo "1..$checks"
	echo "$((checks - failures)) passed, $failures failed"
	[ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]
}

# Seconds since boot: the guest's wall clock can step, its uptime cannot.
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# The value of KEY in a "key value" file (memory.events, memory.stat).
cg_key() { awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$CG_ROOT/$1"; }

# Creates group $1 below the root with memory.max $2 and no swap.
cg_make() {
	mkdir "$CG_ROOT/$1" &&
		echo "$2" >"$CG_ROOT/$1/memory.max" &&
		echo 0 >"$CG_ROOT/$1/memory.swap.max"
}

# Runs the command in group $1 (a new process, which moves itself there
# before it execs), in the background; sets cg_pid.
cg_spawn() {
	local g=$1
	shift
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG_ROOT/$g" "$@" &
	cg_pid=$!
}

# Kills what is left in group $1, waits for it to empty, removes it.
cg_remove() {
	local i
	[ -d "$CG_ROOT/$1" ] || return 0
	echo 1 >"$CG_ROOT/$1/cgroup.kill"
	for i in $(seq 100); do
		rmdir "$CG_ROOT/$1" 2>/dev/null && return 0
		sleep 0.05
	done
	rmdir "$CG_ROOT/$1"
}

# The number after "KEY": in a flat JSON object (memreclaimd's and
# mr-demo's own output: no nesting where these keys are read).
json_num() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" <<<"$2" | head -n 1; }
