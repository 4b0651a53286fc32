#!/bin/sh
# SPDX-License-Identifier: MIT
# test_worker.sh - the worker protocol end to end: `vigil serve`, two
# `vigil worker` instances, the grub and shell examples scheduled through
# the API (openqa-cli), run for real, artefacts uploaded and served; a
# cancel, a worker killed with SIGKILL (job incomplete + clone, no QEMU
# left), a restarted worker taking new work, and a path traversal refused.
# run-all: long 79
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"

new_keys
mkdir -p "$DATA/tests"
cp -r examples/grub "$DATA/tests/grub"
cp -r examples/shell "$DATA/tests/shell"
cp -r tests/integration/distri-faults "$DATA/tests/faults"
start_server --worker-timeout 15 # 3 status intervals: a busy machine delays a status, never loses a worker
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"

# The build trigger path, as openQA users schedule: machine, product, suites, templates, isos.
cli -X POST machines name=64bit backend=qemu > /dev/null
cli -X POST products distri=grub version=1 flavor=cd arch=x86_64 > /dev/null
cli -X POST test_suites name=grub > /dev/null
cli -X POST job_groups name=examples > /dev/null
cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=grub distri=grub version=1 flavor=cd arch=x86_64 > /dev/null
cli -X POST isos DISTRI=grub VERSION=1 FLAVOR=cd ARCH=x86_64 BUILD=1 > "$TMP/iso.json"
check "isos: grub job scheduled" [ "$(json_get "$TMP/iso.json" 'j["ids"]')" = "[1]" ]
cli -X POST jobs TEST=shell DISTRI=shell ARCH=x86_64 MACHINE=64bit BUILD=1 > /dev/null  # job 2

start_worker 1; W1=$WPID
start_worker 2; W2=$WPID
check "job 1 (grub) done/passed" wait_state 1 "done passed" 90
check "job 2 (shell) done/passed" wait_state 2 "done passed" 90
cli jobs/1 > "$TMP/j1.json"
cli jobs/1/details > "$TMP/j1d.json"
check "job 1: modules and their results" [ "$(json_get "$TMP/j1.json" '" ".join(m["name"]+"="+m["result"] for m in j["job"]["modules"])')" = "boot=passed menu=passed cmdline=passed" ]
check "job 1: worker recorded" [ "$(json_get "$TMP/j1.json" 'j["job"]["assigned_worker_id"] in (1, 2)')" = True ]
check "job 1 details: logs listed" sh -c "json_get() { python3 -c \"import json,sys; j=json.load(open(sys.argv[1])); print(\$2)\" \"\$1\"; }; [ \"\$(json_get $TMP/j1d.json '\"vigil-log.txt\" in j[\"job\"][\"logs\"] and \"video.webm\" in j[\"job\"][\"logs\"] and \"results.json\" in j[\"job\"][\"logs\"]')\" = True ]"
NSHOT=$(json_get "$TMP/j1d.json" 'len(j["job"]["screenshots"])')
check "job 1: screenshots uploaded ($NSHOT)" [ "$NSHOT" -ge 10 ]
curl -sf "$URL/tests/1/file/boot-1.png" -o "$TMP/boot.png"
check "screenshot served (PNG)" sh -c "head -c 8 '$TMP/boot.png' | od -c | grep -q 'P   N   G'"
curl -sf "$URL/tests/1/file/results.json" -o "$TMP/res.json"
check "results.json served" [ "$(json_get "$TMP/res.json" 'j["result"]')" = passed ]
curl -sf "$URL/tests/1/file/source-menu.lua" -o "$TMP/source-menu.lua"
check "module source uploaded and served" cmp -s "$TMP/source-menu.lua" examples/grub/tests/menu.lua
curl -sf "$URL/tests/2/file/serial0.txt" -o "$TMP/serial.txt"
check "serial log served" [ -s "$TMP/serial.txt" ]
curl -sf "$URL/tests/1/images/thumb/boot-1.png" -o "$TMP/thumb.png"
check "thumbnail uploaded and served, smaller than its screenshot" sh -c \
	"[ -f '$DATA/testresults/1/.thumbs/boot-1.png' ] && cmp -s '$TMP/thumb.png' '$DATA/testresults/1/.thumbs/boot-1.png' && [ \$(wc -c < '$TMP/thumb.png') -lt \$(wc -c < '$TMP/boot.png') ]"
