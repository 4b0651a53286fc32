#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pg.sh - vigil on PostgreSQL, in a throwaway cluster (pg_lib.sh):
# the two dialects' schemas agree line for line (`vigil db schema`); a
# server populated on SQLite (job group, jobs with settings, modules,
# comments, an asset, API keys) is moved by `vigil db copy` and answers the
# same from PostgreSQL, its keys still sign, new ids follow the copied ones,
# and a second copy into a used database is refused; three `vigil serve`
# processes on one PostgreSQL database hand each job of a batch to exactly
# one of many long-polling workers, and keep every write of concurrent
# writers (pg_conc.py: parallel clusters, status, results, comments).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

[ -z "$DBURL" ] || { echo "test_pg starts its own databases: run it without VIGIL_TEST_DB"; }
DBURL=
DBOPT=
PG_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if ! pg_start; then
	not_ok "PostgreSQL cluster starts"
	finish
	exit 1
fi
pg_stop_after $$
ok "PostgreSQL cluster starts (initdb/pg_ctl as postgres, socket in $PG_DIR)"

# --- the schemas agree
FRESH=$(pg_newdb fresh)
$VIGIL apikey new --data "$TMP/fresh" > /dev/null
$VIGIL db schema "$TMP/fresh/vigil.db" > "$TMP/schema.sqlite" 2> "$TMP/schema.err"
$VIGIL db schema "$FRESH" > "$TMP/schema.pg" 2>> "$TMP/schema.err"
check "both schemas read" [ -s "$TMP/schema.sqlite" -a -s "$TMP/schema.pg" ]
check "schema_version: the same number on both (migrations mirrored)" \
	[ "$(sqlite3 "$TMP/fresh/vigil.db" 'SELECT MAX(version) FROM schema_version')" = "$(pg_sql fresh 'SELECT MAX(version) FROM schema_version')" ]
if diff -u "$TMP/schema.sqlite" "$TMP/schema.pg" > "$TMP/schema.diff"; then
	ok "the SQLite and PostgreSQL schemas agree ($(wc -l < "$TMP/schema.pg") lines: tables, columns, types, keys, indexes)"
else
	not_ok "the SQLite and PostgreSQL schemas differ (a migration not mirrored in db_migrate_pg.c?):"
	cat "$TMP/schema.diff"
fi
check "schema lines name columns, keys and indexes" sh -c "grep -q '^jobs column state text notnull default$' '$TMP/schema.pg' &&
	grep -q '^jobs index jobs_review plain partial review_todo,clone_id,id$' '$TMP/schema.pg' &&
	grep -q '^jobs index jobs_list_distri plain whole expr,id$' '$TMP/schema.pg' &&
	grep -q '^comments foreign job_id jobs cascade$' '$TMP/schema.pg' && grep -q '^assets unique type,name$' '$TMP/schema.pg'"
check "db schema: a missing SQLite file is an error naming it" sh -c "! $VIGIL db schema '$TMP/none.db' > /dev/null 2>&1 &&
	$VIGIL db schema '$TMP/none.db' 2>&1 | grep -q \"'$TMP/none.db': no such SQLite database\""
check "serve --db: not a URL is refused, naming the option" sh -c "$VIGIL serve --data '$TMP/x' --db /some/file 2>&1 | grep -q -- \"--db '/some/file'\""

# --- a populated SQLite server
new_keys operator
start_server
check "SQLite server answers" curl -sfo /dev/null "$URL/api/v1/jobs"
cli -X POST job_groups name=pgroup > /dev/null
for i in 1 2 3 4 5; do
	cli -X POST jobs TEST=pgtest$i DISTRI=opensuse VERSION=15 FLAVOR=DVD ARCH=x86_64 BUILD=b$((i % 2)) MACHINE=64bit \
		_GROUP=pgroup FOO=bar$i > /dev/null
