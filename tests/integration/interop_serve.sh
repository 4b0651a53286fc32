#!/bin/sh
# SPDX-License-Identifier: MIT
# interop_serve.sh - Debian's openQA worker under `vigil serve` (issue 16),
# run by test_interop.sh: the real openqa-worker (its worker script, a
# client.conf with a vigil API key, workers.ini, a pool dir and the share
# dir under this suite's tmp: OPENQA_BASEDIR/openqa/share is vigil's DATA)
# takes a job over its WebSocket and runs the GRUB anchor
# (distri-anchor-grub) with isotovideo on TCG; the result is checked
# through vigil's API and job page. Then a mixed fleet: a `vigil worker`
# beside it, jobs with different WORKER_CLASS, each on its own worker, a
# chained pair across the two (the parent's disk published in openQA's
# chunks, the child booting it); cpu_arch/mem_max in the workers list; the
# live view of the openQA worker's job; both workers killed (-9) while
# running jobs: offline/dead, the jobs incomplete and cloned.
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
OQW=/usr/share/openqa/script/worker
if [ ! -x "$OQW" ] || [ ! -x /usr/bin/isotovideo ] || [ ! -f "$IMG/grub-rescue-cdrom.iso" ] ||
	! command -v qemu-system-x86_64 > /dev/null; then
	echo "skipped: needs Debian's openqa-worker ($OQW), os-autoinst (/usr/bin/isotovideo)," \
		"$IMG/grub-rescue-cdrom.iso (scripts/fetch-images) and qemu-system-x86_64"
	finish
	exit 0
fi
. "$(dirname "$0")/server_lib.sh"

new_keys
mkdir -p "$DATA/tests" "$DATA/factory/iso" "$DATA/factory/hdd"
# A disk of 2.5 MB of random data: published through chunks of 1 MB.
head -c 2500000 /dev/urandom > "$TMP/seed.raw"
qemu-img convert -f raw -O qcow2 "$TMP/seed.raw" "$DATA/factory/hdd/seed.qcow2"
cp -r tests/integration/distri-anchor-grub "$DATA/tests/grub"
cp -r examples/grub "$DATA/tests/vgrub"
cp -r tests/integration/distri-faults "$DATA/tests/faults"
# A Perl test that waits on the serial line for text that never comes,
# after GRUB (its command line, the anchors' needles) has written a mark
# to the serial port: the live view's serial output.
mkdir -p "$DATA/tests/hang/tests"
cp -r tests/integration/distri-anchor-grub/needles "$DATA/tests/hang/needles"
printf 'use strict;\nuse testapi;\nuse autotest;\nuse distribution;\ntestapi::set_distribution(distribution->new());\nautotest::loadtest("tests/hang.pm");\n1;\n' \
	> "$DATA/tests/hang/main.pm"
cat > "$DATA/tests/hang/tests/hang.pm" << 'EOF'
use base "basetest";
use strict;
use testapi;
sub run {
    assert_screen "grub-menu", 600;
    send_key "c";
    assert_screen "grub-cmdline", 300;
    # slowly: GRUB drops keys typed at full speed on a loaded machine
    type_string "serial\nterminal_output --append serial\necho vigil-serial-mark\n", max_interval => 15;
    wait_serial("never-written-here", 3600);
}
1;
EOF
ln -s "$IMG/grub-rescue-cdrom.iso" "$DATA/factory/iso/grub-rescue-cdrom.iso"
start_server --worker-timeout 20
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"

# The openQA worker's host: its configuration, and /var/lib/openqa under
# OPENQA_BASEDIR with share/ = vigil's DATA (factory/iso, tests/<distri>).
OQ=$TMP/oq
mkdir -p "$OQ/etc" "$OQ/base/openqa"
ln -s "$DATA" "$OQ/base/openqa/share"
cat > "$OQ/etc/workers.ini" <<EOF
[global]
HOST = $URL
WORKER_CLASS = openqa_interop
WORKER_HOSTNAME = 127.0.0.1
LOCAL_UPLOAD = 0
EOF
cat > "$OQ/etc/client.conf" <<EOF
[127.0.0.1]
key = $KEY
secret = $SECRET
EOF
OPENQA_CONFIG=$OQ/etc OPENQA_BASEDIR=$OQ/base perl "$OQW" --instance 1 --verbose > "$TMP/openqa-worker.log" 2>&1 &
OQPID=$!
PIDS="$PIDS $OQPID"

