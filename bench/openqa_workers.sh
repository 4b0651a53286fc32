#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/openqa_workers.sh - the same jobs under one openQA 4.6 server
# (tests/integration/openqa_lib.sh starts it), run by `vigil worker` and by
# openQA's own openqa-worker + isotovideo side by side (own instances and
# classes): the anchors' Perl GRUB distribution (distri-anchor-grub, TCG)
# on both, and examples/grub (Lua) on vigil worker. Per job: wall time from
# the POST to done, openQA's t_started..t_finished, CPU of the worker's
# process tree without QEMU and of QEMU, peak RSS/PSS of the tree without
# QEMU (bench/tree_sample.py). Each run waits for an idle-ish machine
# (< 15% of a core over 2 s, 3 minutes at most) and records the load.
#   RUNS=3 bench/openqa_workers.sh      -> bench/out/openqa_workers/results.json + a table
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
VIGIL=${VIGIL:-$ROOT/build/vigil}
RUNS=${RUNS:-3}
PY=/usr/bin/python3
TMP=$HERE/out/openqa_workers
IMAGES=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
rm -rf "$TMP"
mkdir -p "$TMP"
. "$ROOT/tests/integration/openqa_lib.sh"
[ -z "$(oq_missing)" ] || { echo "bench: missing:$(oq_missing)" >&2; exit 1; }
[ -x /usr/share/openqa/script/worker ] || { echo "bench: openqa-worker is not installed" >&2; exit 1; }
VPID= OPID=
cleanup() {
	# The workers first (TERM, then KILL after 20 s, by oq_stop), then openQA.
	OQ_PIDS="$VPID $OPID $OQ_PIDS"
	oq_stop
}
trap cleanup EXIT
trap "exit 1" INT TERM

load_now() { # CPU use of the whole machine over 2 s, in % of one core
	$PY -c "import time
def t():
    f=[int(x) for x in open('/proc/stat').readline().split()[1:]]; return f[0]+f[1]+f[2]+f[5]+f[6]+f[7]
a=t(); time.sleep(2); print(int((t()-a)/2))"
}
wait_idle() {
	i=0
	while [ "$(load_now)" -ge 15 ] && [ $i -lt 90 ]; do i=$((i + 1)); done
}

