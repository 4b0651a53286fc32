#!/bin/sh
# SPDX-License-Identifier: MIT
# test_perl_anchors.sh - the anchors' Perl distributions (distri-anchor-grub:
# GRUB rescue ISO menu, command line, echo; distri-anchor-di: d-i netboot to
# "Select your location"), copied unchanged from the isotovideo reference, run
# by isotovideo and by `vigil run` from the same vars.json, compared module by
# module and step by step with compare_results.py (issue 15), which must also
# catch a doctored copy; and a failing assert_screen, whose failed screens
# vigil chooses as os-autoinst does. isotovideo runs on TCG (QEMU=x86_64, QEMU_APPEND=accel
# tcg). Needs Debian's os-autoinst and the images (scripts/fetch-images).
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
CMP=tests/integration/compare_results.py
if [ ! -x /usr/bin/isotovideo ] || [ ! -f "$IMG/grub-rescue-cdrom.iso" ] || [ ! -f "$IMG/di-text/linux" ] ||
	! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: needs /usr/bin/isotovideo (os-autoinst), $IMG/grub-rescue-cdrom.iso, $IMG/di-text and qemu-system-x86_64"
	finish
	exit 0
fi

# anchor NAME MEDIA: writes $TMP/NAME.vars.json (the anchors' vars: TCG, one
# CPU, 512 MiB, no video), runs isotovideo in $TMP/NAME-iso (its pool dir)
# and vigil into $TMP/NAME-vigil, and checks that both pass and agree.
anchor() {
	name=$1
	casedir=$PWD/tests/integration/distri-anchor-$name
	cat > "$TMP/$name.vars.json" <<EOF
{"BACKEND": "qemu", "QEMU_NO_KVM": "1", "QEMU": "x86_64", "QEMU_APPEND": "accel tcg",
 "QEMUCPUS": "1", "QEMURAM": "512", $2
 "CASEDIR": "$casedir", "NEEDLES_DIR": "$casedir/needles",
 "NOVIDEO": "1", "DISTRI": "$name", "VERSION": "1", "ARCH": "x86_64"}
EOF
	mkdir -p "$TMP/$name-iso"
	cp "$TMP/$name.vars.json" "$TMP/$name-iso/vars.json"
	t0=$(date +%s)
	(cd "$TMP/$name-iso" && timeout 900 /usr/bin/isotovideo > isotovideo.out 2>&1)
	rc=$?
	t1=$(date +%s)
	echo "isotovideo $name: exit $rc, $((t1 - t0)) s"
	check "$name: isotovideo exit status 0" [ $rc -eq 0 ]
	check "$name: isotovideo's module passed" \
		[ "$(json_get "$TMP/$name-iso/testresults/result-boot.json" 'j["result"]')" = ok ]
	$VIGIL run "$casedir" --vars "$TMP/$name.vars.json" --out "$TMP/$name-vigil" > "$TMP/$name-vigil.out" 2>&1
	rc=$?
	echo "vigil $name: exit $rc, $(($(date +%s) - t1)) s"
	cat "$TMP/$name-vigil.out"
	check "$name: vigil exit status 0" [ $rc -eq 0 ]
	check "$name: vigil's results.json says passed" \
		[ "$(json_get "$TMP/$name-vigil/testresults/results.json" 'j["result"]')" = passed ]
	python3 $CMP "$TMP/$name-iso/testresults" "$TMP/$name-vigil/testresults" > "$TMP/$name.cmp" 2>&1
	rc=$?
	cat "$TMP/$name.cmp"
	check "$name: same modules, results and steps as isotovideo" [ $rc -eq 0 ]
	check "$name: no QEMU left" qemu_gone "$TMP/$name-"
}

anchor grub "\"ISO\": \"$IMG/grub-rescue-cdrom.iso\","
anchor di "\"KERNEL\": \"$IMG/di-text/linux\", \"INITRD\": \"$IMG/di-text/initrd.gz\","

