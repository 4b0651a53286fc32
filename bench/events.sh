#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/events.sh - 10,000 job.done events delivered to the three sinks
# (ngircd, a python3 webhook receiver, rabbitmq-server, started here on
# their own ports as in tests/integration/test_events.sh) with all three
# restarted midway. 10,000 jobs are seeded into the database, then set done
# through the API in three phases: 1..3000 with the sinks up, 3001..7000
# with all three down, 7001..10000 while they come back. Reports the
# set_done latency of each phase (the requests never wait for a sink),
# how long until each sink had every event, and events lost or repeated.
# Writes bench/out/events.json.   BENCH_EVENTS=N (default 10000)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
cd "$ROOT"
export VIGIL_TEST_TMP=${VIGIL_TEST_TMP:-/tmp/vigil-bench}
N=${BENCH_EVENTS:-10000}
A_END=$((N * 3 / 10)) B_END=$((N * 7 / 10))
. tests/integration/lib.sh
. tests/integration/server_lib.sh
EVENTS_DIR=$ROOT/tests/integration
. tests/integration/events_lib.sh
now() { date +%s.%N; }

rabbit_init
start_rabbit
ircconf
start_irc
wait_port "$IRCPORT" || { echo "bench/events: ngircd did not start" >&2; exit 1; }
start_observer() { # start_observer [PASSWORD]
	$SINKS irc "$IRCPORT" observer '#vigil' "$TMP/irc.log" "$@" >> "$TMP/obs.out" 2>&1 &
	OBS_PID=$!
}
start_hook() {
	$SINKS webhook "$HOOKPORT" hooksecret "$TMP/hook.log" "$TMP/hook.fail" >> "$TMP/hook.out" 2>&1 &
	HOOK_PID=$!
	wait_port "$HOOKPORT"
}
start_observer
start_hook
$SINKS wait-lines "$TMP/irc.log.joined" 1 120 || { echo "bench/events: the IRC observer did not join" >&2; exit 1; }
wait_rabbit || { echo "bench/events: rabbitmq-server did not start" >&2; exit 1; }
new_keys
cat > "$TMP/vigil.conf" <<CONF
[server]
listen = 127.0.0.1:$PORT
data = $DATA
[events]
retry-max = 1
[irc]
server = 127.0.0.1:$IRCPORT
channel = #vigil
events = job.done
[webhook]
url = http://127.0.0.1:$HOOKPORT/hook
secret = hooksecret
events = job.done
[amqp]
url = amqp://guest:guest@127.0.0.1:$AMQPPORT/
events = job.done
CONF
$VIGIL serve --config "$TMP/vigil.conf" >> "$TMP/serve.log" 2>&1 &
SPID=$!
PIDS="$PIDS $SPID"
wait_server || { echo "bench/events: the server did not start" >&2; exit 1; }
sqlite3 "$DATA/vigil.db" "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $N)
 INSERT INTO jobs (test, build, distri, version, flavor, arch, machine, t_created, t_updated)
 SELECT 't' || x, 'bench', 'd', '1', 'f', 'x86_64', '64bit', '2026-01-01T00:00:00', '2026-01-01T00:00:00' FROM c"
echo "bench/events: $N jobs seeded; phase A: 1..$A_END done with the sinks up"
"$AMQPSINK" drain "$AMQPPORT" vigil-test "$N" 1800 > "$TMP/amqp.txt" 2> "$TMP/amqp.err" &
DRAIN_PID=$!
T0=$(now)
$SINKS finish "$PORT" "$KEY" "$SECRET" 1 "$A_END" passed > "$TMP/phase-a.json"
hook_n() { grep '"event": "job.done"' "$TMP/hook.log" 2>/dev/null | sed -n 's/.*"delivery": "\([0-9]*\)".*/\1/p' | sort -u | wc -l; }
irc_n() { sed -n 's/^Job \([0-9]*\) .*/\1/p' "$TMP/irc.log" 2>/dev/null | sort -u | wc -l; }
amqp_n() { cut -d' ' -f2 "$TMP/amqp.txt" | sort -u | wc -l; }
# Throughput with every sink up: until all three have phase A's events.
i=0
while [ $i -lt 6000 ] && { [ "$(hook_n)" -lt "$A_END" ] || [ "$(irc_n)" -lt "$A_END" ] || [ "$(amqp_n)" -lt "$A_END" ]; }; do
	sleep 0.1
	i=$((i + 1))