done
cli -X POST jobs/2/comments text="bsc#1234 looked at" > /dev/null
cli -X POST jobs/3/comments text="label:linked" > /dev/null
cli -X POST jobs/1/cancel > /dev/null
mkdir -p "$DATA/factory/iso"
echo iso > "$DATA/factory/iso/pg.iso"
cli -X POST assets type=iso name=pg.iso > /dev/null
check "populated: 5 jobs" [ "$(curl -s "$URL/api/v1/jobs" | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" = 5 ]
stop_pids
PIDS=
# Modules as a worker leaves them (results of a run).
sqlite3 "$DATA/vigil.db" "INSERT INTO job_modules (job_id, name, category, script, result, milestone, important, fatal)
	VALUES (4, 'boot', 'installation', 'tests/boot.pm', 'passed', 1, 1, 1), (4, 'shell', 'console', 'tests/shell.pm', 'failed', 0, 1, 0);
	UPDATE jobs SET state = 'done', result = 'failed' WHERE id = 4"
ROUTES="jobs jobs/1 jobs/2 jobs/4 jobs/4/details jobs/2/comments jobs/3/comments assets job_groups jobs/overview?distri=opensuse jobs?state=done"
snapshot() { # snapshot DIR: the answers to ROUTES, keys sorted
	mkdir -p "$1"
	for r in $ROUTES; do
		curl -s "$URL/api/v1/$r" | $PY -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, indent=1))' \
			> "$1/$(echo "$r" | tr '/?=' '___')"
	done
}
start_server
snapshot "$TMP/from-sqlite"
stop_pids
PIDS=

# --- copy, then serve from PostgreSQL
MOVED=$(pg_newdb moved)
$VIGIL db copy "$DATA/vigil.db" "$MOVED" > "$TMP/copy.out" 2> "$TMP/copy.err"
check "db copy succeeds" [ $? -eq 0 ]
check "db copy reports the rows of each table" sh -c "grep -q '^jobs  *5 rows' '$TMP/copy.out' && grep -q '^job_modules  *2 rows' '$TMP/copy.out' && grep -q '^comments  *2 rows' '$TMP/copy.out' && grep -q '^api_keys  *2 rows' '$TMP/copy.out'"
differ=
for t in $(sqlite3 "$DATA/vigil.db" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"); do
	[ "$(sqlite3 "$DATA/vigil.db" "SELECT COUNT(*) FROM $t")" = "$(pg_sql moved "SELECT COUNT(*) FROM $t")" ] || differ="$differ $t"
done
check "row counts equal in every table${differ:+ (differ:$differ)}" [ -z "$differ" ]
check "ids kept: the same job ids and comment texts" [ "$(sqlite3 "$DATA/vigil.db" "SELECT id || ':' || test FROM jobs ORDER BY id" | tr '\n' ' ')" = \
	"$(pg_sql moved "SELECT id || ':' || test FROM jobs ORDER BY id" | tr '\n' ' ')" ]
$VIGIL db copy "$DATA/vigil.db" "$MOVED" > /dev/null 2> "$TMP/copy2.err"
check "a second copy into a used database is refused" sh -c "grep -q 'not empty' '$TMP/copy2.err'"
check "db copy: the wrong way round is refused" sh -c "! $VIGIL db copy '$MOVED' '$DATA/vigil.db' 2> /dev/null"
DBOPT="--db $MOVED"
start_server
check "PostgreSQL server answers" curl -sfo /dev/null "$URL/api/v1/jobs"
snapshot "$TMP/from-pg"
if diff -ru "$TMP/from-sqlite" "$TMP/from-pg" > "$TMP/answers.diff"; then
	ok "the API answers the same from the copy ($(echo $ROUTES | wc -w) routes)"
else
	not_ok "the API answers differ after the copy:"
	head -60 "$TMP/answers.diff"
fi
# A trigger that inserts elsewhere on each new job (as the event outbox
# does) must not change the id the server reports for the job.
pg_sql moved "CREATE TABLE trig_log (id BIGINT GENERATED BY DEFAULT AS IDENTITY (START 1000) PRIMARY KEY, job BIGINT);
	CREATE FUNCTION trig_log_job() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO trig_log (job) VALUES (NEW.id); RETURN NULL; END \$\$;
	CREATE TRIGGER trig_log_job AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION trig_log_job();" > /dev/null
cli -X POST jobs TEST=after DISTRI=opensuse > "$TMP/after.json"
check "the copied key still signs (a job created)" [ $? -eq 0 ]
check "new ids follow the copied ones (job 6)" [ "$(json_get "$TMP/after.json" 'j["id"]')" = 6 ]
check "the id is the job's, not the trigger's row's (1000)" [ "$(pg_sql moved "SELECT job FROM trig_log")" = 6 ]
check "the copied operator key cannot create a job group" sh -c "! openqa-cli api --host '$URL' --apikey '$OPKEY' --apisecret '$OPSECRET' -X POST job_groups name=nope > /dev/null 2>&1"
# PostgreSQL restarts under a running server: its connections come back.
pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w restart > /dev/null 2>&1
check "PostgreSQL restarted" pg_sql moved "SELECT 1"
n=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs/6")" = 200 ] || [ $n -ge 60 ]; do n=$((n + 1)); sleep 0.5; done
check "the server answers again after the restart" [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs/6")" = 200 ]
for i in 1 2 3 4 5 6 7 8; do curl -s -o /dev/null "$URL/api/v1/jobs?limit=3"; done # every handler thread meets it
cli -X POST jobs TEST=after-restart DISTRI=opensuse > "$TMP/after2.json"
check "and writes again (job 7)" [ "$(json_get "$TMP/after2.json" 'j["id"]')" = 7 ]
stop_pids
PIDS=

