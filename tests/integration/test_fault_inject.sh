#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fault_inject.sh - issue 17's faults in CI: a full disk (the
# VIGIL_FAULT_ENOSPC hook) answered 507 with its cause, never as the
# client's fault, with nothing half-stored, and a start on a full disk that
# says so; then tests/faults/faults.py with fixed seeds, each kind of fault
# (kill -9 QEMU, the runner, the worker, the server mid-write and
# mid-`POST isos`, a full disk, a cut network, QEMU dropping VNC, QEMU not
# answering) injected into real jobs, four kinds side by side.
# `make faults` runs 50 seeds of each (docs/hardening.md, "Faults").
# run-all: long 96
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
CALL=tests/faults/call.py

new_keys
# Uploads spooled under testresults/.incoming: the disk fills after 1000 bytes.
VIGIL_FAULT_ENOSPC='*/.incoming/*:1000' start_server
head -c 50000 /dev/urandom > "$TMP/blob"
$CALL "$URL" "$KEY" "$SECRET" POST jobs TEST=t DISTRI=d ARCH=x86_64 > "$TMP/job.out"
$CALL "$URL" "$KEY" "$SECRET" POST jobs/1/artefact file=blob.bin --body "$TMP/blob" > "$TMP/up.out"
cat "$TMP/up.out"
check "full disk: an upload is answered 507, not the client's fault" grep -q '^507 ' "$TMP/up.out"
check "full disk: the answer names the cause" grep -q "No space left on device (the server's disk is full)" "$TMP/up.out"
check "full disk: not 'no file in the request body'" sh -c "! grep -q 'no file in the request body' '$TMP/up.out'"
check "full disk: nothing of it stored" sh -c "! ls '$DATA/testresults/1/blob.bin' 2>/dev/null && [ -z \"\$(ls '$DATA/testresults/.incoming')\" ]"
stop_pids; PIDS=

# The database's disk is full: job creation and a product post are 507, nothing stored.
VIGIL_FAULT_ENOSPC='*/vigil.db*:0' start_server
$CALL "$URL" "$KEY" "$SECRET" POST jobs TEST=t2 DISTRI=d ARCH=x86_64 > "$TMP/job2.out"
cat "$TMP/job2.out"
check "full disk: job creation is 507" grep -q '^507 ' "$TMP/job2.out"
check "full disk: job creation names the cause, not 'cannot rollback'" sh -c \
	"grep -q 'disk is full.*database or disk is full' '$TMP/job2.out' && ! grep -q rollback '$TMP/job2.out'"
$CALL "$URL" "$KEY" "$SECRET" POST isos DISTRI=d VERSION=1 FLAVOR=f ARCH=x86_64 > "$TMP/iso.out"
check "full disk: POST isos is 507 JSON" grep -q '^507 {"error":' "$TMP/iso.out"
curl -s "$URL/api/v1/jobs" > "$TMP/jobs.json"
check "full disk: nothing half-stored (one job, from before)" [ "$(json_get "$TMP/jobs.json" 'len(j["jobs"])')" = 1 ]
stop_pids; PIDS=
check "after the full disk: integrity_check ok" [ "$($PY -c "import sqlite3; print(sqlite3.connect('$DATA/vigil.db').execute('PRAGMA integrity_check').fetchone()[0])")" = ok ]

# A start on a full disk says so and stops.
VIGIL_FAULT_ENOSPC='*/vigil.db*:0' $VIGIL serve --listen "127.0.0.1:$PORT" --data "$TMP/fresh" > "$TMP/fresh.out" 2>&1
rc=$?
cat "$TMP/fresh.out"
check "start on a full disk: exit status 1 (got $rc)" [ $rc -eq 1 ]
check "start on a full disk: says the disk is full, and where" grep -q "the disk holding database '$TMP/fresh/vigil.db' is full" "$TMP/fresh.out"

# The fault kinds, fixed seeds (a failing run prints how to run it again),
# four kinds at a time, each on its own server, worker and QEMU; --laps
# prints where each run's time went.
$PY tests/faults/faults.py --seeds "${FAULT_SEEDS:-1,2,3}" --jobs "${FAULT_JOBS:-4}" --laps \
	--tmp "$TMP/faults" > "$TMP/faults.out" 2>&1
rc=$?
cat "$TMP/faults.out"
for k in qemu runner worker server isos enospc net vnc qmp; do
	check "faults: $k, every seed and the next job" sh -c "! grep -q '^FAIL $k' '$TMP/faults.out' && grep -q '^ok   $k: the next job runs to the end' '$TMP/faults.out'"
done
check "faults: exit status 0 (got $rc)" [ $rc -eq 0 ]
finish
