#!/bin/sh
# SPDX-License-Identifier: MIT
# test_chained.sh - chained jobs end to end with `vigil serve`, two
# `vigil worker`s and the real openqa-cli / openqa-clone-job: START_AFTER_TEST
# from job templates, a parent that writes a marker on its blank disk and
# publishes it (PUBLISH_HDD_1), a child that boots from that disk (HDD_1, an
# asset the worker fetches and caches) and reads the marker back, a failing
# parent whose child ends skipped, kernel and initrd served as assets,
# multi-job posts with _START_AFTER, openqa-clone-job of the pair (with and
# without downloads), and the server killed (SIGTERM, then SIGKILL) and
# restarted on the same data while a worker runs a job; a UEFI pair: the
# parent publishes its UEFI variables (PUBLISH_PFLASH_VARS), the child boots
# OVMF on them (UEFI_PFLASH_VARS) and finds the variable the parent set.
# run-all: long 170
. "$(dirname "$0")/lib.sh"

# The server is started again mid-run: use a private copy of the binary so
# a rebuild meanwhile cannot swap it out under the test.
cp "$VIGIL" "$TMP/vigil" && VIGIL=$TMP/vigil
IMAGES=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
for f in "$IMAGES/di-text/linux" "$IMAGES/di-text/initrd.gz" "$IMAGES/shell-initrd.gz"; do
	[ -s "$f" ] || { echo "missing $f: run scripts/fetch-images (make images)"; exit 1; }
done
. "$(dirname "$0")/server_lib.sh"

new_keys
mkdir -p "$DATA/tests" "$DATA/factory/other"
cp -r tests/integration/distri-chain "$DATA/tests/chain"
cp -r tests/integration/distri-qemuvars "$DATA/tests/qemuvars"
# Kernel and initramfs are assets in the server's factory: the busybox shell
# plus the USB storage modules of the installer's initrd (concatenated cpio
# archives), so the guest sees disk 1 as /dev/sda.
cp "$IMAGES/di-text/linux" "$DATA/factory/other/chain-linux"
mkdir -p "$TMP/mods"
MODS=$(zcat "$IMAGES/di-text/initrd.gz" | cpio -t 2>/dev/null | grep -E \
	'/(usb-common|usbcore|xhci-hcd|xhci-pci|scsi_common|scsi_mod|sd_mod|usb-storage|t10-pi|crc-t10dif|crct10dif_common|crc64-rocksoft|crc64)\.ko$')
(cd "$TMP/mods" && zcat "$IMAGES/di-text/initrd.gz" | cpio -id --quiet $MODS)
(cd "$TMP/mods" && find . | cpio -o -H newc --quiet | gzip -1) > "$TMP/mods.cpio.gz"
cat "$IMAGES/shell-initrd.gz" "$TMP/mods.cpio.gz" > "$DATA/factory/other/chain-initrd.gz"
check "initrd with the disk modules built" [ "$(find "$TMP/mods" -name '*.ko' | wc -l)" -ge 8 ]

start_server --worker-timeout 15
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"

job_json() { curl -s "$URL/api/v1/jobs/$1" > "$TMP/j.json"; json_get "$TMP/j.json" "$2"; }

# Tables as openQA users set them up: the kernel and initrd by asset name.
cli -X POST machines name=64bit backend=qemu > /dev/null
cli -X POST products distri=chain version=1 flavor=disk arch=x86_64 \
	'settings[KERNEL]=chain-linux' 'settings[INITRD]=chain-initrd.gz' > /dev/null
cli -X POST test_suites name=chain_write 'settings[ROLE]=write' 'settings[NUMDISKS]=1' \
	'settings[PUBLISH_HDD_1]=chain-%BUILD%.qcow2' 'settings[MARKER]=marker-%BUILD%' > /dev/null
cli -X POST test_suites name=chain_read 'settings[ROLE]=read' 'settings[HDD_1]=chain-%BUILD%.qcow2' \
	'settings[START_AFTER_TEST]=chain_write' 'settings[MARKER]=marker-%BUILD%' > /dev/null
