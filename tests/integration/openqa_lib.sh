# SPDX-License-Identifier: MIT
# openqa_lib.sh - a private openQA server (Debian's openqa 4.6 packages)
# for the interop suites and bench/: a fresh PostgreSQL database, its own
# config and data directory (OPENQA_CONFIG, OPENQA_BASEDIR under OQ_DIR),
# the webui, websockets, livehandler, scheduler and gru daemons as user
# geekotest on a free base port P (webui P, websockets P+1, livehandler
# P+2, scheduler P+3: openQA's fixed layout), [auth] method = Fake (GET
# /login creates the API key below). Installs nothing: oq_missing says
# what is missing. Source it, then oq_start; oq_stop stops everything it
# started (by PID) and drops the database.
#
#   OQ_DIR     state directory (default $TMP/openqa)
#   OQ_PORT    base port (picked free, with P+1..P+4 free too)
#   OQ_URL     http://127.0.0.1:OQ_PORT     OQ_KEY / OQ_SECRET  the API key
#   OQ_SHARE   OQ_DIR/base/openqa/share (tests/, factory/{iso,hdd,other})
OQ_DIR=${OQ_DIR:-$TMP/openqa}
OQ_SHARE=$OQ_DIR/base/openqa/share
OQ_KEY=1234567890ABCDEF
OQ_SECRET=1234567890ABCDEF
OQ_LIB=/usr/share/openqa
OQ_PIDS=
OQ_PG_STARTED=
OQ_DB=

# The packages this needs that are not installed (empty: none).
oq_missing() {
	oq_m=""
	[ -x $OQ_LIB/script/openqa ] || oq_m="$oq_m openqa"
	command -v openqa-cli > /dev/null || oq_m="$oq_m openqa-client"
	command -v pg_ctlcluster > /dev/null || oq_m="$oq_m postgresql"
	id geekotest > /dev/null 2>&1 || oq_m="$oq_m openqa(user geekotest)"
	echo "$oq_m"
}

# A base port P with P..P+4 free on 127.0.0.1.
oq_free_port() {
	python3 - <<'EOF'
import socket, random
for _ in range(200):
    p = random.randint(20000, 60000)
    socks = []
    try:
        for i in range(5):
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p + i)); socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks: s.close()
    print(p); break
EOF
}

oq_log() { echo "[openqa $(date -u +%T)] $*" >&2; }

oq_pgsu() { (cd / && runuser -u postgres -- "$@"); }

oq_launch() { # oq_launch NAME CMD...: a daemon as geekotest, its PID in OQ_PIDS
	oq_name=$1
	shift
	setsid setpriv --reuid="$(id -u geekotest)" --regid="$(id -g geekotest)" --clear-groups \
		env HOME="$OQ_DIR" OPENQA_CONFIG="$OQ_DIR/etc" OPENQA_BASEDIR="$OQ_DIR/base" \
		OPENQA_BASE_PORT="$OQ_PORT" "$@" >> "$OQ_DIR/log/$oq_name.log" 2>&1 < /dev/null &
	OQ_PIDS="$OQ_PIDS $!"
}

