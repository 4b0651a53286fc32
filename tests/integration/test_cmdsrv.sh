#!/bin/sh
# SPDX-License-Identifier: MIT
# test_cmdsrv.sh - the runner's command server (runner/srv/cmdsrv.c, issue 15):
# examples/shell's busybox system with user networking (its initramfs plus
# distri-cmdsrv/net-init, e1000.ko from di-text's initrd and a curl
# stand-in) fetches data_url's file and cpio, posts upload_logs and
# upload_asset, reads /vars and save_tmp_file's files: from a Lua module,
# then through os-autoinst's Perl testapi (distri-perl-cmdsrv). The files
# must arrive byte-identical (the Perl half as a job of vigil serve run by
# vigil worker, which uploads the assets); the server is also probed from the host
# while the Lua module holds (wrong token, missing file, path traversal).
# run-all: long 68
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
export VIGIL_IMAGES=$IMG
D=tests/integration/distri-cmdsrv
if [ ! -f "$IMG/shell-initrd.gz" ] || [ ! -f "$IMG/di-text/initrd.gz" ] || ! command -v cpio >/dev/null ||
	! command -v curl >/dev/null || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs $IMG/shell-initrd.gz, $IMG/di-text/initrd.gz, cpio, curl and qemu-system-x86_64"
	finish
	exit 0
fi

# --- the guest: the shell initramfs with net-init as /init, e1000, curl
mkdir -p "$TMP/rd/bin"
(cd "$TMP/rd" && gzip -dc "$IMG/di-text/initrd.gz" |
	cpio -id --quiet 'lib/modules/*/kernel/drivers/net/ethernet/intel/e1000/e1000.ko')
cp $D/net-init "$TMP/rd/init"
cp $D/curl "$TMP/rd/bin/curl"
(cd "$TMP/rd" && find . | cpio -o -H newc --quiet -R 0:0 | gzip) > "$TMP/extra.gz"
cat "$IMG/shell-initrd.gz" "$TMP/extra.gz" > "$TMP/net-initrd.gz"
check "guest: e1000.ko found in di-text's initrd" [ -n "$(find "$TMP/rd/lib" -name e1000.ko)" ]

# code URL: the HTTP status of a GET (extra curl options before the URL)
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }

