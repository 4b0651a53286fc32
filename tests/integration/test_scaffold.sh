#!/bin/sh
# SPDX-License-Identifier: MIT
# test_scaffold.sh - from nothing to a first passing needle, as a new user
# goes: `vigil new` makes a distribution that `vigil run` loads and runs to
# its first check against the real GRUB image (it fails: no needle yet); a
# needle cut from that failure's screenshot with `vigil needle new` makes
# the second run pass. `vigil needle show` on real needles writes crops the
# size of the areas; broken input is an error naming the file and field.
. "$(dirname "$0")/lib.sh"
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
D=$TMP/mydistri

# --- vigil new
$VIGIL new "$D" > "$TMP/new.out" 2>&1
rc=$?
check "new: exit status 0" [ $rc -eq 0 ]
check "new: main.lua, tests/boot.lua, vars.json and needles/ written" \
	[ -s "$D/main.lua" -a -s "$D/tests/boot.lua" -a -s "$D/vars.json" -a -d "$D/needles" ]
check "new: main.lua loads the boot module" grep -q '^loadtest "boot"' "$D/main.lua"
check "new: boot module asserts a tag" grep -q 'assert_screen("grub-menu", ' "$D/tests/boot.lua"
check "new: boot module says how to make its needle" grep -q 'vigil needle new grub-menu' "$D/tests/boot.lua"
check "new: vars.json names the distribution and the GRUB ISO" \
	[ "$(json_get "$D/vars.json" 'j["DISTRI"] + " " + j["ISO"]')" = 'mydistri ${VIGIL_IMAGES}/grub-rescue-cdrom.iso' ]
