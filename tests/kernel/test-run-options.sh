#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/kernel/run refuses bad input with a message that names what is
# wrong, before it looks for qemu, downloads a kernel or writes its output
# directory: a size that is not one, --bind or --zram without
# --host-programs, a static run given a dynamically linked program, two
# programs of one name, a --bind that is no directory, and a host program
# the guest would not see. Regression: run from /, with no directory to
# bind, an empty bind made every path look visible, and a program below
# /tmp (which the guest's own tmpfs hides) was booted only to fail there
# with "No such file or directory". Needs neither qemu nor root.
set -u
top_srcdir=${top_srcdir:-.}
run=$(cd "$top_srcdir" && pwd)/tests/kernel/run
[ -f "$run" ] || { echo "no $run"; exit 99; }

work=$(mktemp -d /tmp/mr-run-options.XXXXXX) || exit 99
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\nexit 0\n' >"$work/prog"
chmod +x "$work/prog"
mkdir "$work/other"
cp "$work/prog" "$work/other/prog"
out=$work/out

passed=0
failed=0

# expect STATUS PATTERN DIR ARGS...: runs the harness from DIR and checks
# its exit status, that stderr holds PATTERN, and that it made no output
# directory.
expect() {
	want=$1 pattern=$2 dir=$3
	shift 3
	err=$(cd "$dir" && bash "$run" --out "$out" "$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" -eq "$want" ] && printf '%s' "$err" | grep -q -- "$pattern" &&
		[ ! -e "$out" ]; then
		passed=$((passed + 1))
		echo "ok: (in $dir) $* -> $got"
	else
		failed=$((failed + 1))
		echo "FAIL: (in $dir) $* -> $got (want $want, '$pattern'): $err"
	fi
}

expect 2 'not a size' / --memory 12X "$work/prog"
expect 2 'not a size' / --scratch 0 "$work/prog"
expect 2 'not a size' / --host-programs --tmpfs-size 1T "$work/prog"
expect 2 'apply to --host-programs only' / --zram 64M "$work/prog"
expect 2 'apply to --host-programs only' / --bind "$work" "$work/prog"
expect 1 'is dynamically linked' / /bin/true
expect 1 'not an executable file' / "$work/missing"
expect 1 'two programs named prog' / "$work/prog" "$work/other/prog"
expect 1 'two programs named prog' / --host-programs --bind "$work" \
	"$work/prog" "$work/other/prog"
expect 1 'no such directory' / --host-programs --bind "$work/missing" /bin/true
expect 1 'hidden in the guest' / --host-programs "$work/prog"
expect 1 'hidden in the guest' / --host-programs --bind "$work/other" "$work/prog"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
