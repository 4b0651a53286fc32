# SPDX-License-Identifier: MIT
# lib.sh - helpers for the integration suites: ok/not_ok counters and the
# closing "N passed, N failed" line.
VIGIL=${VIGIL:-$(pwd)/build/vigil}
TMP=${VIGIL_TEST_TMP:-/tmp}/$(basename "$0" .sh)
rm -rf "$TMP"
mkdir -p "$TMP"
# An empty vigil.conf: a machine's /etc/vigil/vigil.conf (an installed
# package) must not change what the suites' commands do.
: > "$TMP/.vigil.conf"
export VIGIL_CONFIG="$TMP/.vigil.conf"
PASSED=0
FAILED=0

ok() { PASSED=$((PASSED + 1)); echo "ok   $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
# check DESCRIPTION COMMAND...: runs the command, ok when it exits 0.
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# json_get FILE PYTHON-EXPR: prints the expression evaluated on the JSON in j.
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# qemu_left DIR: true while a QEMU whose command line names DIR runs (the
# bracket keeps pgrep from matching the shell that runs it).
qemu_left() { pgrep -f "[q]emu-system.*$1" > /dev/null; }
# qemu_gone PATTERN: true once no QEMU whose command line matches PATTERN
# runs; waits for it (a process killed elsewhere goes in its own time), up
# to 2 minutes, so only a QEMU that stays fails.
qemu_gone() {
	i=0
	while qemu_left "$1" && [ $i -lt 240 ]; do sleep 0.5; i=$((i + 1)); done
	! qemu_left "$1"
}
# image_build SCRIPT: scripts/SCRIPT (build-debian-image, build-debian-gpt)
# holding a lock in the image cache, so that suites run side by side build
# an image once: the others wait, then find it up to date.
image_build() {
	_images=${VIGIL_IMAGES:-${XDG_CACHE_HOME:-$HOME/.cache}/vigil/images}
	mkdir -p "$_images"
	flock -o "$_images/.build.lock" "scripts/$1"
}
finish() { echo "$PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; }