check "new: needles/ holds only its README" [ "$(ls "$D/needles")" = README ]
check "new: prints the next commands" sh -c "grep -q 'vigil run $D' '$TMP/new.out' && grep -q 'vigil needle new grub-menu' '$TMP/new.out' && grep -q 'vigil needle show grub-menu' '$TMP/new.out'"
check "vigil --help lists new" sh -c "$VIGIL --help | grep -q '^  new '"
$VIGIL new "$D" > "$TMP/again.out" 2>&1
rc=$?
check "new: refuses a non-empty directory (status $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'not an empty directory' '$TMP/again.out'"
check "new: the refused directory is untouched" [ "$(ls "$D")" = "main.lua
needles
tests
vars.json" ]
mkdir -p "$TMP/empty"
check "new: an empty directory is fine" sh -c "$VIGIL new '$TMP/empty' --image shell > /dev/null && grep -q shell-initrd.gz '$TMP/empty/vars.json'"
check "new: a trailing slash stays out of the printed commands" sh -c "$VIGIL new '$TMP/slash/' | grep -q 'vigil run $TMP/slash --out $TMP/slash-results'"
check "new: an unknown image is refused, nothing written" sh -c "! $VIGIL new '$TMP/x' --image nosuch 2> /dev/null && ! [ -e '$TMP/x' ]"

# --- the new distribution against the real GRUB image. TIMEOUT_SCALE keeps
# the failing check short (20 s x 0.6); GRUB's menu shows in seconds.
if [ -f "$ISO" ] && command -v qemu-system-x86_64 > /dev/null; then
	$VIGIL run "$D" --out "$TMP/r1" --var TIMEOUT_SCALE=0.6 > "$TMP/r1.out" 2>&1
	rc=$?
	cat "$TMP/r1.out"
	R=$TMP/r1/testresults
	check "run 1: fails (status $rc) at the check without a needle" [ $rc -eq 1 ]
	check "run 1: the boot module ran to its assert_screen" \
		[ "$(json_get $R/result-boot.json 'j["details"][0]["tags"][0] + " " + j["details"][0]["result"]')" = "grub-menu fail" ]
	shot=$R/$(json_get $R/result-boot.json 'j["details"][0]["screenshot"]')
	check "run 1: the failure's screenshot is there" [ -s "$shot" ]
	$VIGIL needle new grub-menu --from "$shot" --tag grub-menu --area 200,10,320,25 --dir "$D/needles" > /dev/null 2>&1
	check "needle new: cut from the failure screenshot" [ -s "$D/needles/grub-menu.json" -a -s "$D/needles/grub-menu.png" ]
	$VIGIL run "$D" --out "$TMP/r2" --var TIMEOUT_SCALE=0.6 > "$TMP/r2.out" 2>&1
	rc=$?
	cat "$TMP/r2.out"
	check "run 2: passes (status $rc)" [ $rc -eq 0 ]
	check "run 2: the check matched the new needle" \
		[ "$(json_get "$TMP/r2/testresults/result-boot.json" 'j["details"][0]["needle"]')" = grub-menu ]
	check "no QEMU left" eval "! qemu_left '$TMP/r'"
else
	echo "skipped the runs: needs $ISO and qemu-system-x86_64"
fi

# --- vigil needle show on the real needles of examples/grub
# png_size FILE: "WxH" from the PNG header.
png_size() { python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print('%dx%d' % struct.unpack('>II', d[16:24]))" "$1"; }
S=$TMP/show
$VIGIL needle show grub-echo --needles examples/grub/needles --out "$S" > "$TMP/show.out" 2>&1
rc=$?
cat "$TMP/show.out"
check "show: exit status 0" [ $rc -eq 0 ]
for i in 0 1; do
	want=$(json_get examples/grub/needles/grub-echo.json "'%dx%d' % (j['area'][$i]['width'], j['area'][$i]['height'])")
	type=$(json_get examples/grub/needles/grub-echo.json "j['area'][$i].get('type', 'match')")
	f=$S/grub-echo-area$i-$type.png
	check "show: area $i crop $f is the area's size $want" [ -s "$f" -a "$(png_size "$f")" = "$want" ]
	xywh=$(json_get examples/grub/needles/grub-echo.json "'%d,%d,%d,%d' % tuple(j['area'][$i][k] for k in ('xpos','ypos','width','height'))")
	check "show: prints area $i as $type $xywh" grep -qE "^area $i: $type +$xywh +match 96% +margin 50" "$TMP/show.out"
done
check "show: the needle with its areas drawn is the needle's size" [ "$(png_size "$S/grub-echo-areas.png")" = 1024x768 ]
check "show: finds the needle below ./needles by default" sh -c "cd examples/grub && $VIGIL needle show grub-menu --out '$S/def' > /dev/null && [ -s '$S/def/grub-menu-area1-match.png' ]"

$VIGIL needle show no-such-needle --needles examples/grub/needles --out "$S" > "$TMP/unknown.out" 2>&1
rc=$?
cat "$TMP/unknown.out"
check "show: an unknown needle is an error (status $rc)" [ $rc -eq 1 ]
check "show: the error names the needle and the directory" grep -q "no needle 'no-such-needle'.*examples/grub/needles" "$TMP/unknown.out"
mkdir -p "$TMP/bad/sub"
cp examples/grub/needles/grub-menu.png "$TMP/bad/sub/broken.png"
printf '{"tags":["x"],"area":[{"xpos":1,"ypos":2,"width":"wide","height":4}]}\n' > "$TMP/bad/sub/broken.json"
$VIGIL needle show broken --needles "$TMP/bad" --out "$S" > "$TMP/broken.out" 2>&1
rc=$?
cat "$TMP/broken.out"
check "show: a broken needle is an error (status $rc)" [ $rc -eq 1 ]
check "show: the error names the file and the field" grep -q "needle 'sub/broken.json': area 1: width must be a number" "$TMP/broken.out"
printf '{"tags":["x"],"area":[{"xpos":1,' > "$TMP/bad/sub/broken.json"
$VIGIL needle show broken --needles "$TMP/bad" --out "$S" > "$TMP/broken2.out" 2>&1
check "show: broken JSON names the file and the place" grep -q "needle 'sub/broken.json': broken json at line 1" "$TMP/broken2.out"
printf '{"tags":["x"],"area":[{"xpos":1000,"ypos":2,"width":100,"height":4}]}\n' > "$TMP/bad/sub/broken.json"
$VIGIL needle show broken --needles "$TMP/bad" --out "$S" > "$TMP/outside.out" 2>&1
check "show: an area outside the PNG names the file and the area (refused at load)" grep -q "needle 'sub/broken.json': area 1 (xpos 1000, ypos 2, 100x4) lies outside its 1024x768 PNG" "$TMP/outside.out"
finish
