#!/bin/sh
# SPDX-License-Identifier: MIT
# test_faults.sh - what the runner must survive, on the real GRUB ISO:
# a Lua error, a busy loop, broken needles, MAX_JOB_TIME, QEMU dying
# mid-test, and vigil itself being killed.
# run-all: long 76
. "$(dirname "$0")/lib.sh"
D=tests/integration/distri-faults

# Needles: the grub example's plus broken ones that must be skipped.
mkdir -p "$TMP/needles/sub"
cp examples/grub/needles/grub-menu.* "$TMP/needles/sub/"
echo '{ "tags": [ "x" ], "area": [ ' > "$TMP/needles/badjson.json"
echo '{ "tags": ["x"], "area": [{"xpos":1,"ypos":1,"width":5,"height":5}] }' > "$TMP/needles/nopng.json"
echo '{ "tags": ["x"], "area": [{"xpos":1,"ypos":1,"width":5,"height":5,"type":"blob"}] }' > "$TMP/needles/badtype.json"
cp examples/grub/needles/grub-menu.png "$TMP/needles/badtype.png"
# A PNG cut short and an area outside its PNG: refused at load, each
# reported once with its file (they used to load and fail every frame).
echo '{ "tags": ["grub-menu"], "area": [{"xpos":1,"ypos":1,"width":5,"height":5}] }' > "$TMP/needles/cut.json"
head -c 2000 examples/grub/needles/grub-menu.png > "$TMP/needles/cut.png"
echo '{ "tags": ["grub-menu"], "area": [{"xpos":1020,"ypos":1,"width":50,"height":5}] }' > "$TMP/needles/outside.json"
cp examples/grub/needles/grub-menu.png "$TMP/needles/outside.png"

$VIGIL run $D --var NEEDLES_DIR="$TMP/needles" --var LUA_STUCK_TIMEOUT=3 --out "$TMP/modules" > "$TMP/modules.out" 2>&1
rc=$?
cat "$TMP/modules.out"
R=$TMP/modules/testresults
check "faults: exit status 1 (failed)" [ $rc -eq 1 ]
check "faults: modules fail,fail,ok" [ "$(json_get $R/results.json '",".join(m["result"] for m in j["modules"])')" = "fail,fail,ok" ]
check "faults: Lua error names file and line" grep -q "tests/luaerror.lua:4:" "$R/result-luaerror.json"
check "faults: post_fail_hook ran" grep -q '"title": "hook"' "$R/result-luaerror.json"
check "faults: busy loop stopped" grep -q "no test API call" "$R/result-busy.json"
check "faults: broken JSON needle reported with its file" grep -q "badjson.json" "$TMP/modules.out"
check "faults: needle without png reported" grep -q "nopng" "$TMP/modules.out"
check "faults: unknown area type reported" grep -q "blob" "$TMP/modules.out"
check "faults: a needle PNG cut short reported once, with its file and why" \
	[ "$(grep -c "^warning: needle 'cut.json': png: .*cut.png: truncated" "$TMP/modules.out")" = 1 ]
check "faults: an area outside its PNG reported once" \
	[ "$(grep -c "^warning: needle 'outside.json': area 1 (xpos 1020, ypos 1, 50x5) lies outside its 1024x768 PNG" "$TMP/modules.out")" = 1 ]
check "faults: neither is ever matched" eval "! grep -q \"could not be matched\" '$TMP/modules.out'"

# A long check on a still screen ends at its timeout (this once hung).
timeout -k 10 120 $VIGIL run $D --var FAULT=still --var NEEDLES_DIR="$PWD/examples/grub/needles" --out "$TMP/still" > "$TMP/still.out" 2>&1
rc=$?
cat "$TMP/still.out"
check "still screen: check_screen timed out and the job passed (exit $rc)" [ $rc -eq 0 ]
# It ends at its 12 s deadline, never before; a busy machine may end it later.
took=$(sed -n "s/.*check_screen 'tag-no-needle-has': no match in \([0-9.]*\).*/\1/p" "$TMP/still.out" | head -n 1)
check "still screen: the check took its full timeout (${took:-?} s)" python3 -c "import sys; sys.exit(not (float('${took:-0}') >= 12))"

# MAX_JOB_TIME
$VIGIL run $D --var FAULT=wait --var MAX_JOB_TIME=15 --out "$TMP/timeout" > "$TMP/timeout.out" 2>&1
rc=$?
cat "$TMP/timeout.out"
check "max_job_time: exit status 2" [ $rc -eq 2 ]
check "max_job_time: timeout_exceeded" [ "$(json_get $TMP/timeout/testresults/results.json 'j["result"]')" = timeout_exceeded ]

# QEMU dies mid-test
$VIGIL run $D --var FAULT=wait --out "$TMP/qdie" > "$TMP/qdie.out" 2>&1 &
vpid=$!
i=0
while [ $i -lt 60 ] && ! grep -q "starting module" "$TMP/qdie.out" 2>/dev/null; do sleep 1; i=$((i + 1)); done
sleep 3
pkill -KILL -f "[q]emu-system.*$TMP/qdie/.vm"
wait $vpid
rc=$?
cat "$TMP/qdie.out"
check "qemu dies: exit status 2" [ $rc -eq 2 ]
check "qemu dies: incomplete" [ "$(json_get $TMP/qdie/testresults/results.json 'j["result"]')" = incomplete ]
check "qemu dies: reason names QEMU" sh -c "grep -q QEMU '$TMP/qdie/testresults/results.json'"
check "qemu dies: module result kept" [ "$(json_get $TMP/qdie/testresults/result-never.json 'j["result"]')" = fail ]
check "qemu dies: serial and log kept" [ -e "$TMP/qdie/serial0.txt" -a -s "$TMP/qdie/vigil-log.txt" ]

