#!/bin/sh
# SPDX-License-Identifier: MIT
# interop_openqa.sh - `vigil worker` under Debian's openQA 4.6 server
# (openqa_lib.sh starts PostgreSQL, the web UI, websockets, livehandler,
# scheduler and gru daemons, Fake auth, fresh database): examples/grub in
# openQA's shared tests/ directory, its ISO in factory/iso, one job posted
# with openqa-cli for the worker's class; checked through openQA's API
# (done/passed, modules, details with needles and similarities,
# screenshots and thumbnails, video, logs) and its job pages. Called by
# test_interop.sh, or alone: VIGIL_TEST_TMP=/tmp/me sh tests/integration/interop_openqa.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/openqa_lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP interop_openqa: needs root (PostgreSQL via runuser, openQA's daemons as geekotest)"
	finish
	exit $?
fi
missing=$(oq_missing)
if [ -n "$missing" ]; then
	echo "SKIP interop_openqa: missing Debian packages:$missing (scripts/install-deps installs them)"
	finish
	exit $?
fi
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
if [ ! -f "$ISO" ]; then
	echo "SKIP interop_openqa: $ISO missing (scripts/fetch-images fetches it)"
	finish
	exit $?
fi
WPID=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2> /dev/null && wait "$WPID" 2> /dev/null
	oq_stop
}
trap cleanup EXIT
trap "exit 1" INT TERM
PY=/usr/bin/python3
jget() { $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

T0=$(date +%s)
check "openQA started" oq_start || { finish; exit 1; }
echo "openQA up in $(($(date +%s) - T0)) s"
cp -r examples/grub "$OQ_SHARE/tests/grub"
cp -r tests/integration/distri-faults "$OQ_SHARE/tests/faults"
cp -r tests/integration/distri-anchor-grub "$OQ_SHARE/tests/pgrub"
cp "$ISO" "$OQ_SHARE/factory/iso/grub-rescue-cdrom.iso"
# A disk of 2.5 MB of random data for a job to publish again (3 chunks).
head -c 2500000 /dev/urandom > "$TMP/seed.raw"
qemu-img convert -f raw -O qcow2 "$TMP/seed.raw" "$OQ_SHARE/factory/hdd/seed.qcow2"
chown -R geekotest "$OQ_SHARE"
CLASS=vigil_interop_$$

# The worker host sees openQA's tests/ (as over NFS) but not its factory/:
# the assets come over HTTP.
mkdir -p "$TMP/wshare"
ln -s "$OQ_SHARE/tests" "$TMP/wshare/tests"
$VIGIL worker -v --host "$OQ_URL" --apikey "$OQ_KEY" --apisecret "$OQ_SECRET" --instance 1 --pool "$TMP/pool" \
	--class "$CLASS" --share "$TMP/wshare" > "$TMP/worker.log" 2>&1 &
WPID=$!

# One job, as a user posts it (openqa-cli), for the vigil worker's class.
# It also publishes a disk (PUBLISH_HDD_1 over a 2.5 MB seed: 3 chunks).
# PAUSE_AT=menu: developer mode holds it before its second module.
oq_api -X POST jobs TEST=grub DISTRI=grub VERSION=1 FLAVOR=cd ARCH=x86_64 BUILD=1 MACHINE=64bit PAUSE_AT=menu \
	ISO=grub-rescue-cdrom.iso QEMURAM=512 HDD_1=seed.qcow2 PUBLISH_HDD_1=vpub.qcow2 WORKER_CLASS="$CLASS" > "$TMP/post.json"
JOB=$(jget "$TMP/post.json" 'j["id"]')
check "job posted ($JOB)" [ -n "$JOB" ]
# openQA's developer mode, as a browser uses it: through the livehandler's
# developer ws-proxy to the runner's command server (cmd_srv_url from the
# worker's status): paused at menu, asked to pause at cmdline too, resumed,
# paused at cmdline, resumed; the job then ends passed as below.
TD=$(date +%s)
perl tests/integration/oq_devws.pl "$OQ_URL" "http://127.0.0.1:$((OQ_PORT + 2))" "$JOB" menu cmdline > "$TMP/devws.txt" 2>&1
echo "developer mode: $(($(date +%s) - TD)) s from the job's post to the last resume"
check "developer mode via openQA's livehandler: paused at menu (PAUSE_AT)" grep -q '^ok: paused at menu' "$TMP/devws.txt"
check "developer mode: set_pause_at_test cmdline, resumed, paused at cmdline" grep -q '^ok: paused at cmdline' "$TMP/devws.txt"
check "developer mode: resumed again" grep -q '^ok: resumed' "$TMP/devws.txt"
check "developer mode: status from the command server (devel_mode_major_version 1)" grep -q '"devel_mode_major_version":1' "$TMP/devws.txt"
check "developer mode: the worker took developer_session_start" grep -q "job $JOB: developer_session_start" "$TMP/worker.log"
grep -q '^ok: resumed' "$TMP/devws.txt" || tail -20 "$TMP/devws.txt"
oq_state() { oq_api "jobs/$1" 2> /dev/null | $PY -c 'import json,sys; j=json.load(sys.stdin)["job"]; print(j["state"], j["result"])' 2> /dev/null; }
# wait_job ID REGEX HALF-SECONDS: until the job's "state result" matches (a
# bound for a job that never gets there, not a speed assumption).
wait_job() {
	[ -n "$1" ] && [ "$1" != 0 ] || return 1
	n=0
	while ! oq_state "$1" | grep -q "$2" && [ $n -lt "$3" ]; do sleep 0.5; n=$((n + 1)); done
}
wait_job "$JOB" '^done' 1200
check "job $JOB done/passed under openQA" [ "$(oq_state "$JOB")" = "done passed" ]
oq_api "jobs/$JOB/details" > "$TMP/details.json"
oq_api "jobs/$JOB" > "$TMP/job.json"
oq_api workers > "$TMP/workers.json"
check "openQA lists the vigil worker with its class" [ "$(jget "$TMP/workers.json" '[w["properties"]["WORKER_CLASS"] for w in j["workers"]]')" = "['$CLASS']" ]
check "the ISO was downloaded, not shared" grep -q "asset iso/grub-rescue-cdrom.iso downloaded" "$TMP/worker.log"
check "job ran on it" [ "$(jget "$TMP/job.json" 'j["job"]["assigned_worker_id"] == '"$(jget "$TMP/workers.json" 'j["workers"][0]["id"]')")" = True ]
check "modules with their results" [ "$(jget "$TMP/details.json" '" ".join(m["name"]+"="+m["result"] for m in j["job"]["testresults"])')" = "boot=passed menu=passed cmdline=passed" ]
check "details: the boot step matched needle grub-menu, every area >= 95% similar" \
	[ "$(jget "$TMP/details.json" '[s["needle"] + " " + str(all(a["similarity"] >= 95 for a in s["area"])) for s in j["job"]["testresults"][0]["details"] if s.get("needle")][0]')" = "grub-menu True" ]
NSHOT=$(jget "$TMP/details.json" 'sum(1 for m in j["job"]["testresults"] for s in m["details"] if s.get("screenshot"))')
check "details: screenshots ($NSHOT)" [ "$NSHOT" -ge 10 ]
SHOT=$(jget "$TMP/details.json" '[s["screenshot"] for s in j["job"]["testresults"][0]["details"] if s.get("screenshot")][0]')
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$1"; }
check "screenshot $SHOT served as PNG" sh -c "[ \"\$(curl -s -o '$TMP/shot.png' -w '%{http_code}' '$OQ_URL/tests/$JOB/images/$SHOT')\" = 200 ] && file '$TMP/shot.png' | grep -q PNG"
check "thumbnail of $SHOT served as PNG" sh -c "[ \"\$(curl -s -o '$TMP/thumb.png' -w '%{http_code}' '$OQ_URL/tests/$JOB/images/thumb/$SHOT')\" = 200 ] && file '$TMP/thumb.png' | grep -q PNG && [ \$(stat -c %s '$TMP/thumb.png') -lt \$(stat -c %s '$TMP/shot.png') ]"
for f in autoinst-log.txt video.webm vars.json serial0.txt; do
	check "log $f listed and served" sh -c "$PY -c 'import json,sys; sys.exit(0 if \"$f\" in json.load(open(\"$TMP/details.json\"))[\"job\"][\"logs\"] else 1)' && [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$OQ_URL/tests/$JOB/file/$f')\" = 200 ]"
done
check "job page" sh -c "[ \"\$(curl -s -o '$TMP/page.html' -w '%{http_code}' '$OQ_URL/tests/$JOB')\" = 200 ] && grep -q 'grub-1-cd-x86_64-Build1-grub@64bit' '$TMP/page.html'"
check "job page's module list (details_ajax): the three modules" sh -c "curl -s '$OQ_URL/tests/$JOB/details_ajax' > '$TMP/ajax.json' && [ \"\$($PY -c 'import json; print(\" \".join(m[\"name\"] for m in json.load(open(\"$TMP/ajax.json\"))[\"modules\"]))')\" = 'boot menu cmdline' ]"
check "step page boot/1: needle grub-menu, its similarity, screenshot" sh -c "curl -s -H 'X-Requested-With: XMLHttpRequest' '$OQ_URL/tests/$JOB/modules/boot/steps/1' > '$TMP/step.html' && grep -q 'grub-menu' '$TMP/step.html' && grep -Eq '(9[5-9]|100)%' '$TMP/step.html' && grep -q 'boot-1.png' '$TMP/step.html'"
check "video served" sh -c "[ \"\$(curl -s -o '$TMP/video.webm' -w '%{http_code}' '$OQ_URL/tests/$JOB/file/video.webm')\" = 200 ] && file '$TMP/video.webm' | grep -qi 'webm'"

# A Perl distribution (the anchors' GRUB test, os-autoinst's test API) the same way.
oq_api -X POST jobs TEST=pgrub DISTRI=pgrub VERSION=1 ARCH=x86_64 BUILD=1 ISO=grub-rescue-cdrom.iso QEMURAM=512 \
	WORKER_CLASS="$CLASS" > "$TMP/postp.json"
JP=$(jget "$TMP/postp.json" 'j["id"]')
wait_job "$JP" '^done' 1200
check "Perl job $JP done/passed under openQA" [ "$(oq_state "$JP")" = "done passed" ]
oq_api "jobs/$JP/details" > "$TMP/pdetails.json"
check "Perl job: module boot passed, with screenshots" [ "$(jget "$TMP/pdetails.json" '" ".join(m["name"]+"="+m["result"] for m in j["job"]["testresults"]) + " " + str(sum(1 for m in j["job"]["testresults"] for s in m["details"] if s.get("screenshot")) > 0)')" = "boot=passed True" ]

# PUBLISH_HDD_1: the disk went up in openQA's chunks (Storable records),
# openQA checked and registered it; its content is the seed's.
JPUB=$JOB
check "published: vigil worker sent hdd/vpub.qcow2 in 3 chunks" grep -q "asset 'vpub.qcow2' ([0-9]* bytes) in 3 chunks" "$TMP/worker.log"
check "published: openQA stored hdd/vpub.qcow2 with the seed's content" \
	qemu-img compare -q "$OQ_SHARE/factory/hdd/seed.qcow2" "$OQ_SHARE/factory/hdd/vpub.qcow2"
check "published: openQA lists the asset hdd/vpub.qcow2 (job $JPUB's)" \
	sh -c "openqa-cli api --host '$OQ_URL' --apikey $OQ_KEY --apisecret $OQ_SECRET assets | $PY -c 'import json,sys; sys.exit(0 if [a for a in json.load(sys.stdin)[\"assets\"] if a[\"name\"]==\"vpub.qcow2\" and a[\"type\"]==\"hdd\"] else 1)'"

# A setup failure's reason (with spaces: signed as openQA verifies, '+')
# reaches openQA: the job ends incomplete instead of hanging in setup.
oq_api -X POST jobs TEST=nosuch DISTRI=grub ARCH=x86_64 BUILD=1 ISO=nosuch.iso WORKER_CLASS="$CLASS" > "$TMP/post2.json"
J2=$(jget "$TMP/post2.json" 'j["id"]')
wait_job "$J2" '^done' 600
check "missing asset: job $J2 done/incomplete" [ "$(oq_state "$J2")" = "done incomplete" ]
oq_api "jobs/$J2" > "$TMP/job2.json"
check "missing asset: the reason names it" sh -c "$PY -c 'import json; r=json.load(open(\"$TMP/job2.json\"))[\"job\"][\"reason\"]; print(r); exit(0 if r.startswith(\"setup failure: asset iso/nosuch.iso\") and \"HTTP 404\" in r else 1)'"

# Cancel over the WebSocket: a job that waits for a screen that never
# comes, cancelled once running; QEMU goes, the job ends user_cancelled.
oq_api -X POST jobs TEST=never DISTRI=faults FAULT=never ARCH=x86_64 BUILD=1 ISO=grub-rescue-cdrom.iso \
	QEMURAM=512 WORKER_CLASS="$CLASS" > "$TMP/post3.json"
J3=$(jget "$TMP/post3.json" 'j["id"]')
wait_job "$J3" '^running' 1200
check "job $J3 running" sh -c "oq_api() { openqa-cli api --host '$OQ_URL' --apikey $OQ_KEY --apisecret $OQ_SECRET \"\$@\"; }; oq_api jobs/$J3 | grep -q '\"state\":\"running\"'"
# openQA's live view of the running job: its stream page asks the worker
# (livelog_start over the WebSocket) and shows the frames the worker's
# status carries; the live log endpoint streams the runner's output.
: > "$TMP/streaming.txt"
curl -sN --max-time 300 "$OQ_URL/tests/$J3/streaming" >> "$TMP/streaming.txt" 2> /dev/null &
CPID=$!
n=0
until grep -q 'data:image/png;base64,' "$TMP/streaming.txt" || [ $n -ge 600 ]; do sleep 0.5; n=$((n + 1)); done
check "live view: openQA's stream shows the vigil worker's screen" grep -q 'data:image/png;base64,iVBOR' "$TMP/streaming.txt"
check "live view: the worker took livelog_start" grep -q "job $J3: livelog_start (1 viewer(s))" "$TMP/worker.log"
curl -sN --max-time 5 "$OQ_URL/tests/$J3/livelog" > "$TMP/livelog.txt" 2> /dev/null
check "live log: openQA's livelog endpoint streams the runner's output" grep -q '^data: \[' "$TMP/livelog.txt"
kill "$CPID" 2> /dev/null
wait "$CPID" 2> /dev/null
n=0
until grep -q "job $J3: livelog_stop (0 viewer(s))" "$TMP/worker.log" || [ $n -ge 120 ]; do sleep 0.5; n=$((n + 1)); done
check "live view closed: the worker took livelog_stop" grep -q "job $J3: livelog_stop (0 viewer(s))" "$TMP/worker.log"
oq_api -X POST "jobs/$J3/cancel" > /dev/null
wait_job "$J3" '^done' 600
check "cancelled job $J3 ends user_cancelled" [ "$(oq_state "$J3")" = "done user_cancelled" ]
check "cancelled job: no QEMU left" qemu_gone "$TMP/pool"
check "worker log: cancelled by openQA" grep -q "job $J3: cancelled by openQA" "$TMP/worker.log"

# A directly chained pair (START_DIRECTLY_AFTER_TEST in a test suite, the
# build posted with isos): openQA sends both in one grab_jobs sequence.
oq_api -X POST machines name=64bit backend=qemu > /dev/null
oq_api -X POST products distri=grub version=1 flavor=cd arch=x86_64 > /dev/null
oq_api -X POST test_suites name=grubA "settings[WORKER_CLASS]=$CLASS" > /dev/null
oq_api -X POST test_suites name=grubB "settings[WORKER_CLASS]=$CLASS" "settings[START_DIRECTLY_AFTER_TEST]=grubA" > /dev/null
oq_api -X POST job_groups name=chain > /dev/null
for t in grubA grubB; do
	oq_api -X POST job_templates group_name=chain machine_name=64bit test_suite_name=$t distri=grub version=1 \
		flavor=cd arch=x86_64 prio=50 > /dev/null
done
oq_api -X POST isos DISTRI=grub VERSION=1 FLAVOR=cd ARCH=x86_64 BUILD=chain ISO=grub-rescue-cdrom.iso \
	_NO_OBSOLETE=1 > "$TMP/isos.json"
check "isos: the chained pair scheduled" [ "$(jget "$TMP/isos.json" 'len(j["ids"])')" = 2 ]
JA=$(jget "$TMP/isos.json" 'min(j["ids"])' 2> /dev/null || echo 0)
JB=$(jget "$TMP/isos.json" 'max(j["ids"])' 2> /dev/null || echo 0)
wait_job "$JB" '^done' 1200
check "chained parent $JA done/passed" [ "$(oq_state "$JA")" = "done passed" ]
check "directly chained child $JB done/passed" [ "$(oq_state "$JB")" = "done passed" ]
oq_api "jobs/$JB" > "$TMP/jobB.json"
check "child's parent is $JA (directly chained)" [ "$(jget "$TMP/jobB.json" 'j["job"]["parents"]["Directly chained"]')" = "[$JA]" ]
check "both came in one grab_jobs" grep -q "grab_jobs: 2 job(s)" "$TMP/worker.log"

# openQA's "quit" command while a job runs: the job is duplicated and ends
# incomplete, the worker says goodbye and exits.
oq_api -X POST jobs TEST=never2 DISTRI=faults FAULT=never ARCH=x86_64 BUILD=1 ISO=grub-rescue-cdrom.iso \
	QEMURAM=512 WORKER_CLASS="$CLASS" > "$TMP/post4.json"
J4=$(jget "$TMP/post4.json" 'j["id"]')
wait_job "$J4" '^running' 1200
WID=$(jget "$TMP/workers.json" 'j["workers"][0]["id"]')
oq_api -X POST "workers/$WID/commands" command=quit > /dev/null
wait_job "$J4" '^done' 600
check "quit: job $J4 done/incomplete" [ "$(oq_state "$J4")" = "done incomplete" ]
oq_api "jobs/$J4" > "$TMP/job4.json"
check "quit: job $J4 duplicated, with openQA's reason" [ "$(jget "$TMP/job4.json" 'bool(j["job"]["clone_id"]) and j["job"]["reason"].startswith("quit")')" = True ]
n=0
while kill -0 "$WPID" 2> /dev/null && [ $n -lt 240 ]; do sleep 0.5; n=$((n + 1)); done
check "quit: the worker exited" sh -c "! kill -0 $WPID 2> /dev/null"
check "quit: no QEMU left" qemu_gone "$TMP/pool"

echo "interop_openqa: $(($(date +%s) - T0)) s"
finish
