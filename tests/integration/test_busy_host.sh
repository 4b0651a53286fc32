#!/bin/sh
# SPDX-License-Identifier: MIT
# test_busy_host.sh - the runner's timeouts count time the VM could run:
# `vigil run` (with its QEMU) and a busy loop share one CPU, the guest keeps
# its own CPU busy, and a 10 s wait_serial for text that never comes must
# take well over 10 s of wall time (QEMU waited for the CPU about half the
# time; runner__clock leaves that out), and the log says how long QEMU
# waited. Without that, a busy host fails tests by chance.
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
D=tests/integration/distri-busyhost
if [ ! -f "$IMG/di-text/linux" ] || [ ! -f "$IMG/shell-initrd.gz" ] || ! command -v taskset > /dev/null; then
	echo "skipped: needs $IMG/di-text/linux, $IMG/shell-initrd.gz (scripts/fetch-images) and taskset"
	finish
	exit 0
fi
# The first CPU this process may use.
CPU=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
taskset -c "$CPU" sh -c 'while :; do :; done' &
BUSY=$!
trap 'kill $BUSY 2>/dev/null' EXIT
taskset -c "$CPU" $VIGIL run $D --out "$TMP/o" > "$TMP/o.out" 2>&1
rc=$?
kill $BUSY 2>/dev/null
cat "$TMP/o.out"
check "busy host: the job passed" [ $rc -eq 0 ]
# Wall time of the wait: from the record_info line to wait_serial's answer.
t_start=$(sed -n "s/^\[ *\([0-9.]*\)s\] wait: record_info.*/\1/p" "$TMP/o.out" | head -n 1)
t_end=$(sed -n "s/^\[ *\([0-9.]*\)s\] wait: wait_serial 'NEVER-PRINTED-MARK': not found.*/\1/p" "$TMP/o.out" | head -n 1)
echo "the 10 s wait took $t_start .. $t_end s of the run"
check "busy host: the 10 s wait took over 13 s of wall time" \
	python3 -c "import sys; sys.exit(0 if float('$t_end') - float('$t_start') > 13 else 1)"
check "busy host: the log says how long QEMU waited for a CPU" \
	grep -q 'QEMU waited [0-9.]* s for a CPU' "$TMP/o/vigil-log.txt"
check "no QEMU left" qemu_gone "$TMP/o/.vm"
finish