cli jobs/2/details > "$TMP/j2d.json"
check "job 2: the log its test uploaded listed as ulogs" [ "$(json_get "$TMP/j2d.json" 'j["job"]["ulogs"]')" = "['commands-cmdline']" ]
curl -sf "$URL/tests/2/file/commands-cmdline" -o "$TMP/ulog.txt"
check "uploaded log served under /file/" grep -q console= "$TMP/ulog.txt"
NIMG=$(ls "$DATA/images" | wc -l)
NLINKED=$(find "$DATA/testresults/1" "$DATA/testresults/2" -name '*.png' | wc -l)
check "screenshots stored once by content ($NIMG images for $NLINKED links)" [ "$NIMG" -le "$NLINKED" -a "$NIMG" -gt 0 ]
check "distribution cached in the pool" sh -c "ls -d '$TMP'/pool*/cache/grub-* > /dev/null"

# Cancel a running job: the worker kills the runner, uploads, result user_cancelled.
cli -X POST jobs TEST=grub DISTRI=grub ARCH=x86_64 BUILD=2 > "$TMP/j3.json"
J3=$(json_get "$TMP/j3.json" 'j["id"]')
check "job $J3 starts" wait_running "$J3" 30
sleep 1
cli -X POST "jobs/$J3/cancel" > /dev/null
check "cancelled job ends user_cancelled" wait_state "$J3" "done user_cancelled" 30
check "cancelled job: no QEMU left in either pool" qemu_gone "$TMP/pool"

# Live view: a viewer asking for a running job's frame makes the worker send
# frames within a few seconds; they stop being served when the job ends.
cli -X POST jobs TEST=never DISTRI=faults FAULT=never ARCH=x86_64 BUILD=live > "$TMP/jl.json"
JL=$(json_get "$TMP/jl.json" 'j["id"]')
check "job $JL (waits forever) starts" wait_running "$JL" 30
check "live: nobody watched yet, no frame" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$URL/tests/$JL/live.png')\" = 404 ]"
n=0
until curl -sf "$URL/tests/$JL/live.png" -o "$TMP/live.png" 2>/dev/null || [ $n -ge 60 ]; do sleep 0.5; n=$((n + 1)); done
check "live: a frame arrives while someone watches (after $((n / 2)) s)" [ $n -lt 60 ]
check "live: the frame is a 1024x768 PNG" $PY -c "import struct,sys; d=open('$TMP/live.png','rb').read(); sys.exit(not (d[:8]==b'\x89PNG\r\n\x1a\n' and struct.unpack('>II', d[16:24])==(1024,768)))"
curl -sf "$URL/api/v1/jobs/$JL/live" -o "$TMP/live.json"
check "live: the job says it is watched and where its frame is" [ "$(json_get "$TMP/live.json" 'j["watching"] and j["frame"]')" = "/tests/$JL/live.png" ]
cli -X POST "jobs/$JL/cancel" > /dev/null
check "live: the watched job ends when cancelled" wait_state "$JL" "done user_cancelled" 30
check "live: no frame served after the end" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$URL/tests/$JL/live.png')\" = 404 ]"
cli "jobs/$JL/details" > "$TMP/jld.json"
check "live: the frame is no artefact of the job" sh -c "! grep -q 'live.png' '$TMP/jld.json'"

# CASEDIR as a git repository (openQA's URL#REF): the worker clones it.
git init -q -b main "$TMP/distri.git" && cp -r examples/grub/. "$TMP/distri.git/" &&
	(cd "$TMP/distri.git" && git add . && git -c user.name=t -c user.email=t@t commit -q -m grub && git branch ci)
