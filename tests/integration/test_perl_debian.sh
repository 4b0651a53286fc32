#!/bin/sh
# SPDX-License-Identifier: MIT
# test_perl_debian.sh - the installed Debian image (scripts/build-debian-image)
# under isotovideo and vigil from one vars.json (issue 15): distri-perl-debian
# (Perl modules and a Python one: tty consoles and a VT switch, the virtio
# terminal with script_run/script_output/validate_script_output, module hooks,
# console objects, reset_consoles, X11 with the mouse and the distribution's
# x11_start_program) run by isotovideo (os-autoinst 4.6 on TCG) and by
# `vigil run`, compared module by module and step by step with
# compare_results.py; vigil's run adds vigil_extra (VIGIL_EXTRA=1: its
# serial-terminal class, refused console classes and methods), named as
# vigil's own in the comparison. distri-lua-debian, the same modules and
# steps in Lua, runs on vigil and is compared with isotovideo's Perl run
# across languages (module results, needle matches, titled steps). The
# command server (data_url, upload_logs, upload_asset, parse_junit_log) is
# reached from the guest over QEMU's user network (net.pm, net.lua) and its
# files compared. docs/perl.md "The installed Debian, three ways". Needs Debian's os-autoinst,
# libinline-python-perl and the image.
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
CMP=tests/integration/compare_results.py
P=$PWD/tests/integration/distri-perl-debian
L=tests/integration/distri-lua-debian
if [ ! -x /usr/bin/isotovideo ] || ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/bin/isotovideo (os-autoinst) and qemu-system-x86_64"
	finish
	exit 0
fi
if ! image_build build-debian-image > "$TMP/img.out" 2>&1; then
	cat "$TMP/img.out"
	not_ok "debian: scripts/build-debian-image builds the image"
	finish
	exit 1
fi

# One vars.json for the three runs. os-autoinst 4.6 puts APPEND in single
# quotes that reach the kernel: its first and last words are throw-aways,
# so that root= stays a parameter. NUMDISKS is 1: the repository disk is
# not needed.
cat > "$TMP/vars.json" <<EOF
{"BACKEND": "qemu", "QEMU_NO_KVM": "1", "QEMU": "x86_64", "QEMU_APPEND": "accel tcg",
 "QEMUCPUS": "1", "QEMURAM": "1024", "NICTYPE": "user", "NOVIDEO": "1",
 "KERNEL": "$IMG/debian/vmlinuz", "INITRD": "$IMG/debian/initrd.img",
 "APPEND": "vigil=1 root=/dev/vda rw quiet console=tty0 console=ttyS0 vigil=2",
 "HDD_1": "$IMG/debian/rootfs.ext4", "PASSWORD": "vigil", "VIRTIO_CONSOLE": "1",
 "CASEDIR": "$P", "NEEDLES_DIR": "$P/needles",
 "DISTRI": "perl-debian", "VERSION": "12", "ARCH": "x86_64"}
EOF
modules() { json_get "$1/results.json" '",".join(m["name"]+"="+m["result"] for m in j["modules"])'; }
needles() { json_get "$1/result-$2.json" '",".join(d["needle"] for d in j["details"] if "needle" in d)'; }
ALL="boot=ok,login_vga=ok,root_console=ok,serial_terminal=ok,python_shell=ok,consoles=ok,net=ok"

# --- isotovideo: its pool directory
mkdir -p "$TMP/iso"
cp "$TMP/vars.json" "$TMP/iso/vars.json"
t0=$(date +%s)
(cd "$TMP/iso" && timeout 900 /usr/bin/isotovideo > isotovideo.out 2>&1)
rc=$?
t1=$(date +%s)
echo "isotovideo debian: exit $rc, $((t1 - t0)) s"
I=$TMP/iso/testresults
check "isotovideo: exit status 0" [ $rc -eq 0 ]
check "isotovideo: every module passed" [ "$(json_get $I/test_order.json '",".join(m["name"] + "=" + json.load(open(sys.argv[1].replace("test_order", "result-" + m["name"])))["result"] for m in j)')" = \
	"$ALL,x11=ok,shutdown=ok" ]
check "isotovideo: the Python module ran through Inline::Python" [ "$(json_get $I/test_order.json 'j[4]["script"]')" = tests/python_shell.py ]

