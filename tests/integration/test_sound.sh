#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sound.sh - sound (issue 15): `vigil snd2png` draws the same image as
# os-autoinst's /usr/bin/snd2png, pixel for pixel, for WAVs of several
# rates, widths and channel counts (gen_wavs.py) and for real captures; a
# VM records what GRUB's `play` sends to the PC speaker (QEMU_APPEND
# connects it to os-autoinst's audiodev snd0) and matches it against sound
# needles, in Lua (distri-sound) and through os-autoinst's Perl testapi
# (distri-perl-sound), whose run isotovideo repeats step for step.
# run-all: exclusive (fixed ports or a system-wide install; tests/run-all holds its lock)
. "$(dirname "$0")/lib.sh"
IMG=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}
OS_SND2PNG=${OS_SND2PNG:-/usr/bin/snd2png}

# pixels PNG: the decoded pixels' md5 (RGB, whatever the file's format)
pixels() { ffmpeg -v error -i "$1" -f rawvideo -pix_fmt rgb24 - | md5sum | cut -d' ' -f1; }
# same_image WAV: vigil's and os-autoinst's images of WAV have the same pixels
same_image() {
	$VIGIL snd2png "$1" "$1.vigil.png" && "$OS_SND2PNG" "$1" "$1.os.png" 2>/dev/null &&
		[ "$(pixels "$1.vigil.png")" = "$(pixels "$1.os.png")" ]
}

# --- the converter
python3 tests/integration/gen_wavs.py "$TMP/wav"
check "snd2png: a 1024x768 image of a capture-format WAV" sh -c \
	"$VIGIL snd2png '$TMP/wav/beeps.wav' '$TMP/beeps.png' && ffprobe -v error -show_entries stream=width,height -of csv=p=0 '$TMP/beeps.png' | grep -qx '1024,768'"
