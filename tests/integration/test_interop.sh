#!/bin/sh
# SPDX-License-Identifier: MIT
# test_interop.sh - vigil with openQA's own parts (Debian 12's openqa 4.6):
# each interop_*.sh part runs in turn (its own temporary directory under
# this suite's), their counts summed. `make check-interop` runs it alone.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
for part in interop_openqa.sh; do
	VIGIL_TEST_TMP=$TMP sh "$HERE/$part" > "$TMP/$part.out" 2>&1
	cat "$TMP/$part.out"
	counts=$(tail -1 "$TMP/$part.out")
	case $counts in
	*" passed, "*" failed")
		PASSED=$((PASSED + ${counts%% passed*}))
		f=${counts#*passed, }
		FAILED=$((FAILED + ${f%% failed}))
		;;
	*) not_ok "$part ended without its counts" ;;
	esac
done
finish
