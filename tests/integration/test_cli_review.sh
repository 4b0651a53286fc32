#!/bin/sh
# SPDX-License-Identifier: MIT
# test_cli_review.sh - the command-line review of issue 14 on real GRUB
# runs (docs/cli-review.md): a plain run with --explore (a check on a tag
# no needle carries is said before its time-out; a near miss prints its
# failure line and writes its difference image; distinct frames saved with
# an index), then an --interactive run driven through a pseudo-terminal
# that makes the missing needle, after which the check passes.
. "$(dirname "$0")/lib.sh"
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
if [ ! -f "$ISO" ] || ! command -v qemu-system-x86_64 > /dev/null; then
	echo "skipped: needs $ISO and qemu-system-x86_64"
	finish
	exit 0
fi
SRC=tests/integration/distri-cli-review
D=$TMP/d
mkdir -p "$D/needles"
cp -r "$SRC/main.lua" "$SRC/vars.json" "$SRC/tests" "$D/"
cp examples/grub/needles/grub-menu.json examples/grub/needles/grub-menu.png "$D/needles/"
python3 tests/web/distri-web-fail/make-needle.py examples/grub/needles/grub-menu.png "$D/needles"

# --- a plain run, exploring
timeout 300 $VIGIL run "$D" --out "$TMP/r1" --explore --var NOVIDEO=1 > "$TMP/r1.out" 2>&1
rc=$?
cat "$TMP/r1.out"
R=$TMP/r1/testresults
check "plain run: exit status 1 (failed)" [ $rc -eq 1 ]
check "plain run: modules boot=ok unknown=fail nearmiss=fail" \
	[ "$(json_get $R/results.json '",".join(m["name"]+"="+m["result"] for m in j["modules"])')" = "boot=ok,unknown=fail,nearmiss=fail" ]

# A tag no needle carries: said at once, before the check's time-out line,
# on the terminal and in the log; the check still waits and fails.
msg="assert_screen: no needle has tag 'cli-no-such-tag' (2 needles loaded from $D/needles); waiting out the 2 s anyway as os-autoinst does"
for f in "$TMP/r1.out" "$TMP/r1/vigil-log.txt"; do
	said=$(grep -nF "$msg" "$f" | head -n 1 | cut -d: -f1)
	gave_up=$(grep -nF "assert_screen 'cli-no-such-tag': no match in" "$f" | head -n 1 | cut -d: -f1)
	check "unknown tag: said in $(basename "$f") (line ${said:-none}) before the time-out line (${gave_up:-none})" \
		[ -n "$said" ] && [ -n "$gave_up" ] && [ "$said" -lt "$gave_up" ]
done
check "unknown tag: the module failed as os-autoinst's would" \
	grep -qF "no candidate needle with tag(s) 'cli-no-such-tag' matched" "$TMP/r1.out"

# The near miss: its failure line with the figures of the step's JSON.
sim=$(json_get $R/result-nearmiss.json 'j["details"][0]["needles"][0]["area"][0]["similarity"]')
line="best web-nearmiss: area 18,62,400,145 $sim % < 96 % (difference: nearmiss-1-diff.png)"
check "near miss: failure line '$line'" grep -qF "$line" "$TMP/r1.out"
check "near miss: its similarity $sim is a near miss, under 96" [ "$sim" -ge 80 ] && [ "$sim" -lt 96 ]
check "near miss: the failure line follows the no-match line" sh -c \
	"grep -A1 -F \"assert_screen 'web-nearmiss': no match in\" '$TMP/r1.out' | tail -n 1 | grep -qF 'best web-nearmiss:'"
check "near miss: still needs review" [ "$(json_get $R/result-nearmiss.json 'j.get("needs_review")')" = True ]
check "near miss: the best candidate names its difference image" \
	[ "$(json_get $R/result-nearmiss.json 'j["details"][0]["needles"][0]["diff"]')" = nearmiss-1-diff.png ]
check "near miss: the difference image is a 1024x768 PNG" python3 -c "
import struct, sys
d = open('$R/nearmiss-1-diff.png', 'rb').read()
sys.exit(not (d[:8] == b'\x89PNG\r\n\x1a\n' and d[12:16] == b'IHDR' and struct.unpack('>II', d[16:24]) == (1024, 768)))"
check "near miss: the difference image decodes" sh -c "[ -z \"\$(ffmpeg -v error -i '$R/nearmiss-1-diff.png' -f null - 2>&1)\" ]"
check "near miss: a thumbnail of it too" [ -s "$R/.thumbs/nearmiss-1-diff.png" ]