# --- several servers, one database, many workers
LOGSTART=$(($(wc -l < "$TMP/serve.log") + 1))
MULTI=$(pg_newdb multi)
DBOPT="--db $MULTI"
new_keys
PORTS=
SERVERS=3
for s in $(seq 1 $SERVERS); do
	PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	URL=http://127.0.0.1:$PORT
	start_server --threads 4
	PORTS="$PORTS${PORTS:+,}$PORT"
done
check "$SERVERS servers on one database answer" sh -c "for p in \$(echo $PORTS | tr , ' '); do curl -sf http://127.0.0.1:\$p/api/v1/jobs > /dev/null || exit 1; done"
POSTERS=
NJOBS=60
NWORKERS=24
i=0
for p in $(echo "$PORTS" | tr , ' '); do
	for k in $(seq 1 $((NJOBS / SERVERS))); do
		i=$((i + 1))
		echo "TEST=grab$i WORKER_CLASS=pgtest"
	done > "$TMP/jobs.$p"
done
for p in $(echo "$PORTS" | tr , ' '); do
	while read -r t w; do
		openqa-cli api --host "http://127.0.0.1:$p" --apikey "$KEY" --apisecret "$SECRET" -X POST jobs "$t" "$w" \
			< /dev/null > /dev/null
	done < "$TMP/jobs.$p" &
	POSTERS="$POSTERS $!"
done
t0=$(date +%s)
timeout 300 $PY "$(dirname "$0")/pg_grab.py" "$PORTS" "$KEY" "$SECRET" $NWORKERS $NJOBS "$TMP/grabs" > "$TMP/grab.err" 2>&1
GRC=$?
wait $POSTERS
check "$NJOBS jobs created on $SERVERS servers" [ "$(pg_sql multi "SELECT COUNT(*) FROM jobs")" = $NJOBS ]
check "$NWORKERS workers polled $SERVERS servers without an error (rc $GRC, $(($(date +%s) - t0)) s)" [ $GRC -eq 0 ]
[ $GRC -eq 0 ] || head -20 "$TMP/grab.err"
check "$NJOBS jobs handed out ($(wc -l < "$TMP/grabs") grabs)" [ "$(wc -l < "$TMP/grabs")" -eq $NJOBS ]
DUP=$(awk '{print $3}' "$TMP/grabs" | sort | uniq -d | head -5 | tr '\n' ' ')
check "no job given to two workers${DUP:+ (twice: $DUP)}" [ -z "$DUP" ]
check "every job handed by some server: $(awk '{print $1}' "$TMP/grabs" | sort | uniq -c | tr '\n' ' ')" \
	[ "$(awk '{print $1}' "$TMP/grabs" | sort -u | wc -l)" -eq $SERVERS ]
