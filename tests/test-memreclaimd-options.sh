#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# memreclaimd's options and environment, refused with exit status 2 and a
# message that names what is wrong, before anything is touched. Without
# --backend it takes MEMRECLAIM_BACKEND, refusing a name that is not a
# real cgroup backend (the simulator included). Regression from a fresh
# user's trial (stop 10): the daemon passed "auto" itself, and
# MEMRECLAIM_BACKEND=sim or a misspelt name ran on cgroup1 instead of
# being refused. No cgroup is needed: every case ends at option checking
# or at opening a group that does not exist.
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
		echo "ok: [$(printf "%.60s" "$envs") ] $* -> $got"
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

# --duration: whole seconds up to a year (one parser with the
# configuration's intervals).
expect 2 "--duration '5x': not a whole number of seconds" -- \
	--cgroup /nonexistent/memreclaim-test --duration 5x
expect 2 "--duration '31536001': more than a year" -- \
	--cgroup /nonexistent/memreclaim-test --duration 31536001

# Where the library can answer only "invalid argument", the daemon says
# what is wrong and names the value, before touching anything.
expect 2 "MEMRECLAIM_STATE_DIR='relative/dir': the state directory must be an absolute path" \
	MEMRECLAIM_STATE_DIR=relative/dir -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M
long=/$(printf '%04100d' 0)
expect 2 "MEMRECLAIM_STATE_DIR: the state directory's path must be shorter than" \
	MEMRECLAIM_STATE_DIR="$long" -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M
# An empty one is the default, as the library takes it.
expect 1 "opening /nonexistent/memreclaim-test" MEMRECLAIM_STATE_DIR= -- \
	--cgroup /nonexistent/memreclaim-test --margin 1M
# --self and --cgroup: exclusive, and one of them required.
expect 2 "--cgroup and --self are mutually exclusive" -- \
	--self --cgroup /nonexistent/memreclaim-test --margin 1M
expect 2 "--cgroup and --self are mutually exclusive" -- \
	--cgroup /nonexistent/memreclaim-test --self --margin 1M
# The proactive controller's options: with one group, one of the two
# modes, its target and minimum size with it and well formed.
expect 2 "--proactive, --proactive-dry-run, --pressure-target and --min-size go with --cgroup or --self" \
	-- --proactive
expect 2 "--proactive and --proactive-dry-run are mutually exclusive" -- \
	--cgroup /nonexistent/memreclaim-test --proactive --proactive-dry-run
expect 2 "--min-size goes with the proactive controller" -- \
	--cgroup /nonexistent/memreclaim-test --min-size 64M
expect 2 "--pressure-target '10ms': not STALL/WINDOW" -- \
	--cgroup /nonexistent/memreclaim-test --proactive --pressure-target 10ms
expect 2 "the window must be 1s to 600s" -- \
	--cgroup /nonexistent/memreclaim-test --proactive \
	--pressure-target 1ms/500ms
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test --proactive \
	--pressure-target 10ms/6s --min-size 64M
# Without --cgroup or --self memreclaimd reads a configuration, whose
# [group] sections give the policy.
expect 2 "--margin, --hysteresis and --batch go with --cgroup or --self" \
	-- --margin 1M
expect 2 "--hysteresis and --batch go with --cgroup or --self" \
	-- --batch auto --config /nonexistent/memreclaimd.conf
expect 2 "/nonexistent/memreclaimd.conf: No such file or directory" \
	-- --config /nonexistent/memreclaimd.conf
expect 2 "/nonexistent/memreclaimd.conf: No such file or directory" \
	-- --check-config --config /nonexistent/memreclaimd.conf
expect 2 "--cgroup keeps one group from the command line" -- \
	--cgroup /nonexistent/memreclaim-test --config /x.conf
expect 2 "--self keeps one group from the command line" -- \
	--self --check-config
# Daemon options are checked as the [daemon] keys they stand for.
expect 2 "--sched 'fast': expected idle or nice:N" -- \
	--cgroup /nonexistent/memreclaim-test --sched fast
expect 2 "--metrics-port '65536': expected a TCP port" -- \
	--cgroup /nonexistent/memreclaim-test --metrics-port 65536
expect 2 "--metrics-file 'x.prom': not an absolute path" -- \
	--cgroup /nonexistent/memreclaim-test --metrics-file x.prom
expect 2 "--metrics-interval '0': must be at least 1" -- \
	--cgroup /nonexistent/memreclaim-test --metrics-interval 0
expect 2 "--stats-interval 'soon': not a whole number of seconds" -- \
	--cgroup /nonexistent/memreclaim-test --stats-interval soon
# A margin in bytes: at least a page, as mr_group_set_margin() takes it.
expect 2 "--margin '4095': a margin in bytes must be at least 4096" -- \
	--cgroup /nonexistent/memreclaim-test --margin 4095
expect 2 "--margin '1': a margin in bytes must be at least 4096" -- \
	--cgroup /nonexistent/memreclaim-test --margin 1
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test --margin 4096
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test --margin 4K
# The adaptive margin: the default without --margin, or --margin auto;
# it sizes its own hysteresis.
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test --margin auto --batch auto
expect 2 "--hysteresis goes with a fixed --margin" -- \
	--cgroup /nonexistent/memreclaim-test --hysteresis 1M
