#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manual pages cover what they document: every option of
# `memreclaimd --help` in memreclaimd(8), with every metric family it
# writes (and every option of `memreclaim-oci-hook --help` in
# memreclaim-oci-hook(8) and of `mrsim --help` in mrsim(1), where they
# are built); every key of memreclaimd_config_keys[] (its configuration
# parser's list) in memreclaimd.conf(5); every environment variable the
# alloc-hook reads in memreclaim-alloc-hook(7); every function
# libmemreclaim(3) names is one the library exports; and man(1) renders
# each page without a warning.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
man=$top_srcdir/man
daemon=$top_builddir/examples/memreclaimd
[ -x "$daemon" ] || { echo "no $daemon"; exit 99; }
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# A page as plain words: roff's \- as -, font escapes dropped.
text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(dq/"/g' "$1"; }

# options_covered PROGRAM PAGE: every option of `PROGRAM --help` has an
# entry (a .B, .BI, .BR ... line starting with it) in the manual PAGE
# (man/NAME.N).
options_covered() {
	what=$(basename "$2" | sed 's/\.\([0-9]\)$/(\1)/')
	opts=$("$1" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
	[ -n "$opts" ] || fail "no option in $(basename "$1") --help"
	page=$(text "$2")
	for o in $opts; do
		printf '%s\n' "$page" | grep -q -- "^\.[BI]*R* *$o\( \|$\)" ||
			fail "$what has no entry for $o"
	done
	echo "$what: $(echo $opts | wc -w) options of --help"
}

options_covered "$daemon" "$man/memreclaimd.8"
names=$(sed -n '/mrd_metric_names\[\] = {/,/NULL/p' \
	"$top_srcdir/examples/memreclaimd-metrics.c" |
	grep -o '"[a-z_]*"' | tr -d '"')
[ -n "$names" ] || fail "no metric names in memreclaimd-metrics.c"
for n in $names; do
	printf '%s\n' "$page" | grep -q "memreclaimd_$n\b" ||
		fail "memreclaimd(8) does not name the metric memreclaimd_$n"
done
echo "memreclaimd(8): $(echo $names | wc -w) metric families"

hook=$top_builddir/examples/memreclaim-oci-hook
[ -x "$hook" ] && options_covered "$hook" "$man/memreclaim-oci-hook.8"
mrsim=$top_builddir/examples/mrsim
[ -x "$mrsim" ] && options_covered "$mrsim" "$man/mrsim.1"

page=$(text "$man/memreclaimd.conf.5")
keys=$(sed -n '/memreclaimd_config_keys\[\] = {/,/NULL/p' \
	"$top_srcdir/examples/memreclaimd-config.c" | grep -o '"[a-z.-]*"' |
	tr -d '"')
[ -n "$keys" ] || fail "no keys in memreclaimd-config.c"
for k in $keys; do
	section=${k%%.*} key=${k#*.}
	# The key's entry, below its section's heading.
	printf '%s\n' "$page" |
		sed -n "/^\.SH THE \[$section/,/^\.SH [A-Z]*$/p" |
		grep -q -- "^\.B[IR]* $key\( \|$\)" ||
		fail "memreclaimd.conf(5) has no entry for $key in [$section]"
done
echo "memreclaimd.conf(5): $(echo $keys | wc -w) keys"

page=$(text "$man/memreclaim-alloc-hook.7")
vars=$(grep -ho 'getenv("MEMRECLAIM_HOOK_[A-Z_]*")' \
	"$top_srcdir"/examples/alloc-hook/*.c | grep -o 'MEMRECLAIM_HOOK_[A-Z_]*' |
	sort -u)
[ -n "$vars" ] || fail "no MEMRECLAIM_HOOK_ variable in examples/alloc-hook"
for v in $vars; do
	printf '%s\n' "$page" | grep -q "^\.B[IR]* $v=" ||
		fail "memreclaim-alloc-hook(7) has no entry for $v"
done
echo "memreclaim-alloc-hook(7): $(echo $vars | wc -w) variables"

page=$(text "$man/libmemreclaim.3")
names=$(printf '%s\n' "$page" | grep -o '\bmr_[a-z_]*' | sort -u)
for n in $names; do
	grep -qw "$n" "$top_srcdir/include/memreclaim.h" ||
		fail "libmemreclaim(3) names $n, which <memreclaim.h> has not"
done
# Its synopsis: functions the library exports.
calls=$(printf '%s\n' "$page" | grep '^\.BI "[a-z_ ]*\**mr_' |
	grep -o 'mr_[a-z_]*(' | tr -d '(')
[ -n "$calls" ] || fail "libmemreclaim(3) has no synopsis"
for c in $calls; do
	grep -q "^[[:space:]]*$c;" "$top_srcdir/lib/libmemreclaim.sym" ||
		fail "libmemreclaim(3) declares $c, which the library does not export"
done
echo "libmemreclaim(3): $(echo $names | wc -w) names of <memreclaim.h>, $(echo $calls | wc -w) exported calls in its synopsis"

if command -v man >/dev/null; then
	for p in "$man"/*.[0-9]; do
		w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
		[ -z "$w" ] || fail "$p: $w"
	done
	echo "man --warnings: $(ls "$man"/*.[0-9] | wc -l) pages"
elif [ "${CI:-}" = true ]; then
	fail "no man to render the pages with (scripts/lib.sh installs man-db)"
else
	echo "not rendered: no man (Debian: apt-get install man-db)"
fi
exit $failed
