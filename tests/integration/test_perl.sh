#!/bin/sh
# SPDX-License-Identifier: MIT
# test_perl.sh - openQA Perl distributions (distri-perl-*: main.pm,
# tests/*.pm, the examples' needles) run unchanged by `vigil run` through
# os-autoinst's test process (issue 15, docs/perl.md): the passing run, a
# fatal failing assert_screen, milestone snapshots (the last module in
# Python), the serial port (the installed Debian image's consoles:
# test_perl_debian.sh), a broken schedule that ends the job before
# QEMU starts, and the GRUB distribution as a job through `vigil serve` and
# `vigil worker`. Needs Debian's os-autoinst, libinline-python-perl and the
# images (scripts/fetch-images).
# run-all: long 49
. "$(dirname "$0")/lib.sh"
D=tests/integration/distri-perl-grub
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
if [ ! -f /usr/lib/os-autoinst/testapi.pm ] || [ ! -f "$ISO" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/lib/os-autoinst (os-autoinst), $ISO and qemu-system-x86_64"
	finish
	exit 0
fi
# perl_left DIR: a test process still running in DIR (its cwd).
perl_left() {
	for p in $(pgrep -x perl); do
		[ "$(readlink /proc/$p/cwd 2>/dev/null)" = "$1" ] && return 0
	done
	return 1
}

# --- the passing run
$VIGIL run $D --out "$TMP/ok" > "$TMP/ok.out" 2>&1
rc=$?
cat "$TMP/ok.out"
R=$TMP/ok/testresults
check "perl: exit status 0" [ $rc -eq 0 ]
check "perl: results.json says passed" [ "$(json_get $R/results.json 'j["result"]')" = passed ]
check "perl: module boot ok and fatal" [ "$(json_get $R/results.json '",".join("%s=%s/%s" % (m["name"], m["result"], m["flags"].get("fatal")) for m in j["modules"])')" = "boot=ok/1" ]
check "perl: test_order.json written by Perl (script tests/boot.pm)" [ "$(json_get $R/test_order.json 'j[0]["script"]')" = tests/boot.pm ]
check "perl: result-boot.json written by Perl: ok" [ "$(json_get $R/result-boot.json 'j["result"]')" = ok ]
check "perl: the three screen steps in order" \
	[ "$(json_get $R/result-boot.json '",".join(d["needle"] for d in j["details"] if "needle" in d)')" = "grub-menu,grub-cmdline,grub-echo" ]
check "perl: similarities are Perl's integer percent (>= 96)" \
	[ "$(json_get $R/result-boot.json 'int(all(isinstance(a["similarity"], int) and 96 <= a["similarity"] <= 100 for d in j["details"] if "area" in d for a in d["area"]))')" = 1 ]
shots=$(json_get $R/result-boot.json '" ".join(d["screenshot"] for d in j["details"] if "screenshot" in d)')
check "perl: three screenshots named" [ "$(echo $shots | wc -w)" = 3 ]
check "perl: video_index.json has the three screenshots at increasing times (Perl's frametime)" \
	[ "$(json_get $R/video_index.json '" ".join(e["module"] + ":" + str(e["step"]) + ":" + e["screenshot"] for e in j) + " " + str(all(a["time"] < b["time"] for a, b in zip(j, j[1:])) and j[0]["time"] > 0)')" = \
	"boot:1:boot-1.png boot:2:boot-2.png boot:3:boot-3.png True" ]
missing=0
for s in $shots; do
	[ -s "$R/$s" ] && [ -s "$R/.thumbs/$s" ] && head -c 8 "$R/$s" | grep -q PNG || missing=$((missing + 1))
done
check "perl: every screenshot and thumbnail is a PNG vigil wrote" [ $missing -eq 0 ]
maps=$(json_get $R/result-boot.json '[d["text"] for d in j["details"] if d.get("title") == "maps"][0]')
check "perl: no OpenCV mapped in the test process" grep -qx 'no OpenCV mapped' "$R/$maps"
check "perl: progress lines printed" grep -q "boot: assert_screen 'grub-echo': matched grub-echo" "$TMP/ok.out"
check "perl: wait_screen_change saw c change the screen" grep -q "boot: wait_screen_change: changed" "$TMP/ok.out"
check "perl: wait_still_screen saw the screen settle" grep -q "boot: wait_still_screen 1.0s: still" "$TMP/ok.out"
check "perl: Perl's log in autoinst-log.txt" grep -q "testapi::type_string" "$TMP/ok/autoinst-log.txt"
check "perl: video, serial and vigil's log written" [ -s "$TMP/ok/video.webm" -a -f "$TMP/ok/serial0.txt" -a -s "$TMP/ok/vigil-log.txt" ]
check "perl: vars.json has the absolute CASEDIR and NEEDLES_DIR" \
	[ "$(json_get $TMP/ok/vars.json 'int(j["CASEDIR"].startswith("/") and j["NEEDLES_DIR"].startswith("/"))')" = 1 ]
check "perl: no QEMU left" eval "! qemu_left '$TMP/ok/.vm'"
check "perl: no test process left" eval "! perl_left '$TMP/ok'"
check "perl: the work directory removed" [ ! -e "$TMP/ok/.vm" ]

# --- developer mode: --pause-at holds set_current_test's reply until resumed
$VIGIL run $D --out "$TMP/pause" --pause-at boot --var NOVIDEO=1 > "$TMP/pause.out" 2>&1 &
vpid=$!
n=0
until grep -q '"paused":{"kind":"module","module":"boot"' "$TMP/pause/.devmode.json" 2>/dev/null || [ $n -ge 600 ]; do
	sleep 0.5
	n=$((n + 1))
done
check "perl pause: paused before boot" grep -q '"paused":{"kind":"module","module":"boot"' "$TMP/pause/.devmode.json"
check "perl pause: nothing ran while paused" eval "! grep -q 'boot: assert_screen' '$TMP/pause.out'"
python3 tests/integration/devmode_cmd.py "$TMP/pause/.devmode.sock" '{"cmd":"resume_test_execution"}' > /dev/null
wait $vpid
rc=$?
check "perl pause: resumed, passed" [ $rc -eq 0 ]

# --- a tag that never shows: the module fails, the job fails
$VIGIL run $D --out "$TMP/fail" --var FAIL_TAG=grub-menu-memtest > "$TMP/fail.out" 2>&1
rc=$?
cat "$TMP/fail.out"
R=$TMP/fail/testresults
check "perl fail: exit status 1" [ $rc -eq 1 ]
check "perl fail: results.json says failed" [ "$(json_get $R/results.json 'j["result"]')" = failed ]
check "perl fail: module boot failed" [ "$(json_get $R/result-boot.json 'j["result"]')" = fail ]
check "perl fail: the failed screen recorded with its candidate" \
	[ "$(json_get $R/result-boot.json '[d for d in j["details"] if d.get("result") == "fail" and "screenshot" in d][-1]["needles"][0]["name"]')" = grub-menu-memtest ]
shot=$(json_get $R/result-boot.json '[d for d in j["details"] if d.get("result") == "fail" and "screenshot" in d][-1]["screenshot"]')
check "perl fail: its screenshot written" [ -s "$R/$shot" ]
check "perl fail: the failure said" grep -q "boot: failed: no candidate needle with tag(s) 'grub-menu-memtest' matched" "$TMP/fail.out"
check "perl fail: no QEMU left" eval "! qemu_left '$TMP/fail/.vm'"
check "perl fail: no test process left" eval "! perl_left '$TMP/fail'"

# --- milestone snapshots: Perl saves "lastgood" and loads it after a failure
$VIGIL run tests/integration/distri-perl-milestone --out "$TMP/milestone" > "$TMP/milestone.out" 2>&1
rc=$?
cat "$TMP/milestone.out"
R=$TMP/milestone/testresults
check "perl milestone: exit status 1 (breakit fails)" [ $rc -eq 1 ]
check "perl milestone: modules ok,fail,ok" [ "$(json_get $R/results.json '",".join(m["result"] for m in j["modules"])')" = "ok,fail,ok" ]
check "perl milestone: savevm lastgood after boot" grep -q "boot: savevm lastgood" "$TMP/milestone.out"
check "perl milestone: loadvm lastgood after breakit" grep -q "breakit: loadvm lastgood" "$TMP/milestone.out"
check "perl milestone: Perl recorded the rollback in after's steps" \
	[ "$(json_get $R/result-after.json 'j["details"][0]["title"]')" = Snapshot ]
check "perl milestone: the Python module ran (tests/after.py)" \
	[ "$(json_get $R/test_order.json 'j[2]["script"]')" = tests/after.py ]
check "perl milestone: Inline's cache and the bootstrap removed" [ ! -e "$TMP/milestone/.vm" ]

# --- the serial port (examples/shell's kernel and initramfs)
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
if [ -f "$IMG/di-text/linux" ] && [ -f "$IMG/shell-initrd.gz" ]; then
	$VIGIL run tests/integration/distri-perl-shell --out "$TMP/serial" > "$TMP/serial.out" 2>&1
	rc=$?
	cat "$TMP/serial.out"
	R=$TMP/serial/testresults
	check "perl serial: exit status 0" [ $rc -eq 0 ]
	check "perl serial: module ok" [ "$(json_get $R/result-serial.json 'j["result"]')" = ok ]
	check "perl serial: the /u regex matched" grep -q "wait_serial '(?:(?^:VIGIL-SHELL-READY))': matched" "$TMP/serial.out"
	ready=$(json_get $R/result-serial.json '[d["text"] for d in j["details"] if d.get("title") == "ready"][0]')
	check "perl serial: wait_serial returned the serial text" grep -q "VIGIL-SHELL-READY" "$R/$ready"
	check "perl serial: literal strings quoted, not found" grep -qF "wait_serial '(?:never\\-1)|(?:never\\-2)': no match" "$TMP/serial.out"
	check "perl serial: wait_serial's screenshots written" \
		[ "$(json_get $R/result-serial.json 'len([d for d in j["details"] if d.get("screenshot")])')" = 3 ]
	check "perl vmctl: switch_network and save_storage_drives" [ "$(json_get $R/result-vmctl.json 'j["result"]')" = ok ]
	check "perl vmctl: disk 1 saved as ulogs/vmctl-1-vm_disk_file.qcow2" \
		sh -c "qemu-img info $R/ulogs/vmctl-1-vm_disk_file.qcow2 | grep -q 'file format: qcow2'"
	check "perl serial: no QEMU left" eval "! qemu_left '$TMP/serial/.vm'"
else
	echo "skipped the serial case: needs $IMG/di-text/linux and $IMG/shell-initrd.gz (scripts/fetch-images)"
fi

# (the installed Debian image's consoles: test_perl_debian.sh, compared with isotovideo)

# --- a schedule that dies: incomplete before QEMU starts
mkdir -p "$TMP/broken"
cp -r $D/tests $D/vars.json "$TMP/broken/"
printf 'use strict;\ndie "broken schedule\\n";\n' > "$TMP/broken/main.pm"
sed -i 's|"\.\./\.\./\.\./examples/grub/needles"|"'"$PWD"'/examples/grub/needles"|' "$TMP/broken/vars.json"
$VIGIL run "$TMP/broken" --out "$TMP/broken-out" > "$TMP/broken.out" 2>&1
rc=$?
cat "$TMP/broken.out"
check "perl broken: exit status 2" [ $rc -eq 2 ]
check "perl broken: results.json says incomplete" [ "$(json_get $TMP/broken-out/testresults/results.json 'j["result"]')" = incomplete ]
check "perl broken: the reason names Perl's error" grep -q "^reason: the Perl test process ended before its schedule was loaded.*broken schedule" "$TMP/broken.out"
check "perl broken: QEMU never started" [ ! -e "$TMP/broken-out/serial0.txt" ]

# --- the same distribution as a job of `vigil serve`, run by `vigil worker`
# (the server's archive of DATA/tests/perl-grub, its needles inside it),
# with its lockapi module (LOCKS=1)
. "$(dirname "$0")/server_lib.sh"
new_keys
mkdir -p "$DATA/tests"
cp -r $D "$DATA/tests/perl-grub"
cp -r examples/grub/needles "$DATA/tests/perl-grub/needles"
$PY -c 'import json,sys; p=sys.argv[1]; j=json.load(open(p)); del j["NEEDLES_DIR"]; json.dump(j, open(p, "w"))' \
	"$DATA/tests/perl-grub/vars.json"
start_server
cli -X POST jobs TEST=perl-grub DISTRI=perl-grub ARCH=x86_64 MACHINE=64bit BUILD=1 LOCKS=1 > "$TMP/job.json"
job=$(json_get "$TMP/job.json" 'j["id"]')
start_worker 1
check "perl job: done/passed through serve and worker" wait_state "$job" "done passed" 300
cli "jobs/$job" > "$TMP/pj.json"
check "perl job: modules boot and locks passed (lockapi through the job token)" \
	[ "$(json_get "$TMP/pj.json" '" ".join(m["name"]+"="+m["result"] for m in j["job"]["modules"])')" = "boot=passed locks=passed" ]
check "perl job: the mutex is the job's, unlocked; the released barrier is gone, the other one waits" \
	[ "$(sql "SELECT name || ':' || owner || ':' || COALESCE(locked_by, '-') || ':' || count FROM job_locks ORDER BY name" | tr '\n' ' ')" = \
	"vigil_b2:$job:$job:2 vigil_m:$job:-:1 " ]
check "perl job: the disk its test named with set_var('PUBLISH_HDD_1') was published" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/assets/hdd/perl-set-var.qcow2")" = 200 ]
curl -s "$URL/tests/$job/file/vars.json" > "$TMP/pj-vars.json"
TOKEN=$(json_get "$TMP/pj-vars.json" 'j["JOBTOKEN"]')
check "perl job: its vars had the server's JOBTOKEN and OPENQA_URL" \
	[ "${#TOKEN}" = 32 -a "$(json_get "$TMP/pj-vars.json" 'j["OPENQA_URL"]')" = "$URL" ]
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
check "locks: the token of an ended job is refused (403)" \
	[ "$(code -X POST -H "X-API-JobToken: $TOKEN" "$URL/api/v1/mutex?name=x")" = 403 ]
check "locks: no token is refused (403)" [ "$(code -X POST "$URL/api/v1/mutex?name=x")" = 403 ]
# A job chained after it (LOCKS=child) finds its parent's mutex and barrier.
cli -X POST jobs TEST=perl-grub-child DISTRI=perl-grub ARCH=x86_64 MACHINE=64bit BUILD=1 LOCKS=child \
	_START_AFTER_JOBS="$job" > "$TMP/child.json"
child=$(json_get "$TMP/child.json" 'j["id"]')
check "locks: the chained child done/passed (its parent's mutex locked and unlocked, the barrier of two released)" \
	wait_state "$child" "done passed" 300
check "locks: the barrier has both jobs" \
	[ "$(sql "SELECT locked_by FROM job_locks WHERE name = 'vigil_b2'")" = "$job,$child" ]
curl -s "$URL/tests/$job/file/result-boot.json" > "$TMP/pj-boot.json"
check "perl job: Perl's result-boot.json uploaded, its steps served" \
	[ "$(json_get "$TMP/pj-boot.json" '",".join(d["needle"] for d in j["details"] if "needle" in d)')" = "grub-menu,grub-cmdline,grub-echo" ]
stop_pids
finish
