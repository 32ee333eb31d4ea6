#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every exported symbol is in the version script and declared with a comment
# in the public header; every symbol of the version script is exported.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
lib=$top_builddir/.libs/libmemreclaim.so
sym=$top_srcdir/lib/libmemreclaim.sym
hdr=$top_srcdir/include/memreclaim.h
[ -f "$lib" ] || { echo "no $lib"; exit 99; }

exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "D" || $2 == "B" || $2 == "R" { print $3 }' | sed 's/@.*//' | sort -u)
listed=$(sed -n 's/^[[:space:]]*\(mr_[a-z0-9_]*\);.*/\1/p' "$sym" | sort -u)
fail=0
for s in $exported; do
	case $s in
	mr_*) ;;
	*) echo "exported symbol without the mr_ prefix: $s"; fail=1; continue ;;
	esac
	echo "$listed" | grep -qx "$s" || { echo "exported but not in $sym: $s"; fail=1; }
done
for s in $listed; do
	echo "$exported" | grep -qx "$s" || { echo "in $sym but not exported: $s"; fail=1; }
	# Declared with MR_EXPORT, right after a comment (possibly shared by
	# a run of declarations).
	awk -v s="$s" '
		/\*\/[[:space:]]*$/ { commented = 1; next }
		/^MR_EXPORT/ {
			if (index($0, " " s "(") || index($0, "*" s "(")) {
				found = 1; ok = commented
			}
			next
		}
		/^[[:space:]]/ { next }
		/^$/ { commented = 0; next }
		{ commented = 0 }
		END { exit !(found && ok) }' "$hdr" ||
		{ echo "not declared after a comment in memreclaim.h: $s"; fail=1; }
done
n=$(echo "$exported" | wc -w)
if [ $fail -eq 0 ]; then
	echo "1 passed, 0 failed ($n symbols exported, all listed and documented)"
else
	echo "0 passed, 1 failed"
fi
exit $fail
