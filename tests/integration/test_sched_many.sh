#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sched_many.sh - many workers polling at once (issue 39): NWORKERS
# (default 120) workers over 10 classes long-poll a real `vigil serve` at
# the same moment (sched_grab.py: one barrier), 9 of the classes with 20
# jobs each at mixed priorities. Every worker whose class has a job gets
# one, each a distinct job of its class and its class's best (priority,
# then id), the workers of the class without jobs get none, the database
# holds exactly those assignments, and the server abandons no worker's
# jobs. Counted, not timed. Once more on PostgreSQL (VIGIL_TEST_DB=pg, as
# every suite of server_lib.sh); the unit test test_server_sched checks
# the order of candidates without HTTP.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
NWORKERS=${NWORKERS:-120}

two_eq() { [ "$1" = "$2" ] && [ "$3" = "$4" ]; }

grab_round() { # grab_round LABEL: the checks on the database the suite uses now
	new_keys
	start_server --per-ip 0 --connections $((NWORKERS + 50))
	timeout 900 $PY "$(dirname "$0")/sched_grab.py" "$URL" "$KEY" "$SECRET" "$NWORKERS" 10 20 "$TMP/grab$1" \
		> "$TMP/grab$1.err" 2>&1
	check "$1: the client ran" [ $? -eq 0 ]
	v() { sed -n "s/^$1 //p" "$TMP/grab$2"; }
	check "$1: $NWORKERS workers polled, none failed $(head -3 "$TMP/grab$1.err")" \
		two_eq "$(v workers "$1")" "$NWORKERS" "$(v errors "$1")" 0
	check "$1: every worker that can take a job got one ($(v got "$1") of $(v can "$1"))" \
		two_eq "$(v got "$1")" "$(v can "$1")" "$(v can "$1")" $((NWORKERS - NWORKERS / 10))
	check "$1: each a distinct job ($(v distinct "$1"))" [ "$(v distinct "$1")" = "$(v got "$1")" ]
	check "$1: each of its worker's class" [ "$(v wrong_class "$1")" = 0 ]
	check "$1: each class's best jobs went out ($(v best "$1") of $(v classes "$1") classes)" \
		[ "$(v best "$1")" = "$(v classes "$1")" ]
	check "$1: the database holds the same assignments" \
		[ "$(sql "SELECT COUNT(*) FROM jobs WHERE state = 'assigned'")" = "$(v got "$1")" ]
	check "$1: no worker abandoned while polling" sh -c "! grep -q 'abandoning' '$TMP/serve.log'"
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
}

grab_round "${VIGIL_TEST_DB:-sqlite}"
finish