cli -X POST jobs TEST=grub DISTRI=from-git "CASEDIR=file://$TMP/distri.git#ci" ARCH=x86_64 BUILD=git > "$TMP/jg.json"
JG=$(json_get "$TMP/jg.json" 'j["id"]')
check "CASEDIR git URL#branch: the cloned distribution runs to done/passed" wait_state "$JG" "done passed" 120
check "CASEDIR git: cloned into the worker's pool" sh -c "ls -d '$TMP'/pool*/casedir/.git > /dev/null"
curl -sf "$URL/tests/$JG/file/vars.json" > "$TMP/jgvars.json"
check "CASEDIR git: vars.json records the commit as TEST_GIT_HASH" \
	[ "$(json_get "$TMP/jgvars.json" 'j.get("TEST_GIT_HASH")')" = "$(git -C "$TMP/distri.git" rev-parse ci)" ]
cli -X POST jobs TEST=grub DISTRI=from-git "CASEDIR=file://$TMP/nosuch.git" ARCH=x86_64 BUILD=git2 > "$TMP/jg2.json"
JG2=$(json_get "$TMP/jg2.json" 'j["id"]')
check "CASEDIR git that cannot be cloned: incomplete" wait_state "$JG2" "done incomplete" 60
cli "jobs/$JG2" > "$TMP/jg2b.json"
check "CASEDIR git failure: the reason names the clone" sh -c "grep -q 'cloning CASEDIR' '$TMP/jg2b.json'"

# Kill a worker mid-job with SIGKILL: the job ends incomplete and is cloned.
kill -9 "$W2" 2>/dev/null
kill "$W1"; wait "$W1" 2>/dev/null
start_worker 2; W2=$WPID
cli -X POST jobs TEST=grub DISTRI=grub ARCH=x86_64 BUILD=3 > "$TMP/j4.json"
J4=$(json_get "$TMP/j4.json" 'j["id"]')
check "job $J4 starts on worker 2" wait_running "$J4" 30
sleep 1
kill -9 "$W2"
check "killed worker: no QEMU left in its pool" qemu_gone "$TMP/pool2"
check "lost worker: job $J4 ends incomplete" wait_state "$J4" "done incomplete" 30
cli "jobs/$J4" > "$TMP/j4b.json"
check "lost worker: reason names the worker" sh -c "grep -q 'lost' '$TMP/j4b.json'"
CLONE=$(json_get "$TMP/j4b.json" 'j["job"]["clone_id"]')
check "lost worker: job cloned ($CLONE)" [ "$CLONE" != None ]
start_worker 2; W2=$WPID
check "restarted worker runs the clone to done/passed" wait_state "$CLONE" "done passed" 90

# A worker restarted mid-job abandons the job at once (re-registration).
cli -X POST jobs TEST=grub DISTRI=grub ARCH=x86_64 BUILD=4 > "$TMP/j5.json"
J5=$(json_get "$TMP/j5.json" 'j["id"]')
check "job $J5 starts" wait_running "$J5" 30
kill -9 "$W2"
start_worker 2; W2=$WPID
check "re-registered worker: job $J5 abandoned (incomplete)" wait_state "$J5" "done incomplete" 15
check "re-registered worker: reason says abandoned" sh -c "openqa-cli api --host $URL jobs/$J5 | grep -q 're-connected but abandoned'"
CLONE5=$(cli "jobs/$J5" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["clone_id"])')
check "re-registered worker runs the clone ($CLONE5) to done/passed" wait_state "$CLONE5" "done passed" 90

# Bad requests: path traversal in an artefact name -> 4xx, nothing written outside.
sign() { $PY -c 'import hmac,hashlib,sys; print(hmac.new(sys.argv[1].encode(), (sys.argv[2]+sys.argv[3]).encode(), hashlib.sha1).hexdigest())' "$SECRET" "$1" "$2"; }
cli -X POST jobs TEST=held DISTRI=none WORKER_CLASS=nobody > /dev/null
for name in '..%2F..%2Fescape.txt' '%2Ftmp%2Fescape.txt' '..' 'a%00b' '.hidden'; do
	T="/api/v1/jobs/1/artefact?file=$name"
	NOW=$(date +%s)
	CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
		-H "X-API-Hash: $(sign "$T" "$NOW")" -H 'Content-Type: application/octet-stream' --data-binary 'evil' "$URL$T")
	check "artefact name '$name' refused ($CODE)" [ "$CODE" -ge 400 -a "$CODE" -lt 500 ]
