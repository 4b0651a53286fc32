#!/bin/sh
# SPDX-License-Identifier: MIT
# fixture.sh - the browser suites' shared data: a real `vigil serve` data
# directory holding real results of example jobs run by a real `vigil
# worker` (grub build 1 through the isos route, shell, and whatever
# tests/web/fixture.d/*.sh add). Made once per test run under
# $VIGIL_TEST_TMP/web-fixture (ready when its "ready" file exists) and
# copied by each suite, which starts its own server on the copy.
# usage: fixture.sh  (from the repository root; prints the fixture's path)
set -u
ROOT=$(pwd)
FIX=${VIGIL_TEST_TMP:-/tmp}/web-fixture
if [ -f "$FIX/ready" ]; then
	echo "$FIX"
	exit 0
fi
VIGIL_TEST_TMP=${VIGIL_TEST_TMP:-/tmp}
export VIGIL_TEST_TMP
# lib.sh's TMP is $VIGIL_TEST_TMP/fixture (the build log and scratch).
. tests/integration/lib.sh
. tests/integration/server_lib.sh
exec 3>&1 1>"$TMP/fixture.log" 2>&1
new_keys
mkdir -p "$DATA/tests"
cp -r examples/grub "$DATA/tests/grub"
cp -r examples/shell "$DATA/tests/shell"
start_server --worker-timeout 30 || { echo "fixture: server did not start" >&3; exit 1; }
cli -X POST machines name=64bit backend=qemu > /dev/null
cli -X POST products distri=grub version=1 flavor=cd arch=x86_64 > /dev/null
cli -X POST test_suites name=grub > /dev/null
cli -X POST job_groups name=examples > /dev/null
cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=grub distri=grub version=1 flavor=cd arch=x86_64 > /dev/null
cli -X POST isos DISTRI=grub VERSION=1 FLAVOR=cd ARCH=x86_64 BUILD=1 > /dev/null
cli -X POST jobs TEST=shell DISTRI=shell VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=1 > /dev/null
for f in "$ROOT"/tests/web/fixture.d/*.sh; do
	[ -f "$f" ] && . "$f"
done
start_worker 1
n=0
while [ -n "$(curl -s "$URL/api/v1/jobs?state=scheduled,assigned,setup,running,uploading" | $PY -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))')" ] &&
	[ $n -lt $((600 * WAIT_SCALE)) ]; do
	sleep 1
	n=$((n + 1))
done
curl -s "$URL/api/v1/jobs" > "$TMP/jobs.json"
stop_pids
trap - EXIT INT TERM
rm -rf "$FIX"
mkdir -p "$FIX"
cp -a "$DATA" "$FIX/data"
printf '%s %s\n' "$KEY" "$SECRET" > "$FIX/key"
cp "$TMP/jobs.json" "$FIX/jobs.json"
touch "$FIX/ready"
echo "$FIX" >&3