# --- Lua: the module holds once done, for the host's checks
mkdir -p "$TMP/hc"
$VIGIL run $D --var INITRD="$TMP/net-initrd.gz" --var HOSTCHECK="$TMP/hc" --out "$TMP/lua" > "$TMP/lua.out" 2>&1 &
pid=$!
i=0
while [ ! -f "$TMP/hc/url" ] && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.5; i=$((i + 1)); done
check "lua: the module reached the host checks" [ -f "$TMP/hc/url" ]
if [ -f "$TMP/hc/url" ]; then
	U=$(cat "$TMP/hc/url")
	B=$(echo "$U" | sed 's|/[^/]*$||')
	check "host: /vars answers 200 with the job's vars" [ "$(code "$U/vars")" = 200 ]
	check "host: /vars has the test's set_var" grep -q '"CMDSRV_MARK":"set-by-lua"' "$TMP/body"
	check "host: a wrong token is 403" [ "$(code "$B/not-the-token/vars")" = 403 ]
	check "host: no token is 403" [ "$(code "$B/vars")" = 403 ]
	check "host: a missing data file is 404" [ "$(code "$U/data/nothing-here")" = 404 ]
	check "host: ../ is refused (404)" [ "$(code --path-as-is "$U/data/../../../../etc/passwd")" = 404 ]
	check "host: %2e%2e/ is refused (404)" [ "$(code --path-as-is "$U/data/%2e%2e/%2e%2e/vars.json")" = 404 ]
	check "host: a file outside data/ by its absolute path is refused" \
		[ "$(code --path-as-is "$U/data//etc/passwd")" = 404 ]
	check "host: an unknown route is 404" [ "$(code "$U/nothing")" = 404 ]
	check "host: isotovideo/version is interface 34" \
		[ "$(code "$U/isotovideo/version")" = 200 -a "$(cat "$TMP/body")" = '{"version":34}' ]
	check "host: other isotovideo commands are 404" [ "$(code "$U/isotovideo/pause_test_execution")" = 404 ]
	check "host: data/ as cpio (application/x-cpio)" \
		[ "$(curl -s -o "$TMP/all.cpio" -w '%{content_type}' "$U/data")" = application/x-cpio ]
	check "host: the cpio names every file under data/" \
		[ "$(cpio -it --quiet < "$TMP/all.cpio" | tr '\n' ' ')" = "data/dir/a.txt data/dir/sub/b.bin data/hello.txt " ]
	check "host: an upload without a file is 400" \
		[ "$(code -F upname=x.txt "$U/upload_asset/x.txt")" = 400 ]
	check "host: an upload to another target is 400" \
		[ "$(code -F upload=@$D/data/hello.txt -F target=../etc "$U/upload_asset/x.txt")" = 400 ]
	check "host: an upload by GET is 405" [ "$(code "$U/uploadlog/x.txt")" = 405 ]
	check "host: a multipart upload as curl sends it" \
		[ "$(code -F upload=@$D/data/dir/sub/b.bin -F upname=host-b.bin "$U/uploadlog/b.bin")" = 200 ]
	touch "$TMP/hc/done"
fi
wait $pid
rc=$?
cat "$TMP/lua.out"
O=$TMP/lua
check "lua: exit status 0 (passed)" [ $rc -eq 0 ]
check "lua: switch_network: the link down and up (qanet0)" \
	sh -c "grep -q 'switch_network qanet0: down' '$TMP/lua.out' && grep -q 'switch_network qanet0: up' '$TMP/lua.out'"
check "lua: data_url's file back byte-identical" cmp -s $D/data/hello.txt "$O/testresults/ulogs/hello-back.txt"
check "lua: the cpio's binary file back byte-identical" cmp -s $D/data/dir/sub/b.bin "$O/testresults/ulogs/net-b.bin"
check "lua: the cpio's text file back byte-identical" cmp -s $D/data/dir/a.txt "$O/testresults/ulogs/a-back.txt"
check "lua: the host's multipart upload byte-identical" cmp -s $D/data/dir/sub/b.bin "$O/testresults/ulogs/host-b.bin"
check "lua: upload_asset private = the same file as a log" \
	cmp -s "$O/assets_private/disk.img" "$O/testresults/ulogs/disk-copy.img"
check "lua: the 64 KiB asset arrived whole" [ "$(wc -c < "$O/assets_private/disk.img")" -eq 65536 ]
check "lua: upload_asset public" cmp -s $D/data/hello.txt "$O/assets_public/hello.txt"
check "lua: /vars seen by the guest has set_var's value and the token" \
	[ "$(json_get "$O/testresults/ulogs/vars-seen.json" 'j["vars"]["CMDSRV_MARK"] + " " + str(len(j["vars"]["JOBTOKEN"]) > 8)')" = "set-by-lua True" ]
check "lua: QEMUPORT + 1 is the port served" \
	[ "$(json_get "$O/vars.json" 'int(j["QEMUPORT"]) + 1')" = "$(echo "$U" | sed 's|.*:\([0-9]*\)/.*|\1|')" ]
check "lua: the refused uploads left nothing" [ ! -e "$O/assets_private/x.txt" ] && [ -z "$(ls -A "$O" | grep cmdsrv-)" ]
check "lua: QEMU's user net stays restricted, the server forwarded" \
	grep -q "restrict=on,guestfwd=tcp:10.0.2.100:" "$O/vigil-log.txt"
check "lua: no QEMU left" qemu_gone "$O/.vm"
# (this job's connector: its command line names the port it forwards to)
check "lua: no connector left" eval "! pgrep -f '[c]mdsrv-connect $(echo "$U" | sed 's|.*:\([0-9]*\)/.*|\1|')\$' > /dev/null"

# --- Perl: os-autoinst's testapi builds the URLs from QEMUPORT, JOBTOKEN,
# QEMU_HOST_IP; run as a job of `vigil serve` by `vigil worker`, which
# uploads the logs and the assets the test made (upload_asset).
if [ -f /usr/lib/os-autoinst/testapi.pm ]; then
	. "$(dirname "$0")/server_lib.sh"
	P=tests/integration/distri-perl-cmdsrv
	new_keys
	mkdir -p "$DATA/tests" "$DATA/factory/other"
	cp -rL $P "$DATA/tests/perl-cmdsrv" # data/ is a link: the server serves no links
	cp -r examples/shell/needles "$DATA/tests/perl-cmdsrv/needles"
	$PY -c 'import json,sys; p=sys.argv[1]; j=json.load(open(p)); del j["NEEDLES_DIR"]; json.dump(j, open(p, "w"))' \
		"$DATA/tests/perl-cmdsrv/vars.json"
	cp "$TMP/net-initrd.gz" "$DATA/factory/other/net-initrd.gz"
	start_server
	cli -X POST jobs TEST=net DISTRI=perl-cmdsrv ARCH=x86_64 MACHINE=64bit BUILD=1 INITRD=net-initrd.gz > "$TMP/job.json"
	job=$(json_get "$TMP/job.json" 'j["id"]')
	start_worker 1
	check "perl: the job ends done/passed (serve + worker)" wait_state "$job" "done passed" 400
	R=$DATA/testresults/$job
	check "perl: result-net.json ok" [ "$(json_get "$R/result-net.json" 'j["result"]')" = ok ]
	check "perl: vars.json gave Perl QEMUPORT, JOBTOKEN and QEMU_HOST_IP" \
		[ "$(json_get "$R/vars.json" 'str(int(j["QEMUPORT"]) > 0) + " " + j["QEMU_HOST_IP"] + " " + str(len(j["JOBTOKEN"]) > 8)')" = "True 10.0.2.100 True" ]
	check "perl: upload_logs' file byte-identical on the server (module-basename)" \
		cmp -s $D/data/dir/sub/b.bin "$R/ulogs/net-b.bin"
	check "perl: upload_asset private: the server's asset, named after the job, byte-identical" \
		cmp -s $D/data/dir/sub/b.bin "$DATA/factory/other/$(printf %08d "$job")-b.bin"
	check "perl: upload_asset public: the server's asset, byte-identical" \
		cmp -s $D/data/hello.txt "$DATA/factory/other/hello.txt"
	check "perl: the server lists the public asset" sh -c "curl -s '$URL/api/v1/assets' | grep -q '\"hello.txt\"'"
	stop_pids
	check "perl: no QEMU left" qemu_gone "$TMP/pool1"
else
	echo "skipped: the Perl half needs /usr/lib/os-autoinst"
fi
finish
