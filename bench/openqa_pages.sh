#!/bin/bash
# SPDX-License-Identifier: MIT
# openqa_pages.sh - openQA 4.6's web pages measured by bench/web.py on the
# data set `web.py vigil` gives vigil: the anchor's 500 jobs (1 group, 1
# product, 5 machines, 10 test suites, 50 templates, 10 POST isos) grown by
# SQL to 10,000 (copy k: ids + 500k, builds + 10k; all done, every 5th
# failed, every 13th softfailed, but the last 100 scheduled and the 10
# before them running). A private openQA (tests/integration/openqa_lib.sh)
# with its web UI in the packaged prefork mode (-w 30), as the reference run.
# Measures both ways bench/web.py can leave a page (BENCH_WEB_BLANK).
# openQA's daemons: run it as `flock /tmp/vigil-isotovideo.lock bench/openqa_pages.sh OUTDIR`.
# Writes OUTDIR/openqa-browser.json and OUTDIR/openqa-page.json;
# `web.py reference OUTDIR/openqa-page.json > bench/reference/openqa-pages.json`.
# (The 2026-12-05 reference came from this script with its growing SQL, then
# naming the build column wrongly, run again by hand and the measuring step
# after it: it has not yet run end to end in this form.)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=$(realpath -m "${1:?usage: openqa_pages.sh OUTDIR}")
mkdir -p "$OUT"
TMP=$OUT
OQ_DIR=$OUT/openqa
. tests/integration/openqa_lib.sh
trap oq_stop EXIT
oq_start || exit 1
# the packaged web UI's prefork mode, as the reference ran it (no job page:
# its modules and results are not made here; no workers page: none registered)
W=$(echo $OQ_PIDS | cut -d' ' -f1)
kill -TERM $W; while kill -0 $W 2>/dev/null; do sleep 0.2; done
OQ_PIDS=$(echo $OQ_PIDS | cut -d' ' -f2-)
oq_launch webui $OQ_LIB/script/openqa prefork -m production --proxy -i 100 -H 400 -w 30 -c 1 -G 800 -l "http://127.0.0.1:$OQ_PORT"
WEBUI=${OQ_PIDS##* }
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$OQ_URL/api/v1/job_groups")" = 200 ]; do sleep 0.2; done
id_of() { jq -er .id; }
GID=$(oq_api -X POST job_groups name=bench-group | id_of)
PRID=$(oq_api -X POST products arch=x86_64 distri=bench flavor=DVD version=12 'settings[ISO_MAXSIZE]=4700372992' | id_of)
for m in 1 2 3 4 5; do MIDS="${MIDS:-} $(oq_api -X POST machines name=64bit-$m backend=qemu 'settings[QEMUCPU]=qemu64' "settings[QEMURAM]=$((1024*m))" 'settings[HDDSIZEGB]=20' | id_of)"; done
for t in $(seq 10); do TIDS="${TIDS:-} $(oq_api -X POST test_suites name=suite$t description="bench suite $t" 'settings[DESKTOP]=textmode' "settings[INSTALLONLY]=$((t%2))" 'settings[YAML_SCHEDULE]=schedule/x.yaml' | id_of)"; done
for m in $MIDS; do for t in $TIDS; do oq_api -X POST job_templates group_id=$GID product_id=$PRID machine_id=$m test_suite_id=$t prio=50 > /dev/null; done; done
for b in $(seq 10); do oq_api -X POST isos ISO=bench-$b.iso DISTRI=bench VERSION=12 FLAVOR=DVD ARCH=x86_64 BUILD=$b _NO_OBSOLETE=1 | jq -c .count; done
psql_() { oq_pgsu psql -q -v ON_ERROR_STOP=1 "$OQ_DB" "$@"; }
# 500 jobs -> 10,000: copy k gets ids + 500k and builds + 10k (as bench/web.py grows vigil's)
psql_ <<SQL
CREATE TEMP TABLE k AS SELECT generate_series(1, 19) AS k;
DO \$\$ DECLARE jc text; sc text; BEGIN
  SELECT string_agg(quote_ident(column_name), ',') INTO jc FROM information_schema.columns
    WHERE table_name = 'jobs' AND table_schema = 'public' AND column_name NOT IN ('id', 'build');
  EXECUTE format('INSERT INTO jobs (id, build, %s) SELECT id + k * 500, (build::int + k * 10)::text, %s FROM jobs, k WHERE id <= 500', jc, jc);
  SELECT string_agg(quote_ident(column_name), ',') INTO sc FROM information_schema.columns
    WHERE table_name = 'job_settings' AND table_schema = 'public' AND column_name NOT IN ('id', 'job_id', 'value');
  EXECUTE format('INSERT INTO job_settings (job_id, value, %s) SELECT job_id + k * 500, CASE WHEN key = ''BUILD'' THEN (value::int + k * 10)::text ELSE value END, %s FROM job_settings, k WHERE job_id <= 500', sc, sc);
END \$\$;
SELECT setval(pg_get_serial_sequence('jobs', 'id'), (SELECT MAX(id) FROM jobs));
UPDATE jobs SET t_created = now() - ((10000 - id) * 10 + 1800) * interval '1 second';
UPDATE jobs SET state = 'done', result = CASE WHEN id % 5 = 0 THEN 'failed' WHEN id % 13 = 0 THEN 'softfailed' ELSE 'passed' END,
  t_started = t_created + interval '300 seconds', t_finished = t_created + interval '1200 seconds' WHERE id <= 9890;
UPDATE jobs SET state = 'running', t_started = t_created + interval '300 seconds' WHERE id > 9890 AND id <= 9900;
ANALYZE;
SQL
psql_ -tAc "select state, count(*) from jobs group by 1"
BUILD=$(psql_ -tAc 'select build from jobs where id <= 9890 group by build having count(*) = 50 order by max(id) desc limit 1')
JOB=$(psql_ -tAc "select min(id) from jobs where build = '$BUILD'")
echo "group $GID build $BUILD job $JOB webui $WEBUI"
PGPID=$(head -1 /var/lib/postgresql/"$(ls /usr/lib/postgresql | sort -V | tail -1)"/main/postmaster.pid)
PAGES=dashboard,tests,overview,group_overview,admin_machines,admin_products,admin_test_suites,admin_job_templates,admin_auditlog
for m in browser page; do
  BENCH_WEB_COLD=1 BENCH_WEB_BLANK=$m /usr/bin/python3 bench/web.py measure --site openqa --url "$OQ_URL" --out "$OUT/openqa-$m.json" \
    --pid webui=$WEBUI --pid pg=$PGPID --param job=$JOB --param group=$GID --param build=$BUILD --jobs 10000 --pages $PAGES
done
