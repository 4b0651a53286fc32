#!/bin/sh
# SPDX-License-Identifier: MIT
# test_installer.sh - runs examples/debian-installer for real under TCG in
# both flavors: the text installer (keys; language, location, keyboard,
# failed network autoconfiguration, manual network configuration with no
# gateway, hostname, domain, the mirror error, then the installer's shell
# with script_output over the serial port) and the
# graphical installer (the same screens by mouse clicks). Needs the d-i
# netboot images of scripts/fetch-images.
# run-all: long 280
. "$(dirname "$0")/lib.sh"
IMAGES=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}

for f in text gtk; do
	if [ ! -s "$IMAGES/di-$f/linux" ] || [ ! -s "$IMAGES/di-$f/initrd.gz" ]; then
		not_ok "installer: $IMAGES/di-$f/{linux,initrd.gz} present (run scripts/fetch-images)"
		finish
		exit 1
	fi
done

# run_flavor FLAVOR: runs the distribution, leaves $O (output), $R
# (testresults), $D (results directory) and the exit status in $rc.
run_flavor() {
	D=$TMP/$1
	O=$TMP/$1.out
	R=$D/testresults
	t0=$(date +%s)
	$VIGIL run examples/debian-installer --var FLAVOR=$1 --out "$D" > "$O" 2>&1
	rc=$?
	wall=$(($(date +%s) - t0))
	cat "$O"
}

# common_checks FLAVOR MODULES: what both flavors must show.
common_checks() {
	check "$1: exit status 0" [ $rc -eq 0 ]
	check "$1: results.json says passed" [ "$(json_get $R/results.json 'j["result"]')" = passed ]
	check "$1: every module ok" [ "$(json_get $R/results.json '",".join(m["name"]+"="+m["result"] for m in j["modules"])')" = "$2" ]
	check "$1: the $1 installer's kernel booted" grep -q -- "-kernel [^ ]*/di-$1/linux" "$D/vigil-log.txt"
	check "$1: the NIC sits on an empty hub (no network)" grep -q -- "-netdev hubport" "$D/vigil-log.txt"
	check "$1: language screen matched" grep -q "assert_screen 'di-$1-language': matched" "$O"
	check "$1: keyboard screen matched" grep -q "assert_screen 'di-$1-keyboard': matched" "$O"
	check "$1: network autoconfiguration failed" grep -q "assert_screen 'di-$1-net-failed': matched" "$O"
	check "$1: the IP address typed" grep -q "assert_screen 'di-$1-ip-typed': matched" "$O"
	check "$1: netmask screen matched" grep -q "assert_screen 'di-$1-netmask': matched" "$O"
	check "$1: the proposed gateway deleted" grep -q "assert_screen 'di-$1-gateway-empty': matched" "$O"
	check "$1: name server screen matched" grep -q "assert_screen 'di-$1-dns': matched" "$O"
	check "$1: hostname screen matched" grep -q "assert_screen 'di-$1-hostname': matched" "$O"
	check "$1: the domain typed" grep -q "assert_screen 'di-$1-domain-typed': matched" "$O"
	check "$1: proxy screen matched" grep -q "assert_screen 'di-$1-proxy': matched" "$O"
	check "$1: the mirror error screen matched" grep -q "assert_screen 'di-$1-mirror-error': matched" "$O"
	check "$1: back at the mirror country list after the error" \
		[ "$(json_get $R/result-mirror.json '[d["tags"][0] for d in j["details"] if d.get("tags")][-1]')" = "di-$1-mirror-country" ]
	V=$D/video.webm
	dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$V" 2>/dev/null)
	check "$1: video.webm has a duration ($dur s)" python3 -c "import sys; sys.exit(not float('$dur' or 0) > 30)"
	# -enc_time_base -1: frames keep their own ms times; on ffmpeg's guessed
	# constant rate, variable-rate frames would collide and it would complain.
	check "$1: video.webm decodes to the end without errors" sh -c "[ -z \"\$(ffmpeg -v error -i '$V' -enc_time_base -1 -f null - 2>&1)\" ]"
	check "$1: no QEMU left" eval "! qemu_left '$D/.vm'"
	echo "$1: first screen after $(sed -n "s/.*assert_screen 'di-$1-language': matched di-$1-language in \([0-9.]*s\).*/\1/p" "$O" | head -n 1)," \
		"wall time $wall s, video $(stat -c %s "$V" 2>/dev/null) bytes"
}

# --- the text installer
run_flavor text
common_checks text "boot=ok,locale=ok,network=ok,hostname=ok,mirror=ok,shell=ok"
check "text: the installer's shell reached" grep -q "assert_screen 'di-text-shell': matched" "$O"
check "text: five script_output results over the serial port" \
	[ "$(grep -c "shell: script_output: exit 0" "$O")" = 5 ]
# serial_line LINE: the serial log holds LINE as a whole line (a command's
# output in the installer's shell).
serial_line() { tr -d '\r' < "$D/serial0.txt" | grep -qx -- "$1"; }
check "text: the typed hostname came back from the shell" serial_line vigil-di
check "text: debconf names the unreachable mirror" serial_line deb.debian.org
check "text: the typed address is on the NIC" serial_line 10.0.2.15/24
check "text: the typed domain is in debconf" serial_line example.org
check "text: the domain is the resolver's search domain" serial_line 'search example.org'

# --- the graphical installer
run_flavor gtk
common_checks gtk "boot=ok,locale=ok,network=ok,hostname=ok,mirror=ok"
check "gtk: list entries and buttons clicked (21 clicks)" \
	[ "$(grep -c "assert_and_click: clicked left at" "$O")" = 21 ]
# The click on "Configure network manually" hit the entry: the click point
# of the method needle.
p=$(json_get examples/debian-installer/needles/di-gtk-net-method.json \
	'"%d,%d" % next((a["xpos"] + a["click_point"]["xpos"], a["ypos"] + a["click_point"]["ypos"]) for a in j["area"] if "click_point" in a)')
check "gtk: 'Configure network manually' clicked at its entry ($p)" \
	grep -q "network: assert_and_click: clicked left at $p" "$O"
check "gtk: the typed hostname shown in its field" grep -q "assert_screen 'di-gtk-hostname-typed': matched" "$O"
finish
