#!/bin/sh
# SPDX-License-Identifier: MIT
# test_debian.sh - runs examples/debian for real under TCG: a Debian 12
# system built by scripts/build-debian-image (built here when missing or
# when its recipe changed) logs in on VGA and serial, runs commands,
# installs a package from a local apt repository on a second disk, drives
# an xterm under twm with keyboard and mouse, and powers off.
# run-all: long 62
. "$(dirname "$0")/lib.sh"

if ! image_build build-debian-image > "$TMP/build.out" 2>&1; then
	cat "$TMP/build.out"
	not_ok "debian: scripts/build-debian-image builds the image"
	finish
	exit 1
fi
cat "$TMP/build.out"
check "debian: a second build-debian-image is a cache hit" \
	sh -c "scripts/build-debian-image | grep -q 'up to date'"

$VIGIL run examples/debian --out "$TMP/debian" > "$TMP/debian.out" 2>&1
rc=$?
cat "$TMP/debian.out"
R=$TMP/debian/testresults
O=$TMP/debian.out
check "debian: exit status 0" [ $rc -eq 0 ]
check "debian: results.json says passed" [ "$(json_get $R/results.json 'j["result"]')" = passed ]
check "debian: every module ok" [ "$(json_get $R/results.json '",".join(m["name"]+"="+m["result"] for m in j["modules"])')" = \
	"boot=ok,login_vga=ok,login_serial=ok,commands=ok,packages=ok,x11=ok,shutdown=ok" ]
check "debian: login prompt on the VGA console" grep -q "assert_screen 'debian-login': matched" "$O"
check "debian: root shell on the VGA console" grep -q "assert_screen 'debian-vga-42': matched" "$O"
check "debian: root prompt on the serial terminal" grep -q "root@vigil-debian:~# " "$TMP/debian/serial0.txt"
check "debian: failing command judged as failing" grep -q "script_run 'ls /nonexistent': exit [1-9]" "$O"
check "debian: assert_script_run('false') failed" grep -q "assert_script_run 'false': exit 1" "$O"
check "debian: kernel command line uploaded" grep -q "root=/dev/vda" "$R/ulogs/commands-cmdline"
check "debian: dpkg -s hello fails before apt-get install" grep -q "script_run 'dpkg -s hello': exit [1-9]" "$O"
check "debian: apt-get install from the file: repository" \
	grep -q "assert_script_run 'DEBIAN_FRONTEND=noninteractive apt-get install -y hello': exit 0" "$O"
check "debian: dpkg says hello is installed after" grep -q "^install ok installed" "$TMP/debian/serial0.txt"
check "debian: hello runs" grep -q "^Hello, world!" "$TMP/debian/serial0.txt"
check "debian: the xterm needle matched the typed command's output" \
	[ "$(json_get $R/result-x11.json 'sum(1 for d in j["details"] if d.get("tags") == ["xterm-echo-42"] and d["result"] == "ok")')" = 2 ]
check "debian: a click into the xterm gave it the keyboard" grep -q "mouse_click left at 200,200" "$O"
check "debian: the iconify button clicked, the icon appeared" grep -q "assert_screen 'xterm-icon': matched" "$O"
check "debian: guest reached QMP status shutdown" grep -q "assert_shutdown: machine is shut down" "$O"
check "debian: no QEMU left" eval "! qemu_left '$TMP/debian/.vm'"
echo "boot to the VGA login prompt: $(sed -n "s/.*assert_screen 'debian-login': matched debian-login in \([0-9.]*s\).*/\1/p" "$O")," \
	"whole run: $(json_get $R/results.json 'j.get("elapsed")') s"
finish
