#!/bin/sh
# SPDX-License-Identifier: MIT
# test_package.sh - the Debian package (issue 18): built from the tree with
# dpkg-buildpackage, installed with apt-get, its systemd units checked by
# `systemd-analyze verify`, a job run through the installed binaries and
# /etc/vigil/vigil.conf (server and worker started as their units start
# them: the unit's ExecStart, User and StateDirectory; CI machines run no
# systemd), then removed and purged without a trace. Needs root; skipped
# where a vigil package is already installed (it would be replaced).
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
if [ "$(id -u)" != 0 ]; then
	echo "skipped: needs root (dpkg, apt-get, the user vigil)"
	finish
	exit 0
fi
if dpkg-query -W -f='${Status}' vigil 2>/dev/null | grep -q "ok installed"; then
	echo "skipped: a vigil package is installed on this machine; this suite would replace and purge it"
	finish
	exit 0
fi
SPID=
WPID=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	wait 2>/dev/null
	if dpkg-query -W -f='${Status}' vigil 2>/dev/null | grep -q installed; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q vigil > /dev/null 2>&1
	fi
}
trap cleanup EXIT INT TERM

# Build from a copy of the tree (what git tracks, plus new files it does not ignore).
SRC=$TMP/src/vigil
mkdir -p "$SRC"
git ls-files -co --exclude-standard | cpio -pdm --quiet "$SRC"
check "dpkg-buildpackage builds the package" sh -c "cd '$SRC' && dpkg-buildpackage -us -uc -b > '$TMP/build.log' 2>&1"
tail -n 5 "$TMP/build.log"
DEB=$(ls "$TMP"/src/vigil_*_amd64.deb 2>/dev/null | head -n 1)
VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
check "package vigil_${VERSION}_amd64.deb made" [ "$DEB" = "$TMP/src/vigil_${VERSION}_amd64.deb" ]
check "built with Debian's hardening flags" grep -q 'EXTRA_CFLAGS=.*-fstack-protector-strong.*EXTRA_LDFLAGS=.*-z,now' "$TMP/build.log"
dpkg-deb -c "$DEB" | awk '{print $6}' > "$TMP/contents"
for f in ./usr/bin/vigil ./usr/share/man/man1/vigil.1.gz ./etc/vigil/vigil.conf \
	./lib/systemd/system/vigil.service ./lib/systemd/system/vigil-worker@.service; do
	check "package holds $f" grep -qx "$f" "$TMP/contents"
done

check "apt-get installs it" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends '$DEB' > '$TMP/install.log' 2>&1"
check "installed: vigil --version says $VERSION" [ "$(/usr/bin/vigil --version)" = "vigil $VERSION" ]
check "the system user vigil exists, home /var/lib/vigil" [ "$(getent passwd vigil | cut -d: -f6)" = /var/lib/vigil ]
check "/var/lib/vigil is vigil's" [ "$(stat -c %U:%a /var/lib/vigil)" = vigil:750 ]
check "/etc/vigil/vigil.conf readable by group vigil only" [ "$(stat -c %G:%a /etc/vigil/vigil.conf)" = vigil:640 ]
check "/etc/vigil/vigil.conf is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' vigil | grep -q /etc/vigil/vigil.conf"
check "systemd-analyze verify: vigil.service, vigil-worker@1.service" \
	sh -c "systemd-analyze verify vigil.service vigil-worker@1.service > '$TMP/verify.log' 2>&1"
cat "$TMP/verify.log"
check "units run as vigil" sh -c "grep -qx User=vigil /lib/systemd/system/vigil.service && grep -qx User=vigil /lib/systemd/system/vigil-worker@.service"

# The unit's command line, with %i for instance 1, and its state directories made as systemd makes them.
unit_cmd() { sed -n 's/^ExecStart=//p' "/lib/systemd/system/$1" | sed "s/%i/$2/g"; }
unit_dirs() {
	for d in $(sed -n 's/^StateDirectory=//p' "/lib/systemd/system/$1" | sed "s/%i/$2/g"); do
		install -d -o vigil -g vigil -m 0750 "/var/lib/$d"
	done
}
as_vigil() { runuser -u vigil -- "$@"; }