# QEMU stopped (SIGSTOP) while a wait runs: the VM made no progress, so
# the job ends incomplete naming it and the wait, not failed (nor, for
# wait_still_screen, passed). One job per wait, the three at once: each
# stops its QEMU right after the menu matched, then lets its module start
# the wait (FROZEN_FLAG); only QEMU's state when the wait ends counts.
for w in assert_screen wait_serial wait_still_screen; do
	$VIGIL run $D --var FAULT=frozen --var FROZEN_WAIT=$w --var FROZEN_FLAG="$TMP/frozen-$w.stopped" \
		--var NEEDLES_DIR="$PWD/examples/grub/needles" --out "$TMP/frozen-$w" > "$TMP/frozen-$w.out" 2>&1 &
	eval "vpid_$w=\$!"
done
for w in assert_screen wait_serial wait_still_screen; do
	i=0
	while [ $i -lt 1200 ] && ! grep -q "assert_screen 'grub-menu': matched" "$TMP/frozen-$w.out" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	pkill -STOP -f "[q]emu-system.*$TMP/frozen-$w/.vm"
	check "frozen qemu, $w: QEMU stopped" pgrep -f "[q]emu-system.*$TMP/frozen-$w/.vm"
	: > "$TMP/frozen-$w.stopped"
done
for w in assert_screen wait_serial wait_still_screen; do
	eval "vpid=\$vpid_$w"
	# vigil must end by itself with QEMU still stopped (it once waited for
	# ever on the VNC socket); QEMU is continued after 10 minutes at most
	# so that a failure cannot hang the suite.
	i=0
	while [ $i -lt 600 ] && kill -0 $vpid 2>/dev/null; do sleep 1; i=$((i + 1)); done
	ended=$(kill -0 $vpid 2>/dev/null && echo no || echo yes)
	pkill -CONT -f "[q]emu-system.*$TMP/frozen-$w/.vm"
	wait $vpid
	rc=$?
	cat "$TMP/frozen-$w.out"
	check "frozen qemu, $w: vigil ended with QEMU stopped" [ "$ended" = yes ]
	check "frozen qemu, $w: exit status 2 (incomplete; was 1: failed, or 0 for wait_still_screen)" [ $rc -eq 2 ]
	check "frozen qemu, $w: incomplete" \
		[ "$(json_get $TMP/frozen-$w/testresults/results.json 'j["result"]')" = incomplete ]
	check "frozen qemu, $w: no QEMU left" qemu_gone "$TMP/frozen-$w/.vm"
done
R=$TMP/frozen-assert_screen/testresults/results.json
check "frozen qemu: the reason names the stopped QEMU and assert_screen" \
	sh -c "grep -q \"QEMU made no progress: its process (pid [0-9]*) is stopped (state T.*assert_screen 'tag-no-needle-has' ran out after\" '$R'"
R=$TMP/frozen-wait_serial/testresults/results.json
check "frozen qemu: the reason names the stopped QEMU and wait_serial" \
	sh -c "grep -q \"QEMU made no progress: its process (pid [0-9]*) is stopped (state T.*wait_serial 'output GRUB never writes' ran out after\" '$R'"
R=$TMP/frozen-wait_still_screen/testresults/results.json
check "frozen qemu: the reason names the stopped QEMU and wait_still_screen" \
	sh -c "grep -q \"QEMU made no progress: its process (pid [0-9]*) is stopped (state T.*wait_still_screen 2s\" '$R'"

# vigil killed with SIGKILL: QEMU must die with it
$VIGIL run $D --var FAULT=wait --out "$TMP/vkill" > "$TMP/vkill.out" 2>&1 &
vpid=$!
i=0
while [ $i -lt 60 ] && ! grep -q "starting module" "$TMP/vkill.out" 2>/dev/null; do sleep 1; i=$((i + 1)); done
# Kill it once the video has flushed a frame or two to the file, however long that takes here.
i=0
packets() { n=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1" 2>/dev/null | tr -dc 0-9); echo "${n:-0}"; }
while [ $i -lt 240 ] && [ "$(packets "$TMP/vkill/video.webm")" -lt 2 ]; do sleep 0.5; i=$((i + 1)); done
check "vigil killed: QEMU was running" qemu_left "$TMP/vkill/.vm"
kill -KILL $vpid
wait $vpid 2>/dev/null
# QEMU goes with its parent (PR_SET_PDEATHSIG); the kernel takes its time.
check "vigil killed: no QEMU left" qemu_gone "$TMP/vkill/.vm"
check "vigil killed: the video decodes to the end" sh -c "[ -s '$TMP/vkill/video.webm' ] && [ -z \"\$(ffmpeg -v error -i '$TMP/vkill/video.webm' -enc_time_base -1 -f null - 2>&1)\" ]"

# vigil interrupted with SIGTERM: QEMU stopped, results written as incomplete
$VIGIL run $D --var FAULT=wait --out "$TMP/vterm" > "$TMP/vterm.out" 2>&1 &
vpid=$!
i=0
while [ $i -lt 60 ] && ! grep -q "starting module" "$TMP/vterm.out" 2>/dev/null; do sleep 1; i=$((i + 1)); done
kill -TERM $vpid
wait $vpid
rc=$?
check "vigil SIGTERM: exit status 2" [ $rc -eq 2 ]
check "vigil SIGTERM: incomplete written" [ "$(json_get $TMP/vterm/testresults/results.json 'j["result"]')" = incomplete ]
check "vigil SIGTERM: no QEMU left" eval "! qemu_left '$TMP/vterm/.vm'"

finish
