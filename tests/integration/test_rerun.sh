#!/bin/sh
# SPDX-License-Identifier: MIT
# test_rerun.sh - "re-run from here" end to end on the GRUB ISO: a job whose
# module gate fails (distri-rerun), its disks kept by the worker and
# reported to the server, POST rerun_from: the clone resumes on the same
# worker from the milestone (earlier modules copied, screenshots shared)
# and passes; then a re-run pinned to a worker that is gone waits out
# serve --rerun-wait and runs in full on another worker.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"

new_keys
mkdir -p "$DATA/tests"
cp -r tests/integration/distri-rerun "$DATA/tests/rerun"
cp -r examples/grub/needles "$DATA/tests/rerun/needles"
start_server --rerun-wait 12 # the pinned worker takes its job within a second or two; the gone one never
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"

# held WORKER_ID JOB: the server says the worker keeps the job's disks.
held() {
	curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; w=[w for w in json.load(sys.stdin)["workers"] if w["id"]==int(sys.argv[1])]; sys.exit(0 if w and int(sys.argv[2]) in w[0].get("snapshots", []) else 1)' "$1" "$2"
}
wait_held() { # wait_held WORKER_ID JOB SECONDS
	n=0
	while ! held "$1" "$2" && [ $n -lt $(($3 * 2 * WAIT_SCALE)) ]; do sleep 0.5; n=$((n + 1)); done
	held "$1" "$2"
}
worker_of() { cli jobs/$1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["assigned_worker_id"])'; }

start_worker 1; W1=$WPID
cli -X POST jobs TEST=rerun DISTRI=rerun ARCH=x86_64 RERUN_FLAG="$TMP/flag" > "$TMP/post.json"
J1=$(json_get "$TMP/post.json" 'j["id"]')
check "first run: done/failed (gate fails)" wait_state "$J1" "done failed" 90
WID1=$(worker_of "$J1")
check "the worker keeps its disks and says so" wait_held "$WID1" "$J1" 60
check "kept in the pool" [ -s "$TMP/pool1/snapshots/job-$J1/scratch.qcow2" ]

touch "$TMP/flag"
cli -X POST "jobs/$J1/rerun_from" > "$TMP/rerun.json"
cat "$TMP/rerun.json"; echo
J2=$(json_get "$TMP/rerun.json" 'j["id"]')
check "rerun_from: resumes at gate after milestone boot, pinned to the worker" \
	[ "$(json_get "$TMP/rerun.json" '"%s %s %s" % (j["resume_from"], j["milestone"], j["worker_id"])')" = "gate boot $WID1" ]
check "rerun_from: the new job is the old one's clone" [ "$(cli jobs/$J1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["clone_id"])')" = "$J2" ]
check "re-run: done/passed" wait_state "$J2" "done passed" 90
check "re-run: on the worker keeping the snapshot" [ "$(worker_of "$J2")" = "$WID1" ]
curl -s "$URL/tests/$J2/file/runner-output.txt" > "$TMP/j2-runner.txt"
check "re-run: the runner resumed from the snapshot" grep -q "resumed from snapshot milestone-boot" "$TMP/j2-runner.txt"
cli "jobs/$J2" > "$TMP/j2.json"
check "re-run: every module passed, boot copied" \
	[ "$(json_get "$TMP/j2.json" '" ".join(m["name"]+"="+m["result"] for m in j["job"]["modules"])')" = "boot=passed gate=passed after=passed" ]
curl -s "$URL/tests/$J2/file/result-boot.json" > "$TMP/j2-boot.json"
check "re-run: boot marked copied from the old job" [ "$(json_get "$TMP/j2-boot.json" 'j.get("copied_from")')" = "$J1" ]
curl -s "$URL/tests/$J2/file/results.json" > "$TMP/j2-results.json"
check "re-run: results.json lists boot as ok, copied" \
	[ "$(json_get "$TMP/j2-results.json" '"%s %s %s" % (j["result"], j["modules"][0]["result"], j["modules"][0].get("copied_from"))')" = "passed ok $J1" ]
SHOT=$(json_get "$TMP/j2-boot.json" 'j["details"][0]["screenshot"]')
check "re-run: boot's screenshot shared with the old job (one inode)" \
	[ "$(stat -c %i "$DATA/testresults/$J1/$SHOT")" = "$(stat -c %i "$DATA/testresults/$J2/$SHOT")" ]
check "the kept snapshot survived the re-run" [ -s "$TMP/pool1/snapshots/job-$J1/scratch.qcow2" ]

# Fallback: the worker keeping the disks is gone; the pin runs out and another worker runs the job in full.
check "the resumed job's disks are kept too" wait_held "$WID1" "$J2" 60
kill "$W1"; wait "$W1" 2>/dev/null
start_worker 2
cli -X POST "jobs/$J2/rerun_from" module=gate > "$TMP/rerun2.json"
cat "$TMP/rerun2.json"; echo
J3=$(json_get "$TMP/rerun2.json" 'j["id"]')
check "rerun_from: pinned to the worker that is gone" [ "$(json_get "$TMP/rerun2.json" 'j["worker_id"]')" = "$WID1" ]
check "fallback: done/passed" wait_state "$J3" "done passed" 120
check "fallback: on the other worker" [ "$(worker_of "$J3")" != "$WID1" ]
curl -s "$URL/tests/$J3/file/runner-output.txt" > "$TMP/j3-runner.txt"
check "fallback: a full run, no resume" sh -c "! grep -q 'resumed from snapshot' '$TMP/j3-runner.txt' && grep -q 'saved snapshot milestone-boot' '$TMP/j3-runner.txt'"
curl -s "$URL/tests/$J3/file/result-boot.json" > "$TMP/j3-boot.json"
check "fallback: boot ran, not copied" [ "$(json_get "$TMP/j3-boot.json" 'j.get("copied_from")')" = "None" ]
cli -X POST "jobs/$J3/rerun_from" module=nope > "$TMP/nope.txt" 2>&1
check "rerun_from: unknown module refused" grep -q "no module 'nope'" "$TMP/nope.txt"
finish