# Start PostgreSQL (if down), a fresh database, the daemons; wait until the
# web UI answers and the API key exists. 0, or 1 with the reason on stderr.
oq_start() {
	oq_pgver=$(ls /usr/lib/postgresql | sort -V | tail -1)
	OQ_PORT=${OQ_PORT:-$(oq_free_port)}
	OQ_URL=http://127.0.0.1:$OQ_PORT
	OQ_DB=vigil_oq_$OQ_PORT
	if ! pg_lsclusters -h | awk -v v="$oq_pgver" '$1==v && $2=="main" && $4 ~ /^online/' | grep -q .; then
		oq_log "starting postgresql $oq_pgver/main"
		pg_ctlcluster "$oq_pgver" main start || { oq_log "postgresql did not start"; return 1; }
		OQ_PG_STARTED=$oq_pgver
	fi
	oq_pgsu psql -tAc "select 1 from pg_roles where rolname='geekotest'" | grep -q 1 ||
		oq_pgsu createuser -D geekotest
	oq_pgsu dropdb --if-exists "$OQ_DB"
	oq_pgsu createdb -O geekotest "$OQ_DB" || { oq_log "createdb $OQ_DB failed"; return 1; }
	rm -rf "$OQ_DIR"
	mkdir -p "$OQ_DIR/etc" "$OQ_DIR/log" "$OQ_SHARE/tests" "$OQ_SHARE/factory/iso" "$OQ_SHARE/factory/hdd" \
		"$OQ_SHARE/factory/other" "$OQ_DIR/base/openqa/testresults" "$OQ_DIR/base/openqa/images" \
		"$OQ_DIR/base/openqa/db" "$OQ_DIR/base/openqa/webui/cache"
	cat > "$OQ_DIR/etc/openqa.ini" <<EOF
[global]
base_url = $OQ_URL
[auth]
method = Fake
[audit]
blocklist = job_grab job_done
[cleanup]
concurrent = 0
EOF
	printf '[production]\ndsn = DBI:Pg:dbname=%s\n' "$OQ_DB" > "$OQ_DIR/etc/database.ini"
	chown -R geekotest "$OQ_DIR"
	chmod -R a+rX "$OQ_DIR"
	# The directories above it must let geekotest through.
	oq_d=$OQ_DIR
	while [ "$oq_d" != / ] && [ -n "$oq_d" ]; do oq_d=$(dirname "$oq_d"); chmod a+x "$oq_d" 2>/dev/null || true; done
	oq_launch webui $OQ_LIB/script/openqa daemon -m production --proxy -i 100 -l "http://127.0.0.1:$OQ_PORT"
	oq_webui=${OQ_PIDS##* }
	oq_i=0
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "$OQ_URL/api/v1/job_groups")" = 200 ]; do
		kill -0 "$oq_webui" 2>/dev/null && [ $oq_i -lt 3000 ] || {
			oq_log "web UI did not come up:"
			tail -20 "$OQ_DIR/log/webui.log" >&2
			return 1
		}
		sleep 0.1
		oq_i=$((oq_i + 1))
	done
	oq_launch websockets $OQ_LIB/script/openqa-websockets daemon -m production
	oq_launch livehandler $OQ_LIB/script/openqa-livehandler daemon -m production --proxy -i 100
	oq_launch scheduler $OQ_LIB/script/openqa-scheduler daemon -m production
	oq_launch gru nice -n 19 $OQ_LIB/script/openqa-gru
	curl -s -o /dev/null "$OQ_URL/login" # Fake auth: user Demo (admin) with OQ_KEY/OQ_SECRET
	for oq_p in $((OQ_PORT + 1)) $((OQ_PORT + 3)); do # websockets and scheduler listen
		oq_i=0
		until curl -s -o /dev/null "http://127.0.0.1:$oq_p/" || [ $oq_i -ge 3000 ]; do sleep 0.1; oq_i=$((oq_i + 1)); done
	done
	oq_api job_groups > /dev/null || { oq_log "API key not accepted"; return 1; }
	oq_log "openQA up at $OQ_URL (pids$OQ_PIDS, db $OQ_DB)"
}

oq_api() { openqa-cli api --host "$OQ_URL" --apikey "$OQ_KEY" --apisecret "$OQ_SECRET" "$@"; }

oq_stop() {
	for oq_p in $OQ_PIDS; do kill -TERM "$oq_p" 2>/dev/null; done
	for oq_p in $OQ_PIDS; do
		oq_i=0
		while kill -0 "$oq_p" 2>/dev/null && [ $oq_i -lt 100 ]; do sleep 0.2; oq_i=$((oq_i + 1)); done
		kill -KILL "$oq_p" 2>/dev/null
	done
	OQ_PIDS=
	[ -n "$OQ_DB" ] && oq_pgsu dropdb --if-exists "$OQ_DB" 2> /dev/null
	if [ -n "$OQ_PG_STARTED" ]; then
		oq_log "stopping postgresql $OQ_PG_STARTED/main"
		pg_ctlcluster "$OQ_PG_STARTED" main stop || true
	fi
	OQ_DB=
	OQ_PG_STARTED=
}
