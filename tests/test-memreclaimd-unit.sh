#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# memreclaimd.service as make install writes it, verified by
# systemd-analyze verify (its ExecStart pointed at the daemon of this
# build, which is not installed): every directive known, every value
# parsed, the program there. systemd-analyze only warns about an unknown
# key or a bad value and exits 0, so any output is a failure. It runs
# without systemd as PID 1. A typo put in on purpose must be caught, so
# that a verify that checks nothing does not pass.
set -u
top_builddir=${top_builddir:-.}
unit=$top_builddir/systemd/memreclaimd.service
daemon=$(cd "$top_builddir" && pwd)/examples/memreclaimd
[ -f "$unit" ] || { echo "no $unit"; exit 99; }
if ! command -v systemd-analyze >/dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL: systemd-analyze missing under CI (scripts/lib.sh installs systemd)"
		exit 1
	fi
	echo "SKIP: no systemd-analyze (Debian: apt-get install systemd)"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0

# verify NAME SED: the unit, changed by SED, as $dir/NAME; prints the
# output of systemd-analyze verify and returns non-zero if there is any.
verify() {
	sed -e "s|^ExecStart=[^ ]*|ExecStart=$daemon|" -e "$2" "$unit" \
		>"$dir/$1"
	out=$(systemd-analyze verify --man=no "$dir/$1" 2>&1)
	status=$?
	printf '%s' "$out"
	[ $status -eq 0 ] && [ -z "$out" ]
}

if out=$(verify memreclaimd.service ''); then
	echo "ok: memreclaimd.service verifies with no message"
else
	echo "FAIL: memreclaimd.service: $out"
	failed=1
fi
grep -q '^Type=notify$' "$unit" && grep -q '^WatchdogSec=' "$unit" &&
	grep -q '^ExecReload=' "$unit" ||
	{ echo "FAIL: not Type=notify with WatchdogSec= and ExecReload="; failed=1; }
# The checks bite.
if out=$(verify memreclaimd.service 's/^Restart=/Restrat=/'); then
	echo "FAIL: a misspelt key was not reported"
	failed=1
else
	echo "ok: a misspelt key is reported: $out"
fi
if out=$(verify memreclaimd.service "s|^ExecStart=[^ ]*|ExecStart=$dir/none|"); then
	echo "FAIL: a missing program was not reported"
	failed=1
else
	echo "ok: a missing program is reported"
fi
exit $failed
