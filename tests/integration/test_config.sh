#!/bin/sh
# SPDX-License-Identifier: MIT
# test_config.sh - vigil.conf: `vigil serve`, `vigil worker` and `vigil
# client` take their long options from the [server], [worker] and [client]
# sections of --config FILE or $VIGIL_CONFIG; the command line overrides
# the file; a wrong key, value or section is an error naming file, line and key.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
new_keys
OTHER=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CONF=$TMP/vigil.conf
cat > "$CONF" <<CONF
# a deployment's file
[server]
listen = 127.0.0.1:$OTHER
data = $DATA
threads = 4
secure-cookies = false

[worker]
host = $URL
apikey = $KEY
apisecret = $SECRET
instance = 7
pool = $TMP/pool7
hostname = conf-host

[client]
host = $URL
apikey = $KEY
apisecret = $SECRET
CONF

# The command line's --listen overrides the file's; --data comes from the file.
VIGIL_CONFIG=$CONF $VIGIL serve --listen "127.0.0.1:$PORT" >> "$TMP/serve.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
check "serve: --listen overrides the file, --data from the file" wait_server
check "serve: not listening on the file's address" sh -c "! curl -s http://127.0.0.1:$OTHER/api/v1/jobs > /dev/null"
check "serve: the data directory is the file's" test -f "$DATA/vigil.db"

# The client's host, key and secret from [client]: a signed write works.
# A signed write reaches the route (job 999 is not there) rather than being refused unsigned.
HOME=$TMP/nohome $VIGIL client --config "$CONF" comment 999 hello > /dev/null 2> "$TMP/com.err"
check "client: host and credentials from [client] (a signed comment)" grep -q "job 999 not found" "$TMP/com.err"
$VIGIL client --config "$CONF" --host 127.0.0.1:$OTHER list > /dev/null 2> "$TMP/over.err"
check "client: --host overrides the file's" grep -q "127.0.0.1:$OTHER" "$TMP/over.err"

# The worker registers with the file's host, key, hostname and instance.
$VIGIL worker --config "$CONF" >> "$TMP/worker.log" 2>&1 &
WPID=$!
PIDS="$PIDS $WPID"
i=0
until curl -s "$URL/api/v1/workers" | grep -q conf-host || [ $i -ge 600 ]; do sleep 0.2; i=$((i + 1)); done
check "worker: registered as the file's hostname" sh -c "curl -s '$URL/api/v1/workers' | grep -q '\"host\": *\"conf-host\"'"
check "worker: instance from the file" sh -c "curl -s '$URL/api/v1/workers' | $PY -c 'import json,sys; print([w[\"instance\"] for w in json.load(sys.stdin)[\"workers\"]])' | grep -q 7"
kill "$WPID" 2>/dev/null

# Errors name file, line and key.
bad() { # bad NAME EXPECTED COMMAND...: exit 2 with EXPECTED on stderr
	n=$1 want=$2; shift 2
	"$@" > /dev/null 2> "$TMP/$n.err"
	rc=$?
	check "error $n: exit 2" [ $rc -eq 2 ]
	check "error $n: says '$want'" grep -qF -- "$want" "$TMP/$n.err"
}
printf '[server]\nlisten = 127.0.0.1:0\nthreds = 4\n' > "$TMP/k.conf"
bad unknown-key "$TMP/k.conf:3: [server] threds: unknown key" $VIGIL serve --config "$TMP/k.conf"
printf '[worker]\n\nkeep-snapshots = soon\n' > "$TMP/v.conf"
bad bad-value "$TMP/v.conf:3: [worker] keep-snapshots: 'soon'" $VIGIL worker --config "$TMP/v.conf"
printf '[client]\njson = perhaps\n' > "$TMP/b.conf"
bad bad-bool "$TMP/b.conf:2: [client] json: 'perhaps' is not a boolean" $VIGIL client --config "$TMP/b.conf" list
printf '[servre]\n' > "$TMP/s.conf"
bad unknown-section "$TMP/s.conf:1: unknown section [servre]" env VIGIL_CONFIG="$TMP/s.conf" $VIGIL serve
printf '[server\n' > "$TMP/p.conf"
bad syntax "$TMP/p.conf: line 1: section header without ']'" $VIGIL serve --config "$TMP/p.conf"
bad missing-file "--config $TMP/none.conf: no such file" $VIGIL serve --config "$TMP/none.conf"
bad missing-env "\$VIGIL_CONFIG $TMP/none.conf: no such file" env VIGIL_CONFIG="$TMP/none.conf" $VIGIL worker
$VIGIL serve --config "$TMP/k.conf" --help > "$TMP/help.out" 2>&1
check "--help works whatever the file holds" grep -q -- "--config FILE" "$TMP/help.out"
finish
