#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# memreclaimd's backend choice from the environment: without --backend it
# takes MEMRECLAIM_BACKEND, refusing, with exit status 2 and before
# touching anything, a name that is not a real cgroup backend (the
# simulator included). Regression from a fresh user's trial (stop 10):
# the daemon passed "auto" itself, and MEMRECLAIM_BACKEND=sim or a
# misspelt name ran on cgroup1 instead of being refused. No cgroup is
# needed: every case ends at option checking.
set -u
top_builddir=${top_builddir:-.}
daemon=$top_builddir/examples/memreclaimd
[ -x "$daemon" ] || { echo "no $daemon"; exit 99; }

passed=0
failed=0

# expect STATUS PATTERN ENV... -- ARGS...: runs the daemon with ENV and
# ARGS, and checks its exit status and that stderr holds PATTERN.
expect() {
	want=$1 pattern=$2
	shift 2
	envs=
	while [ "$1" != "--" ]; do
		envs="$envs $1"
		shift
	done
	shift
	err=$(env $envs "$daemon" "$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" -eq "$want" ] && printf '%s' "$err" | grep -q -- "$pattern"
	then
		passed=$((passed + 1))
		echo "ok: [$envs ] $* -> $got"
	else
		failed=$((failed + 1))
		echo "FAIL: [$envs ] $* -> $got (want $want, '$pattern'): $err"
	fi
}

expect 2 "MEMRECLAIM_BACKEND='sim'" MEMRECLAIM_BACKEND=sim -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M
expect 2 "MEMRECLAIM_BACKEND='bogus'" MEMRECLAIM_BACKEND=bogus -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M
expect 2 "MEMRECLAIM_BACKEND='sim'" MEMRECLAIM_BACKEND=sim -- \
	--self --margin 1M
# An explicit --backend wins over the variable, and is checked itself.
expect 2 "--backend 'sim'" MEMRECLAIM_BACKEND=cgroup1 -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M --backend sim
# A real backend from the variable gets as far as opening the group.
expect 1 "opening /nonexistent/memreclaim-test" MEMRECLAIM_BACKEND=cgroup1 \
	-- --cgroup /nonexistent/memreclaim-test --margin 1M
expect 1 "opening /nonexistent/memreclaim-test" MEMRECLAIM_BACKEND= -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
