#!/bin/sh
# SPDX-License-Identifier: MIT
# test_snapshots.sh - milestone snapshots on the real GRUB ISO: a failed
# module is followed by a rollback to the last milestone (with a control
# run without the milestone), and --resume-from starts from a kept snapshot.
. "$(dirname "$0")/lib.sh"
D=tests/integration/distri-milestone

$VIGIL run $D --snapshots "$TMP/snap" --out "$TMP/run" > "$TMP/run.out" 2>&1
rc=$?
cat "$TMP/run.out"
R=$TMP/run/testresults
check "milestone: exit status 1 (breakit fails)" [ $rc -eq 1 ]
check "milestone: modules ok,fail,ok" [ "$(json_get $R/results.json '",".join(m["result"] for m in j["modules"])')" = "ok,fail,ok" ]
check "milestone: snapshot saved" grep -q "saved snapshot milestone-boot" "$TMP/run.out"
check "milestone: rolled back after the failure" grep -q "rolled back to snapshot milestone-boot" "$TMP/run.out"
check "milestone: disks kept in --snapshots DIR" [ -s "$TMP/snap/scratch.qcow2" ]
check "milestone: snapshot listed in the overlay" sh -c "qemu-img snapshot -l -U '$TMP/snap/scratch.qcow2' | grep -q milestone-boot"

# Control: the same failure without the milestone leaves GRUB on its command line.
$VIGIL run $D --var NO_MILESTONE=1 --out "$TMP/control" > "$TMP/control.out" 2>&1
check "control: without the milestone 'after' fails" \
	[ "$(json_get $TMP/control/testresults/results.json '",".join(m["result"] for m in j["modules"])')" = "ok,fail,fail" ]
check "control: no disks left behind without --snapshots" [ ! -e "$TMP/control/.vm/scratch.qcow2" ]

# Resume at "after" from the kept snapshot.
$VIGIL run $D --snapshots "$TMP/snap" --resume-from after --out "$TMP/resume" > "$TMP/resume.out" 2>&1
rc=$?
cat "$TMP/resume.out"
check "resume: exit status 0" [ $rc -eq 0 ]
check "resume: earlier modules skipped, after ok" \
	[ "$(json_get $TMP/resume/testresults/results.json '",".join(m["result"] for m in j["modules"])')" = "skip,skip,ok" ]
check "resume: said where it resumed from" grep -q "resumed from snapshot milestone-boot" "$TMP/resume.out"
$VIGIL run $D --snapshots "$TMP/snap" --resume-from boot --out "$TMP/bad" > "$TMP/bad.out" 2>&1
check "resume: no milestone before the first module is an error" grep -q "no milestone module before it" "$TMP/bad.out"
finish