oq_start || exit 1
cp -r "$ROOT/examples/grub" "$OQ_SHARE/tests/grub"
cp -r "$ROOT/tests/integration/distri-anchor-grub" "$OQ_SHARE/tests/pgrub"
cp "$IMAGES/grub-rescue-cdrom.iso" "$OQ_SHARE/factory/iso/"
mkdir -p "$OQ_DIR/base/openqa/pool/12" "$TMP/owc" "$TMP/pool"
chown -R geekotest "$OQ_SHARE"
chmod -R a+rX "$OQ_SHARE"
chown -R _openqa-worker "$OQ_DIR/base/openqa/pool"
host=${OQ_URL#http://}
printf '[global]\nHOST = %s\nWORKER_CLASS = bench_openqa\n' "$OQ_URL" > "$TMP/owc/workers.ini"
printf '[%s]\nkey = %s\nsecret = %s\n' "${host%:*}" "$OQ_KEY" "$OQ_SECRET" > "$TMP/owc/client.conf"
chmod -R a+rX "$TMP/owc"

"$VIGIL" worker --host "$OQ_URL" --apikey "$OQ_KEY" --apisecret "$OQ_SECRET" --instance 11 --pool "$TMP/pool" \
	--class bench_vigil --share "$OQ_SHARE" > "$TMP/vigil-worker.log" 2>&1 &
VPID=$!
setsid setpriv --reuid="$(id -u _openqa-worker)" --regid="$(id -g _openqa-worker)" --clear-groups \
	env HOME="$TMP" OPENQA_CONFIG="$TMP/owc" OPENQA_BASEDIR="$OQ_DIR/base" \
	/usr/share/openqa/script/worker --instance 12 > "$TMP/openqa-worker.log" 2>&1 < /dev/null &
OPID=$!
i=0
until [ "$(oq_api workers | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["workers"]))')" = 2 ] || [ $i -ge 120 ]; do
	sleep 0.5
	i=$((i + 1))
done

# run_one SIDE PID CLASS DISTRI: one job, sampled; a JSON line into rows
PERLVARS="QEMU_NO_KVM=1 QEMU=x86_64 QEMUCPUS=1 QEMURAM=512"
run_one() {
	wait_idle
	load=$(load_now)
	$PY "$HERE/tree_sample.py" "$2" "$TMP/sample.json" &
	spid=$!
	t0=$($PY -c 'import time; print(time.time())')
	# shellcheck disable=SC2086
	id=$(oq_api -X POST jobs TEST="$4" DISTRI="$4" VERSION=1 FLAVOR=cd ARCH=x86_64 BUILD=bench MACHINE=64bit \
		ISO=grub-rescue-cdrom.iso $PERLVARS QEMU_APPEND="accel tcg" WORKER_CLASS="$3" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	n=0
	while ! oq_api "jobs/$id" | grep -q '"state":"done"' && [ $n -lt 1200 ]; do sleep 0.5; n=$((n + 1)); done
	t1=$($PY -c 'import time; print(time.time())')
	kill "$spid"
	wait "$spid"
	oq_api "jobs/$id" > "$TMP/job.json"
	$PY - "$1" "$4" "$t0" "$t1" "$load" "$TMP/job.json" "$TMP/sample.json" >> "$TMP/rows.jsonl" <<'EOF'
import json, sys, datetime
side, distri, t0, t1, load, jf, sf = sys.argv[1:]
j = json.load(open(jf))["job"]
s = json.load(open(sf))
ts = lambda v: datetime.datetime.fromisoformat(v).timestamp()
print(json.dumps(dict(side=side, distri=distri, job=j["id"], result=j["result"], wall_s=round(float(t1) - float(t0), 1),
                      openqa_s=round(ts(j["t_finished"]) - ts(j["t_started"]), 1) if j.get("t_finished") else None,
                      load_before_pct_of_core=int(load), **s)))
EOF
	tail -1 "$TMP/rows.jsonl" >&2
}
r=1
while [ $r -le "$RUNS" ]; do
	run_one vigil-worker "$VPID" bench_vigil pgrub
	run_one openqa-worker+isotovideo "$OPID" bench_openqa pgrub
	run_one vigil-worker "$VPID" bench_vigil grub
	r=$((r + 1))
done
$PY - "$TMP/rows.jsonl" "$TMP/results.json" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out = {"rows": rows, "medians": {}}
print("%-26s %-6s %4s %8s %8s %9s %9s %9s %9s %5s" % ("worker", "distri", "n", "wall s", "openQA s", "tool cpu", "qemu cpu",
      "tool RSS", "tool PSS", "load"))
for key in sorted({(r["side"], r["distri"]) for r in rows}):
    rs = [r for r in rows if (r["side"], r["distri"]) == key]
    med = lambda k: statistics.median(r[k] for r in rs if r.get(k) is not None)
    m = {k: med(k) for k in ("wall_s", "openqa_s", "tool_cpu_s", "qemu_cpu_s", "tool_rss_kb", "tool_pss_kb",
                             "load_before_pct_of_core")}
    m["results"] = [r["result"] for r in rs]
    out["medians"]["%s/%s" % key] = m
    print("%-26s %-6s %4d %8.1f %8.1f %8.1fs %8.1fs %7.0fMB %7.0fMB %4d%%" % (key[0], key[1], len(rs), m["wall_s"],
          m["openqa_s"], m["tool_cpu_s"], m["qemu_cpu_s"], m["tool_rss_kb"] / 1024, m["tool_pss_kb"] / 1024,
          m["load_before_pct_of_core"]))
json.dump(out, open(sys.argv[2], "w"), indent=1)
EOF
