#!/bin/sh
# SPDX-License-Identifier: MIT
# test_api_server.sh - starts `vigil serve` on a free local port and drives
# it with the real openQA clients (openqa-cli, python openqa_client) and
# curl: tables, job groups and templates, isos, jobs (show, list, cancel,
# restart), then bad requests that must get a 4xx JSON error and change nothing.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"
SERVER_PID=
SERVER_RC=
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "$SERVER_PID" ] && { wait "$SERVER_PID"; SERVER_RC=$?; }; SERVER_PID=; }
trap stop_server EXIT INT TERM

new_keys operator
check "apikey new prints KEY SECRET" [ ${#KEY} -eq 16 -a ${#SECRET} -eq 16 ]
check "data dir is 0700" [ "$(stat -c %a "$DATA")" = 700 ]
[ -n "$DBURL" ] || check "database is 0600" [ "$(stat -c %a "$DATA/vigil.db")" = 600 ]

start_server
SERVER_PID=$SPID
check "server answers" curl -sf "$URL/api/v1/jobs"

# openqa-cli reads key and secret from the section named after the host,
# the python client from the one named host:port.
mkdir -p "$TMP/home/.config/openqa"
printf '[127.0.0.1]\nkey = %s\nsecret = %s\n[127.0.0.1:%s]\nkey = %s\nsecret = %s\n' "$KEY" "$SECRET" "$PORT" "$KEY" "$SECRET" > "$TMP/home/.config/openqa/client.conf"
cli() { HOME=$TMP/home openqa-cli api --host "$URL" "$@"; }
ocli() { openqa-cli api --host "$URL" --apikey "$OPKEY" --apisecret "$OPSECRET" "$@"; }

cli -X POST machines name=64bit backend=qemu 'settings[QEMUCPU]=host' 'settings[WORKER_CLASS]=tap' > "$TMP/m.json"
check "machine created" [ "$(json_get "$TMP/m.json" 'j["id"]')" = 1 ]
cli -X POST products distri=vigil version=1 flavor=DVD arch=x86_64 'settings[PRODUCT_ONLY]=p' 'settings[C]=product' > "$TMP/p.json"
check "product created" [ "$(json_get "$TMP/p.json" 'j["id"]')" = 1 ]
cli -X POST test_suites name=boot 'settings[C]=suite' 'settings[QEMURAM]=2048' > "$TMP/t.json"
check "test suite created" [ "$(json_get "$TMP/t.json" 'j["id"]')" = 1 ]
cli -X POST test_suites name=shell > /dev/null
cli -X PUT test_suites/2 name=shell description=interactive 'settings[QEMURAM]=1024' > "$TMP/put.json"
check "test suite updated (PUT)" [ "$(json_get "$TMP/put.json" 'j["result"]')" = 1 ]
cli test_suites/2 > "$TMP/ts2.json"
check "test suite read back" [ "$(json_get "$TMP/ts2.json" 'j["TestSuites"][0]["description"]+j["TestSuites"][0]["settings"][0]["value"]')" = interactive1024 ]
cli machines > "$TMP/ml.json"
check "machines listed with settings" [ "$(json_get "$TMP/ml.json" '",".join(s["key"] for s in j["Machines"][0]["settings"])')" = "QEMUCPU,WORKER_CLASS" ]
cli -X POST job_groups name=vigil-tests > "$TMP/g.json"
check "job group created" [ "$(json_get "$TMP/g.json" 'j["id"]')" = 1 ]
cli -X POST job_templates group_name=vigil-tests machine_name=64bit test_suite_name=boot distri=vigil version=1 flavor=DVD arch=x86_64 prio=40 > "$TMP/jt.json"
cli -X POST job_templates group_id=1 machine_name=64bit test_suite_name=shell distri=vigil version=1 flavor=DVD arch=x86_64 > /dev/null
check "job template created" [ "$(json_get "$TMP/jt.json" 'j["id"]')" = 1 ]
cli job_templates > "$TMP/jtl.json"
check "job templates listed" [ "$(json_get "$TMP/jtl.json" 'len(j["JobTemplates"])')" = 2 ]

# The build trigger with an operator key: 2 templates -> 2 jobs.
ocli -X POST isos DISTRI=vigil VERSION=1 FLAVOR=DVD ARCH=x86_64 BUILD=7 ISO=vigil-7.iso C=post > "$TMP/iso.json"
check "isos: 2 jobs scheduled" [ "$(json_get "$TMP/iso.json" 'j["count"], j["ids"], j["failed"]')" = "2 [1, 2] []" ]
check "isos: scheduled_product_id" [ "$(json_get "$TMP/iso.json" 'j["scheduled_product_id"]')" = 1 ]
cli jobs/1 > "$TMP/j1.json"
check "job 1: name" [ "$(json_get "$TMP/j1.json" 'j["job"]["name"]')" = "vigil-1-DVD-x86_64-Build7-boot@64bit" ]
check "job 1: state, result, prio, group" [ "$(json_get "$TMP/j1.json" '" ".join(str(j["job"][k]) for k in ("state","result","priority","group_id","clone_id"))')" = "scheduled none 40 1 None" ]
check "job 1: merged settings (post wins, classes united)" \
	[ "$(json_get "$TMP/j1.json" '" ".join(j["job"]["settings"][k] for k in ("C","PRODUCT_ONLY","QEMURAM","QEMUCPU","TEST","MACHINE","WORKER_CLASS","NAME"))')" = "post p 2048 host boot 64bit tap 00000001-vigil-1-DVD-x86_64-Build7-boot@64bit" ]
check "job 1: assets and dependency keys" [ "$(json_get "$TMP/j1.json" 'j["job"]["assets"]["iso"][0], sorted(j["job"]["children"])')" = "vigil-7.iso ['Chained', 'Directly chained', 'Parallel']" ]

# Direct creation, list, cancel, restart.
ocli -X POST jobs TEST=direct DISTRI=vigil VERSION=1 FLAVOR=DVD ARCH=x86_64 MACHINE=64bit BUILD=8 > "$TMP/post.json"
check "jobs post: id 3" [ "$(json_get "$TMP/post.json" 'j["id"]')" = 3 ]
cli jobs/3 > "$TMP/j3.json"
check "jobs post: table settings merged, default class" [ "$(json_get "$TMP/j3.json" 'j["job"]["settings"]["QEMUCPU"], j["job"]["settings"]["WORKER_CLASS"]')" = "host tap" ]
cli jobs build=7 > "$TMP/list.json"
check "jobs list: build filter" [ "$(json_get "$TMP/list.json" '[x["id"] for x in j["jobs"]]')" = "[1, 2]" ]
ocli -X POST jobs/2/cancel > "$TMP/cancel.json"
check "cancel answers" [ "$(json_get "$TMP/cancel.json" 'j["result"]')" = 1 ]
cli jobs/2 > "$TMP/j2.json"
check "cancelled job: state and result" [ "$(json_get "$TMP/j2.json" 'j["job"]["state"], j["job"]["result"]')" = "cancelled user_cancelled" ]
ocli -X POST jobs/1/restart > "$TMP/restart.json"
check "restart: old -> new id" [ "$(json_get "$TMP/restart.json" 'j["result"], j["test_url"]')" = "[{'1': 4}] [{'1': '/tests/4'}]" ]
cli jobs/1 > "$TMP/j1b.json"
cli jobs/4 > "$TMP/j4.json"
check "restart: clone_id and origin_id link the jobs" [ "$(json_get "$TMP/j1b.json" 'j["job"]["clone_id"]') $(json_get "$TMP/j4.json" 'j["job"]["origin_id"]')" = "4 1" ]
check "restart: clone has the settings" [ "$(json_get "$TMP/j4.json" 'j["job"]["settings"]["C"], j["job"]["priority"]')" = "post 40" ]
cli jobs state=scheduled > "$TMP/sched.json"
check "jobs list: state filter" [ "$(json_get "$TMP/sched.json" '[x["id"] for x in j["jobs"]]')" = "[3, 4]" ]
cli jobs latest=1 > "$TMP/latest.json"
check "jobs list: latest per scenario" [ "$(json_get "$TMP/latest.json" '[x["id"] for x in j["jobs"]]')" = "[2, 3, 4]" ]

# The python client (signs with a float microtime).
HOME=$TMP/home $PY - "$PORT" > "$TMP/py.out" 2>&1 <<'PYEOF'
import sys
from openqa_client.client import OpenQA_Client
c = OpenQA_Client(server="127.0.0.1:%s" % sys.argv[1], scheme="http")
jobs = c.openqa_request("GET", "jobs", params={"ids": "1,3"})["jobs"]
print("ids", [j["id"] for j in jobs])
print("clone", jobs[0]["clone_id"])
r = c.openqa_request("POST", "jobs/3/cancel")
print("cancel", r["result"])
PYEOF
cat "$TMP/py.out"
check "python client: reads jobs" grep -q "^ids \[1, 3\]" "$TMP/py.out"
check "python client: clone_id" grep -q "^clone 4" "$TMP/py.out"
check "python client: signed write accepted" grep -q "^cancel 1" "$TMP/py.out"

# --- bad requests: a 4xx JSON error and nothing changed
count_jobs() { curl -s "$URL/api/v1/jobs" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))'; }
BEFORE=$(count_jobs)
sign() { # sign TARGET TIME -> hash
	$PY -c 'import hmac,hashlib,sys; print(hmac.new(sys.argv[1].encode(), (sys.argv[2]+sys.argv[3]).encode(), hashlib.sha1).hexdigest())' "$SECRET" "$1" "$2"
}
status_of() { tail -c 3 "$1"; }
NOW=$(date +%s)
curl -s -o "$TMP/bad1.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: 0000000000000000000000000000000000000000" "$URL/api/v1/jobs?TEST=x" > "$TMP/bad1.code"
check "bad HMAC: 403 JSON" [ "$(cat "$TMP/bad1.code") $(json_get "$TMP/bad1.json" 'j["error_status"]')" = "403 403" ]
OLD=$((NOW - 400))
curl -s -o "$TMP/bad2.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $OLD" \
	-H "X-API-Hash: $(sign /api/v1/jobs?TEST=x "$OLD")" "$URL/api/v1/jobs?TEST=x" > "$TMP/bad2.code"
check "stale timestamp: 403 timestamp mismatch" [ "$(cat "$TMP/bad2.code")" = 403 ] && grep -q "timestamp mismatch" "$TMP/bad2.json"
curl -s -o "$TMP/good.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: $(sign /api/v1/jobs?TEST=x "$NOW")" "$URL/api/v1/machines?name=m2" -H 'Content-Type: application/json' \
	--data '{"name": "m2", "backend": ' > "$TMP/bad3.code"
check "signature covers the target: mismatched target refused" [ "$(cat "$TMP/bad3.code")" = 403 ]
T=/api/v1/machines
curl -s -o "$TMP/bad4.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: $(sign $T "$NOW")" -H 'Content-Type: application/json' --data '{"name": "m2", "backend": ' "$URL$T" > "$TMP/bad4.code"
check "malformed JSON: 400 JSON error" [ "$(cat "$TMP/bad4.code") $(json_get "$TMP/bad4.json" 'j["error_status"]')" = "400 400" ]
curl -s -o "$TMP/bad5.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: $(sign $T "$NOW")" -H 'Content-Type: application/json' --data '{"name": "m2", "backend": "qemu", "color": "red"}' "$URL$T" > "$TMP/bad5.code"
check "unknown field: 400" [ "$(cat "$TMP/bad5.code")" = 400 ] && grep -q "unknown field 'color'" "$TMP/bad5.json"
curl -s -o "$TMP/bad6.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: $(sign $T "$NOW")" -H 'Content-Type: application/json' --data '{"name": "m2", "backend": 5}' "$URL$T" > "$TMP/bad6.code"
check "wrong type: 400" [ "$(cat "$TMP/bad6.code")" = 400 ]
head -c 2000000 /dev/zero | tr '\0' a > "$TMP/huge"
curl -s -o "$TMP/bad7.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
	-H "X-API-Hash: $(sign $T "$NOW")" --data-binary "@$TMP/huge" "$URL$T" > "$TMP/bad7.code"
check "huge body: 413 JSON" [ "$(cat "$TMP/bad7.code") $(json_get "$TMP/bad7.json" 'j["error_status"]')" = "413 413" ]
curl -s -o "$TMP/bad8.json" -w '%{http_code}' "$URL/api/v1/no/such/route" > "$TMP/bad8.code"
check "unknown route: 404 JSON" [ "$(cat "$TMP/bad8.code") $(json_get "$TMP/bad8.json" 'j["error_status"]')" = "404 404" ]
curl -s -o "$TMP/bad9.json" -w '%{http_code}' "$URL/api/v1/jobs/999" > "$TMP/bad9.code"
check "unknown job: 404 Job 999 does not exist" [ "$(json_get "$TMP/bad9.json" 'j["error"]')" = "Job 999 does not exist" ]
curl -s -o "$TMP/bad10.json" -w '%{http_code}' "$URL/api/v1/jobs?ids=1,x" > "$TMP/bad10.code"
check "ids must be integers: 400" [ "$(cat "$TMP/bad10.code")" = 400 ]
ocli -X POST machines name=m3 backend=qemu > "$TMP/bad11.json" 2>&1
check "operator key may not write tables" grep -q "Administrator level required" "$TMP/bad11.json"
cli -X POST isos DISTRI=vigil > "$TMP/bad12.out" 2>&1
check "isos without VERSION FLAVOR ARCH: 400 text" grep -q "missing parameters: VERSION FLAVOR ARCH" "$TMP/bad12.out"
# Names and values that are not UTF-8: refused with the parameter's name.
for q in 'state=%FF' 'limit=%FF'; do
	curl -s -o "$TMP/u8.json" -w '%{http_code}' "$URL/api/v1/jobs?$q" > "$TMP/u8.code"
	check "GET jobs?$q: 400 naming the parameter" [ "$(cat "$TMP/u8.code") $(json_get "$TMP/u8.json" 'j["error"]')" = \
		"400 bad query string: parameter '${q%%=*}': not valid UTF-8 (decoded byte 0)" ]
done
for T in /api/v1/jobs:TEST=u8\&FOO=%FF:FOO /api/v1/machines:name=%FF\&backend=qemu:name; do
	B=${T#*:} R=${T%%:*}
	curl -s -o "$TMP/u8.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" -H "X-API-Microtime: $NOW" \
		-H "X-API-Hash: $(sign $R "$NOW")" --data "${B%:*}" "$URL$R" > "$TMP/u8.code"
	check "POST $R ${B%:*}: 400 naming ${B##*:}" [ "$(cat "$TMP/u8.code") $(json_get "$TMP/u8.json" 'j["error"]')" = \
		"400 bad form body: parameter '${B##*:}': not valid UTF-8 (decoded byte 0)" ]
done
# One 502 KB post whose 100 settings each name a 500 KB one twice would
# store 100 MB once expanded: refused, for a job and for a build.
python3 -c 'import sys; sys.stdout.write("DISTRI=vigil&VERSION=1&FLAVOR=DVD&ARCH=x86_64&A=" + "a" * 500000 + "".join("&K%d=%%25A%%25%%25A%%25" % i for i in range(100)))' > "$TMP/bomb"
for T in /api/v1/jobs /api/v1/isos; do
	# a job needs TEST; a build without one schedules both templates
	[ $T = /api/v1/jobs ] && B="TEST=bomb&" || B=
	printf %s "$B" | cat - "$TMP/bomb" | curl -s -o "$TMP/bomb.json" -w '%{http_code}' -X POST -H "X-API-Key: $KEY" \
		-H "X-API-Microtime: $NOW" -H "X-API-Hash: $(sign $T "$NOW")" --data-binary @- "$URL$T" > "$TMP/bomb.code"
	check "POST $T whose %VAR% settings expand past 4 MiB: 400 naming the limit" \
		[ "$(cat "$TMP/bomb.code") $(json_get "$TMP/bomb.json" 'j["error"]')" = \
		"400 settings: over 4194304 bytes in all once %VAR% references are expanded" ]
done
check "nothing changed by bad requests" [ "$(count_jobs)" = "$BEFORE" ]
cli isos/2 > "$TMP/sp2.out" 2>&1
check "no scheduled product kept by the refused build" grep -q "does not exist" "$TMP/sp2.out"
cli machines > "$TMP/ml2.json"
check "no machine added by bad requests" [ "$(json_get "$TMP/ml2.json" 'len(j["Machines"])')" = 1 ]
check "server still running" kill -0 "$SERVER_PID"

stop_server
check "server stopped cleanly on SIGTERM (exit 0)" [ "$SERVER_RC" = 0 ]
check "port closed after stop" eval "! curl -s '$URL/api/v1/jobs' > /dev/null"
finish
