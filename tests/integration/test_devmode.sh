#!/bin/sh
# SPDX-License-Identifier: MIT
# test_devmode.sh - developer mode with a real VM (GRUB rescue ISO, one
# job): a local `vigil run --pause-at` pauses and is stopped while paused;
# then through `vigil serve` and a real worker, with an API key: commands
# sent before the job starts pause it at a module, resume, a failed check
# pauses with its step uploaded, a needle saved in the server's
# distribution turns the retry into a pass, skip fails the next check as
# it would have; a Perl distribution stepped command by command and held on
# its failed module. Waits on the states the runner reports, never on time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
ROOT=$(pwd)
CMD="$PY $ROOT/tests/integration/devmode_cmd.py"
if [ ! -f "$ISO" ] || ! command -v qemu-system-x86_64 > /dev/null; then
	echo "skipped: needs $ISO and qemu-system-x86_64"
	finish
	exit 0
fi

distri() { # distri DIR: the test distribution with GRUB's needles
	cp -r "$ROOT/tests/integration/distri-devmode" "$1"
	mkdir -p "$1/needles"
	cp "$ROOT"/examples/grub/needles/grub-menu.* "$ROOT"/examples/grub/needles/grub-cmdline.* "$1/needles/"
}
# until STEPS COMMAND...: run COMMAND every half second until it succeeds,
# STEPS times at most (stretched by WAIT_SCALE).
until_ok() {
	n=$(($1 * WAIT_SCALE)); shift
	while ! "$@" > /dev/null 2>&1; do
		n=$((n - 1)); [ $n -le 0 ] && return 1
		sleep 0.5
	done
}

# 1. A local run: --pause-at holds the job before the module, the channel
# answers with the state, and a signal still ends a paused job.
distri "$TMP/local"
(cd "$TMP" && exec $VIGIL run local --out "$TMP/lout" --pause-at boot --var NOVIDEO=1 < /dev/null > "$TMP/local.log" 2>&1) &
LPID=$!
PIDS="$PIDS $LPID"
paused_local() { json_get "$TMP/lout/.devmode.json" 'j["paused"]["kind"] + " " + j["paused"]["module"]' | grep -qx "module boot"; }
check "vigil run --pause-at boot pauses before the module" until_ok 240 paused_local
$CMD "$TMP/lout/.devmode.sock" '{"cmd": "status"}' > "$TMP/status.json" 2>&1
check "the channel answers status with the pause" grep -q '"test_execution_paused":"reached module boot"' "$TMP/status.json"
$CMD "$TMP/lout/.devmode.sock" '{"cmd": "set_pause_on_screen_mismatch", "pause_on": "sometimes"}' > "$TMP/bad.json" 2>&1
check "the channel refuses a bad argument" grep -q '"ret":0' "$TMP/bad.json"
kill -TERM $LPID
wait $LPID
check "SIGTERM ends a paused run (exit 2, incomplete)" test $? -eq 2
check "no QEMU is left behind" qemu_gone "$TMP/lout"
check "the channel is gone with the run" test ! -e "$TMP/lout/.devmode.sock"

# 2. A Perl distribution (os-autoinst's test process), locally, with
# os-autoinst's variables: PAUSE_ON_NEXT_COMMAND steps through the
# commands it sends, PAUSE_ON_FAILURE holds a failed module.
(exec $VIGIL run "$ROOT/tests/integration/distri-perl-devmode" --out "$TMP/pout" --var NOVIDEO=1 \
	--var NEEDLES_DIR="$ROOT/examples/grub/needles" --var PAUSE_ON_NEXT_COMMAND=1 --var PAUSE_ON_FAILURE=1 \
	< /dev/null > "$TMP/perl.log" 2>&1) &
PPID_RUN=$!
PIDS="$PIDS $PPID_RUN"
ppaused() { json_get "$TMP/pout/.devmode.json" 'j["paused"]["kind"] + " " + j["paused"]["module"] + ": " + j["paused"]["reason"]' | grep -qx "$1"; }
pcmd() { $CMD "$TMP/pout/.devmode.sock" "$1" > "$TMP/pcmd.json" 2>&1 && grep -q '"ret":1' "$TMP/pcmd.json"; }
check "perl: the first command of module boot pauses (check_screen)" \
	until_ok 240 ppaused "next_command boot: next command: check_screen"
check "perl: resume" pcmd '{"cmd": "resume_test_execution"}'
check "perl: the next command pauses (backend_send_key)" \
	until_ok 240 ppaused "next_command boot: next command: backend_send_key"
