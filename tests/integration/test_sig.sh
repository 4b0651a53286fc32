#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sig.sh - request signatures (issue 17, docs/api.md "Signatures"):
# scheme 2 (nonce and body hash signed) accepted once, a replay refused
# (issue's replay: one signature, many requests, one job), also by a
# second `vigil serve` on the same database; a changed body refused;
# openQA's legacy scheme accepted (openqa-cli) until an admin refuses it
# for a key (API and `vigil apikey`), then refused with the reason while
# `vigil client` keeps working; worker routes act only for the key the
# worker registered with (403 JSON naming the reason).
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/server_lib.sh"

S2="$PY tests/integration/sig2.py"
count_jobs() { curl -s "$URL/api/v1/jobs?test=$1" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))'; }

new_keys operator
start_server
check "server answers" curl -sf -o /dev/null "$URL/api/v1/jobs"

# The issue's replay: one signature sent 20 times.
$S2 "$URL" "$KEY" "$SECRET" POST /api/v1/jobs "TEST=replay&DISTRI=x&ARCH=x86_64&BUILD=1" --times 20 > "$TMP/replay.out"
check "scheme 2: the first request is taken" [ "$(sed -n 1p "$TMP/replay.out")" = 200 ]
check "scheme 2: the 19 replays are refused (403)" [ "$(sed -n '2,20p' "$TMP/replay.out" | grep -c '^403$')" = 19 ]
check "replay refused with the reason" grep -q 'replayed request: X-API-Nonce already used' "$TMP/replay.out"
check "one signature created one job" [ "$(count_jobs replay)" = 1 ]

# The body is signed: another body under the same signature is refused.
$S2 "$URL" "$KEY" "$SECRET" POST /api/v1/jobs "TEST=body&DISTRI=x&ARCH=x86_64" --body-sent "TEST=body&DISTRI=evil&ARCH=x86_64" > "$TMP/body.out"
check "a body other than the signed one: 403" [ "$(sed -n 1p "$TMP/body.out")" = 403 ]
check "changed body: the reason says so" grep -q 'does not match X-API-Content-SHA256' "$TMP/body.out"
check "changed body: no job" [ "$(count_jobs body)" = 0 ]
$S2 "$URL" "$KEY" "$SECRET" GET /api/v1/jobs?limit=1 > "$TMP/get.out"
check "scheme 2: a signed GET is answered" [ "$(sed -n 1p "$TMP/get.out")" = 200 ]

# A second server process on the same database refuses a nonce the first took.
PORT2=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$VIGIL serve --listen "127.0.0.1:$PORT2" --data "$DATA" >> "$TMP/serve2.log" 2>&1 &
PIDS="$PIDS $!"
i=0; until curl -s "http://127.0.0.1:$PORT2/api/v1/jobs" > /dev/null 2>&1 || [ $i -ge 1200 ]; do sleep 0.1; i=$((i + 1)); done
$S2 "$URL" "$KEY" "$SECRET" POST /api/v1/jobs "TEST=twoproc&DISTRI=x&ARCH=x86_64" --headers "$TMP/h.json" > "$TMP/p1.out"
$S2 "http://127.0.0.1:$PORT2" "$KEY" "$SECRET" POST /api/v1/jobs "TEST=twoproc&DISTRI=x&ARCH=x86_64" --replay "$TMP/h.json" > "$TMP/p2.out"
check "first server takes the request" [ "$(sed -n 1p "$TMP/p1.out")" = 200 ]
check "second server on the same database refuses its replay" sh -c "[ \"\$(sed -n 1p '$TMP/p2.out')\" = 403 ] && grep -q replayed '$TMP/p2.out'"
check "two servers, one signature: one job" [ "$(count_jobs twoproc)" = 1 ]

# openQA's legacy scheme: accepted as openQA accepts it (a replay too) ...
openqa-cli api --host "$URL" --apikey "$OPKEY" --apisecret "$OPSECRET" -X POST jobs TEST=legacy DISTRI=x ARCH=x86_64 > "$TMP/l1.json"
check "openqa-cli (legacy signature) creates a job" [ "$(json_get "$TMP/l1.json" 'j["id"] > 0')" = True ]
$S2 "$URL" "$OPKEY" "$OPSECRET" POST /api/v1/jobs "TEST=legacy&DISTRI=x&ARCH=x86_64" --legacy --headers "$TMP/lh.json" --times 2 > "$TMP/l2.out"
check "legacy: a repeated signature is taken, as openQA takes it" [ "$(sed -n 1,2p "$TMP/l2.out" | grep -c '^200$')" = 2 ]
# ... until an admin refuses it for the key (API route).
$S2 "$URL" "$KEY" "$SECRET" PUT "/api/v1/api_keys/$OPKEY" "refuse_legacy=1" > "$TMP/put.out"
check "admin sets refuse_legacy on a key" [ "$(sed -n 1p "$TMP/put.out")" = 200 ]
$S2 "$URL" "$OPKEY" "$OPSECRET" PUT "/api/v1/api_keys/$OPKEY" "refuse_legacy=0" > "$TMP/put2.out"
check "an operator key may not change it (403)" [ "$(sed -n 1p "$TMP/put2.out")" = 403 ]
N=$(count_jobs legacy)
$S2 "$URL" "$OPKEY" "$OPSECRET" POST /api/v1/jobs "" --replay "$TMP/lh.json" --body-sent "TEST=legacy&DISTRI=x&ARCH=x86_64" > "$TMP/l3.out"
check "refused key: the captured legacy signature is refused (403)" [ "$(sed -n 1p "$TMP/l3.out")" = 403 ]
check "refused key: the reason names the legacy signature" grep -q 'refuses legacy signatures' "$TMP/l3.out"
check "refused key: openqa-cli is refused" sh -c "! openqa-cli api --host '$URL' --apikey '$OPKEY' --apisecret '$OPSECRET' -X POST jobs TEST=legacy DISTRI=x ARCH=x86_64 > '$TMP/l4.json' 2>&1"
check "refused key: no job made" [ "$(count_jobs legacy)" = "$N" ]
JOB=$(json_get "$TMP/l1.json" 'j["id"]')
check "refused key: vigil client (scheme 2) still writes" \
	sh -c "$VIGIL client --host $URL --apikey $OPKEY --apisecret $OPSECRET comment $JOB 'signed anew' > /dev/null"