# --- vigil, Perl (and Python), with its own module
$VIGIL run "$P" --vars "$TMP/vars.json" --var VIGIL_EXTRA=1 --out "$TMP/vigil" > "$TMP/vigil.out" 2>&1
rc=$?
t2=$(date +%s)
echo "vigil debian (Perl): exit $rc, $((t2 - t1)) s"
cat "$TMP/vigil.out"
R=$TMP/vigil/testresults
check "vigil perl: exit status 0" [ $rc -eq 0 ]
check "vigil perl: every module ok (1_junit: the guest's JUnit file)" [ "$(modules $R)" = "$ALL,1_junit=ok,vigil_extra=ok,x11=ok,shutdown=ok" ]
python3 $CMP --markers --only-in-b vigil_extra "$I" "$R" > "$TMP/perl.cmp" 2>&1
rc=$?
cat "$TMP/perl.cmp"
check "vigil perl: same modules, results and steps as isotovideo (vigil_extra vigil's own; script_run's markers aside)" [ $rc -eq 0 ]
python3 $CMP --markers "$I" "$R" > "$TMP/perl-strict.cmp" 2>&1
check "compare: without --only-in-b, vigil_extra is a difference" \
	[ $? -eq 1 -a "$(grep -c '^modules:' "$TMP/perl-strict.cmp")" = 1 ]
python3 $CMP --only-in-b vigil_extra "$I" "$R" > /dev/null 2>&1
check "compare: without --markers the markers differ (net.pm's commands name each tool's URL)" [ $? -eq 1 ]

# the vigil-only checks (before in test_perl.sh)
check "vigil perl: the unsupported class named in one warning" \
	[ "$(grep -c "console 'x3270' has class 's3270', which vigil does not support (supported: vnc-base, tty-console, virtio-terminal, serial-terminal): selecting it fails" "$TMP/vigil/vigil-log.txt")" = 1 ]
check "vigil perl: root-console activated once, by a VT switch to tty2's login" \
	[ "$(grep -c "root_console: select_console root-console (tty-console, activated)" "$TMP/vigil.out")" = 1 ]
check "vigil perl: tty2's login needle, tty1's prompt, tty2's shell in order" \
	[ "$(needles $R root_console)" = "debian-tty2-login,debian-password,debian-vga-42,debian-vga-prompt,debian-vga-42" ]
txt=$(json_get $R/result-vigil_extra.json '[d["text"] for d in j["details"] if d.get("title") == "refused"][0]')
check "vigil perl: select_console of an unsupported class died with the message" \
	grep -q "console 'x3270' has class 's3270', which vigil does not support (supported: vnc-base, tty-console, virtio-terminal, serial-terminal)" "$R/$txt"
txt=$(json_get $R/result-vigil_extra.json '[d["text"] for d in j["details"] if d.get("title") == "proxy refused"][0]')
check "vigil perl: a proxied method vigil lacks is refused by name" \
	grep -q "console 'root-console' (tty-console): vigil does not support the method 'kill_ssh'" "$R/$txt"
check "vigil perl: script_output on vigil's serial-terminal class (ttyS0, its step)" \
	[ "$(json_get $R/result-vigil_extra.json '[d["title"] for d in j["details"] if d.get("title") == "root-sut-serial"][0]')" = root-sut-serial ]
check "vigil perl: three clicks (mouse_click, two assert_and_click)" \
	[ "$(grep -cE "x11: mouse_button left at [0-9]+,[0-9]+" "$TMP/vigil.out")" = 3 ]
check "vigil perl: the virtio terminal (hvc0) logged in and ran script_output (virtio_console.log)" \
	sh -c "grep -q 'root@vigil-debian:~# ' '$TMP/vigil/virtio_console.log' && grep -q '^vigil-42' '$TMP/vigil/virtio_console.log'"
txt=$(json_get $R/result-serial_terminal.json '[d["text"] for d in j["details"] if d.get("title") == "wait_serial"][0]')
check "vigil perl: the virtio terminal's first read has the getty's banner from boot, as os-autoinst's pipe" \
	grep -q "Debian GNU/Linux 12 vigil-debian hvc0" "$R/$txt"