done
check "nothing written outside the job's directory" sh -c "! ls '$DATA/escape.txt' '$DATA/testresults/escape.txt' /tmp/escape.txt 2>/dev/null | grep -q ."
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL/tests/1/file/..%2Fvigil.db")
check "download of ../vigil.db refused ($CODE)" [ "$CODE" -ge 400 -a "$CODE" -lt 500 ]
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary x "$URL/api/v1/jobs/1/artefact?file=x.txt")
check "unsigned upload refused ($CODE)" [ "$CODE" = 403 ]

# Retention (issue 18): the jobs above made old by moving their finish back
# (the only thing faked); a cleanup shows its plan first, then removes
# exactly that: job 2's logs (40 days, past the 30 of the default), job
# 1 whole (400 days, past 365), then the screenshots nothing links.
cli -X PUT job_groups/1 keep_logs_in_days=20 size_limit_gb=5 > /dev/null
check "job group: retention settings stored, defaults shown where unset" [ "$(cli job_groups/1 | json_get /dev/stdin \
	'(j[0]["keep_logs_in_days"], j[0]["size_limit_gb"], j[0]["keep_results_in_days"], j[0]["keep_important_logs_in_days"])')" = "(20, 5, 365, 120)" ]
CODE=$(cli -X PUT job_groups/1 keep_results_in_days=-3 2>&1 | grep -c 'keep_results_in_days: -3 is out of bounds')
check "job group: a negative keep_results_in_days refused, naming the field" [ "$CODE" = 1 ]
cli -X PUT job_groups/1 keep_logs_in_days= > /dev/null
sqlite3 "$DATA/vigil.db" "UPDATE jobs SET t_finished = strftime('%Y-%m-%dT%H:%M:%S', 'now', '-40 days') WHERE id = 2;
	UPDATE jobs SET t_finished = strftime('%Y-%m-%dT%H:%M:%S', 'now', '-400 days') WHERE id = 1;"
cli cleanup > "$TMP/plan.json"
check "cleanup plan: job 1's results, 400 days old" [ "$(json_get "$TMP/plan.json" '[(x["id"], x["reason"]) for x in j["jobs"]]')" = "[(1, 'results of jobs are kept 365 days')]" ]
check "cleanup plan: job 2's logs (serial, runner log, video), not its results" [ "$(json_get "$TMP/plan.json" \
	'[x["id"] for x in j["logs"]] == [2] and {"serial0.txt", "vigil-log.txt", "video.webm"} <= set(j["logs"][0]["files"]) and not [f for f in j["logs"][0]["files"] if f.endswith(".png") or f.endswith(".json")]')" = True ]
check "cleanup plan: nothing removed yet" sh -c "[ -d '$DATA/testresults/1' ] && [ -f '$DATA/testresults/2/serial0.txt' ]"
check "cleanup plan: admins only" [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/cleanup")" = 403 ]
cli -X POST cleanup > "$TMP/done.json"
check "cleanup: job 1 gone (404) with its results directory" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$URL/api/v1/jobs/1')\" = 404 ] && [ ! -e '$DATA/testresults/1' ]"
check "cleanup: job 2's logs gone, its screenshots and results stay" sh -c "[ ! -e '$DATA/testresults/2/serial0.txt' ] && [ ! -e '$DATA/testresults/2/ulogs' ] && [ -f '$DATA/testresults/2/results.json' ] && ls '$DATA/testresults/2/' | grep -q '\.png$'"
cli jobs/2/details > "$TMP/j2after.json"
check "cleanup: job 2's page still answers, without the logs" [ "$(json_get "$TMP/j2after.json" '"serial0.txt" not in j["job"]["logs"] and "results.json" in j["job"]["logs"]')" = True ]
check "cleanup: every stored screenshot still linked by a job" sh -c "[ -z \"\$(find '$DATA/images' -type f -links 1)\" ]"
check "cleanup: a second plan is empty" [ "$(cli cleanup | json_get /dev/stdin 'len(j["jobs"]) + len(j["logs"]) + len(j["assets"])')" = 0 ]

kill "$W2"; wait "$W2" 2>/dev/null
check "no qemu-system left in any pool" qemu_gone "$TMP/pool"
finish
