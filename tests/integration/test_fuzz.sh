#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fuzz.sh - the fuzz smoke of `make check` (issue 17): builds every
# libFuzzer target (tests/fuzz/fuzz_*.c, clang-14 with ASan+UBSan) and runs
# each from its committed seeds for a fixed number of inputs from a fixed
# seed, so the run is the same each time (4,000 inputs a target, two
# targets at a time: about 15 s of CPU in all, 1.5-2 minutes on a loaded
# machine, plus the build when build-fuzz/ is cold); `make fuzz` runs them longer.
# A crash, a leak or a sanitizer report fails the target's check.
# run-all: long 56
. "$(dirname "$0")/lib.sh"
if ! command -v clang-14 > /dev/null || [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ] &&
	! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1; then
	echo "skipped: needs clang-14 and libfuzzer-14-dev (scripts/install-deps)"
	finish
	exit 0
fi
make -s fuzz-build -j2 > "$TMP/build.log" 2>&1
rc=$?
check "the fuzz targets build" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$TMP/build.log"
n=0
for src in tests/fuzz/fuzz_*.c; do
	n=$((n + 1))
	name=$(basename "$src" .c)
	check "$name is built" [ -x "build-fuzz/fuzz/$name" ]
done
tests/fuzz/run --runs "${FUZZ_RUNS:-4000}" > "$TMP/run.log" 2>&1
cat "$TMP/run.log"
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c | sed 's/^fuzz_//')
	check "fuzz $name: ${FUZZ_RUNS:-4000} inputs without a crash, leak or sanitizer report" \
		grep -q "^fuzz $name: [0-9]* executions, no crash" "$TMP/run.log"
	check "fuzz $name: seeds committed" [ -n "$(ls "tests/fuzz/corpus/$name" 2>/dev/null)" ]
done
finish
