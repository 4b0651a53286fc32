#!/bin/sh
# SPDX-License-Identifier: MIT
# run-all: long 90
# test_worker_files.sh - a job that leaves 5,000 screenshots (more than
# the 4,096 files the worker once kept track of) through `vigil serve` and
# `vigil worker`: each is uploaded exactly once, counted in the server's
# request log, while the worker scans for new screenshots during the run
# and passes over everything at its end. The test (distri-files) rewrites
# probe.png three times, each after the previous one arrived: the second
# rewrite's upload comes in a later scan than the first's, so at least one
# whole scan passed over the 5,000 files after they were all written.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"

FILES=5000
new_keys
mkdir -p "$DATA/tests"
cp -r tests/integration/distri-files "$DATA/tests/files"
start_server --worker-timeout 60 -v # -v: every request in serve.log, where the uploads are counted
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"
cli -X POST jobs TEST=many DISTRI=files ARCH=x86_64 BUILD=1 FILES=$FILES RELEASE="$TMP/release" > "$TMP/j.json"
J=$(json_get "$TMP/j.json" 'j["id"]')
start_worker 1

# uploads NAME: how many times the server took the artefact NAME.
uploads() { grep -c "POST /api/v1/jobs/$J/artefact?file=$1 -> 200" "$TMP/serve.log"; }
for n in 1 2 3; do
	i=0
	while [ "$(uploads probe.png)" -lt $n ] && [ $i -lt $((600 * WAIT_SCALE)) ] && kill -0 "$WPID" 2>/dev/null; do
		sleep 0.5; i=$((i + 1))
	done
	check "probe.png version $n arrived" [ "$(uploads probe.png)" -ge $n ]
	: > "$TMP/release-$n"
done
check "job $J done/passed" wait_state "$J" "done passed" 120
grep -o "POST /api/v1/jobs/$J/artefact?file=f[0-9]*\.png -> 200" "$TMP/serve.log" | sort | uniq -c > "$TMP/counts"
check "all $FILES files uploaded ($(wc -l < "$TMP/counts") distinct)" [ "$(wc -l < "$TMP/counts")" -eq $FILES ]
awk '$1 != 1' "$TMP/counts" > "$TMP/again"
check "each exactly once ($(wc -l < "$TMP/again") more than once, e.g. $(head -n 1 "$TMP/again" | tr -s ' '))" \
	[ ! -s "$TMP/again" ]
check "probe.png sent once per version (3)" [ "$(uploads probe.png)" -eq 3 ]
check "the server holds them" [ "$(ls "$DATA/testresults/$J" | grep -c '^f[0-9]*\.png$')" -eq $FILES ]
check "the worker kept track of them all (no 'more than' warning)" sh -c "! grep -q 'more than' '$TMP/worker1.log'"
finish
