#!/bin/sh
# SPDX-License-Identifier: MIT
# test_events.sh - event notifications against real sinks the test starts
# itself on their own ports: ngircd (IRC), a python3 http.server receiver
# (webhook) and rabbitmq-server (AMQP, started once, own node, ports and
# directories under TMP). Jobs created, started and finished and a comment
# through the API reach all three (openQA's routing keys and data on AMQP,
# a signed JSON body on the webhook, one line per finished build on IRC);
# a webhook receiver that fails and recovers gets every event once; with
# IRC and RabbitMQ down and the server itself restarted, nothing is lost;
# openQA's restart, update_result, delete and comment update/delete events
# reach the webhook and AMQP; delivered events leave the outbox. With
# VIGIL_TEST_DB=pg (test_pg_suites.sh) the server runs on PostgreSQL. Waits are bounded by generous limits.
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/events_lib.sh"
rabbit_init
start_rabbit # first: it takes the longest

ircconf
start_irc
check "ngircd listens" wait_port "$IRCPORT"
$SINKS irc "$IRCPORT" observer '#vigil' "$TMP/irc.log" >> "$TMP/obs.out" 2>&1 &
OBS_PID=$!
$SINKS webhook "$HOOKPORT" hooksecret "$TMP/hook.log" "$TMP/hook.fail" >> "$TMP/hook.out" 2>&1 &
HOOK_PID=$!
check "the webhook receiver listens" wait_port "$HOOKPORT"
check "the IRC observer joined" $SINKS wait-lines "$TMP/irc.log.joined" 1 120

# Configuration errors name the file, line or key.
printf '[irc]\nserver = 127.0.0.1:1\n' > "$TMP/bad1.conf"
$VIGIL serve --config "$TMP/bad1.conf" --data "$TMP/nodata" 2> "$TMP/bad1.err"
check "an [irc] without channel is refused, naming the file" grep -q "bad1.conf:1: \[irc\] needs 'channel ='" "$TMP/bad1.err"
printf '[webhook]\nurl = http://x/\nsecret = s\nretries = 3\n' > "$TMP/bad2.conf"
$VIGIL serve --config "$TMP/bad2.conf" --data "$TMP/nodata" 2> "$TMP/bad2.err"
check "an unknown [webhook] key names file, line and key" grep -q "bad2.conf:4: \[webhook\] retries: unknown key" "$TMP/bad2.err"
printf '[amqp]\nevents = job.done, job.finished\n' > "$TMP/bad3.conf"
$VIGIL serve --config "$TMP/bad3.conf" --data "$TMP/nodata" 2> "$TMP/bad3.err"
check "an unknown event kind is refused" grep -q "bad3.conf:2: \[amqp\] events: unknown event 'job.finished'" "$TMP/bad3.err"

check "rabbitmq-server is up (exchange and queue declared)" wait_rabbit
new_keys
cat > "$TMP/vigil.conf" <<CONF
[server]
listen = 127.0.0.1:$PORT
data = $DATA

[events]
retry-max = 1

[irc]
server = 127.0.0.1:$IRCPORT
channel = #vigil
nick = vigilbot

[webhook]
url = http://127.0.0.1:$HOOKPORT/hook
secret = hooksecret

