#!/bin/sh
# SPDX-License-Identifier: MIT
# test_examples.sh - runs examples/grub and examples/shell for real under
# TCG and checks the results directory; then a wrong needle must fail with
# its best candidate reported.
. "$(dirname "$0")/lib.sh"

# --- examples/grub
$VIGIL run examples/grub --out "$TMP/grub" > "$TMP/grub.out" 2>&1
rc=$?
cat "$TMP/grub.out"
R=$TMP/grub/testresults
check "grub: exit status 0" [ $rc -eq 0 ]
check "grub: results.json says passed" [ "$(json_get $R/results.json 'j["result"]')" = passed ]
check "grub: two modules ok" [ "$(json_get $R/results.json '",".join(m["name"]+"="+m["result"] for m in j["modules"])')" = "boot=ok,menu=ok,cmdline=ok" ]
check "grub: boot module is fatal" [ "$(json_get $R/results.json 'j["modules"][0]["flags"].get("fatal")')" = 1 ]
check "grub: first step matched grub-menu" [ "$(json_get $R/result-boot.json 'j["details"][0]["tags"][0]')" = grub-menu ]
check "grub: step similarity is an integer percent >= 96" \
	[ "$(json_get $R/result-boot.json 'int(min(a["similarity"] for a in j["details"][0]["area"]) >= 96)')" = 1 ]
shot=$(json_get $R/result-boot.json 'j["details"][0]["screenshot"]')
check "grub: step screenshot written" [ -s "$R/$shot" ]
check "grub: thumbnail written" [ -s "$R/.thumbs/$shot" ]
check "grub: frametime recorded" [ "$(json_get $R/result-boot.json 'len(j["details"][0]["frametime"])')" = 2 ]
check "grub: cmdline steps in order" [ "$(json_get $R/result-cmdline.json '",".join(d["tags"][0] for d in j["details"])')" = "grub-cmdline,grub-echo,grub-menu" ]
check "grub: ocr area read by tesseract" [ "$(json_get $R/result-cmdline.json '[d for d in j["details"] if d.get("ocr")][0]["ocr"][0]')" = "hello vigil" ]
check "grub: send_key_until_needlematch reached Memtest86+" grep -q "send_key_until_needlematch 'grub-menu-memtest': matched" "$TMP/grub.out"
check "grub: progress lines printed" grep -q "assert_screen 'grub-echo': matched" "$TMP/grub.out"
check "grub: log and vars written" [ -s "$TMP/grub/vigil-log.txt" -a -s "$TMP/grub/vars.json" ]
check "grub: TCG used explicitly" grep -q -- "-accel tcg" "$TMP/grub/vigil-log.txt"
check "grub: no QEMU left" eval "! qemu_left '$TMP/grub/.vm'"
# Each step names the line of the module that made it; the module's file
# is kept beside the results as the artefact the source view shows.
asserts=$(grep -n 'assert_screen' examples/grub/tests/menu.lua | cut -d: -f1 | tr '\n' ' ')
check "grub: menu's first and last steps at its assert_screen lines ($asserts)" \
	[ "$(json_get $R/result-menu.json '"%d %d " % (j["details"][0]["line"], j["details"][-1]["line"])')" = "$asserts" ]
check "grub: every menu step has a line" [ "$(json_get $R/result-menu.json 'all(d.get("line", 0) > 0 for d in j["details"])')" = True ]
check "grub: result-menu.json names its source" \
	[ "$(json_get $R/result-menu.json 'j["source"]["file"] + " " + j["source"]["artefact"]')" = "tests/menu.lua source-menu.lua" ]
check "grub: the source artefact is the module's file" cmp -s "$R/source-menu.lua" examples/grub/tests/menu.lua

# The video: plausible length and frames, decodable to the end, seekable
# to a step (the frame there looks like the step's screenshot).
V=$TMP/grub/video.webm
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$V")
frames=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$V")
elapsed=$(json_get $R/results.json 'j["elapsed"]')
check "video: duration $dur s close to the run's $elapsed s" python3 -c "import sys; sys.exit(not (abs($dur - $elapsed) < 2.0))"
check "video: $frames frames (changed frames only)" [ "$frames" -gt 10 -a "$frames" -lt 2000 ]
# -enc_time_base -1: frames keep their own ms times; on ffmpeg's guessed
# constant rate, variable-rate frames would collide and it would complain.
check "video: decodes to the end without errors" sh -c "[ -z \"\$(ffmpeg -v error -i '$V' -enc_time_base -1 -f null - 2>&1)\" ]"
# Every step's time is its frame's video time rounded down to 10 ms: a
# frame starts within 10 ms at or after it (a seek never lands on the next).
ffprobe -v error -show_entries frame=pts_time -of csv=p=0 "$V" > "$TMP/pts.txt"
check "video: every step's time is 0-10 ms before a frame" python3 -c "
import json, sys
pts = [float(l) for l in open('$TMP/pts.txt') if l.strip()]
idx = json.load(open('$R/video_index.json'))
bad = [e for e in idx if not any(0 <= p - e['time'] < 0.01 + 1e-6 for p in pts)]
print(len(idx), 'steps; off:', bad[:3])
sys.exit(bool(bad) or not idx)"
t=$(json_get $R/video_index.json '[e for e in j if e["module"]=="cmdline"][1]["time"]')
s=$(json_get $R/video_index.json '[e for e in j if e["module"]=="cmdline"][1]["screenshot"]')
ffmpeg -v error -ss "$t" -i "$V" -frames:v 1 -y "$TMP/seek.png"
psnr=$(ffmpeg -i "$TMP/seek.png" -i "$R/$s" -lavfi psnr -f null - 2>&1 | sed -n 's/.*average:\([0-9.inf]*\).*/\1/p')
check "video: frame at step time $t s matches $s (PSNR $psnr dB)" python3 -c "import sys; p='$psnr'; sys.exit(not (p == 'inf' or float(p) > 30))"

