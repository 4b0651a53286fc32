#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pg_suites.sh - the server suites again, on PostgreSQL: each runs with
# VIGIL_TEST_DB=pg (server_lib.sh starts a throwaway cluster and passes
# --db), its checks counted here as "pg: ..." lines. The list keeps to the
# server's API and worker protocol and to a few minutes in CI; every suite
# that sources server_lib.sh can run so by hand:
#   VIGIL_TEST_DB=pg sh tests/integration/test_worker.sh
. "$(dirname "$0")/lib.sh"
SUITES=${PG_SUITES:-"test_api_server test_client test_server_conc test_parallel"}
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
