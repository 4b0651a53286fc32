#!/bin/sh
# SPDX-License-Identifier: MIT
# test_docs.sh - the man page keeps up with the binary: every subcommand that
# 'vigil --help' lists has its own section in man/vigil.1 and a synopsis
# line, and every long option a subcommand's --help names is described there;
# docs/testapi-support.md is what scripts/gen-testapi-table makes of the code.
. tests/integration/lib.sh
MAN=man/vigil.1

cmds=$($VIGIL --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
check "vigil --help lists subcommands" [ -n "$cmds" ]
check "man page renders without warnings" sh -c "! man --warnings -l $MAN 2>&1 >/dev/null | grep ."
for c in $cmds; do
	check "man: a section for 'vigil $c'" grep -qE "^\.SS vigil $c( |\$)" "$MAN"
	check "man: a synopsis line for 'vigil $c'" sh -c "sed -n '/^.SH SYNOPSIS/,/^.SH DESCRIPTION/p' $MAN | grep -q '^.B vigil $c'"
	# 'needle' has subcommands with their own --help: ask each.
	if [ "$c" = needle ]; then subs="match new show"; else subs=""; fi
	for h in ${subs:-_}; do
		[ "$h" = _ ] && h=""
		opts=$($VIGIL $c $h --help 2>&1 | grep -oE -- '--[a-z][a-z-]+' | sort -u)
		for o in $opts; do
			[ "$o" = --help ] && continue
			esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
			check "man: 'vigil $c $h' option $o described" grep -q -- "$esc" "$MAN"
		done
	done
done

check "docs/testapi-support.md is up to date (run scripts/gen-testapi-table)" scripts/gen-testapi-table --check
finish