# A needle cut from a judged screenshot with `vigil needle new` matches it.
$VIGIL needle new cut-menu --from "$R/$shot" --tag cut --area 200,10,320,25 --dir "$TMP/cut" > /dev/null 2>&1
check "needle new: writes json and png" [ -s "$TMP/cut/cut-menu.json" -a -s "$TMP/cut/cut-menu.png" ]
check "needle new: the cut needle matches its screenshot" \
	sh -c "$VIGIL needle match '$TMP/cut' '$R/$shot' | grep -q '\"ok\": *true'"

# The search window: the same title cut from a copy moved 60 px right is
# beyond the margin alone (--ratio 0: 50 px), within margin + 2 % (69 px,
# the default) and the whole screen, and found where it really is.
ffmpeg -v error -i "$R/$shot" -vf "crop=iw-60:ih:0:0,pad=iw+60:ih:60:0" -y "$TMP/moved.png"
$VIGIL needle new moved-menu --from "$TMP/moved.png" --tag moved --area 260,10,320,25 --dir "$TMP/moved" > /dev/null 2>&1
for r in 0 0.02 1; do
	$VIGIL needle match --ratio $r "$TMP/moved" "$R/$shot" > "$TMP/moved-$r.json"
done
check "needle match --ratio 0: 60 px is beyond the margin" grep -q '"ok":false' "$TMP/moved-0.json"
check "needle match --ratio 0.02: found at x 200" grep -q '"ok":true,"areas":\[{"x":200,"y":10' "$TMP/moved-0.02.json"
check "needle match --ratio 1: found at x 200" grep -q '"ok":true,"areas":\[{"x":200,"y":10' "$TMP/moved-1.json"
check "needle match: default is --ratio 0.02" sh -c "$VIGIL needle match '$TMP/moved' '$R/$shot' | cmp -s - '$TMP/moved-0.02.json'"
check "needle match --ratio 2: refused with exit 2" sh -c "$VIGIL needle match --ratio 2 '$TMP/moved' '$R/$shot' \
	2> '$TMP/ratio.err' > /dev/null; [ \$? -eq 2 ] && grep -q 'from 0 to 1' '$TMP/ratio.err'"

# --- examples/shell
$VIGIL run examples/shell --out "$TMP/shell" > "$TMP/shell.out" 2>&1
rc=$?
cat "$TMP/shell.out"
R=$TMP/shell/testresults
check "shell: exit status 0" [ $rc -eq 0 ]
check "shell: passed" [ "$(json_get $R/results.json 'j["result"]')" = passed ]
check "shell: all modules ok" [ "$(json_get $R/results.json '",".join(m["result"] for m in j["modules"])')" = "ok,ok,ok" ]
check "shell: serial0.txt has the prompt" grep -q "vigil-shell#" "$TMP/shell/serial0.txt"
check "shell: failing command judged as failing" grep -q "script_run 'ls /nonexistent': exit [1-9]" "$TMP/shell.out"
check "shell: upload_logs saved the file" grep -q "console=ttyS0" "$R/ulogs/commands-cmdline"
check "shell: set_var reached vars.json" grep -q GUEST_KERNEL "$TMP/shell/vars.json"
check "shell: wait_serial recorded" grep -q "wait_serial expected" "$R"/boot-*.txt

# --- a wrong needle fails, with the best candidate reported
cp -r examples/grub "$TMP/wrong"
cp "$TMP/wrong/needles/grub-menu.png" "$TMP/wrong/needles/grub-echo.png"
$VIGIL run "$TMP/wrong" --var TIMEOUT_SCALE=0.2 --out "$TMP/wrong-out" > "$TMP/wrong.out" 2>&1
rc=$?
cat "$TMP/wrong.out"
R=$TMP/wrong-out/testresults
check "wrong needle: exit status 1" [ $rc -eq 1 ]
check "wrong needle: job failed" [ "$(json_get $R/results.json 'j["result"]')" = failed ]
check "wrong needle: cmdline module failed" [ "$(json_get $R/result-cmdline.json 'j["result"]')" = fail ]
check "wrong needle: failed step lists the best candidate" \
	[ "$(json_get $R/result-cmdline.json '[d for d in j["details"] if d.get("result")=="fail" and "needles" in d][0]["needles"][0]["name"]')" = grub-echo ]
check "wrong needle: message names the tag" grep -q "no candidate needle with tag(s) 'grub-echo' matched" "$R/result-cmdline.json"
echo_line=$(grep -n 'assert_screen("grub-echo")' examples/grub/tests/cmdline.lua | cut -d: -f1)
check "wrong needle: the failure is at cmdline.lua line $echo_line" \
	[ "$(json_get $R/result-cmdline.json '"%d %d" % (j["source"]["fail_line"], j["details"][-1]["line"])')" = "$echo_line $echo_line" ]

finish
