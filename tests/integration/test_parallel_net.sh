#!/bin/sh
# SPDX-License-Identifier: MIT
# test_parallel_net.sh - the network of a parallel cluster (issue 18): two
# installed-Debian VMs (scripts/build-debian-image, under TCG) posted with
# NICTYPE=tap as one cluster run on two `vigil worker`s of `vigil serve`;
# vigil gives them one Ethernet segment without root (QEMU socket
# multicast on the cluster's NICVLAN, docs/design.md "Parallel jobs").
# distri-perl-net's net_pair.pm: the server VM takes 10.0.3.1 and serves
# a page over HTTP, the client VM takes 10.0.3.2 and fetches it with curl,
# the two meeting through os-autoinst's lockapi/mmapi barriers. Checked:
# both passed, the page fetched names the server's job, both QEMUs ran
# with the same multicast group and distinct MACs. No timing: every wait
# is a barrier or a bounded poll. Needs Debian's os-autoinst, the image
# and QEMU.
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
if [ ! -f /usr/lib/os-autoinst/lockapi.pm ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/lib/os-autoinst (os-autoinst) and qemu-system-x86_64"
	finish
	exit 0
fi
if ! scripts/build-debian-image > "$TMP/img.out" 2>&1; then
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
start_server -v
start_worker 1
start_worker 2

# The cluster, as openqa-cli posts related jobs; the machine settings of
# an openQA multi-machine setup (NICTYPE=tap).
COMMON="DISTRI=perl-net ARCH=x86_64 MACHINE=64bit BUILD=1 NICTYPE=tap VIRTIO_CONSOLE=1 QEMURAM=1024
KERNEL=$IMG/debian/vmlinuz INITRD=$IMG/debian/initrd.img HDD_1=$IMG/debian/rootfs.ext4 PASSWORD=vigil"
# no_timer_check: on a loaded host TCG can be too slow for the kernel's
# check of the IO-APIC timer, which then panics at boot.
cli -X POST jobs $COMMON "APPEND=root=/dev/vda rw quiet console=tty0 console=ttyS0 no_timer_check" \
	TEST:server=net-server PARALLEL_ROLE:server=server \
	TEST:client=net-client PARALLEL_ROLE:client=client _PARALLEL:client=server > "$TMP/post.json"
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
# The QEMU command lines of the two runs (vigil-log.txt): one group, two MACs.
for j in $S $C; do curl -s "$URL/tests/$j/file/vigil-log.txt"; done | grep -o 'socket,id=qanet0,[^ ]*' | sort -u > "$TMP/nics"
cat "$TMP/nics"
V=$((S < C ? S : C)) # NICVLAN: the cluster's first job
check "both VMs on the cluster's multicast group (NICVLAN $V, the server's port), each its own MAC" \
	[ "$(sed 's/.*mcast=//' "$TMP/nics" | sort -u)" = "239.255.$((V / 256 % 256)).$((V % 256)):$PORT,localaddr=127.0.0.1" -a \
	"$(sed 's/.*mac=\([^,]*\),.*/\1/' "$TMP/nics" | sort -u | wc -l)" = 2 ]
stop_pids
finish
