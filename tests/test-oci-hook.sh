#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# memreclaim-oci-hook on untrusted input: the container's state on stdin
# and its annotations. Each bad state is refused with exit status 1 and a
# message naming what is wrong, and nothing is written to the runtime
# directory; a container without the annotation is left alone (0); a
# stopped container's drop-in is removed, and a missing one is no error.
# --version and --help answer as memreclaimd's. No cgroup is needed: every case ends before the container's group is
# looked for, but the last, whose pid names no process.
set -u
top_builddir=${top_builddir:-.}
hook=$top_builddir/examples/memreclaim-oci-hook
[ -x "$hook" ] || { echo "no $hook"; exit 99; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
conf=$work/m.conf
dir=$work/groups.d
cat >"$conf" <<EOC
[daemon]
runtime-dir = $dir

[group containers]
path = /sys/fs/cgroup/memory/machine/*
runtime = yes

[group walked]
path = /sys/fs/cgroup/memory/other/*
EOC

passed=0
failed=0

# expect STATUS PATTERN STATE: runs the hook with STATE on stdin.
expect() {
	want=$1 pattern=$2 state=$3
	err=$(printf '%s' "$state" | "$hook" --config "$conf" 2>&1 >/dev/null)
	got=$?
	if [ "$got" -eq "$want" ] && { [ -z "$pattern" ] && [ -z "$err" ] ||
		{ [ -n "$pattern" ] && printf '%s' "$err" | grep -q -- "$pattern"; }; }
	then
		passed=$((passed + 1))
		echo "ok: $(printf '%.70s' "$state") -> $got"
	else
		failed=$((failed + 1))
		echo "FAIL: $state -> $got (want $want, '$pattern'): $err"
	fi
	if [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
		failed=$((failed + 1))
		echo "FAIL: $state left in $dir: $(ls -A "$dir")"
		rm -f "$dir"/* "$dir"/.[!.]*
	fi
}

pol='"annotations":{"io.memreclaim.policy":"containers"}'
expect 1 "not JSON" '{"id":"a","status":"created",'
expect 1 "not JSON" '{"id":"a","status":"created"} trailing'
expect 1 "not JSON" "{'id':'a'}"
expect 1 "not a JSON object" '["id","a"]'
expect 1 "no id or status" '{"status":"created","pid":1}'
expect 1 "no id or status" '{"id":7,"status":"created"}'
expect 1 "pid is not a number" '{"id":"a","status":"created","pid":"1",'"$pol"'}'
expect 1 "pid is out of range" '{"id":"a","status":"created","pid":-1,'"$pol"'}'
expect 1 "pid is out of range" '{"id":"a","status":"created","pid":4294967296,'"$pol"'}'
expect 1 "annotations are not an object" '{"id":"a","status":"created","annotations":[]}'
expect 1 "io.memreclaim.polcy: unknown" '{"id":"a","status":"created","annotations":{"io.memreclaim.polcy":"x"}}'
expect 1 "policy: not a string" '{"id":"a","status":"created","annotations":{"io.memreclaim.policy":1}}'
expect 1 "not a file name" '{"id":"../../etc/x","status":"created","pid":1,'"$pol"'}'
expect 1 "not a file name" '{"id":".hidden","status":"created","pid":1,'"$pol"'}'
expect 1 "not a file name" '{"id":"a b","status":"created","pid":1,'"$pol"'}'
expect 1 "'nope': not a policy" '{"id":"a","status":"created","pid":1,"annotations":{"io.memreclaim.policy":"nope"}}'
expect 1 "runtime = yes: containers" '{"id":"a","status":"created","pid":1,"annotations":{"io.memreclaim.policy":"walked"}}'
expect 1 "'a/b': not a policy" '{"id":"a","status":"created","pid":1,"annotations":{"io.memreclaim.policy":"a/b"}}'
# A status the specification does not name is neither a start nor a
# stop.
expect 1 "status 'paused': not one of" '{"id":"a","status":"paused","pid":1,'"$pol"'}'
expect 1 "status '': not one of" '{"id":"a","status":"","pid":1,'"$pol"'}'
expect 1 "the state has no pid" '{"id":"a","status":"created",'"$pol"'}'
# Deeper than the state ever is.
expect 1 "not JSON" '{"id":"a","status":"created","x":[[[[[[[[[[1]]]]]]]]]]}'
# Over 1 MiB.
big=$(head -c 1100000 /dev/zero | tr '\0' ' ')
expect 1 "over 1048576 bytes" "{$big}"
# Not asked: nothing to do, whatever else the state says.
expect 0 "" '{"id":"a b","status":"created","pid":1}'
expect 0 "" '{"id":"a","status":"stopped","annotations":{"other":"x"}}'
# A pid that names no process (pid_max is at most 2^22).
expect 1 "the memory cgroup of pid 2147483647: " '{"id":"a","status":"created","pid":2147483647,'"$pol"'}'

# poststop: the drop-in goes (expect checks the directory is empty
# after); none is no error.
mkdir -p "$dir"
printf 'cgroup = /sys/fs/cgroup/memory/machine/a\npolicy = containers\n' >"$dir/a.conf"
expect 0 "" '{"id":"a","status":"stopped","pid":0,'"$pol"'}'
expect 0 "" '{"id":"a","status":"stopped","pid":0,'"$pol"'}'

# Options.
if "$hook" --runtime-dir relative </dev/null 2>/dev/null; then
	failed=$((failed + 1))
	echo "FAIL: --runtime-dir relative accepted"
else
	passed=$((passed + 1))
fi
# --version and --help: on stdout, exit 0, stdin not read; the version
# line as memreclaimd's, the same versions. A bad option: 2.
daemon=$top_builddir/examples/memreclaimd
check_info() {
	want=$1
	shift
	out=$("$hook" "$@" </dev/null 2>"$work/err")
	got=$?
	if [ "$got" -eq 0 ] && [ ! -s "$work/err" ] &&
	   printf '%s\n' "$out" | grep -q -- "$want"; then
		passed=$((passed + 1))
		echo "ok: $* -> 0"
	else
		failed=$((failed + 1))
		echo "FAIL: $* -> $got (want 0, '$want'): $out $(cat "$work/err")"
	fi
}
dversion=$("$daemon" --version | sed 's/^memreclaimd //')
check_info "^memreclaim-oci-hook $dversion\$" --version
check_info "^memreclaim-oci-hook [0-9][0-9.]* (libmemreclaim [0-9][0-9.]*)\$" --version
check_info "^  --version  " --help
check_info "^usage: memreclaim-oci-hook " --help
"$hook" --bogus </dev/null >/dev/null 2>"$work/err"
got=$?
if [ "$got" -eq 2 ] && grep -q "unrecognized option '--bogus'" "$work/err" &&
   grep -q "^usage: memreclaim-oci-hook" "$work/err"; then
	passed=$((passed + 1))
	echo "ok: --bogus -> 2"
else
	failed=$((failed + 1))
	echo "FAIL: --bogus -> $got (want 2): $(cat "$work/err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