expect 2 "--hysteresis goes with a fixed --margin" -- \
	--cgroup /nonexistent/memreclaim-test --margin auto --hysteresis 1M
# --margin sized: the adaptive margin with its cost gate off.
expect 1 "opening /nonexistent/memreclaim-test" -- \
	--cgroup /nonexistent/memreclaim-test --margin sized
expect 2 "--hysteresis goes with a fixed --margin" -- \
	--cgroup /nonexistent/memreclaim-test --margin sized --hysteresis 1M

# --check-config: what a good configuration holds, exit 0; a bad one is
# refused with its file and line, exit 2.
conf=$(mktemp)
printf '[daemon]\nworker-sched = idle\n[group web]\npath = /nonexistent//web/*\nmargin = 4M\n' >"$conf"
out=$("$daemon" --check-config --config "$conf" 2>&1)
got=$?
if [ $got -eq 0 ] && printf '%s' "$out" | grep -q "^path = /nonexistent/web/\*$" &&
   printf '%s' "$out" | grep -q "^worker-sched = idle$"; then
	passed=$((passed + 1))
	echo "ok: --check-config --config (good) -> 0"
else
	failed=$((failed + 1))
	echo "FAIL: --check-config --config (good) -> $got: $out"
fi
printf '[group web]\npath = /nonexistent/web/*\nmargin = 4x\n' >"$conf"
expect 2 "$conf:3: margin '4x': not a size" -- --check-config --config "$conf"
expect 2 "$conf:3: margin '4x': not a size" -- --config "$conf"
# The checks of a section's policy as a whole name the key they refuse,
# with its file and line; the command line's name the option.
printf '[group web]\npath = /nonexistent/web/*\nmargin = 4M\nbatch = 5000\n' >"$conf"
expect 2 "$conf:4: batch must be a multiple of 4K" -- --check-config --config "$conf"
expect 2 "^memreclaimd: --batch must be a multiple of 4K" -- \
	--cgroup /nonexistent/memreclaim-test --margin 4M --batch 5000
printf '[group web]\npath = /nonexistent/web/*\nmin-size = 1M\n' >"$conf"
expect 2 "$conf:3: min-size goes with the proactive controller (proactive = on or dry-run)" \
	-- --config "$conf"
expect 2 "^memreclaimd: --margin '0': must be above 0" -- \
	--cgroup /nonexistent/memreclaim-test --margin 0
rm -f "$conf"
# The configuration make install puts in place.
top_srcdir=${top_srcdir:-.}
if out=$("$daemon" --check-config --config "$top_srcdir/examples/memreclaimd.conf" 2>&1) &&
   printf '%s' "$out" | grep -q "^metrics-file = /run/memreclaimd/memreclaimd.prom$"; then
	passed=$((passed + 1))
	echo "ok: --check-config examples/memreclaimd.conf -> 0"
else
	failed=$((failed + 1))
	echo "FAIL: --check-config examples/memreclaimd.conf: $out"
fi

# The metrics file's temporary is made new under a name nobody can guess:
# a FIFO put where the temporary used to go (PATH.PID.tmp) blocked the
# daemon in open(), deaf to SIGTERM. Regression from a review: it must
# write the file and stop on SIGTERM all the same.
dir=$(mktemp -d)
printf '[daemon]\nmetrics-file = %s/m.prom\nmetrics-interval = 1\n[group none]\npath = /nonexistent/memreclaim-test/*\nmargin = 4M\n' \
	"$dir" >"$dir/conf"
sh -c 'mkfifo "$1/m.prom.$$.tmp" && exec "$0" --config "$1/conf"' \
	"$daemon" "$dir" >"$dir/out" 2>&1 &
pid=$!
i=0
while [ ! -s "$dir/m.prom" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM $pid 2>/dev/null
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 $pid 2>/dev/null; then
	kill -KILL $pid
	wait $pid 2>/dev/null
	failed=$((failed + 1))
	echo "FAIL: a FIFO at the metrics file's old temporary name: memreclaimd did not stop on SIGTERM"
elif wait $pid && grep -q "^memreclaimd_groups " "$dir/m.prom"; then
	passed=$((passed + 1))
	echo "ok: a FIFO at the metrics file's old temporary name: written, stopped"
else
	failed=$((failed + 1))
	echo "FAIL: a FIFO at the metrics file's old temporary name: $(cat "$dir/out")"
fi
rm -rf "$dir"

# A pattern whose wildcard starts outside any cgroup file system: not
# followed (`/**` listed the whole host, /proc included, at every walk).
# Regression from a review.
conf=$(mktemp)
printf '[group all]\npath = /**\nmargin = 4M\n' >"$conf"
out=$(timeout 20 "$daemon" --config "$conf" --duration 1 2>&1)
got=$?
if [ $got -eq 0 ] &&
   printf '%s' "$out" | grep -q "^memreclaimd: warning: /: not on a cgroup file system" &&
   [ "$(printf '%s\n' "$out" | grep -c "listing")" -eq 0 ]; then
	passed=$((passed + 1))
	echo "ok: path = /** is not followed outside cgroupfs"
else
	failed=$((failed + 1))
	echo "FAIL: path = /** (exit $got): $(printf '%s' "$out" | head -5)"
fi
rm -f "$conf"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