check "the database agrees: $NJOBS jobs done, passed, each on one worker" \
	[ "$(pg_sql multi "SELECT COUNT(*) FROM jobs WHERE state = 'done' AND result = 'passed' AND assigned_worker_id IS NOT NULL")" = $NJOBS ]
# The response cache of one server sees another server's write.
P1=$(echo "$PORTS" | cut -d, -f1)
P2=$(echo "$PORTS" | cut -d, -f2)
top() { curl -s "http://127.0.0.1:$1/api/v1/jobs?limit=1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])'; }
before=$(top "$P2")
top "$P2" > /dev/null # cached now
openqa-cli api --host "http://127.0.0.1:$P1" --apikey "$KEY" --apisecret "$SECRET" -X POST jobs TEST=seen WORKER_CLASS=none > "$TMP/seen.json"
check "a job created on one server is listed at once by another (its cache: job $(top "$P2"), was $before)" \
	[ "$(top "$P2")" = "$(json_get "$TMP/seen.json" 'j["id"]')" ]
# Writers at once on all three servers (pg_conc.py): parallel clusters
# posted while workers poll and run them, comments on running jobs; each
# job once, each cluster on three workers, no comment or result lost.
NCL=12
t0=$(date +%s)
timeout 400 $PY "$(dirname "$0")/pg_conc.py" "$PORTS" "$KEY" "$SECRET" $NCL 12 "$TMP/conc" > "$TMP/conc.err" 2>&1
CRC=$?
check "concurrent writers: clusters, status, results and comments on $SERVERS servers without an error (rc $CRC, $(($(date +%s) - t0)) s)" [ $CRC -eq 0 ]
[ $CRC -eq 0 ] || head -20 "$TMP/conc.err"
check "concurrent writers: $NCL clusters of 3 jobs posted" [ "$(grep -c '^cluster ' "$TMP/conc")" -eq $NCL ]
DUP=$(awk '$1 == "grab" {print $4}' "$TMP/conc" | sort | uniq -d | head -5 | tr '\n' ' ')
check "concurrent writers: $((NCL * 3)) jobs handed out, none twice${DUP:+ (twice: $DUP)}" \
	sh -c "[ -z '$DUP' ] && [ \$(grep -c '^grab ' '$TMP/conc') -eq $((NCL * 3)) ]"
SPLIT=
while read -r _ a b c; do
	[ "$(pg_sql multi "SELECT COUNT(DISTINCT assigned_worker_id) FROM jobs WHERE id IN ($a, $b, $c)")" = 3 ] || SPLIT="$SPLIT $a"
done <<EOF2
$(grep '^cluster ' "$TMP/conc")
EOF2
check "concurrent writers: each cluster ran on three distinct workers${SPLIT:+ (not: $SPLIT)}" [ -z "$SPLIT" ]
check "concurrent writers: every job done and passed (no result lost)" \
	[ "$(pg_sql multi "SELECT COUNT(*) FROM jobs WHERE distri = 'pgconc' AND state = 'done' AND result = 'passed'")" = $((NCL * 3)) ]
grep '^comment ' "$TMP/conc" | cut -d' ' -f2- | sort > "$TMP/conc.comments.want"
pg_sql multi "SELECT job_id || ' ' || text FROM comments WHERE text LIKE 'conc %'" | sort > "$TMP/conc.comments.have"
check "concurrent writers: every comment stored once ($(wc -l < "$TMP/conc.comments.want") posted through $SERVERS servers)" \
	sh -c "[ -s '$TMP/conc.comments.want' ] && cmp -s '$TMP/conc.comments.want' '$TMP/conc.comments.have'"
check "no server of the three logged a database error" sh -c "! tail -n +$LOGSTART '$TMP/serve.log' | grep -E 'statement .* failed|cannot prepare'"
finish