cli -X POST test_suites name=chain_fail 'settings[ROLE]=fail' 'settings[PUBLISH_HDD_1]=never-%BUILD%.qcow2' > /dev/null
cli -X POST test_suites name=chain_after_fail 'settings[ROLE]=read' 'settings[HDD_1]=never-%BUILD%.qcow2' \
	'settings[START_AFTER_TEST]=chain_fail@64bit' > /dev/null
cli -X POST job_groups name=chained > /dev/null
for t in chain_write chain_read chain_fail chain_after_fail; do
	cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=$t distri=chain version=1 \
		flavor=disk arch=x86_64 > /dev/null
done
cli -X POST isos DISTRI=chain VERSION=1 FLAVOR=disk ARCH=x86_64 BUILD=1 > "$TMP/iso.json"
check "isos: 4 jobs, no dependency errors" [ "$(json_get "$TMP/iso.json" 'str(j["count"]) + " " + str(len(j["failed"]))')" = "4 0" ]
ids_of() { cli "jobs?build=$2" | $PY -c "import json,sys; print(' '.join(str(x['id']) for x in json.load(sys.stdin)['jobs'] if x['test']=='$1'))"; }
WRITE=$(ids_of chain_write 1); READ=$(ids_of chain_read 1); FAIL=$(ids_of chain_fail 1); AFTER=$(ids_of chain_after_fail 1)
check "child lists its parent (Chained)" [ "$(job_json "$READ" 'j["job"]["parents"]["Chained"]')" = "[$WRITE]" ]
check "parent lists its child (Chained)" [ "$(job_json "$WRITE" 'j["job"]["children"]["Chained"]')" = "[$READ]" ]
check "child blocked by its parent" [ "$(job_json "$READ" 'j["job"]["blocked_by_id"]')" = "$WRITE" ]
check "child: parents_ok 0 while the parent runs" [ "$(job_json "$READ" 'j["job"]["parents_ok"]')" = 0 ]
check "machine@suite dependency resolved" [ "$(job_json "$AFTER" 'j["job"]["parents"]["Chained"]')" = "[$FAIL]" ]
check "check_assets=1: the disk not published yet is missing" [ "$(curl -s "$URL/api/v1/jobs/$READ?check_assets=1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["missing_assets"])')" = "['hdd/chain-1.qcow2']" ]
check "job assets by type" [ "$(job_json "$READ" 'sorted(j["job"]["assets"]["other"]) + j["job"]["assets"]["hdd"]')" = "['chain-initrd.gz', 'chain-linux', 'chain-1.qcow2']" ]

# A dependency on a suite that is not scheduled is reported as openQA does.
cli -X POST products distri=chain version=1 flavor=typo arch=x86_64 > /dev/null
cli -X POST test_suites name=chain_typo 'settings[START_AFTER_TEST]=nosuch' 'settings[WORKER_CLASS]=nobody' > /dev/null
cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=chain_typo distri=chain version=1 \
	flavor=typo arch=x86_64 > /dev/null
cli -X POST isos DISTRI=chain VERSION=1 FLAVOR=typo ARCH=x86_64 BUILD=1 > "$TMP/typo.json"
check "isos: unknown START_AFTER_TEST reported" sh -c "grep -q 'START_AFTER_TEST=nosuch@64bit not found - check for dependency typos' '$TMP/typo.json'"