[amqp]
url = amqp://guest:guest@127.0.0.1:$AMQPPORT/
CONF
serve() { $VIGIL serve --config "$TMP/vigil.conf" $DBOPT >> "$TMP/serve.log" 2>&1 & SPID=$!; PIDS="$PIDS $SPID"; wait_server; }
serve
api() { $SINKS api "$PORT" "$KEY" "$SECRET" "$@"; }
hook_count() { grep -c '"delivery"' "$TMP/hook.log" 2>/dev/null || echo 0; }
wait_hooks() { # wait_hooks N: until N deliveries (2 minutes at most)
	i=0
	while [ "$(hook_count)" -lt "$1" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(hook_count)" -ge "$1" ]
}
finish_build() { # finish_build BUILD RESULT...: one job per result, created then set done
	b=$1; shift
	n=0
	for r in "$@"; do
		n=$((n + 1))
		api POST /api/v1/jobs DISTRI=d VERSION=1 FLAVOR=f ARCH=x86_64 "BUILD=$b" "TEST=t$n" MACHINE=64bit
	done > "$TMP/create-$b.out"
	for id in $(sed -n 's/^200 {"id":\([0-9]*\)}$/\1/p' "$TMP/create-$b.out"); do
		r=$1; shift
		api POST "/api/v1/jobs/$id/set_done?result=$r" || return 1
	done > "$TMP/done-$b.out"
}

# Build B1: three jobs, one taken by a worker and started, one comment.
: > "$TMP/create-B1.out"
for t in t1 t2 t3; do
	api POST /api/v1/jobs DISTRI=d VERSION=1 FLAVOR=f ARCH=x86_64 BUILD=B1 TEST=$t MACHINE=64bit >> "$TMP/create-B1.out"
done
check "B1: three jobs created" [ "$(grep -c '^200' "$TMP/create-B1.out")" = 3 ]
WID=$(api POST /api/v1/workers host=h instance=1 worker_class=qemu_x86_64 | sed -n 's/^200 {"id":\([0-9]*\).*/\1/p')
api GET "/api/v1/workers/$WID/work?timeout=30" > "$TMP/work.out"
JOB=$($PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split(" ",1)[1])["job"]["id"])' "$TMP/work.out")
check "the worker got a job" [ -n "$JOB" ]
check "its status makes it run" api POST "/api/v1/jobs/$JOB/status" "{\"status\":{\"worker_id\":$WID}}" > /dev/null
check "set_done passed" api POST "/api/v1/jobs/$JOB/set_done?result=passed&worker_id=$WID" > /dev/null
R2=failed
for id in 1 2 3; do
	[ "$id" = "$JOB" ] && continue
	api POST "/api/v1/jobs/$id/set_done?result=$R2" > /dev/null
	R2=softfailed
done
check "a comment" api POST "/api/v1/jobs/$JOB/comments" text=hello > /dev/null

check "webhook: 9 events of B1 delivered" wait_hooks 9
$PY - "$TMP/hook.log" > "$TMP/hook1.txt" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if 'delivery' in r:
        d = r['data']
        print(r['delivery'], r['event'], r['sig_ok'], d['id'], d['event'], d['data'].get('result', '-'),
              d['data'].get('passed', '-'), d['data'].get('failed', '-'), d['data'].get('softfailed', '-'))
PY
check "webhook: in order, kinds and ids" [ "$(cut -d' ' -f1,2 "$TMP/hook1.txt" | tr '\n' ' ')" = \
	"1 job.create 2 job.create 3 job.create 4 job.start 5 job.done 6 job.done 7 job.done 8 build.done 9 comment.create " ]
check "webhook: every signature verifies" sh -c "! grep -v ' True ' '$TMP/hook1.txt'"
check "webhook: body says id and event as the headers" sh -c "awk '\$1 != \$4 || \$2 != \$5' '$TMP/hook1.txt' | grep -q . && exit 1 || exit 0"
check "webhook: build.done counts 1 passed, 1 failed, 1 softfailed" grep -q "^8 build.done True 8 build.done - 1 1 1$" "$TMP/hook1.txt"
check "IRC: one line for B1 with its counts and overview link" $SINKS wait-lines "$TMP/irc.log" 1 120
check "IRC: the line" grep -qxF "Build B1 finished: 1 passed, 1 softfailed, 1 failed, 0 incomplete - http://127.0.0.1:$PORT/tests/overview?distri=d&version=1&build=B1" "$TMP/irc.log"
"$AMQPSINK" drain "$AMQPPORT" vigil-test 9 120 > "$TMP/amqp1.txt"
check "AMQP: 9 messages" [ "$(wc -l < "$TMP/amqp1.txt")" = 9 ]
check "AMQP: openQA's routing keys" [ "$(cut -d' ' -f1 "$TMP/amqp1.txt" | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')" = \
	"1xsuse.openqa.build.done 1xsuse.openqa.comment.create 3xsuse.openqa.job.create 3xsuse.openqa.job.done 1xsuse.openqa.job.start " ]