# --explore: numbered distinct frames with their time, and an index (the
# module running then; '-' before the first).
E=$TMP/r1/explore
n=$(ls "$E" | grep -c '^[0-9][0-9][0-9][0-9]-[0-9]*\.[0-9][0-9][0-9]\.png$')
check "explore: $n frames, more than one" [ "$n" -gt 1 ]
check "explore: the index lists each frame in order with its time and module" python3 -c "
import os, sys
rows = [l.rstrip('\n').split('\t') for l in open('$E/index.txt') if not l.startswith('#')]
files = sorted(f for f in os.listdir('$E') if f.endswith('.png'))
ok = [r[0] for r in rows] == files and len(rows) == $n
ok = ok and all(r[0] == '%04d-%s.png' % (i + 1, r[1]) for i, r in enumerate(rows))
times = [float(r[1]) for r in rows]
ok = ok and times == sorted(times) and 'boot' in [r[2] for r in rows]
print(len(rows), 'rows, modules', sorted(set(r[2] for r in rows)))
sys.exit(not ok)"
# Consecutive frames differ by wait_still_screen's test (PSNR under 47
# dB), every pair compared in one ffmpeg run: frame k against frame k+1.
mkdir -p "$TMP/pairs"
k=0
for f in $(ls "$E" | grep '\.png$'); do
	k=$((k + 1))
	ln -s "$E/$f" "$TMP/pairs/b$(printf %04d $k).png"
	ln -s "$E/$f" "$TMP/pairs/a$(printf %04d $((k + 1))).png"
done
ffmpeg -v error -start_number 2 -i "$TMP/pairs/a%04d.png" -start_number 2 -i "$TMP/pairs/b%04d.png" \
	-lavfi "psnr=stats_file=$TMP/psnr.txt:shortest=1" -f null - > /dev/null 2>&1
same=$(python3 -c "
rows = [dict(kv.split(':') for kv in l.split()) for l in open('$TMP/psnr.txt')]
print(sum(1 for r in rows if r['psnr_avg'] == 'inf' or float(r['psnr_avg']) >= 47) if len(rows) == $n - 1 else 'missing')")
check "explore: consecutive frames differ (PSNR < 47 dB; $same pairs do not)" [ "$same" = 0 ]

# --- --interactive needs a terminal
$VIGIL run "$D" --out "$TMP/r0" --interactive < /dev/null > "$TMP/r0.out" 2>&1
rc=$?
check "interactive without a terminal: usage error (exit $rc)" [ $rc -eq 3 ]
check "interactive without a terminal: says why" grep -q "stdin is not one" "$TMP/r0.out"

# --- --interactive through a pseudo-terminal: the needle made at the prompt
python3 tests/integration/pty_drive.py "$TMP/r2.out" 300 \
	"[Y/n]" y "needle name [cli-made]" "" "match areas" "200,10,320,25" \
	-- $VIGIL run "$D" --out "$TMP/r2" --interactive --var CLI_INTERACTIVE=1 --var NOVIDEO=1
rc=$?
cat "$TMP/r2.out"
check "interactive: exit status 0 (passed)" [ $rc -eq 0 ]
check "interactive: the tag was said unknown" grep -qF "assert_screen: no needle has tag 'cli-made' (2 needles loaded from $D/needles)" "$TMP/r2.out"
check "interactive: the needle was made" grep -qF "made needle 'cli-made' from the screen ($D/needles/cli-made.json, 3 needles now)" "$TMP/r2.out"
check "interactive: NAME.json and NAME.png in the needles directory" [ -s "$D/needles/cli-made.json" -a -s "$D/needles/cli-made.png" ]
check "interactive: the needle has the tag and the area given" \
	[ "$(json_get "$D/needles/cli-made.json" '"%s %d,%d,%d,%d" % (j["tags"][0], *(j["area"][0][k] for k in ("xpos","ypos","width","height")))')" = "cli-made 200,10,320,25" ]
check "interactive: the check then passed" grep -qF "assert_screen 'cli-made': matched cli-made" "$TMP/r2.out"
check "interactive: no time-out was waited out" sh -c "! grep -q 'no match' '$TMP/r2.out'"
check "interactive: the step is the new needle's" [ "$(json_get $TMP/r2/testresults/result-made.json 'j["details"][0]["needle"]')" = cli-made ]
check "no QEMU left" eval "! qemu_left '$TMP/r'"
finish
