# SPDX-License-Identifier: MIT
# server_lib.sh - helpers of the suites that run `vigil serve` and workers:
# a free port, the processes to stop at exit (a suite may set its own
# trap), API keys, starting and waiting for the server, openqa-cli with the
# suite's key, job state polling and worker start. Source after lib.sh,
# then new_keys before the first start_server. VIGIL_TEST_DB=pg runs the
# suite's server on PostgreSQL: a throwaway cluster (pg_lib.sh) and one
# database, given to apikey and serve as --db (DBOPT; DBURL for a suite's own
# commands); sql runs a statement on whichever database the suite uses.
PY=/usr/bin/python3  # Debian's, with python3-openqa-client
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
DATA=$TMP/data
PIDS=
DBURL=
DBOPT=
stop_pids() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	sleep 1
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap stop_pids EXIT INT TERM
if [ "${VIGIL_TEST_DB:-sqlite}" = pg ]; then
	. "$(dirname "$0")/pg_lib.sh"
	PG_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	pg_start || { echo "FAIL cannot start PostgreSQL"; exit 1; }
	pg_stop_after $$ # whatever trap the suite sets
	DBURL=$(pg_newdb vigil) || { echo "FAIL cannot create a PostgreSQL database"; exit 1; }
	DBOPT="--db $DBURL"
	echo "# on PostgreSQL: $DBURL"
fi
sql() { # sql STATEMENT: its rows, columns joined by |
	if [ -n "$DBURL" ]; then pg_sql vigil "$1"; else sqlite3 "$DATA/vigil.db" "$1"; fi
}

wait_server() { # until the server at URL answers, or its process (SPID) is gone; 2 minutes at most
	i=0
	until curl -s "$URL/api/v1/jobs" > /dev/null 2>&1 || [ $i -ge 1200 ]; do
		[ -n "${SPID:-}" ] && ! kill -0 "$SPID" 2>/dev/null && return 1
		sleep 0.1; i=$((i + 1))
	done
}
new_keys() { # new_keys [operator]: an admin key in DATA -> KEY SECRET; with operator, also OPKEY OPSECRET
	$VIGIL apikey new --data "$DATA" $DBOPT --admin > "$TMP/key"
	read -r KEY SECRET < "$TMP/key"
	[ "${1:-}" = operator ] || return 0
	$VIGIL apikey new --data "$DATA" $DBOPT > "$TMP/opkey"
	read -r OPKEY OPSECRET < "$TMP/opkey"
}
start_server() { # start_server [SERVE OPTION...]: `vigil serve` over DATA on PORT, pid in SPID (and PIDS), answering
	$VIGIL serve --listen "127.0.0.1:$PORT" --data "$DATA" $DBOPT "$@" >> "$TMP/serve.log" 2>&1 &
	SPID=$!
	PIDS="$PIDS $SPID"
	wait_server
}
cli() { openqa-cli api --host "$URL" --apikey "$KEY" --apisecret "$SECRET" "$@"; }
start_worker() { # start_worker INSTANCE -> pid in WPID
	$VIGIL worker --host "$URL" --apikey "$KEY" --apisecret "$SECRET" --instance "$1" --pool "$TMP/pool$1" \
		>> "$TMP/worker$1.log" 2>&1 &
	WPID=$!
	PIDS="$PIDS $WPID"
}
state_of() { curl -s "$URL/api/v1/jobs/$1" | $PY -c 'import json,sys; j=json.load(sys.stdin)["job"]; print(j["state"], j["result"])' 2>/dev/null; }
# The SECONDS of wait_state and wait_running bound a wait on a job that
# will never get there; a busy machine must not fail a job that is only
# slow, so they are stretched by WAIT_SCALE (default 4). A passing check
# never waits longer for it.
WAIT_SCALE=${WAIT_SCALE:-4}
wait_state() { # wait_state JOB "STATE RESULT" SECONDS
	n=0
	while [ "$(state_of "$1")" != "$2" ] && [ $n -lt $(($3 * 2 * WAIT_SCALE)) ]; do sleep 0.5; n=$((n + 1)); done
	[ "$(state_of "$1")" = "$2" ]
}
wait_running() { # wait_running JOB SECONDS
	n=0
	while ! state_of "$1" | grep -q '^running' && [ $n -lt $(($2 * 2 * WAIT_SCALE)) ]; do sleep 0.5; n=$((n + 1)); done
	state_of "$1" | grep -q '^running'
}