done
T_A=$(now)
echo "bench/events: phase B: $((A_END + 1))..$B_END done with IRC, the webhook receiver and RabbitMQ down"
kill "$HOOK_PID" "$IRC_PID" "$OBS_PID"
wait "$HOOK_PID" "$IRC_PID" "$OBS_PID" 2>/dev/null
stop_rabbit
$SINKS finish "$PORT" "$KEY" "$SECRET" $((A_END + 1)) "$B_END" passed > "$TMP/phase-b.json"
echo "bench/events: phase C: $((B_END + 1))..$N done while the sinks come back"
start_hook
start_rabbit
# The observer joins before the notifier can (a server password only it
# knows, then lifted), so no line goes to an empty channel.
ircconf obspass
start_irc
wait_port "$IRCPORT"
start_observer obspass
$SINKS wait-lines "$TMP/irc.log.joined" 2 120
ircconf
kill -HUP "$IRC_PID"
$SINKS finish "$PORT" "$KEY" "$SECRET" $((B_END + 1)) "$N" passed > "$TMP/phase-c.json"
wait_rabbit
T_REQ=$(now)

T_HOOK= T_IRC= T_AMQP=
i=0
while [ $i -lt 3600 ] && { [ -z "$T_HOOK" ] || [ -z "$T_IRC" ] || [ -z "$T_AMQP" ]; }; do
	[ -z "$T_HOOK" ] && [ "$(hook_n)" -ge "$N" ] && T_HOOK=$(now)
	[ -z "$T_IRC" ] && [ "$(irc_n)" -ge "$N" ] && T_IRC=$(now)
	[ -z "$T_AMQP" ] && [ "$(amqp_n)" -ge "$N" ] && T_AMQP=$(now)
	sleep 0.5
	i=$((i + 1))
done
wait "$DRAIN_PID" 2>/dev/null
LEFT=$(sqlite3 "$DATA/vigil.db" "SELECT COUNT(*) FROM events")
$PY - "$N" "$T0" "$T_REQ" "${T_HOOK:-0}" "${T_IRC:-0}" "${T_AMQP:-0}" "$TMP" "$LEFT" "$T_A" "$A_END" > "$HERE/out/events.json" <<'PY'
import json, sys
n, t0, treq, th, ti, ta, tmp, left, t_a, a_end = sys.argv[1:]
n, t0, treq = int(n), float(t0), float(treq)
def ids(path, pick):
    out = []
    for l in open(path, errors='replace'):
        v = pick(l)
        if v is not None:
            out.append(v)
    return out
def hook(l):
    r = json.loads(l)
    return r['delivery'] if r.get('event') == 'job.done' else None
def irc(l):
    return l.split(' ')[1] if l.startswith('Job ') else None
def amqp(l):
    return l.split(' ')[1] if l.startswith('suse.openqa.job.done ') else None
res = {'events': n, 'phases': {p: json.load(open(f'{tmp}/phase-{p}.json')) for p in 'abc'},
       'requests_seconds': round(treq - t0, 1), 'outbox_left': int(left), 'sinks': {},
       'phase_a_all_sinks_seconds': round(float(t_a) - t0, 2),
       'phase_a_events_per_s': round(int(a_end) / (float(t_a) - t0), 1)}
refused = sum(1 for l in open(f'{tmp}/hook.log') if '"refused"' in l)
for name, path, pick, t in (('webhook', 'hook.log', hook, th), ('irc', 'irc.log', irc, ti), ('amqp', 'amqp.txt', amqp, ta)):
    got = ids(f'{tmp}/{path}', pick)
    s = {'delivered': len(set(got)), 'lost': n - len(set(got)), 'repeated': len(got) - len(set(got))}
    if float(t):
        s['seconds_to_all'] = round(float(t) - t0, 1)
        s['events_per_s'] = round(n / (float(t) - t0), 1)
    res['sinks'][name] = s
print(json.dumps(res, indent=1))
PY
cat "$HERE/out/events.json"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if all(s["lost"] == 0 for s in r["sinks"].values()) and all(p["errors"] == 0 for p in r["phases"].values()) else 1)' "$HERE/out/events.json"
