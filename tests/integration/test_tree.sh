#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tree.sh - the tree holds source: no fuzzer finding outside the seed
# corpora (crash-*, leak-*, timeout-*, oom-*: they belong in
# tests/fuzz/corpus/<target>/), no Python byte code, no bench output
# tracked; and no function of src/ over 150 lines from its signature to its
# closing brace (scripts/fn-lengths), so a long one is split by what it does.
. tests/integration/lib.sh

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	git ls-files > "$TMP/tracked"
	grep -E '(^|/)(crash|leak|timeout|oom)-[^/]*$' "$TMP/tracked" | grep -v '^tests/fuzz/corpus/' > "$TMP/findings"
	check "no fuzzer finding tracked outside tests/fuzz/corpus/ ($(tr '\n' ' ' < "$TMP/findings"))" \
		[ ! -s "$TMP/findings" ]
	grep -E '\.py[co]$|(^|/)__pycache__/' "$TMP/tracked" > "$TMP/pyc"
	check "no Python byte code tracked ($(tr '\n' ' ' < "$TMP/pyc"))" [ ! -s "$TMP/pyc" ]
	grep -E '^bench/out/' "$TMP/tracked" > "$TMP/bench"
	check "no bench output tracked ($(tr '\n' ' ' < "$TMP/bench"))" [ ! -s "$TMP/bench" ]
else
	ok "not a git checkout: what is tracked not checked"
fi

scripts/fn-lengths 150 > "$TMP/long"
check "no function of src/ over 150 lines ($(tr '\n' ' ' < "$TMP/long"))" [ ! -s "$TMP/long" ]
# The counter itself: a definition of 151 lines is found, one of 150 is not.
{
	printf 'static int\nfits(void)\n{\n'
	i=0; while [ $i -lt 146 ]; do echo '	x++;'; i=$((i + 1)); done
	printf '}\n\n/* a comment */\nstatic int longer(int a,\n\t\t  int b);\nint longer(int a,\n\t   int b)\n{\n'
	i=0; while [ $i -lt 146 ]; do echo '	x++;'; i=$((i + 1)); done
	printf 'out:\n}\n'
} > "$TMP/probe.c"
check "fn-lengths counts signature to closing brace" \
	[ "$(scripts/fn-lengths 150 "$TMP/probe.c")" = "$TMP/probe.c:155 longer 151" ]
finish