check "vigil perl: pre_run_hook and post_run_hook ran (its step)" \
	[ "$(json_get $R/result-serial_terminal.json '[d["title"] for d in j["details"] if "title" in d][-1]')" = post_run_hook ]
check "vigil perl: validate_script_output's two steps (regexp and code)" \
	[ "$(json_get $R/result-serial_terminal.json 'len([d for d in j["details"] if d.get("title") == "validate_script_output" and d["result"] == "ok"])')" = 2 ]
check "vigil perl: the Python module's record_info" \
	[ "$(json_get $R/result-python_shell.json '[d["title"] for d in j["details"] if "title" in d][-1]')" = python ]
check "vigil perl: no QEMU left" qemu_gone "$TMP/vigil"

# --- x11_start_program (the distribution's): the second xterm, tag xterm, in both
for rd in "$I" "$R"; do
	check "x11_start_program: the window matched by target_match 'xterm' ($(basename $(dirname $rd)))" \
		[ "$(json_get $rd/result-x11.json '[",".join(d["tags"]) + ":" + d["needle"] for d in j["details"] if "needle" in d][-1]')" = xterm:xterm-second ]
done

# --- vigil, Lua: the same steps, compared with isotovideo's Perl run
$VIGIL run $L --vars "$TMP/vars.json" --out "$TMP/lua" > "$TMP/lua.out" 2>&1
rc=$?
t3=$(date +%s)
echo "vigil debian (Lua): exit $rc, $((t3 - t2)) s"
cat "$TMP/lua.out"
check "vigil lua: exit status 0" [ $rc -eq 0 ]
check "vigil lua: every module ok" [ "$(modules $TMP/lua/testresults)" = "$ALL,1_junit=ok,x11=ok,shutdown=ok" ]
python3 $CMP --across-languages "$I" "$TMP/lua/testresults" > "$TMP/lua.cmp" 2>&1
rc=$?
cat "$TMP/lua.cmp"
check "vigil lua: same modules, results, needle matches and titled steps as isotovideo's Perl" [ $rc -eq 0 ]
python3 $CMP "$I" "$TMP/lua/testresults" > /dev/null 2>&1
check "compare: without --across-languages the Lua run differs (scripts, serial steps)" [ $? -eq 1 ]
check "vigil lua: no QEMU left" qemu_gone "$TMP/lua"
echo "wall times: isotovideo $((t1 - t0)) s, vigil Perl $((t2 - t1)) s, vigil Lua $((t3 - t2)) s"

# --- the command server from the guest (net.pm / net.lua: curl over QEMU's
# user network): the same files reached both tools and openQA's parser
# registered the guest's JUnit file in each. isotovideo keeps uploaded logs in
# its pool's ulogs/, vigil in testresults/ulogs/.
D=tests/integration/distri-cmdsrv
for rd in "$I" "$R" "$TMP/lua/testresults"; do
	w=$(basename "$(dirname "$rd")")
	check "net: the JUnit file's test registered ($w)" \
		[ "$(json_get $rd/result-net.json '",".join(t["name"] + ":" + t["category"] for t in j["extra_test_results"])')" = "1_junit:guest" ]
	check "net: openQA's parser wrote result-1_junit.json: first, second ($w)" \
		[ "$(json_get $rd/result-1_junit.json '",".join(t["title"] for t in j["details"])')" = "first,second" ]
done
for f in ulogs/net-b.bin:testresults/ulogs/net-b.bin ulogs/net-junit.xml:testresults/ulogs/net-junit.xml \
	assets_private/b.bin:assets_private/b.bin assets_public/hello.txt:assets_public/hello.txt; do
	check "net: ${f%%:*} the same from isotovideo and vigil (Perl)" cmp -s "$TMP/iso/${f%%:*}" "$TMP/vigil/${f#*:}"
	check "net: ${f%%:*} the same from vigil's Perl and Lua runs" cmp -s "$TMP/vigil/${f#*:}" "$TMP/lua/${f#*:}"
done
check "net: upload_logs' file is data_url's, byte for byte" cmp -s $D/data/dir/sub/b.bin "$R/ulogs/net-b.bin"
check "net: vigil's OUT/ulogs link (parse_extra_log's path) gone after the run" [ ! -L "$TMP/vigil/ulogs" ]
finish