# Multi-job posts as openqa-clone-job sends them (jobs that never run: class nobody).
cli -X POST jobs TEST:a=pa TEST:b=cb _START_AFTER:b=a WORKER_CLASS=nobody DISTRI=chain is_clone_job=1 > "$TMP/multi.json"
A=$(json_get "$TMP/multi.json" 'j["ids"]["a"]'); B=$(json_get "$TMP/multi.json" 'j["ids"]["b"]')
check "multi-job post: {\"ids\": {suffix: id}}" [ -n "$A" -a -n "$B" ]
check "multi-job post: _START_AFTER makes a chained parent" [ "$(job_json "$B" 'j["job"]["parents"]["Chained"]')" = "[$A]" ]
cli -X POST jobs TEST=cc _START_AFTER_JOBS="$B" WORKER_CLASS=nobody > "$TMP/single.json"
C=$(json_get "$TMP/single.json" 'j["id"]')
check "_START_AFTER_JOBS names an existing parent" [ "$(job_json "$C" 'j["job"]["parents"]["Chained"]')" = "[$B]" ]
CODE=$(cli -X POST jobs TEST:x=x TEST:y=y _START_AFTER:x=y _START_AFTER:y=x WORKER_CLASS=nobody 2>&1 | grep -c 'cycle')
check "a dependency cycle is refused" [ "$CODE" -ge 1 ]
CODE=$(cli -X POST jobs TEST:x=x _START_AFTER:x=nosuffix WORKER_CLASS=nobody 2>&1 | grep -c 'does not relate to a present job-suffix')
check "an unknown suffix is refused" [ "$CODE" -ge 1 ]
cli -X POST "jobs/$A/cancel" > /dev/null
check "cancelled parent: child skipped" [ "$(state_of "$B")" = "cancelled skipped" ]
check "cancelled parent: grandchild skipped" [ "$(state_of "$C")" = "cancelled skipped" ]

