#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pg_suites.sh - the server's tests again, on PostgreSQL: first the
# unit tests that use a database (build/test_unit with VIGIL_TEST_DB set to
# a throwaway cluster's database; each test empties it), then the server
# suites, each with VIGIL_TEST_DB=pg (server_lib.sh starts a throwaway
# cluster and passes --db), its checks counted here as "pg: ..." lines. The list keeps to the
# server's API and worker protocol and to a few minutes in CI; every suite
# that sources server_lib.sh can run so by hand:
#   VIGIL_TEST_DB=pg sh tests/integration/test_worker.sh
# run-all: long 151
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
# the newer of the two builds (make check builds the sanitizer one only)
if [ -z "${UNIT_BIN:-}" ]; then
	UNIT_BIN=$(pwd)/build/test_unit
	[ -x "$UNIT_BIN" ] && [ ! "$(pwd)/build-san/test_unit" -nt "$UNIT_BIN" ] || UNIT_BIN=$(pwd)/build-san/test_unit
fi
if [ -x "$UNIT_BIN" ]; then
	t0=$(date +%s)
	PG_PORT=55440
	pg_start || { echo "FAIL cannot start PostgreSQL"; exit 1; }
	pg_stop_after $$
	url=$(pg_newdb vigilunit) || { echo "FAIL cannot create a PostgreSQL database"; exit 1; }
	VIGIL_TEST_DB=$url "$UNIT_BIN" > "$TMP/unit.log" 2>&1
	rc=$?
	pg_stop
	p=$(grep -cE '^ok ' "$TMP/unit.log")
	grep -E '^FAIL' "$TMP/unit.log" | sed 's/^/pg: unit: /'
	# (a binary older than VIGIL_TEST_DB would run them all on SQLite: the first line tells)
	if [ "$rc" -eq 0 ] && [ "$p" -gt 50 ] && grep -q '^# on PostgreSQL' "$TMP/unit.log" &&
		grep -qE '^[0-9]+ passed, 0 failed' "$TMP/unit.log"; then
		ok "pg: the unit tests that use a database ($p, $(basename "$(dirname "$UNIT_BIN")"), $(($(date +%s) - t0)) s)"
	else
		not_ok "pg: unit tests exited $rc ($p passed; log: $TMP/unit.log)"
		grep -B3 -E '^FAIL' "$TMP/unit.log" | tail -20
	fi
else
	not_ok "pg: no unit test binary (make build/test_unit)"
fi
SUITES=${PG_SUITES:-"test_api_server test_client test_server_conc test_parallel test_events test_sched_many"}
for s in $SUITES; do
	t0=$(date +%s)
	VIGIL_TEST_DB=pg VIGIL_TEST_TMP=$TMP sh "$(dirname "$0")/$s.sh" > "$TMP/$s.log" 2>&1
	rc=$?
	p=$(grep -cE '^ok ' "$TMP/$s.log")
	f=$(grep -cE '^FAIL' "$TMP/$s.log")
	grep -E '^FAIL' "$TMP/$s.log" | sed "s/^/pg: $s: /"
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && grep -qE '^[0-9]+ passed, 0 failed' "$TMP/$s.log"; then
		ok "pg: $s ($p checks, $(($(date +%s) - t0)) s)"
	else
		not_ok "pg: $s exited $rc with $f failed checks of $((p + f)) ($(($(date +%s) - t0)) s); log: $TMP/$s.log"
		tail -5 "$TMP/$s.log"
	fi
done
finish