# registered, then connected: no longer shown offline
n=0
until curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; w=[w for w in json.load(sys.stdin)["workers"] if w["properties"]["WORKER_CLASS"]=="openqa_interop"]; sys.exit(0 if w and w[0]["status"]=="idle" else 1)' 2>/dev/null ||
	[ $n -ge 600 ]; do sleep 0.2; n=$((n + 1)); done
check "openqa-worker registered and connected (idle)" [ $n -lt 600 ]
OQWID=$(curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; print([w["id"] for w in json.load(sys.stdin)["workers"] if w["properties"]["WORKER_CLASS"]=="openqa_interop"][0])')

cli -X POST jobs TEST=grub-anchor DISTRI=grub VERSION=1 ARCH=x86_64 BUILD=1 ISO=grub-rescue-cdrom.iso \
	BACKEND=qemu QEMU=x86_64 QEMU_NO_KVM=1 "QEMU_APPEND=accel tcg" QEMUCPUS=1 QEMURAM=512 \
	WORKER_CLASS=openqa_interop > "$TMP/post.json"
JOB=$(json_get "$TMP/post.json" 'j["id"]')
check "job posted ($JOB)" [ -n "$JOB" ]
check "job $JOB done/passed on the openQA worker" wait_state "$JOB" "done passed" 300
cli jobs/$JOB > "$TMP/job.json"
cli jobs/$JOB/details > "$TMP/details.json"
check "job $JOB: ran on the openQA worker" [ "$(json_get "$TMP/job.json" 'j["job"]["assigned_worker_id"]')" = "$OQWID" ]
check "job $JOB: module boot passed, its script a path" \
	[ "$(json_get "$TMP/job.json" '" ".join(m["name"]+"="+m["result"]+":"+m["script"] for m in j["job"]["modules"])')" = "boot=passed:tests/boot.pm" ]
R=$DATA/testresults/$JOB
curl -s "$URL/tests/$JOB/file/result-boot.json" > "$TMP/result-boot.json"
check "steps: result-boot.json served, 3 steps or more, each with a screenshot name" \
	[ "$(json_get "$TMP/result-boot.json" 'len(j["details"]) >= 3 and all(isinstance(d.get("screenshot"), str) for d in j["details"] if "screenshot" in d)')" = True ]
check "steps: the needles matched with their similarity (grub-menu, grub-cmdline, grub-echo)" \
	[ "$(json_get "$TMP/result-boot.json" '" ".join(sorted(d["needle"].split("-2")[0] for d in j["details"] if d.get("needle") and d["area"][0]["similarity"] > 0))')" = "grub-cmdline grub-echo grub-menu" ]
SHOTS=$(json_get "$TMP/details.json" '" ".join(j["job"]["screenshots"])')
check "screenshots listed ($SHOTS)" [ "$(echo "$SHOTS" | wc -w)" -ge 3 ]
SHOT=$(echo "$SHOTS" | cut -d' ' -f1)
curl -sf "$URL/tests/$JOB/images/$SHOT" -o "$TMP/shot.png"
curl -sf "$URL/tests/$JOB/images/thumb/$SHOT" -o "$TMP/thumb.png"
check "screenshot and its thumbnail served, thumbnail kept apart (other bytes, smaller)" \
	sh -c "[ -s '$TMP/shot.png' ] && [ -s '$TMP/thumb.png' ] && ! cmp -s '$TMP/shot.png' '$TMP/thumb.png' && [ \$(stat -c %s '$TMP/thumb.png') -lt \$(stat -c %s '$TMP/shot.png') ] && [ -f '$R/.thumbs/$SHOT' ]"
LOGS=$(json_get "$TMP/details.json" '" ".join(j["job"]["logs"])')
check "logs uploaded: autoinst-log.txt, serial0.txt, video.ogv, video.webm ($LOGS)" \
	sh -c "for f in autoinst-log.txt serial0.txt video.ogv video.webm; do echo ' $LOGS ' | grep -q \" \$f \" || exit 1; done"
curl -sf "$URL/tests/$JOB/file/video.webm" -o "$TMP/video.webm"
check "video.webm: a VP8 WebM that decodes to frames" \
	sh -c "ffprobe -v error -select_streams v:0 -show_entries stream=codec_name -of csv=p=0 '$TMP/video.webm' | grep -qx vp8 && [ \$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 '$TMP/video.webm') -gt 1 ]"
curl -sf "$URL/tests/$JOB" > "$TMP/page.html"
check "job page: module boot with its steps' thumbnails and similarity" \
	sh -c "grep -q 'images/thumb/$SHOT' '$TMP/page.html' && grep -q '>boot<' '$TMP/page.html' && grep -qE '100 ?%' '$TMP/page.html'"
check "known_images: the screenshots' md5s answered to the worker's status" \
	sh -c "ls '$R/.md5' | grep -qE '^[0-9a-f]{32}\.png$'"

# --- a mixed fleet: a vigil worker beside the openQA worker, each job to
# the worker whose WORKER_CLASS it needs.
start_worker_class() { # start_worker_class INSTANCE CLASS
	$VIGIL worker --host "$URL" --apikey "$KEY" --apisecret "$SECRET" --instance "$1" --class "$2" \
		--pool "$TMP/pool$1" >> "$TMP/worker$1.log" 2>&1 &
	PIDS="$PIDS $!"
	VPID=$!
}
start_worker_class 2 vigil_interop
# A job for the vigil worker's class, and beside it a chained pair across
# the fleet: the parent on the openQA worker publishes its disk
# (isotovideo's FORCE_PUBLISH_HDD_1: GRUB is not shut down; uploaded by
# openqa-worker in chunks), the child (START_AFTER) boots from it on the
# vigil worker.
cli -X POST jobs TEST=vgrub DISTRI=vgrub ARCH=x86_64 BUILD=2 WORKER_CLASS=vigil_interop > "$TMP/post-v.json"
cli -X POST jobs TEST:p=grub-anchor TEST:c=vgrub-child _START_AFTER:c=p DISTRI:p=grub DISTRI:c=vgrub VERSION=1 \
	ARCH=x86_64 BUILD=3 ISO:p=grub-rescue-cdrom.iso BACKEND:p=qemu QEMU:p=x86_64 QEMU_NO_KVM:p=1 \
	"QEMU_APPEND:p=accel tcg" QEMUCPUS:p=1 QEMURAM=512 NOVIDEO=1 HDD_1:p=seed.qcow2 FORCE_PUBLISH_HDD_1:p=pub3.qcow2 \
	HDD_1:c=pub3.qcow2 WORKER_CLASS:p=openqa_interop WORKER_CLASS:c=vigil_interop > "$TMP/post-chain.json"
JV=$(json_get "$TMP/post-v.json" 'j["id"]')
JP=$(json_get "$TMP/post-chain.json" 'j["ids"]["p"]')
JC=$(json_get "$TMP/post-chain.json" 'j["ids"]["c"]')
check "mixed: vigil job $JV done/passed" wait_state "$JV" "done passed" 300
check "chained: parent $JP done/passed on the openQA worker" wait_state "$JP" "done passed" 300
check "chained: child $JC done/passed on the vigil worker" wait_state "$JC" "done passed" 300
VWID=$(curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; print([w["id"] for w in json.load(sys.stdin)["workers"] if w["properties"]["WORKER_CLASS"]=="vigil_interop"][0])')
MEMMIB=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
check "workers list: cpu_arch and mem_max of both registrations as openQA's CPU_ARCH, MEM_MAX" \
	[ "$(curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; print(" ".join(sorted(w["properties"]["WORKER_CLASS"] + "=" + w["properties"].get("CPU_ARCH", "-") + "/" + w["properties"].get("MEM_MAX", "-") for w in json.load(sys.stdin)["workers"])))')" = "openqa_interop=$(uname -m)/$MEMMIB vigil_interop=$(uname -m)/$MEMMIB" ]
assigned() { curl -s "$URL/api/v1/jobs/$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["assigned_worker_id"])'; }
check "mixed: job $JV (vigil_interop) ran on the vigil worker $VWID" [ "$(assigned "$JV")" = "$VWID" ]
check "mixed/chained: parent $JP (openqa_interop) on the openQA worker, child $JC (vigil_interop) on the vigil worker" \
	[ "$(assigned "$JP") $(assigned "$JC")" = "$OQWID $VWID" ]
check "chunked upload: openqa-worker sent hdd/pub3.qcow2 in 3 chunks" \
	[ "$(grep -c 'pub3.qcow2: Processing chunk' "$TMP/openqa-worker.log")" -ge 3 ]
check "chunked upload: the published disk is the seed's content, registered as a public asset" \
	sh -c "qemu-img compare -q '$DATA/factory/hdd/seed.qcow2' '$DATA/factory/hdd/pub3.qcow2' && curl -s '$URL/api/v1/assets' | grep -q '\"pub3.qcow2\"'"
check "chained: the child booted with the published disk (in its worker's asset cache)" \
	sh -c "find '$TMP/pool2' -name pub3.qcow2 | grep -q . && qemu-img compare -q '$DATA/factory/hdd/seed.qcow2' \"\$(find '$TMP/pool2' -name pub3.qcow2 | head -1)\""
check "a vigil worker long-polling for work is listed idle, not dead" \
	[ "$(curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; print([w["status"] for w in json.load(sys.stdin)["workers"] if w["properties"]["WORKER_CLASS"]=="vigil_interop"][0])')" = idle ]
check "WebSocket without a signature refused (403)" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
		-H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "$URL/api/v1/ws/$OQWID")" = 403 ]
# A wrong WebSocket API version is refused as openQA does.
check "registration with websocket_api_version=2 answered 426" \
	[ "$(cli -X POST workers host=h instance=9 worker_class=x cpu_arch=x86_64 mem_max=1 websocket_api_version=2 2>&1 | grep -c 426)" -ge 1 ]

oq_idle() { curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; w=[w for w in json.load(sys.stdin)["workers"] if w["id"]=='"$OQWID"']; sys.exit(0 if w and w[0]["status"]=="idle" else 1)' 2>/dev/null; }
# --- the server stops with the openQA worker's socket open (close 1001),
# and the worker connects again to the server started anew.
kill "$SPID"
n=0
while kill -0 "$SPID" 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
check "server stops with an openQA worker connected" sh -c "! kill -0 $SPID 2>/dev/null"
start_server --worker-timeout 20
n=0
until oq_idle || [ $n -ge 600 ]; do sleep 0.2; n=$((n + 1)); done
check "openqa-worker connected again after the server's restart" oq_idle

# --- workers that crash while connected (kill -9), each with a job that
# never ends: the openQA worker's WebSocket drops (listed offline at once),
# the vigil worker just falls silent (listed dead after the worker timeout,
# as openQA); both jobs end incomplete with the reason, as openQA's.
descendants() { # descendants PID: its process tree below it, deepest last
	for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
cli -X POST jobs TEST=hang DISTRI=hang ARCH=x86_64 BUILD=4 ISO=grub-rescue-cdrom.iso BACKEND=qemu QEMU=x86_64 \
	QEMU_NO_KVM=1 "QEMU_APPEND=accel tcg" QEMUCPUS=1 QEMURAM=512 NOVIDEO=1 WORKER_CLASS=openqa_interop > "$TMP/post-ho.json"
cli -X POST jobs TEST=never DISTRI=faults FAULT=never ARCH=x86_64 BUILD=4 WORKER_CLASS=vigil_interop > "$TMP/post-hv.json"
JHO=$(json_get "$TMP/post-ho.json" 'j["id"]')
JHV=$(json_get "$TMP/post-hv.json" 'j["id"]')
check "crash: job $JHO running on the openQA worker" wait_running "$JHO" 300
check "crash: job $JHV running on the vigil worker" wait_running "$JHV" 300
# vigil's live view of the openQA worker's job: the stream makes the server
# send livelog_start over the worker's WebSocket; the worker's status posts
# then carry its screen and log lines, which the stream shows.
: > "$TMP/live.txt"
curl -sN --max-time 300 "$URL/tests/$JHO/streaming" >> "$TMP/live.txt" 2> /dev/null &
CPID=$!
n=0
until { grep -q '^event: frame' "$TMP/live.txt" && grep -q '^event: log' "$TMP/live.txt" &&
	grep -A1 '^event: serial' "$TMP/live.txt" | grep -q 'vigil-serial-mark'; } || [ $n -ge 600 ]; do
	sleep 0.5
	n=$((n + 1))
done
check "live view: the openQA worker's screen in vigil's stream (livelog_start)" grep -q '^event: frame' "$TMP/live.txt"
check "live view: its log lines in vigil's stream" grep -q '^event: log' "$TMP/live.txt"
check "live view: its serial output (status.serial_log) in vigil's stream, with GRUB's mark" \
	sh -c "grep -A1 '^event: serial' '$TMP/live.txt' | grep -q 'vigil-serial-mark'"
kill "$CPID" 2> /dev/null
wait "$CPID" 2> /dev/null
TREE="$(descendants "$OQPID") $(descendants "$VPID")"
kill -9 "$OQPID" "$VPID"
for p in $TREE; do kill -9 "$p" 2>/dev/null; done
w_status() { curl -s "$URL/api/v1/workers" | $PY -c 'import json,sys; print([w["status"] for w in json.load(sys.stdin)["workers"] if w["id"]=='"$1"'][0])'; }
n=0
while [ "$(w_status "$OQWID")" != offline ] && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
check "crash: the killed openQA worker listed offline at once (its WebSocket closed)" [ "$(w_status "$OQWID")" = offline ]
check "crash: its job $JHO ends incomplete" wait_state "$JHO" "done incomplete" 120
check "crash: the killed vigil worker's job $JHV ends incomplete" wait_state "$JHV" "done incomplete" 120
check "crash: the killed vigil worker listed dead" [ "$(w_status "$VWID")" = dead ]
for j in "$JHO:$OQWID" "$JHV:$VWID"; do
	curl -s "$URL/api/v1/jobs/${j%%:*}" > "$TMP/crash.json"
	check "crash: job ${j%%:*}'s reason names worker ${j#*:} lost, and the job is cloned" \
		[ "$(json_get "$TMP/crash.json" 'j["job"]["reason"].startswith("abandoned: worker '"${j#*:}"' ") and "lost" in j["job"]["reason"] and bool(j["job"]["clone_id"])')" = True ]
done
# (a zombie left for init to reap counts as gone)
alive() { for p in $TREE; do ps -o stat= -p "$p" 2> /dev/null | grep -qv Z && return 0; done; return 1; }
gone() { ! alive; }
check "crash: none of their processes (isotovideo, the runner, QEMU) left" gone
# The clones are not run by anybody: cancelled so no worker takes them.
for j in $(curl -s "$URL/api/v1/jobs?state=scheduled" | $PY -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))'); do
	cli -X POST "jobs/$j/cancel" > /dev/null 2>&1
done
[ "$FAILED" -eq 0 ] || { echo "--- openqa-worker log"; tail -40 "$TMP/openqa-worker.log"; echo "--- serve log"; tail -20 "$TMP/serve.log"; }
finish