if [ -x "$OS_SND2PNG" ]; then
	for w in "$TMP"/wav/*.wav; do
		check "snd2png: $(basename "$w") pixel for pixel as os-autoinst's" same_image "$w"
	done
else
	echo "(no $OS_SND2PNG: the pixel comparisons are skipped)"
fi
printf 'not a sound' > "$TMP/bad.wav"
$VIGIL snd2png "$TMP/bad.wav" "$TMP/bad.png" 2> "$TMP/bad.err"
check "snd2png: a file that is no sound: exit 1, the file named" sh -c "[ $? -eq 1 ] && grep -q 'bad.wav' '$TMP/bad.err'"
$VIGIL snd2png "$TMP/bad.wav" > /dev/null 2>&1
check "snd2png: usage error: exit 2" [ $? -eq 2 ]

if [ ! -f "$IMG/grub-rescue-cdrom.iso" ] || ! command -v qemu-system-x86_64 > /dev/null; then
	echo "skipped the VM runs: needs $IMG/grub-rescue-cdrom.iso (scripts/fetch-images) and qemu-system-x86_64"
	finish
	exit $?
fi

# --- Lua: record, find, miss, fail
mods() { json_get "$1/testresults/results.json" '",".join(m["name"]+"="+m["result"] for m in j["modules"])'; }
steps() { json_get "$1/testresults/result-$2.json" '" ".join(d.get("audio") and "audio:"+d["audio"] or d["result"]+":"+str(d.get("needle")) for d in j["details"])'; }
t0=$(date +%s)
$VIGIL run tests/integration/distri-sound --out "$TMP/lua" --var NOVIDEO=1 > "$TMP/lua.out" 2>&1
rc=$?
cat "$TMP/lua.out"
echo "vigil Lua: $(($(date +%s) - t0)) s"
check "lua: exit 1 (the wrong module fails)" [ $rc -eq 1 ]
check "lua: module results" [ "$(mods "$TMP/lua")" = "boot=ok,beep=ok,tone=ok,wrong=fail" ]
check "lua: beep: the capture, then the sound needle found" \
	[ "$(steps "$TMP/lua" beep)" = "ok:grub-played-beep-20261205 audio:beep-captured.wav ok:sound-grub-beeps-20261205" ]
check "lua: tone: check_recorded_sound missed (unk)" \
	[ "$(steps "$TMP/lua" tone)" = "ok:grub-played-tone-20261205 audio:tone-captured.wav unk:None" ]
check "lua: wrong: assert_recorded_sound failed" \
	[ "$(steps "$TMP/lua" wrong)" = "ok:grub-played-wrong-20261205 audio:wrong-captured.wav fail:None" ]
check "lua: wrong: the module went on after the failed assert (as os-autoinst)" \
	[ "$(json_get "$TMP/lua/vars.json" 'j.get("WRONG_WENT_ON")')" = 1 ]
check "lua: the recording is QEMU's wavcapture format (44.1 kHz, 16 bit, mono)" sh -c \
	"ffprobe -v error -show_entries stream=sample_rate,channels,codec_name -of csv=p=0 '$TMP/lua/testresults/beep-captured.wav' | grep -qx 'pcm_s16le,44100,1'"
shot=$(json_get "$TMP/lua/testresults/result-beep.json" 'j["details"][2]["screenshot"]')
$VIGIL snd2png "$TMP/lua/testresults/beep-captured.wav" "$TMP/lua-beep.png"
check "lua: the step's image is the capture's spectrogram" \
	[ "$(pixels "$TMP/lua/testresults/$shot")" = "$(pixels "$TMP/lua-beep.png")" ]
if [ -x "$OS_SND2PNG" ]; then
	for w in "$TMP"/lua/testresults/*-captured.wav; do
		cp "$w" "$TMP/wav/lua-$(basename "$w")"
		check "snd2png: the capture $(basename "$w") pixel for pixel as os-autoinst's" same_image "$TMP/wav/lua-$(basename "$w")"
	done
fi
check "lua: vars, the job's variables (%vars)" [ "$(json_get "$TMP/lua/vars.json" 'j["VARS_SEEN"]')" = "sound,42,true" ]
check "lua: vars.X = v sets, vars.X = nil deletes" \
	[ "$(json_get "$TMP/lua/vars.json" 'j.get("FROM_LUA", "") + str("FROM_SET_VAR" in j)')" = "42False" ]

# --- Perl: os-autoinst's testapi and basetest, vigil's snd2png on its PATH
# shared vars: TCG, one CPU, no video, the PC speaker on snd0
casedir=$PWD/tests/integration/distri-perl-sound
cat > "$TMP/perl.vars.json" << JSON
{"BACKEND": "qemu", "QEMU_NO_KVM": "1", "QEMU": "x86_64", "QEMU_APPEND": "accel tcg -machine pcspk-audiodev=snd0",
 "QEMUCPUS": "1", "QEMURAM": "512", "ISO": "$IMG/grub-rescue-cdrom.iso",
 "CASEDIR": "$casedir", "NEEDLES_DIR": "$PWD/tests/integration/distri-sound/needles",
 "NOVIDEO": "1", "DISTRI": "perl-sound", "VERSION": "1", "ARCH": "x86_64"}
JSON
t0=$(date +%s)
$VIGIL run "$casedir" --vars "$TMP/perl.vars.json" --out "$TMP/perl" > "$TMP/perl.out" 2>&1
rc=$?
cat "$TMP/perl.out"
echo "vigil Perl: $(($(date +%s) - t0)) s"
check "perl: exit 1 (the wrong module fails)" [ $rc -eq 1 ]
check "perl: module results" [ "$(mods "$TMP/perl")" = "boot=ok,beep=ok,tone=ok,wrong=fail" ]
check "perl: beep: the capture, then the sound needle found" \
	[ "$(steps "$TMP/perl" beep)" = "ok:grub-played-beep-20261205 audio:beep-captured.wav ok:sound-grub-beeps-20261205" ]
check "perl: wrong: assert_recorded_sound failed" \
	[ "$(steps "$TMP/perl" wrong)" = "ok:grub-played-wrong-20261205 audio:wrong-captured.wav fail:None" ]
check "perl: wrong: the module went on after the failed assert" \
	[ "$(json_get "$TMP/perl/vars.json" 'j.get("WRONG_WENT_ON")')" = 1 ]
check "perl: testapi drew the image with vigil's snd2png (os-autoinst's would log its bins)" \
	sh -c "[ -s '$TMP/perl/beep-captured.wav.png' ] && ! grep -q 'frequency bins' '$TMP/perl/autoinst-log.txt'"
check "perl: check_recorded_sound returned undef" [ "$(json_get "$TMP/perl/vars.json" 'j.get("TONE_CHECKED")')" = undef ]
# set_var read back into vigil's variables when the module ends (before the
# next one starts), as the vars.json the test process saves says
check "perl: module tone's set_var read back when it ended" sh -c \
	"sed -n '/the test set TONE_CHECKED=undef/,\$p' '$TMP/perl/vigil-log.txt' | grep -q 'wrong: starting module'"
python3 tests/integration/compare_results.py --across-languages "$TMP/perl/testresults" "$TMP/lua/testresults" > "$TMP/langs.cmp" 2>&1
rc=$?
cat "$TMP/langs.cmp"
check "perl and lua: the same modules and needle matches" [ $rc -eq 0 ]
check "no QEMU left" qemu_gone "$TMP/"

# --- isotovideo on the same distribution and vars (its own snd2png)
if [ -x /usr/bin/isotovideo ]; then
	mkdir -p "$TMP/iso"
	cp "$TMP/perl.vars.json" "$TMP/iso/vars.json"
	t0=$(date +%s)
	(cd "$TMP/iso" && timeout 900 /usr/bin/isotovideo > isotovideo.out 2>&1)
	echo "isotovideo: exit $?, $(($(date +%s) - t0)) s"
	check "isotovideo: module results" \
		[ "$(json_get "$TMP/iso/testresults/result-wrong.json" 'j["result"]')$(json_get "$TMP/iso/testresults/result-beep.json" 'j["result"]')" = failok ]
	python3 tests/integration/compare_results.py "$TMP/iso/testresults" "$TMP/perl/testresults" > "$TMP/iso.cmp" 2>&1
	rc=$?
	cat "$TMP/iso.cmp"
	check "isotovideo and vigil: the same modules, results and steps" [ $rc -eq 0 ]
	check "isotovideo: no QEMU left" qemu_gone "$TMP/iso"
else
	echo "(no /usr/bin/isotovideo: the comparison with os-autoinst is skipped)"
fi
finish
