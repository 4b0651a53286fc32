#!/bin/sh
# SPDX-License-Identifier: MIT
# test_serve_user.sh - `vigil serve --user NAME` (issue 17): started as root,
# it binds its address first (a port below 1024, which NAME could not bind)
# and then runs as NAME, whose data directory it creates and writes; root
# without --user is warned about; an unknown user, root itself, and --user
# without root are refused with the reason. Needs root (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/server_lib.sh"
if [ "$(id -u)" != 0 ] || ! id nobody > /dev/null 2>&1; then
	echo "skipped: needs root and the user nobody"
	finish
	exit 0
fi
SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "$SERVER_PID" ] && wait "$SERVER_PID"; SERVER_PID=; }
trap 'stop_server; stop_pids; rm -rf "${HOMEDIR:-/nonexistent}"' EXIT INT TERM

# a free privileged port
LOW=$($PY -c '
import socket
for p in range(990, 600, -1):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); print(p); break
    except OSError:
        pass
    finally:
        s.close()')
check "a free port below 1024" [ -n "$LOW" ]
# nobody's directory where nobody can reach it (the suites' tmp dir may be
# 0700, as mktemp makes it)
HOMEDIR=$(mktemp -d /tmp/vigil-serve-user.XXXXXX)
chmod 755 "$HOMEDIR"
mkdir -p "$HOMEDIR/home"
chown nobody "$HOMEDIR/home"
DATA=$HOMEDIR/home/data
# a copy of the binary nobody may run (the checkout may sit below /root)
cp "$VIGIL" "$HOMEDIR/vigil"
chmod 755 "$HOMEDIR/vigil"
NVIGIL=$HOMEDIR/vigil
URL=http://127.0.0.1:$LOW
$VIGIL serve --user nobody --listen "127.0.0.1:$LOW" --data "$DATA" > "$TMP/serve.log" 2>&1 &
SERVER_PID=$!
SPID=$SERVER_PID
wait_server
check "serves on port $LOW as nobody" curl -sf "$URL/api/v1/jobs"
check "the process runs as nobody (real, effective, saved uid)" \
	[ "$(awk '/^Uid:/ { print $2, $3, $4 }' /proc/$SERVER_PID/status)" = "65534 65534 65534" ]
check "its groups are nobody's" [ "$(awk '/^Gid:/ { print $2, $3 }' /proc/$SERVER_PID/status)" = "65534 65534" ]
check "the data directory and database were created by nobody" \
	[ "$(stat -c %U "$DATA") $(stat -c %U "$DATA/vigil.db")" = "nobody nobody" ]
check "no root warning when --user is given" eval "! grep -q 'running as root' '$TMP/serve.log'"
runuser -u nobody -- $NVIGIL apikey new --data "$DATA" --admin > "$TMP/key"
read -r KEY SECRET < "$TMP/key"
openqa-cli api --host "$URL" --apikey "$KEY" --apisecret "$SECRET" -X POST jobs TEST=asnobody DISTRI=vigil > "$TMP/post.json"
check "a job is created (the database is written as nobody)" [ "$(json_get "$TMP/post.json" 'j["id"]')" = 1 ]
stop_server

# as root without --user: warned
$VIGIL serve --listen "127.0.0.1:$PORT" --data "$TMP/rootdata" > "$TMP/root.log" 2>&1 &
SERVER_PID=$!
SPID=$SERVER_PID
URL=http://127.0.0.1:$PORT
wait_server
check "root without --user: a warning naming --user" grep -q "running as root.*--user NAME" "$TMP/root.log"
stop_server

$VIGIL serve --user no-such-user-here --listen 127.0.0.1:0 --data "$TMP/x" > "$TMP/nouser.log" 2>&1
check "an unknown user: exit 1 naming it" [ $? = 1 ]
check "... and the reason" grep -q "user 'no-such-user-here': no such user" "$TMP/nouser.log"
$VIGIL serve --user root --listen 127.0.0.1:0 --data "$TMP/x" > "$TMP/asroot.log" 2>&1
check "--user root: refused" grep -q "user 'root' is root: name an unprivileged user" "$TMP/asroot.log"
mkdir -p "$TMP/rootowned"
chmod 700 "$TMP/rootowned"
$VIGIL serve --user nobody --listen 127.0.0.1:0 --data "$TMP/rootowned/data" > "$TMP/denied.log" 2>&1
check "a data directory nobody cannot write: exit 1 naming it" \
	grep -q "cannot create data directory '$TMP/rootowned/data'" "$TMP/denied.log"
runuser -u nobody -- $NVIGIL serve --user nobody --listen 127.0.0.1:0 --data "$TMP/x" > "$TMP/notroot.log" 2>&1
check "--user without root: exit 2 with the reason" grep -q "\-\-user needs root" "$TMP/notroot.log"
finish
