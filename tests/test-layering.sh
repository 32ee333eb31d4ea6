#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The layers of docs/design.md, checked on the sources and the objects:
#   1. a file of the policy core (lib/core/) includes the public header,
#      system headers and core headers only: no cgroupfs service
#      (lib/cgroupfs/) and no backend;
#   2. a backend (backends/NAME/) includes no header of another backend;
#   3. libmemreclaim.so exports nothing of the simulator: no mr_sim_
#      symbol and no function declared in memreclaim.h with an mr_sim_t;
#   4. the module graph of the core has no cycle: module A calls module B
#      when A's object (lib/core/.libs/*.o, or lib/.libs/*.o while lib/
#      is flat) has an undefined symbol that B's object defines.
# Each broken rule is printed, one line per include, symbol or cycle.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
lib=$top_builddir/.libs/libmemreclaim.so
hdr=$top_srcdir/include/memreclaim.h
[ -f "$lib" ] || { echo "no $lib"; exit 99; }
command -v nm >/dev/null || { echo "no nm"; exit 99; }

fail=0
broken() {
	echo "$*"
	fail=1
}

# The quoted includes of a file, one per line.
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

# 1. The core includes the core.
if [ -d "$top_srcdir/lib/core" ]; then
	core_dir=$top_srcdir/lib/core
	for f in "$core_dir"/*.c "$core_dir"/*.h; do
		[ -f "$f" ] || continue
		for inc in $(includes "$f"); do
			case $inc in
			config.h | memreclaim.h) continue ;;
			esac
			[ -f "$core_dir/$inc" ] && continue
			broken "core file ${f#"$top_srcdir"/} includes \"$inc\", not a core header"
		done
	done
	obj_dir=$top_builddir/lib/core/.libs
else
	# A flat lib/: every file is taken for the core.
	obj_dir=$top_builddir/lib/.libs
fi

# 2. No backend includes another's header.
for dir in "$top_srcdir"/backends/*/; do
	name=$(basename "$dir")
	for f in "$dir"*.c "$dir"*.h; do
		[ -f "$f" ] || continue
		for inc in $(includes "$f"); do
			for other in "$top_srcdir"/backends/*/; do
				[ "$(basename "$other")" = "$name" ] && continue
				case $inc in
				*/*) [ -f "$top_srcdir/backends/$inc" ] &&
					[ "${inc%%/*}" != "$name" ] &&
					broken "backend file ${f#"$top_srcdir"/} includes another backend's \"$inc\"" ;;
				*) [ -f "$other$inc" ] && [ ! -f "$dir$inc" ] &&
					broken "backend file ${f#"$top_srcdir"/} includes \"$inc\" of backends/$(basename "$other")" ;;
				esac
			done
		done
	done
done

# 3. Nothing of the simulator in the production library.
exported=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
for s in $exported; do
	case $s in
	mr_sim_*) broken "libmemreclaim.so exports $s" ;;
	esac
done
# Functions of the public header with an mr_sim_t among their arguments.
for s in $(awk '
	/^MR_EXPORT/ { decl = ""; on = 1 }
	on { decl = decl " " $0 }
	on && /;/ {
		on = 0
		if (decl ~ /mr_sim_t[^a-z0-9_]/ && match(decl, /[a-z0-9_]+\(/))
			print substr(decl, RSTART, RLENGTH - 1)
	}' "$hdr"); do
	case $s in
	mr_sim_*) continue ;; # named above
	esac
	echo "$exported" | grep -qx "$s" &&
		broken "libmemreclaim.so exports $s, which takes an mr_sim_t"
done

# 4. The core's module graph is acyclic.
objs=$(ls "$obj_dir"/*.o 2>/dev/null)
[ -n "$objs" ] || { echo "no objects in $obj_dir"; exit 99; }
cycles=$(for o in $objs; do
	m=$(basename "$o" .o)
	m=${m#*_la-}
	nm "$o" | awk -v m="$m" '
		NF == 3 && $2 ~ /^[TDBR]$/ { print "D", m, $3 }
		NF == 2 && $1 == "U" { print "U", m, $2 }'
done | awk '
	$1 == "D" { def[$3] = $2; next }
	{ n++; um[n] = $2; us[n] = $3 }
	END {
		for (i = 1; i <= n; i++) {
			d = def[us[i]]
			if (d != "" && d != um[i] && !((um[i], d) in edge)) {
				edge[um[i], d] = 1
				mods[um[i]] = 1; mods[d] = 1
			}
		}
		# Reachability by closure (a few dozen modules).
		for (a in mods) for (b in mods) reach[a, b] = ((a, b) in edge)
		for (k in mods) for (a in mods) if (reach[a, k])
			for (b in mods) if (reach[k, b]) reach[a, b] = 1
		# A direct pair calling each other, else a module on a longer
		# cycle with the modules of its cycle.
		for (a in mods) for (b in mods)
			if (a < b && ((a, b) in edge) && ((b, a) in edge)) {
				print a " <-> " b
				paired[a] = 1; paired[b] = 1
			}
		for (a in mods) if (reach[a, a] && !(a in done)) {
			line = ""
			for (b in mods) if (reach[a, b] && reach[b, a]) {
				done[b] = 1
				line = line " " b
			}
			print "cycle among:" line
		}
	}' | sort)
if [ -n "$cycles" ]; then
	echo "$cycles" | while IFS= read -r c; do
		echo "core module graph: $c"
	done
	fail=1
fi

if [ $fail -eq 0 ]; then
	echo "1 passed, 0 failed (core includes, backend includes, exports, core module graph)"
else
	echo "0 passed, 1 failed"
fi
exit $fail