# --- a failing assert_screen on a still screen: the GRUB anchor with no needle
# for grub-echo (a needles copy whose tag differs), timeouts scaled by 0.5
# (grub-menu keeps 30 s on a loaded machine).
# os-autoinst keeps the first whole-screen search's failure (unk) and the
# final one (fail); the steps must agree.
mkdir -p "$TMP/fail-needles"
cp tests/integration/distri-anchor-grub/needles/* "$TMP/fail-needles/"
sed -i 's/"grub-echo"/"grub-echo-elsewhere"/' "$TMP/fail-needles/grub-echo-20261203.json"
python3 - "$TMP/grub.vars.json" "$TMP/fail.vars.json" "$TMP/fail-needles" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
v.update(NEEDLES_DIR=sys.argv[3], TIMEOUT_SCALE="0.5")
json.dump(v, open(sys.argv[2], "w"))
PY
mkdir -p "$TMP/fail-iso"
cp "$TMP/fail.vars.json" "$TMP/fail-iso/vars.json"
t0=$(date +%s)
(cd "$TMP/fail-iso" && timeout 900 /usr/bin/isotovideo > isotovideo.out 2>&1)
echo "isotovideo fail: $(($(date +%s) - t0)) s"
check "fail: isotovideo's module failed" \
	[ "$(json_get "$TMP/fail-iso/testresults/result-boot.json" 'j["result"]')" = fail ]
$VIGIL run tests/integration/distri-anchor-grub --vars "$TMP/fail.vars.json" --out "$TMP/fail-vigil" > "$TMP/fail-vigil.out" 2>&1
rc=$?
echo "vigil fail: $(($(date +%s) - t0)) s in all"
cat "$TMP/fail-vigil.out"
check "fail: vigil exit status 1" [ $rc -eq 1 ]
check "fail: two failed screens, unk then fail, as os-autoinst keeps them" \
	[ "$(json_get "$TMP/fail-vigil/testresults/result-boot.json" '",".join(d["result"] for d in j["details"] if d.get("tags") == ["grub-echo"])')" = unk,fail ]
python3 $CMP "$TMP/fail-iso/testresults" "$TMP/fail-vigil/testresults" > "$TMP/fail.cmp" 2>&1
rc=$?
cat "$TMP/fail.cmp"
check "fail: same modules, results and steps as isotovideo" [ $rc -eq 0 ]
check "fail: no QEMU left" qemu_gone "$TMP/fail-"

# --- the comparison catches differences: doctored copies of vigil's results
R=$TMP/grub-vigil/testresults
# doctor NAME PYTHON: a copy of $R with the statement applied to result-boot.json (r).
doctor() {
	rm -rf "$TMP/$1"
	cp -r "$R" "$TMP/$1"
	python3 - "$TMP/$1/result-boot.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(r, open(sys.argv[1], 'w'))
EOF
}
doctor needle 'r["details"][1]["needle"] = "grub-menu-20261203"'
python3 $CMP "$TMP/grub-iso/testresults" "$TMP/needle" > "$TMP/needle.cmp" 2>&1
rc=$?
cat "$TMP/needle.cmp"
check "compare: another needle in step 2 is a difference (exit 1)" [ $rc -eq 1 ]
check "compare: it names the module, step and field" grep -q '^boot step 2: needle "grub-cmdline-20261203" != "grub-menu-20261203"' "$TMP/needle.cmp"
doctor failed 'r["result"] = "fail"; r["details"][2]["result"] = "fail"; r["details"][2]["tags"] = ["grub-other"]'
python3 $CMP "$TMP/grub-iso/testresults" "$TMP/failed" > "$TMP/failed.cmp" 2>&1
rc=$?
cat "$TMP/failed.cmp"
check "compare: a failed module, step result and tags are differences" \
	[ $rc -eq 1 -a "$(grep -cE '^boot(: result ok != fail| step 3: result| step 3: tags)' "$TMP/failed.cmp")" = 3 ]
doctor steps 'del r["details"][1]'
python3 $CMP "$TMP/grub-iso/testresults" "$TMP/steps" > "$TMP/steps.cmp" 2>&1
check "compare: a missing step is a difference" [ $? -eq 1 ]
doctor order 'pass'
json_get "$TMP/order/test_order.json" 'json.dump([dict(j[0], name="boot2")], open(sys.argv[1], "w"))' > /dev/null
python3 $CMP "$TMP/grub-iso/testresults" "$TMP/order" > "$TMP/order.cmp" 2>&1
check "compare: another module name is a difference" [ $? -eq 1 ]
python3 $CMP "$TMP/grub-iso/testresults" "$TMP/nowhere" > /dev/null 2>&1
check "compare: an unreadable directory exits 2" [ $? -eq 2 ]
finish