$S2 "$URL" "$KEY" "$SECRET" GET /api/v1/api_keys > "$TMP/keys.out"
check "the admin's key list shows refuse_legacy" sh -c "sed -n 2p '$TMP/keys.out' | $PY -c 'import json,sys; k={x[\"key\"]: x[\"refuse_legacy\"] for x in json.load(sys.stdin)[\"api_keys\"]}; sys.exit(not (k[\"$OPKEY\"] is True and k[\"$KEY\"] is False))'"
check "vigil apikey list shows it" sh -c "$VIGIL apikey list --data '$DATA' | grep -q '^$OPKEY operator no-legacy$'"
check "vigil apikey set --accept-legacy" $VIGIL apikey set "$OPKEY" --data "$DATA" --accept-legacy
check "accepted again: openqa-cli writes" sh -c "openqa-cli api --host '$URL' --apikey '$OPKEY' --apisecret '$OPSECRET' -X POST jobs TEST=legacy2 DISTRI=x ARCH=x86_64 > /dev/null"
check "vigil apikey set --refuse-legacy" $VIGIL apikey set "$OPKEY" --data "$DATA" --refuse-legacy
check "refused again: openqa-cli is refused" sh -c "! openqa-cli api --host '$URL' --apikey '$OPKEY' --apisecret '$OPSECRET' -X POST jobs TEST=legacy3 DISTRI=x ARCH=x86_64 > /dev/null 2>&1"

# Worker routes act only for the key the worker registered with.
$S2 "$URL" "$KEY" "$SECRET" POST /api/v1/workers "host=sighost&instance=1&worker_class=sigclass" > "$TMP/reg.out"
WID=$(sed -n 2p "$TMP/reg.out" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "worker registered with the admin key ($WID)" [ "$(sed -n 1p "$TMP/reg.out")" = 200 ]
$S2 "$URL" "$KEY" "$SECRET" POST /api/v1/jobs "TEST=bound&DISTRI=x&ARCH=x86_64&WORKER_CLASS=sigclass" > /dev/null
BJ=$(curl -s "$URL/api/v1/jobs?test=bound" | $PY -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
$S2 "$URL" "$OPKEY" "$OPSECRET" GET "/api/v1/workers/$WID/work?timeout=0" > "$TMP/w1.out"
check "another key's work poll: 403" [ "$(sed -n 1p "$TMP/w1.out")" = 403 ]
check "work poll refusal: JSON naming the reason" sh -c "sed -n 2p '$TMP/w1.out' | $PY -c 'import json,sys; sys.exit(\"registered with another API key\" not in json.load(sys.stdin)[\"error\"])'"
$S2 "$URL" "$KEY" "$SECRET" GET "/api/v1/workers/$WID/work?timeout=0" > "$TMP/w2.out"
check "the worker's own key gets its job" [ "$(sed -n 2p "$TMP/w2.out" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["id"])')" = "$BJ" ]
$S2 "$URL" "$OPKEY" "$OPSECRET" POST "/api/v1/jobs/$BJ/set_done?result=passed&worker_id=$WID" > "$TMP/w3.out"
check "another key's set_done: 403" sh -c "[ \"\$(sed -n 1p '$TMP/w3.out')\" = 403 ] && grep -q 'another API key' '$TMP/w3.out'"
$S2 "$URL" "$OPKEY" "$OPSECRET" POST "/api/v1/jobs/$BJ/artefact?file=x.txt" "hello" > "$TMP/w4.out"
check "another key's upload: 403" sh -c "[ \"\$(sed -n 1p '$TMP/w4.out')\" = 403 ] && grep -q 'another API key' '$TMP/w4.out'"
check "another key's upload: nothing stored" [ ! -e "$DATA/testresults/$BJ/x.txt" ]
$S2 "$URL" "$OPKEY" "$OPSECRET" POST "/api/v1/jobs/$BJ/status" '{"status":{"worker_id":'"$WID"'}}' > "$TMP/w5.out"
check "another key's status: 403" [ "$(sed -n 1p "$TMP/w5.out")" = 403 ]
$S2 "$URL" "$OPKEY" "$OPSECRET" GET "/api/v1/ws/$WID" > "$TMP/ws.out"
check "another key's WebSocket: 403 naming the reason" sh -c "[ \"\$(sed -n 1p '$TMP/ws.out')\" = 403 ] && grep -q 'another API key' '$TMP/ws.out'"
$S2 "$URL" "$OPKEY" "$OPSECRET" POST /api/v1/workers "host=sighost&instance=1" > "$TMP/w6.out"
check "another key cannot register the worker anew (403)" [ "$(sed -n 1p "$TMP/w6.out")" = 403 ]
check "the job is still the worker's, not done" [ "$(state_of "$BJ")" != "done passed" ]
$S2 "$URL" "$KEY" "$SECRET" POST "/api/v1/jobs/$BJ/set_done?result=passed&worker_id=$WID" > "$TMP/w7.out"
check "the worker's own key ends its job" [ "$(sed -n 1p "$TMP/w7.out")" = 200 ]

finish
