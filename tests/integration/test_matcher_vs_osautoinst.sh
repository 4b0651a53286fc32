#!/bin/sh
# SPDX-License-Identifier: MIT
# test_matcher_vs_osautoinst.sh - compares `vigil needle match` with
# os-autoinst's real tinycv on the same needles and screenshots, margin and
# full-screen search: same ok decisions, same positions, similarities within
# 0.0001. usage: test_matcher_vs_osautoinst.sh [NEEDLES_DIR SCREENSHOT...]
# Without arguments: synthetic screens plus the anchors' needles.
# run-all: long 173
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
vigil=${VIGIL:-$root/build/vigil}
if ! perl -I/usr/lib/os-autoinst -e 'BEGIN { $INC{"bmwqemu.pm"} = 1; sub bmwqemu::import {} } use tinycv;' 2>/dev/null; then
	echo "skipped: os-autoinst (tinycv) is not installed (apt-get install os-autoinst)"
	exit 0
fi
[ -x "$vigil" ] || { echo "no vigil binary at $vigil (run make)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sets="$tmp/sets"
: > "$sets"
if [ $# -ge 2 ]; then
	printf '%s\n' "$*" >> "$sets"
else
	for seed in 1 2 3; do
		python3 "$here/gen_synthetic.py" "$tmp/syn$seed" "$seed" || exit 1
		echo "$tmp/syn$seed/needles $(ls "$tmp/syn$seed/screens/"*.png | tr '\n' ' ')" >> "$sets"
	done
	for d in /work/shared/anchors/isotovideo/distri-*/needles "$root"/examples/*/needles; do
		[ -d "$d" ] || continue
		shots=$(ls "$d"/*.png 2>/dev/null | tr '\n' ' ')
		[ -n "$shots" ] && echo "$d $shots" >> "$sets"
	done
fi
# Each set and mode is one task: both matchers, then the comparison
# (matcher_compare.pl). Tasks run as many at once as there are CPUs
# (tinycv is single-threaded and takes nearly all the time), the
# whole-screen ones, the longest, first.
i=0
while read -r dir shots; do
	i=$((i + 1))
	echo "$i full"
	echo "$i margin"
done < "$sets" | sort -k2 > "$tmp/tasks"
export vigil here tmp sets
xargs -P "$(nproc 2>/dev/null || echo 1)" -L 1 sh -c '
	line=$(sed -n "${1}p" "$sets")
	dir=${line%% *}
	shots=${line#* }
	flag=
	[ "$2" = full ] && flag=--full-screen
	# shellcheck disable=SC2086
	"$vigil" needle match $flag "$dir" $shots > "$tmp/v.$1.$2" 2> "$tmp/e.$1.$2"
	# shellcheck disable=SC2086
	perl "$here/tinycv_match.pl" $flag "$dir" $shots > "$tmp/t.$1.$2" 2>> "$tmp/e.$1.$2"
	# shellcheck disable=SC2086
	perl "$here/matcher_compare.pl" "$tmp/v.$1.$2" "$tmp/t.$1.$2" "$2" "$here" "$dir" $shots \
		> "$tmp/c.$1.$2" 2>> "$tmp/e.$1.$2" || echo "0 1 0 0" > "$tmp/c.$1.$2"
' sh < "$tmp/tasks"
while read -r i mode; do
	cat "$tmp/e.$i.$mode" >&2
	cat "$tmp/c.$i.$mode" 2> /dev/null || echo "0 1 0 0"
done < "$tmp/tasks" > "$tmp/counts"
awk '{ p += $1; f += $2; t += $4; if ($3 > m) m = $3 } END { printf "needle x screenshot pairs compared (margin + full-screen): %d; max similarity difference %.6f\n%d of them with a different position at a provable float near-tie\n%d passed, %d failed\n", p + f, m, t, p, f; exit f > 0 }' "$tmp/counts"
