#!/bin/sh
# SPDX-License-Identifier: MIT
# test_interop.sh - issue 16's interop suite: vigil beside openQA. Each part
# is its own script with its own servers and tmp dir; this one runs them in
# turn, shows their output and sums their ok/FAIL lines.
#   interop_serve.sh   Debian's openqa-worker + isotovideo under `vigil serve`
#   interop_openqa.sh  `vigil worker` under Debian's openQA server
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
DIR=$(dirname "$0")

part() { # part SCRIPT: run it, count its results here
	echo "== $1"
	t0=$(date +%s)
	sh "$DIR/$1" > "$TMP/$1.out" 2>&1
	cat "$TMP/$1.out"
	PASSED=$((PASSED + $(grep -c '^ok ' "$TMP/$1.out")))
	FAILED=$((FAILED + $(grep -c '^FAIL ' "$TMP/$1.out")))
	grep -qE '^[0-9]+ passed, [0-9]+ failed' "$TMP/$1.out" || not_ok "$1 printed no summary (it stopped early)"
	echo "== $1 took $(($(date +%s) - t0)) s"
}

part interop_serve.sh
part interop_openqa.sh
finish
