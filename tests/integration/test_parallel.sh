#!/bin/sh
# SPDX-License-Identifier: MIT
# test_parallel.sh - parallel jobs of `vigil serve` (openQA's PARALLEL
# dependency, issue 15): a server job and its parallel client, posted with
# openqa-cli's _PARALLEL, wait while one worker is free, then run at once on
# two `vigil worker`s and meet through os-autoinst's lockapi and mmapi
# (distri-perl-grub tests/parallel.pm: barriers both jobs reach while the
# other is seen running, a mutex one holds while the other tries it). Then a
# cluster whose client fails: the waiting server ends parallel_failed,
# stopped by its worker; restarting it restarts the cluster; cancelling a
# job skips its relatives. A job directly chained (START_DIRECTLY_AFTER)
# after another waits for its parent's worker while the other asks; openQA's prio, bulk cancel (by settings) and bulk
# restart routes through openqa-cli. No timing:
# every wait polls a state with a generous bound. Needs Debian's
# os-autoinst, the GRUB ISO (scripts/fetch-images) and QEMU.
# run-all: long 48
. "$(dirname "$0")/lib.sh"
D=tests/integration/distri-perl-grub
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
if [ ! -f /usr/lib/os-autoinst/lockapi.pm ] || [ ! -f "$ISO" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/lib/os-autoinst (os-autoinst), $ISO and qemu-system-x86_64"
	finish
	exit 0
fi
. "$(dirname "$0")/server_lib.sh"
# lockapi polls a lock it waits for every 5 s by default: 1 s keeps the suite short.
export OS_AUTOINST_LOCKAPI_POLL_INTERVAL=1
new_keys
mkdir -p "$DATA/tests"
cp -r $D "$DATA/tests/perl-grub"
cp -r examples/grub/needles "$DATA/tests/perl-grub/needles"
$PY -c 'import json,sys; p=sys.argv[1]; j=json.load(open(p)); del j["NEEDLES_DIR"]; json.dump(j, open(p, "w"))' \
	"$DATA/tests/perl-grub/vars.json"
start_server -v # info lines too: the scheduler's assignments
db() { sql "$@"; }
COMMON="DISTRI=perl-grub ARCH=x86_64 MACHINE=64bit BUILD=1"

# --- the cluster, as openqa-cli posts related jobs (suffixes)
cli -X POST jobs $COMMON TEST:server=par-server PARALLEL_ROLE:server=server \
	TEST:client=par-client PARALLEL_ROLE:client=client _PARALLEL:client=server > "$TMP/post.json"
S=$(json_get "$TMP/post.json" 'j["ids"]["server"]')
C=$(json_get "$TMP/post.json" 'j["ids"]["client"]')
cli "jobs/$C" > "$TMP/c.json"
cli "jobs/$S" > "$TMP/s.json"
check "post: the client's parents.Parallel is the server, the server's children.Parallel the client" \
	[ "$(json_get "$TMP/c.json" 'j["job"]["parents"]["Parallel"]')" = "[$S]" -a \
	"$(json_get "$TMP/s.json" 'j["job"]["children"]["Parallel"]')" = "[$C]" ]

# One worker: it asks for work, and the cluster stays scheduled (never half a cluster).
start_worker 1
W1=$WPID
polled() { [ "$(db "SELECT COUNT(*) FROM workers WHERE instance = $1 AND t_seen IS NOT NULL")" = 1 ]; }
n=0; while ! polled 1 && [ $n -lt 240 ]; do sleep 0.5; n=$((n + 1)); done
check "one free worker: registered and polling" polled 1
# Its poll is answered only when the poll ends; another full poll round
# (the server resumes parked polls every second) has seen the cluster.
seen0=$(db "SELECT t_seen_s FROM workers WHERE instance = 1")
n=0; while [ "$(db "SELECT t_seen_s FROM workers WHERE instance = 1")" -le $((seen0 + 1)) ] && [ $n -lt 240 ]; do
	sleep 0.5; n=$((n + 1)); done
check "one free worker: both jobs still scheduled" \
	[ "$(state_of "$S")" = "scheduled none" -a "$(state_of "$C")" = "scheduled none" ]

# A second worker: both jobs are assigned at once and run together.
start_worker 2
W2=$WPID
check "two workers: the server done/passed" wait_state "$S" "done passed" 300
check "two workers: the client done/passed" wait_state "$C" "done passed" 300
check "the two jobs ran on two workers" \
	[ "$(db "SELECT COUNT(DISTINCT assigned_worker_id) FROM jobs WHERE id IN ($S, $C)")" = 2 ]
FIRST=$((S < C ? S : C))
check "the scheduler assigned both jobs in one step, as one cluster" \
	[ "$(grep -Ec "info sched: job ($S|$C) assigned to worker [0-9]+ with its parallel cluster of 2 \(job $FIRST\)" "$TMP/serve.log")" = 2 ]
cli "jobs/$S" > "$TMP/s.json"
cli "jobs/$C" > "$TMP/c.json"
check "both modules parallel passed" \
	[ "$(json_get "$TMP/s.json" '[m["name"]+"="+m["result"] for m in j["job"]["modules"]]')" = "['parallel=passed']" -a \
	"$(json_get "$TMP/c.json" '[m["name"]+"="+m["result"] for m in j["job"]["modules"]]')" = "['parallel=passed']" ]
# The barriers record who reached them: both jobs, while both ran.
barrier() { db "SELECT count || ':' || locked_by FROM job_locks WHERE name = '$1' AND owner = $S"; }
check "barrier par_start reached by both jobs" sh -c "[ '$(barrier par_start)' = '2:$S,$C' ] || [ '$(barrier par_start)' = '2:$C,$S' ]"
check "barrier par_end reached by both jobs" sh -c "[ '$(barrier par_end)' = '2:$S,$C' ] || [ '$(barrier par_end)' = '2:$C,$S' ]"
check "the server's mutex par_m unlocked at the end" [ "$(db "SELECT COALESCE(locked_by, '-') FROM job_locks WHERE name = 'par_m'")" = - ]
# info_text JOB: the text of the job's record_info 'parallel' (a file of its own).
info_text() {
	curl -s "$URL/tests/$1/file/result-parallel.json" > "$TMP/r.json"
	curl -s "$URL/tests/$1/file/$(json_get "$TMP/r.json" '[d["text"] for d in j["details"] if d.get("title") == "parallel"][0]')"
}
check "the client saw the server running at the barrier and its mutex held" \
	sh -c "echo '$(info_text "$C")' | grep -q 'server $S was running at barrier par_start; par_m held by it'"
check "the server saw the client running at the barrier" \
	sh -c "echo '$(info_text "$S")' | grep -q 'client $C was running at barrier par_start, then ended'"

# --- START_DIRECTLY_AFTER_TEST: the child runs on its parent's worker
# only. The parent runs on worker X; X is stopped, the child posted after
# the passed parent (_START_DIRECTLY_AFTER_JOBS): the other worker asks
# and does not get it (X counts as alive for 60 s after it was last
# heard); X started again (same instance: same worker) runs it.
cli -X POST jobs $COMMON TEST=direct-a > "$TMP/posta.json"
DA=$(json_get "$TMP/posta.json" 'j["id"]')
check "directly chained: the parent passed" wait_state "$DA" "done passed" 300
XI=$(db "SELECT w.instance FROM workers w JOIN jobs j ON j.assigned_worker_id = w.id WHERE j.id = $DA")
YI=$((3 - XI))
eval "kill \$W$XI"
wait "$(eval echo \$W$XI)" 2>/dev/null
cli -X POST jobs $COMMON TEST=direct-b _START_DIRECTLY_AFTER_JOBS=$DA > "$TMP/postb.json"
DB=$(json_get "$TMP/postb.json" 'j["id"]')
seen0=$(date +%s)
n=0; while [ "$(db "SELECT t_seen_s FROM workers WHERE instance = $YI")" -le $((seen0 + 2)) ] && [ $n -lt 240 ]; do
	sleep 0.5; n=$((n + 1)); done
check "directly chained: the other worker asked, the child stays for the parent's worker" \
	[ "$(db "SELECT CASE WHEN COALESCE(assigned_worker_id, 0) <> (SELECT id FROM workers WHERE instance = $YI) THEN 1 ELSE 0 END FROM jobs WHERE id = $DB")" = 1 ]
start_worker "$XI"
eval "W$XI=\$WPID"
check "directly chained: the child passed" wait_state "$DB" "done passed" 300
check "directly chained: both on one worker" \
	[ "$(db "SELECT COUNT(DISTINCT assigned_worker_id) FROM jobs WHERE id IN ($DA, $DB)")" = 1 ]

# --- a cluster whose client fails: the server, waiting at par_start, is stopped
cli -X POST jobs $COMMON TEST:server=par-server PARALLEL_ROLE:server=server \
	TEST:client=par-client-fail PARALLEL_ROLE:client=client-fail _PARALLEL:client=server > "$TMP/post2.json"
S2=$(json_get "$TMP/post2.json" 'j["ids"]["server"]')
C2=$(json_get "$TMP/post2.json" 'j["ids"]["client"]')
check "failing client: done/failed" wait_state "$C2" "done failed" 300
check "failing client: the server ends parallel_failed, cancelled by its worker" \
	wait_state "$S2" "done parallel_failed" 300
check "failing client: the server's reason names the client" \
	[ "$(db "SELECT reason FROM jobs WHERE id = $S2")" = "parallel job $C2 ended failed" ]
# Restarting the server restarts the cluster: it runs again, ends the same way.
cli -X POST "jobs/$S2/restart" > "$TMP/restart.json"
NS=$(db "SELECT clone_id FROM jobs WHERE id = $S2")
NC=$(db "SELECT clone_id FROM jobs WHERE id = $C2")
check "restart: both jobs cloned" [ -n "$NS" -a -n "$NC" ]
cli "jobs/$NC" > "$TMP/nc.json"
check "restart: the client's clone is parallel to the server's clone" \
	[ "$(json_get "$TMP/nc.json" 'j["job"]["parents"]["Parallel"]')" = "[$NS]" ]
check "restart: the clones ran, the client failed again" wait_state "$NC" "done failed" 300
check "restart: the server's clone parallel_failed" wait_state "$NS" "done parallel_failed" 300
check "restart: the old jobs keep their results" \
	[ "$(state_of "$S2")" = "done parallel_failed" -a "$(state_of "$C2")" = "done failed" ]

# --- cancelling a job of a cluster no worker takes (its class is offered by none)
cli -X POST jobs $COMMON WORKER_CLASS=nosuch TEST:server=par-server PARALLEL_ROLE:server=server \
	TEST:client=par-client PARALLEL_ROLE:client=client _PARALLEL:client=server > "$TMP/post3.json"
S3=$(json_get "$TMP/post3.json" 'j["ids"]["server"]')
C3=$(json_get "$TMP/post3.json" 'j["ids"]["client"]')
cli -X POST "jobs/$S3/cancel" > /dev/null
check "cancel: the server cancelled, its parallel client skipped with it" \
	[ "$(state_of "$S3")" = "cancelled user_cancelled" -a "$(state_of "$C3")" = "cancelled skipped" ]

# --- openQA's prio and bulk routes (openqa-cli), on jobs no worker takes
refused_with() { # refused_with TEXT CLI-ARGS...: openqa-cli fails and prints the error TEXT
	t=$1; shift
	! cli "$@" > "$TMP/refused.json" 2>&1 && grep -q "$t" "$TMP/refused.json"
}
cli -X POST jobs $COMMON WORKER_CLASS=nosuch BUILD=bulk TEST:x=bulk-x TEST:y=bulk-y FOO:y=bar > "$TMP/post4.json"
X=$(json_get "$TMP/post4.json" 'j["ids"]["x"]')
Y=$(json_get "$TMP/post4.json" 'j["ids"]["y"]')
cli -X POST "jobs/$X/prio" prio=7 > "$TMP/prio.json"
check "prio: answered true, the job's priority is 7" \
	[ "$(json_get "$TMP/prio.json" 'j["result"]')" = True -a "$(db "SELECT priority FROM jobs WHERE id = $X")" = 7 ]
check "prio: a value not a number is refused, naming it" \
	refused_with "prio: 'high' is not an integer" -X POST "jobs/$X/prio" prio=high
check "cancel: with no settings refused (openQA would cancel every job)" \
	refused_with "no settings given" -X POST jobs/cancel
cli -X POST jobs/cancel BUILD=bulk FOO=bar reason=bulk > "$TMP/cancel1.json"
check "cancel by settings: BUILD and a setting match one job" \
	[ "$(json_get "$TMP/cancel1.json" 'j["result"]')" = 1 -a "$(state_of "$Y")" = "cancelled user_cancelled" -a \
	"$(state_of "$X")" = "scheduled none" ]
cli -X POST jobs/cancel BUILD=bulk > "$TMP/cancel2.json"
check "cancel by settings: BUILD matches the other" \
	[ "$(json_get "$TMP/cancel2.json" 'j["result"]')" = 1 -a "$(state_of "$X")" = "cancelled user_cancelled" ]
cli -X POST jobs/restart jobs=$X jobs=$Y jobs=999999 prio=3 > "$TMP/rs.json"
NX=$(json_get "$TMP/rs.json" "j['result'][0]['$X']")
NY=$(json_get "$TMP/rs.json" "j['result'][1]['$Y']")
check "bulk restart: both cloned, with the priority asked, the unknown job named in errors" \
	[ "$(state_of "$NX")" = "scheduled none" -a "$(state_of "$NY")" = "scheduled none" -a \
	"$(db "SELECT priority FROM jobs WHERE id IN ($NX, $NY)" | sort -u)" = 3 -a \
	"$(json_get "$TMP/rs.json" 'j["errors"]')" = "['Job 999999 does not exist']" -a \
	"$(json_get "$TMP/rs.json" "j['test_url'][1]['$Y']")" = "/tests/$NY" ]
cli -X POST jobs/cancel BUILD=bulk > /dev/null
stop_pids
finish