check "perl: step by command off" pcmd '{"cmd": "set_pause_on_next_command", "flag": false}'
check "perl: resume again" pcmd '{"cmd": "resume_test_execution"}'
check "perl: the failed module pauses (pause_on_failure)" \
	until_ok 240 ppaused "failure dies: test died: deliberate failure"
check "perl: the state says pause_on_failure" grep -q '"pause_on_failure":true' "$TMP/pout/.devmode.json"
check "perl: resume after the failure" pcmd '{"cmd": "resume_test_execution"}'
wait $PPID_RUN
check "perl: the run ends failed (exit 1)" test $? -eq 1
check "perl: the failure stood: boot ok, dies fail" [ "$(json_get "$TMP/pout/testresults/results.json" \
	'",".join(m["name"] + "=" + m["result"] for m in j["modules"])')" = "boot=ok,dies=fail" ]
check "perl: no QEMU is left behind" qemu_gone "$TMP/pout"

# 3. Through the server and a worker.
new_keys operator
mkdir -p "$DATA/tests"
distri "$DATA/tests/devmode"
start_server
start_worker 1
JOB=$(cli -X POST jobs TEST=devmode DISTRI=devmode VERSION=1 FLAVOR=cd ARCH=x86_64 MACHINE=64bit BUILD=1 NOVIDEO=1 |
	$PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
opcli() { openqa-cli api --host "$URL" --apikey "$OPKEY" --apisecret "$OPSECRET" "$@"; }
dev() { opcli -X POST "jobs/$JOB/developer" "$@" >> "$TMP/dev.log"; }
check "set_pause_at_test is queued for the scheduled job" dev command=set_pause_at_test name=fix
check "set_pause_on_screen_mismatch is queued" dev command=set_pause_on_screen_mismatch pause_on=assert_screen
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/api/v1/jobs/$JOB/developer" -d command=resume_test_execution)
check "an anonymous command is refused (403, got $code)" test "$code" = 403
code=$(opcli -X POST "jobs/$JOB/developer" command=reboot 2>&1)
check "an unknown command is refused" sh -c "echo '$code' | grep -q 'unknown developer command'"
devstate() { curl -s "$URL/api/v1/jobs/$JOB/developer" > "$TMP/dev.json" && json_get "$TMP/dev.json" \
	'(j["developer"] or {}).get("paused") and " ".join(str(j["developer"]["paused"][k]) for k in ("kind", "module", "step"))'; }
paused_as() { devstate | grep -qx "$1"; }
check "the job pauses at module fix" until_ok 480 paused_as "module fix 0"
curl -sN --max-time 20 "$URL/tests/$JOB/streaming" 2>/dev/null | grep -m1 '"developer"' > "$TMP/sse.txt"
check "the live stream carries the paused state" grep -q '"reached module fix"' "$TMP/sse.txt"
check "resume" dev command=resume_test_execution
check "the failed check pauses at its step" until_ok 240 paused_as "screen_mismatch fix 1"
check "the paused module's result is uploaded" \
	sh -c "curl -sf '$URL/tests/$JOB/file/result-fix.json' | grep -q '\"screenshot\"'"
check "the paused step's screenshot is uploaded" curl -sf -o /dev/null "$URL/tests/$JOB/file/fix-1.png"
# The needle the editor would save: the command line under the asked tag.
sed 's/"grub-cmdline"/"devmode-fixed"/' "$DATA/tests/devmode/needles/grub-cmdline.json" \
	> "$DATA/tests/devmode/needles/devmode-fixed.json"
cp "$DATA/tests/devmode/needles/grub-cmdline.png" "$DATA/tests/devmode/needles/devmode-fixed.png"
check "retry" dev command=resume_test_execution action=retry
check "after the retry the next module's check pauses" until_ok 240 paused_as "screen_mismatch give_up 1"
check "skip" dev command=resume_test_execution action=skip
check "the job ends failed" wait_state "$JOB" "done failed" 240
check "the retried check passed: module fix ok" sh -c "[ \"\$(curl -s '$URL/tests/$JOB/file/result-fix.json' | $PY -c 'import json,sys; print(json.load(sys.stdin)[\"result\"])')\" = ok ]"
check "the skipped check failed: module give_up fail" sh -c "[ \"\$(curl -s '$URL/tests/$JOB/file/result-give_up.json' | $PY -c 'import json,sys; print(json.load(sys.stdin)[\"result\"])')\" = fail ]"
check "the worker fetched the distribution again for the retry" \
	test "$(ls "$TMP/pool1/cache" | grep -c '^devmode-')" -ge 2
out=$(opcli -X POST "jobs/$JOB/developer" command=resume_test_execution 2>&1)
check "a command for a done job is refused (409)" sh -c "echo '$out' | grep -q 'developer mode needs a scheduled or running job'"
finish
