#!/bin/sh
# SPDX-License-Identifier: MIT
# test_vm_grub.sh - smoke test of the vm module against real QEMU (TCG):
# the GRUB rescue ISO boots, VNC frames arrive and change, a SIGKILLed QEMU
# is noticed by VNC and QMP, and QEMU never outlives its parent.
# Uses build/fixtures/vmsmoke (BUILD=build-san for the sanitizer build).
set -u
BUILD=${BUILD:-build}
SMOKE=$BUILD/fixtures/vmsmoke
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
pass=0 fail=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }

if [ ! -x "$SMOKE" ] || [ ! -f "$ISO" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs $SMOKE, $ISO and qemu-system-x86_64"
	echo "0 passed, 0 failed"
	exit 0
fi
work=$(mktemp -d /tmp/vigil-vmgrub-XXXXXX)
trap 'rm -rf "$work"' EXIT

# 1. Boot, frames, death of QEMU seen by VNC and QMP.
mkdir -p "$work/a"
if timeout 120 "$SMOKE" "$work/a" "$ISO" kill >"$work/a.out" 2>&1; then
	ok "grub boots, frames change, qemu death is reported"
else
	ko "grub boots, frames change, qemu death is reported"
fi
sed 's/^/    /' "$work/a.out"

# 2. kill -9 the driver: PDEATHSIG must take QEMU with it.
mkdir -p "$work/b"
"$SMOKE" "$work/b" "$ISO" hold >"$work/b.out" 2>&1 &
drv=$!
i=0
while ! grep -q '^holding' "$work/b.out" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i + 1))
done
qpid=$(sed -n 's/^holding //p' "$work/b.out")
if [ -z "$qpid" ]; then
	ko "qemu dies with its parent (driver never got going)"
	sed 's/^/    /' "$work/b.out"
	kill -9 $drv 2>/dev/null
else
	kill -9 $drv
	wait $drv 2>/dev/null
	i=0
	while kill -0 "$qpid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	if pgrep -f "$work/b/" >/dev/null; then
		ko "qemu dies with its parent (pid $qpid still there)"
		pkill -9 -f "$work/b/"
	else
		ok "qemu dies with its parent"
	fi
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