# The admin's steps (README): a port, a key for the worker in [worker].
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
sed -i -e "s|^listen = .*|listen = 127.0.0.1:$PORT|" -e "s|^host = .*|host = $URL|" /etc/vigil/vigil.conf
DATA=$(sed -n '/^\[server\]/,/^\[/s/^data = //p' /etc/vigil/vigil.conf)
check "[server] data is under /var/lib/vigil ($DATA)" sh -c "case '$DATA' in /var/lib/vigil/*) true;; *) false;; esac"
unit_dirs vigil.service 1
check "an API key made as vigil" sh -c "cd / && runuser -u vigil -- /usr/bin/vigil apikey new --data '$DATA' --admin > '$TMP/key'"
read -r KEY SECRET < "$TMP/key"
sed -i -e "s|^#apikey =.*|apikey = $KEY|" -e "s|^#apisecret =.*|apisecret = $SECRET|" /etc/vigil/vigil.conf
mkdir -p "$DATA/tests" "$DATA/factory/iso"
cp -r examples/grub "$DATA/tests/grub"
cp "${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso" "$DATA/factory/iso/"
chown -R vigil:vigil "$DATA/tests" "$DATA/factory"

(cd / && exec runuser -u vigil -- $(unit_cmd vigil.service 1)) > "$TMP/serve.log" 2>&1 &
SPID=$!
i=0
until curl -sf -o /dev/null "$URL/api/v1/jobs" || [ $i -ge 1200 ] || ! kill -0 $SPID 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check "vigil.service's command serves on the port from vigil.conf" curl -sf -o /dev/null "$URL/api/v1/jobs"
check "the server runs as vigil" [ "$(ps -o user= -p "$(pgrep -u vigil -f 'vigil serve' | head -n 1)" 2>/dev/null)" = vigil ]
unit_dirs vigil-worker@.service 1
(cd / && exec runuser -u vigil -- $(unit_cmd vigil-worker@.service 1)) > "$TMP/worker.log" 2>&1 &
WPID=$!
check "a job posted (openqa-cli)" sh -c "openqa-cli api --host '$URL' --apikey '$KEY' --apisecret '$SECRET' \
	-X POST jobs TEST=grub DISTRI=grub ARCH=x86_64 BUILD=pkg ISO=grub-rescue-cdrom.iso > '$TMP/post.txt' 2>&1"
state() { curl -s "$URL/api/v1/jobs/1" | $PY -c 'import json,sys; j=json.load(sys.stdin)["job"]; print(j["state"], j["result"])' 2>/dev/null; }
i=0
while ! state | grep -q '^done' && [ $i -lt 1800 ]; do sleep 0.5; i=$((i + 1)); done
check "worker instance 1 (the unit's command) ran the job: done passed" [ "$(state)" = "done passed" ]
check "the job's pool is the unit's state directory" sh -c "ls -A /var/lib/vigil/worker/1 | grep -q ."
check "the installed client shows it" sh -c "/usr/bin/vigil client --host '$URL' show 1 | grep -q passed"
check "results belong to vigil" [ "$(stat -c %U "$DATA/testresults/1")" = vigil ]
[ "$(state)" = "done passed" ] || { echo "-- serve.log"; tail -n 20 "$TMP/serve.log"; echo "-- worker.log"; tail -n 30 "$TMP/worker.log"; }
kill "$WPID" "$SPID" 2>/dev/null
wait "$WPID" "$SPID" 2>/dev/null
WPID=
SPID=

check "apt-get remove" sh -c "DEBIAN_FRONTEND=noninteractive apt-get remove -y -q vigil > '$TMP/remove.log' 2>&1"
check "removed: /usr/bin/vigil and the units are gone" sh -c "[ ! -e /usr/bin/vigil ] && [ ! -e /lib/systemd/system/vigil.service ] && [ ! -e /lib/systemd/system/vigil-worker@.service ]"
check "removed: the configuration and the data stay" sh -c "[ -f /etc/vigil/vigil.conf ] && [ -d '$DATA/testresults/1' ]"
check "apt-get purge" sh -c "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q vigil > '$TMP/purge.log' 2>&1"
check "purged: /etc/vigil and /var/lib/vigil are gone" sh -c "[ ! -e /etc/vigil ] && [ ! -e /var/lib/vigil ]"
check "purged: dpkg knows no vigil" sh -c "! dpkg-query -W -f='\${Status}' vigil 2>/dev/null | grep -q installed"
LEFT=0
for f in $(grep -v '/$' "$TMP/contents" | sed 's/^\.//'); do [ -e "$f" ] && { echo "left: $f"; LEFT=1; }; done
check "purged: no file of the package left" [ $LEFT = 0 ]
finish