check "AMQP: job.done carries openQA's fields" sh -c "grep '^suse.openqa.job.done 5 ' '$TMP/amqp1.txt' | grep -q '\"BUILD\":\"B1\".*\"id\":$JOB.*\"remaining\":2,\"result\":\"passed\"'"
check "AMQP: comment.create carries the text" grep -q '^suse.openqa.comment.create 9 .*"job_id":'"$JOB"'.*"text":"hello"' "$TMP/amqp1.txt"

# A webhook receiver that fails (503) and recovers: requests are not held,
# the refused events are retried and arrive, each once, in order.
touch "$TMP/hook.fail"
check "B2 finished while the receiver fails: the requests are answered" finish_build B2 passed incomplete
i=0
while [ "$(grep -c refused "$TMP/hook.log")" -lt 2 ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
check "the failing receiver was tried more than once" [ "$(grep -c refused "$TMP/hook.log")" -ge 2 ]
check "nothing delivered while it fails" [ "$(hook_count)" = 9 ]
rm -f "$TMP/hook.fail"
check "webhook: B2's 5 events arrive once it recovers" wait_hooks 14
check "webhook: ids 10..14 each once" [ "$(grep '"delivery"' "$TMP/hook.log" | sed -n 's/.*"delivery": "\([0-9]*\)".*/\1/p' | tail -n +10 | tr '\n' ' ')" = "10 11 12 13 14 " ]
check "IRC: B2's line" $SINKS wait-lines "$TMP/irc.log" 2 120
check "IRC: 1 passed, 1 incomplete" grep -q "^Build B2 finished: 1 passed, 0 softfailed, 0 failed, 1 incomplete - " "$TMP/irc.log"

# IRC and RabbitMQ go down and the server restarts while events wait.
stop_rabbit
kill "$IRC_PID"; wait "$IRC_PID" 2>/dev/null
check "B3 finished while IRC and RabbitMQ are down" finish_build B3 failed
check "webhook still gets B3 (15..17)" wait_hooks 17
kill "$SPID"; wait "$SPID" 2>/dev/null
serve
check "the server is back" curl -sf "$URL/api/v1/jobs" -o /dev/null
# ngircd comes back asking a password only the observer knows, so the
# observer is in the channel before the notifier; then it lets anyone in.
kill "$OBS_PID"; wait "$OBS_PID" 2>/dev/null
ircconf obspass
start_irc
check "ngircd is back" wait_port "$IRCPORT"
$SINKS irc "$IRCPORT" observer '#vigil' "$TMP/irc.log" obspass >> "$TMP/obs.out" 2>&1 &
OBS_PID=$!
check "the observer joined again" $SINKS wait-lines "$TMP/irc.log.joined" 2 120
ircconf
kill -HUP "$IRC_PID"
check "IRC: B3's line after the restarts" $SINKS wait-lines "$TMP/irc.log" 3 180
check "IRC: B3 failed" grep -q "^Build B3 finished: 0 passed, 0 softfailed, 1 failed, 0 incomplete - " "$TMP/irc.log"
start_rabbit
check "rabbitmq-server is back" wait_rabbit
"$AMQPSINK" drain "$AMQPPORT" vigil-test 8 180 > "$TMP/amqp2.txt"
check "AMQP: B2's and B3's 8 messages after the restarts" [ "$(cut -d' ' -f2 "$TMP/amqp2.txt" | sort -n | uniq | tr '\n' ' ')" = "10 11 12 13 14 15 16 17 " ]
check "AMQP: B3's build.done" grep -q '^suse.openqa.build.done 17 .*"BUILD":"B3".*"failed":1' "$TMP/amqp2.txt"
check "webhook: each of the 17 events exactly once" [ "$(grep '"delivery"' "$TMP/hook.log" | sed -n 's/.*"delivery": "\([0-9]*\)".*/\1/p' | sort -n | uniq -c | awk '$1 == 1' | wc -l)" = 17 ]

# openQA's other events (migration 17): a comment edited, a force_result
# label (a comment and the finished job's new result), the comment deleted,
# B3's job restarted (its clone created) and the clone deleted: 18..24.
CID=$(api GET "/api/v1/jobs/$JOB/comments" | $PY -c 'import json,sys; print(json.loads(sys.stdin.read().split(" ",1)[1])[0]["id"])')
check "a comment edited" api PUT "/api/v1/jobs/$JOB/comments/$CID" text=edited > /dev/null
check "a force_result label" api POST "/api/v1/jobs/$JOB/comments" text=label:force_result:softfailed > /dev/null
check "the first comment deleted" api DELETE "/api/v1/jobs/$JOB/comments/$CID" > /dev/null
api POST /api/v1/jobs/6/restart > "$TMP/restart.out"
CLONE=$($PY -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split(" ",1)[1]); print(r["result"][0]["6"])' "$TMP/restart.out")
check "B3's job restarted" [ -n "$CLONE" ]
check "its clone deleted" api DELETE "/api/v1/jobs/$CLONE" > /dev/null
check "webhook: 7 more events (24)" wait_hooks 24
$PY - "$TMP/hook.log" > "$TMP/hook3.txt" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if 'delivery' in r and int(r['delivery']) > 17:
        d = r['data']['data']
        print(r['delivery'], r['event'], r['sig_ok'], json.dumps(d, sort_keys=True))
PY
check "webhook: openQA's kinds, each once" [ "$(cut -d' ' -f2 "$TMP/hook3.txt" | sort | tr '\n' ' ')" = \
	"comment.create comment.delete comment.update job.create job.delete job.restart job.update_result " ]
check "webhook: comment.update has the new text" grep -q "^18 comment.update True .*\"id\": $CID,.*\"text\": \"edited\"" "$TMP/hook3.txt"
check "webhook: job.update_result of job $JOB: softfailed" grep -q "^[0-9]* job.update_result True .*\"id\": $JOB,.*\"result\": \"softfailed\"" "$TMP/hook3.txt"
check "webhook: comment.delete names comment and job" grep -q "^[0-9]* comment.delete True {\"group_id\": null, \"id\": $CID, \"job_id\": $JOB," "$TMP/hook3.txt"
check "webhook: job.restart maps 6 to its clone" grep -q "^[0-9]* job.restart True .*\"BUILD\": \"B3\".*\"id\": 6,.*\"result\": {\"6\": $CLONE}" "$TMP/hook3.txt"
check "webhook: job.delete of the clone" grep -q "^24 job.delete True .*\"BUILD\": \"B3\".*\"id\": $CLONE," "$TMP/hook3.txt"
check "webhook: all signed" sh -c "! grep -v ' True ' '$TMP/hook3.txt'"
"$AMQPSINK" drain "$AMQPPORT" vigil-test 7 180 > "$TMP/amqp3.txt"
check "AMQP: the 7 with openQA's routing keys" [ "$(cut -d' ' -f1 "$TMP/amqp3.txt" | sort | tr '\n' ' ')" = \
	"suse.openqa.comment.create suse.openqa.comment.delete suse.openqa.comment.update suse.openqa.job.create suse.openqa.job.delete suse.openqa.job.restart suse.openqa.job.update_result " ]
check "AMQP: job.restart's data" grep -q "^suse.openqa.job.restart [0-9]* .*\"result\":{\"6\":$CLONE}" "$TMP/amqp3.txt"
i=0
while [ "$(sql 'SELECT COUNT(*) FROM events' 2>/dev/null)" != 0 ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i + 1)); done
check "delivered events leave the outbox" [ "$(sql 'SELECT COUNT(*) FROM events')" = 0 ]
check "the cursors stand at 24" [ "$(sql 'SELECT name, last_id FROM event_sinks ORDER BY name' | tr '\n' ' ')" = "amqp|24 irc|24 webhook|24 " ]
finish
