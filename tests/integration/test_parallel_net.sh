#!/bin/sh
# SPDX-License-Identifier: MIT
# test_parallel_net.sh - the network of a parallel cluster (issue 18): two
# installed-Debian VMs (scripts/build-debian-image, under TCG) posted with
# NICTYPE=tap as one cluster run on two `vigil worker`s of `vigil serve`;
# vigil gives them one Ethernet segment without root (docs/design.md
# "Parallel jobs"). The workers play two hosts: the cluster uses
# NICNET=relay (each job's relay hub takes its QEMU's stream netdev and
# forwards the frames over TCP to the other hub, at the address its
# worker's --relay-host gives: 127.0.0.1 and ::1, IPv4 and IPv6, after
# both hubs proved the cluster's secret, sealed), so no multicast
# is used; PARALLEL_NET=mcast runs the same scenario on QEMU's socket
# multicast instead (its command line is covered by the unit tests).
# distri-perl-net's net_pair.pm: the server VM takes 10.0.3.1 and serves
# a page over HTTP, the client VM takes 10.0.3.2 and fetches it with curl,
# the two meeting through os-autoinst's lockapi/mmapi barriers. Checked:
# both passed, the page fetched names the server's job, both QEMUs ran
# with their own MAC on the relay (no multicast socket), each hub joined
# the other over TCP and counted frames both ways, the cluster's secret
# is kept by the server and shown in no job's settings. No timing: every wait
# is a barrier or a bounded poll. Needs Debian's os-autoinst, the image
# and QEMU.
# run-all: long 51
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
if [ ! -f /usr/lib/os-autoinst/lockapi.pm ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/lib/os-autoinst (os-autoinst) and qemu-system-x86_64"
	finish
	exit 0
fi
if ! image_build build-debian-image > "$TMP/img.out" 2>&1; then
	cat "$TMP/img.out"
	not_ok "scripts/build-debian-image builds the image"
	finish
	exit 1
fi
. "$(dirname "$0")/server_lib.sh"
export OS_AUTOINST_LOCKAPI_POLL_INTERVAL=1
new_keys
mkdir -p "$DATA/tests"
cp -r tests/integration/distri-perl-net "$DATA/tests/perl-net"
cp -r tests/integration/distri-perl-debian/lib tests/integration/distri-perl-debian/needles "$DATA/tests/perl-net/"
NET=${PARALLEL_NET:-relay}
start_server -v
# Two "hosts": each worker's relay hubs are reached at its own address,
# one over IPv4, one over IPv6 (-v: the hubs' news are info messages).
# Each offers a class of its own, so that the client job (the earlier:
# its suffix sorts first) runs on the IPv6 one and the later job's hub
# dials [::1].
for i in 1 2; do
	RH=127.0.0.1 CL=relay_v4
	[ $i = 2 ] && RH=::1 CL=relay_v6
	$VIGIL worker --host "$URL" --apikey "$KEY" --apisecret "$SECRET" --instance $i --pool "$TMP/pool$i" \
		--class qemu_x86_64,$CL --relay-host $RH -v >> "$TMP/worker$i.log" 2>&1 &
	PIDS="$PIDS $!"
done

# The cluster, as openqa-cli posts related jobs; the machine settings of
# an openQA multi-machine setup (NICTYPE=tap).
COMMON="DISTRI=perl-net ARCH=x86_64 MACHINE=64bit BUILD=1 NICTYPE=tap NICNET=$NET VIRTIO_CONSOLE=1 QEMURAM=1024
KERNEL=$IMG/debian/vmlinuz INITRD=$IMG/debian/initrd.img HDD_1=$IMG/debian/rootfs.ext4 PASSWORD=vigil"
# no_timer_check: on a loaded host TCG can be too slow for the kernel's
# check of the IO-APIC timer, which then panics at boot; a start timeout
# of 15 minutes: systemd's 90 s wait for /dev/ttyS0 (its serial getty,
# whose prompt the test waits for) ran out once on a loaded host.
cli -X POST jobs $COMMON "APPEND=root=/dev/vda rw quiet console=tty0 console=ttyS0 no_timer_check systemd.default_timeout_start_sec=900" \
	TEST:server=net-server PARALLEL_ROLE:server=server WORKER_CLASS:server=relay_v4 \
	TEST:client=net-client PARALLEL_ROLE:client=client _PARALLEL:client=server WORKER_CLASS:client=relay_v6 \
	> "$TMP/post.json"
S=$(json_get "$TMP/post.json" 'j["ids"]["server"]')
C=$(json_get "$TMP/post.json" 'j["ids"]["client"]')
# ended JOB SECONDS: until the job is done or cancelled (a failure ends the wait too).
ended() { n=0; while ! state_of "$1" | grep -Eq '^(done|cancelled) ' && [ $n -lt $(($2 * 2)) ]; do sleep 0.5; n=$((n + 1)); done; }
ended "$S" 1800
ended "$C" 600
check "the server VM's job passed" [ "$(state_of "$S")" = "done passed" ]
check "the client VM's job passed" [ "$(state_of "$C")" = "done passed" ]
# record_info 'net' of a job: its text (a file of its own).
info_text() {
	curl -s "$URL/tests/$1/file/result-net_pair.json" > "$TMP/r$1.json"
	curl -s "$URL/tests/$1/file/$(json_get "$TMP/r$1.json" '[d["text"] for d in j["details"] if d.get("title") == "net"][0]')"
}
check "the client fetched the server VM's page over the cluster network" \
	[ "$(info_text "$C")" = "client: 10.0.3.2 fetched http://10.0.3.1:8080/: 'served by job $S'" ]
check "the server served it" [ "$(info_text "$S")" = "server: 10.0.3.1 served /root/page ('served by job $S')" ]
# The QEMU command lines of the two runs (vigil-log.txt).
for j in $S $C; do curl -s "$URL/tests/$j/file/vigil-log.txt" > "$TMP/log$j.txt"; done
V=$((S < C ? S : C)) # NICVLAN: the cluster's first job
if [ "$NET" = mcast ]; then
	cat "$TMP/log$S.txt" "$TMP/log$C.txt" | grep -o 'socket,id=qanet0,[^ ]*' | sort -u > "$TMP/nics"
	cat "$TMP/nics"
	check "both VMs on the cluster's multicast group (NICVLAN $V, the server's port), each its own MAC" \
		[ "$(sed 's/.*mcast=//' "$TMP/nics" | sort -u)" = "239.255.$((V / 256 % 256)).$((V % 256)):$PORT,localaddr=127.0.0.1" -a \
		"$(sed 's/.*mac=\([^,]*\),.*/\1/' "$TMP/nics" | sort -u | wc -l)" = 2 ]
	stop_pids
	finish
	exit 0
fi
cat "$TMP/log$S.txt" "$TMP/log$C.txt" | grep -o -e 'stream,id=qanet0,[^ ]*' -e 'netdev=qanet0,[^ ]*' | sort -u > "$TMP/nics"
cat "$TMP/nics"
check "both VMs joined their relay hub on 127.0.0.1 (QEMU's stream netdev), each its own MAC" \
	[ "$(grep -c '^stream,id=qanet0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=[0-9]*$' "$TMP/nics")" = 2 -a \
	"$(grep -o 'mac=.*' "$TMP/nics" | sort -u | wc -l)" = 2 ]
check "no multicast socket on either VM" [ "$(cat "$TMP/log$S.txt" "$TMP/log$C.txt" | grep -c 'mcast=')" = 0 ]
# The hubs: where the server said they listen, that they joined over TCP,
# and the frames each passed (logged by the hub when its job ends).
cat "$TMP/worker1.log" "$TMP/worker2.log" | grep 'relay hub' > "$TMP/hubs"
cat "$TMP/hubs"
addr_of() { curl -s "$URL/api/v1/jobs/$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)["job"]["settings"].get("NICRELAY_ADDR", ""))'; }
AS=$(addr_of "$S")
AC=$(addr_of "$C")
addr_ok() { echo "$1" | grep -Eq '^(127\.0\.0\.1|\[::1\]):[0-9]+$'; }
check "the server VM's hub address is its worker's --relay-host ($AS)" addr_ok "$AS"
check "the client VM's hub address is its worker's --relay-host ($AC)" addr_ok "$AC"
check "the two hubs on two addresses (two hosts)" [ "${AS%:*}" != "${AC%:*}" ]
L=$((S > C ? S : C))
E=$((S < C ? S : C))
AE=$AS
[ "$E" = "$C" ] && AE=$AC
check "the later job's hub connected to the earlier one's at $AE over TCP" \
	grep -q "relay hub of job $L: connected to job $E's hub at $(printf '%s' "$AE" | sed -e 's/\[/\\[/g' -e 's/]/\\]/g' -e 's/\./\\./g')\$" "$TMP/hubs"
check "... over IPv6: the earlier job ran on the worker of --relay-host ::1 ($AE)" [ "${AE%:*}" = "[::1]" ]
# frames J: "TO FROM" of job J's hub.
frames() { sed -n "s/.*relay hub of job $1: \([0-9]*\) frames from the VM to its peers, \([0-9]*\) from peers to the VM.*/\1 \2/p" "$TMP/hubs" | tail -n 1; }
FS=$(frames "$S")
FC=$(frames "$C")
both_positive() { [ $# = 2 ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; }
check "the server VM's hub passed frames both ways (to peers, from peers: $FS)" both_positive $FS
check "the client VM's hub passed frames both ways (to peers, from peers: $FC)" both_positive $FC
check "no hub refused the other (both proved the cluster's secret)" \
	[ "$(grep -c ': refused' "$TMP/hubs")" = 0 ]
# The cluster's secret: one, kept by the server (relay_secrets), in
# neither job's settings nor anywhere in their job JSON.
sql "SELECT secret FROM relay_secrets WHERE job_id = $E" > "$TMP/secrets"
check "one secret for the cluster, kept by the server" [ "$(grep -Ec '^[0-9a-f]{64}$' "$TMP/secrets")" = 1 ]
curl -s "$URL/api/v1/jobs/$S" "$URL/api/v1/jobs/$C" > "$TMP/jobs.json"
not_shown() { [ -s "$TMP/jobs.json" ] && [ -s "$TMP/secrets" ] && ! grep -qF "$(cat "$TMP/secrets")" "$TMP/jobs.json"; }
check "the secret is in no job's settings (the jobs' JSON)" not_shown
check "the relay addresses are the cluster's running jobs' only: no job token, 403" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/mm/relay")" = 403 ]
stop_pids
finish