# Assets API on a file placed by hand and one registered.
curl -s "$URL/api/v1/assets/other/chain-linux" > "$TMP/asset.json"
check "asset placed by hand is found (size)" [ "$(json_get "$TMP/asset.json" 'j["size"]')" = "$(stat -c %s "$DATA/factory/other/chain-linux")" ]
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/assets/hdd/..%2Fvigil.db")
check "asset name with a path refused ($CODE)" [ "$CODE" -ge 400 -a "$CODE" -lt 500 ]
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL/assets/other/..%2F..%2Fvigil.db")
check "asset download outside factory refused ($CODE)" [ "$CODE" -ge 400 -a "$CODE" -lt 500 ]
cli -X POST assets type=other name=chain-initrd.gz > "$TMP/reg.json"
check "POST assets registers a factory file" [ "$(json_get "$TMP/reg.json" 'j["id"] > 0')" = True ]
check "GET assets lists it" sh -c "curl -s '$URL/api/v1/assets' | grep -q chain-initrd.gz"
mkdir -p "$DATA/factory/iso"
echo iso > "$DATA/factory/iso/dummy.iso"
DUMMY=$(curl -s "$URL/api/v1/assets/iso/dummy.iso" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/api/v1/assets/$DUMMY")
check "unsigned asset delete refused ($CODE)" [ "$CODE" = 403 ]
cli -X DELETE assets/iso/dummy.iso > "$TMP/del.json"
check "asset deleted by type/name (admin): row and file" sh -c "grep -q '\"count\":1' '$TMP/del.json' && [ ! -e '$DATA/factory/iso/dummy.iso' ]"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/assets/$DUMMY")
check "deleted asset is gone ($CODE)" [ "$CODE" = 404 ]

# Run the chain: the parent publishes its disk, the child boots from it.
start_worker 1; W1=$WPID
start_worker 2; W2=$WPID
check "failing parent ends failed" wait_state "$FAIL" "done failed" 120
check "child of the failed parent ends skipped" wait_state "$AFTER" "cancelled skipped" 10
check "parent (writes the marker) done/passed" wait_state "$WRITE" "done passed" 240
curl -s "$URL/api/v1/assets/hdd/chain-1.qcow2" > "$TMP/disk.json"
check "published disk registered with a sha256" [ "$(json_get "$TMP/disk.json" 'len(j["checksum"])')" = 64 ]
check "published disk is a qcow2 in factory/hdd" sh -c "qemu-img info '$DATA/factory/hdd/chain-1.qcow2' | grep -q 'file format: qcow2'"
check "child (reads the marker from the parent's disk) done/passed" wait_state "$READ" "done passed" 240
check "child's serial log shows the marker read from disk 1" sh -c "curl -s '$URL/tests/$READ/file/serial0.txt' | grep -q 'marker-1'"
check "worker cached the disk" sh -c "ls '$TMP'/pool*/cache/assets/hdd/*/chain-1.qcow2 > /dev/null"
check "worker cached kernel and initrd" sh -c "ls '$TMP'/pool*/cache/assets/other/*/chain-linux > /dev/null"
check "child: parents_ok 1" [ "$(job_json "$READ" 'j["job"]["parents_ok"]')" = 1 ]

# openqa-clone-job, the real one, without --skip-download: the pair is
# cloned (parent first), assets downloaded through /tests/<id>/asset/...,
# except the disk the cloned parent will publish again.
mkdir -p "$TMP/factory/iso" "$TMP/factory/hdd" "$TMP/factory/other"
openqa-clone-job --from "$URL" --host "$URL" --apikey "$KEY" --apisecret "$SECRET" --dir "$TMP/factory" \
	--parental-inheritance "$READ" MARKER=marker-clone HOLD=15 > "$TMP/clone.txt" 2> "$TMP/clone.err"
check "clone-job created two jobs" [ "$(grep -c '^Created job' "$TMP/clone.txt")" = 2 ]
check "clone-job downloaded the kernel" cmp -s "$TMP/factory/other/chain-linux" "$DATA/factory/other/chain-linux"
check "clone-job skipped the disk the cloned parent publishes" [ ! -e "$TMP/factory/hdd/chain-1.qcow2" ]
NREAD=$(sed -n 's/^Created job #\([0-9]*\): .*chain_read.*/\1/p' "$TMP/clone.txt")
NWRITE=$(sed -n 's/^Created job #\([0-9]*\): .*chain_write.*/\1/p' "$TMP/clone.txt")
check "cloned child chained after the cloned parent" [ "$(job_json "$NREAD" 'j["job"]["parents"]["Chained"]')" = "[$NWRITE]" ]
check "clone carries CLONED_FROM" sh -c "curl -s '$URL/api/v1/jobs/$NWRITE' | grep -q 'CLONED_FROM.*/tests/$WRITE'"

# While the cloned parent runs (HOLD keeps it busy), the server is stopped
# (SIGTERM) and started again on the same data; while the cloned child
# runs, it is killed (SIGKILL) and stays away until the job has ended on
# the worker. Each time a screenshot was uploaded before.
uploaded() { # uploaded JOB SECONDS: wait for the job's first uploaded file
	n=0
	while [ -z "$(ls "$DATA/testresults/$1" 2>/dev/null)" ] && [ $n -lt $(($2 * 2)) ]; do sleep 0.5; n=$((n + 1)); done
	[ -n "$(ls "$DATA/testresults/$1" 2>/dev/null)" ]
}
check "cloned parent starts" wait_running "$NWRITE" 120
check "cloned parent uploaded a screenshot while running" uploaded "$NWRITE" 120
ls "$DATA/testresults/$NWRITE" > "$TMP/before-term.txt" 2>/dev/null
kill "$SPID"; wait "$SPID" 2>/dev/null
sleep 4
start_server --worker-timeout 15
check "server back after SIGTERM" curl -sf -o /dev/null "$URL/api/v1/jobs"
check "cloned parent still running after the restart" wait_running "$NWRITE" 5
check "cloned parent done/passed across the SIGTERM restart" wait_state "$NWRITE" "done passed" 240
check "files uploaded before the SIGTERM kept" sh -c "ls '$DATA/testresults/$NWRITE' > '$TMP/after.txt'; [ -z \"\$(comm -23 '$TMP/before-term.txt' '$TMP/after.txt')\" ]"
check "cloned child starts" wait_running "$NREAD" 120
check "cloned child uploaded a screenshot while running" uploaded "$NREAD" 120
ls "$DATA/testresults/$NREAD" > "$TMP/before-kill.txt" 2>/dev/null
kill -9 "$SPID"; wait "$SPID" 2>/dev/null
# The server stays away until the job's VM is gone and then longer than the
# worker's status retries and --worker-timeout: the worker must keep the
# results and set_done until the server is back, the server must not count
# the worker lost at once.
n=0
while pgrep -f "[q]emu-system.*$TMP/pool[0-9]*/job-$NREAD/" > /dev/null && [ $n -lt 480 ]; do sleep 0.5; n=$((n + 1)); done
sleep 30
start_server --worker-timeout 15
check "server back after SIGKILL" curl -sf -o /dev/null "$URL/api/v1/jobs"
check "cloned child done/passed across the SIGKILL restart (new disk, new marker)" wait_state "$NREAD" "done passed" 240
check "cloned child read the new parent's marker" sh -c "curl -s '$URL/tests/$NREAD/file/serial0.txt' | grep -q 'marker-clone'"
check "files uploaded before the SIGKILL kept" sh -c "ls '$DATA/testresults/$NREAD' > '$TMP/after.txt'; [ -z \"\$(comm -23 '$TMP/before-kill.txt' '$TMP/after.txt')\" ]"
check "results of the restarted jobs served" sh -c "curl -sf '$URL/tests/$NREAD/file/results.json' | grep -q passed"
check "worker retried its final uploads while the server was away" sh -c "grep -q 'not uploaded yet, trying again' '$TMP'/worker*.log"

# Restarting the failed parent clones the child it had skipped, chained again.
cli -X POST "jobs/$FAIL/restart" > "$TMP/restart.json"
check "restart of a failed parent also clones its skipped child" \
	[ "$(json_get "$TMP/restart.json" 'sorted(j["result"][0].keys())')" = "$($PY -c "print(sorted(['$FAIL', '$AFTER']))")" ]
NAFTER=$(json_get "$TMP/restart.json" "j['result'][0]['$AFTER']")
NFAILR=$(json_get "$TMP/restart.json" "j['result'][0]['$FAIL']")
check "cloned child waits for the cloned parent" [ "$(job_json "$NAFTER" 'j["job"]["parents"]["Chained"]')" = "[$NFAILR]" ]
check "cloned parent fails again, cloned child ends skipped" wait_state "$NAFTER" "cancelled skipped" 120

# --skip-download of one finished job (kept from running: class nobody).
openqa-clone-job --from "$URL" --host "$URL" --apikey "$KEY" --apisecret "$SECRET" --skip-download \
	"$FAIL" WORKER_CLASS=nobody > "$TMP/clone2.txt" 2>&1
NFAIL=$(sed -n 's/^Created job #\([0-9]*\): .*/\1/p' "$TMP/clone2.txt")
check "clone-job --skip-download of one job" [ "$(job_json "$NFAIL" 'j["job"]["settings"]["TEST"] + " " + j["job"]["settings"]["WORKER_CLASS"]')" = "chain_fail nobody" ]

# UEFI variables from parent to child: a multi-job post, as openqa-cli sends it.
cli -X POST jobs DISTRI=qemuvars VERSION=1 FLAVOR=uefi ARCH=x86_64 BUILD=u1 UEFI=1 MARK=uefi-mark-$$ \
	TEST:w=uefi_write ROLE:w=uefi PUBLISH_PFLASH_VARS:w=uefi-vars-u1.qcow2 \
	TEST:r=uefi_read ROLE:r=uefi-read UEFI_PFLASH_VARS:r=uefi-vars-u1.qcow2 _START_AFTER:r=w > "$TMP/uefi.json"
UW=$(json_get "$TMP/uefi.json" 'j["ids"]["w"]')
UR=$(json_get "$TMP/uefi.json" 'j["ids"]["r"]')
check "uefi: the reading job is chained after the writing one" [ "$(job_json "$UR" 'j["job"]["parents"]["Chained"]')" = "[$UW]" ]
check "uefi: the parent sets a UEFI variable and publishes the vars (done/passed)" wait_state "$UW" "done passed" 240
check "uefi: the published vars are an hdd asset (qcow2)" \
	sh -c "qemu-img info '$DATA/factory/hdd/uefi-vars-u1.qcow2' | grep -q 'file format: qcow2'"
check "uefi: the child boots on them and finds the variable (done/passed)" wait_state "$UR" "done passed" 240
check "uefi: the child's shell echoed the parent's mark" \
	sh -c "curl -s '$URL/tests/$UR/file/serial0.txt' | grep -q 'mark=uefi-mark-$$='"

kill "$W1" "$W2"; wait "$W1" "$W2" 2>/dev/null
check "no qemu-system left in any pool" qemu_gone "$TMP/pool"
finish
