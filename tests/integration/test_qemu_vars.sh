#!/bin/sh
# SPDX-License-Identifier: MIT
# test_qemu_vars.sh - os-autoinst's QEMU variables against real QEMU (TCG):
# UEFI=1 boots Debian's OVMF to its shell, PUBLISH_PFLASH_VARS keeps the
# run's UEFI variables for a second run's UEFI_PFLASH_VARS and boots the
# installed Debian of scripts/build-debian-gpt from a GPT disk; ISO_1 with
# BOOTFROM=d boots GRUB, HDD_1 is an overlay over its image, KEEPHDDS keeps
# the disks, QEMUTPM runs a swtpm for the VM, and an unsupported backend
# variable is named in a warning.
# run-all: long 69
. "$(dirname "$0")/lib.sh"
D=tests/integration/distri-qemuvars
ISO=${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/grub-rescue-cdrom.iso
OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.fd

# The docs name every unsupported variable of the code's table.
missing=""
for v in $(sed -n '/^} unsupported\[\] = {/,/^};/p' src/vm/qemu_args.c | grep -oE '^\s*\{ "[A-Z0-9_]+"' | grep -oE '[A-Z0-9_]+'); do
	grep -q "\`$v\`" docs/qemu-vars.md || missing="$missing $v"
done
check "docs/qemu-vars.md lists every unsupported variable of qemu_args.c${missing:+ (missing:$missing)}" [ -z "$missing" ]

if [ ! -f /usr/share/OVMF/OVMF_CODE_4M.fd ] || [ ! -f "$ISO" ] || ! command -v swtpm > /dev/null; then
	echo "skipped: needs Debian's ovmf and swtpm (scripts/install-deps) and $ISO"
	finish
	exit 0
fi
sum_before=$(md5sum < $OVMF_VARS)

# --- UEFI: the shell, a variable set and published.
$VIGIL run $D --out "$TMP/u1" --var UEFI=1 --var PUBLISH_PFLASH_VARS=uefi-vars.qcow2 \
	--var MARK=m-$$ --var QEMUTPM=1 > "$TMP/u1.out" 2>&1
rc=$?
cat "$TMP/u1.out"
check "uefi: OVMF reaches its shell and stores a variable (exit 0)" [ $rc -eq 0 ]
check "uefi: the shell matched a needle" \
	[ "$(json_get "$TMP/u1/testresults/result-uefi.json" 'j["details"][0]["tags"][0]')" = uefi-shell ]
check "uefi: code and vars on pflash, Debian's 4M pair by default" \
	grep -q "if=pflash,format=qcow2,file=$TMP/u1/.vm/pflash-code-overlay.qcow2,unit=0,readonly=on" "$TMP/u1/vigil-log.txt"
check "uefi: PUBLISH_PFLASH_VARS written to the results as qcow2" \
	sh -c "qemu-img info '$TMP/u1/uefi-vars.qcow2' | grep -q 'file format: qcow2'"
check "uefi: the published vars differ from OVMF's blank ones" \
	eval "! qemu-img compare -q '$TMP/u1/uefi-vars.qcow2' $OVMF_VARS"
check "uefi: OVMF's own vars file is untouched" [ "$(md5sum < $OVMF_VARS)" = "$sum_before" ]
check "uefi: no QEMU left" eval "! qemu_left '$TMP/u1/.vm'"
check "uefi: QEMUTPM: a swtpm of the run's served QEMU's tpm-tis" \
	sh -c "grep -q 'swtpm (pid [0-9]*) serves .$TMP/u1/.vm/swtpm-sock' '$TMP/u1/vigil-log.txt' && grep -q 'tpm-tis,tpmdev=tpm0' '$TMP/u1/vigil-log.txt'"
check "uefi: no swtpm left, its files removed with the disks" \
	sh -c "! pgrep -f '[s]wtpm.*$TMP/u1/' > /dev/null && [ ! -e '$TMP/u1/.vm' ]"

# --- The chained run: the published vars still hold the variable.
$VIGIL run $D --out "$TMP/u2" --var UEFI=1 --var UEFI_PFLASH_VARS="$TMP/u1/uefi-vars.qcow2" \
	--var ROLE=uefi-read --var MARK=m-$$ > "$TMP/u2.out" 2>&1
rc=$?
cat "$TMP/u2.out"
check "uefi: a run on the published vars finds the variable (exit 0)" [ $rc -eq 0 ]

# --- UEFI: an installed Debian on a GPT disk (ESP with GRUB, root partition).
if image_build build-debian-gpt > "$TMP/gpt.out" 2>&1; then
	$VIGIL run $D --out "$TMP/ud" --var UEFI=1 --var ROLE=uefi-debian --var QEMURAM=1024 \
		--var HDD_1="${VIGIL_IMAGES:-$HOME/.cache/vigil/images}/debian-gpt/disk.img" \
		--var PASSWORD=vigil > "$TMP/ud.out" 2>&1
	rc=$?
	cat "$TMP/ud.out"
	check "uefi-debian: OVMF -> GRUB on the ESP -> Debian on the GPT's root partition (exit 0)" [ $rc -eq 0 ]
	check "uefi-debian: GRUB ran from the EFI system partition" \
		grep -q "wait_serial 'vigil: UEFI GRUB on the GPT disk': found" "$TMP/ud.out"
	check "uefi-debian: the guest checked UEFI, its root partition and the GPT (module ok)" \
		[ "$(json_get "$TMP/ud/testresults/results.json" '",".join(m["name"]+"="+m["result"] for m in j["modules"])')" = uefi_debian=ok ]
else
	cat "$TMP/gpt.out"
	not_ok "uefi-debian: scripts/build-debian-gpt builds the disk"
fi

# --- Disks and CDs: ISO_1 boots with BOOTFROM=d; HDD_1 stays untouched.
qemu-img create -q -f qcow2 "$TMP/base.qcow2" 64M
base_before=$(md5sum < "$TMP/base.qcow2")
$VIGIL run $D --out "$TMP/cd" --var ROLE=cd --var ISO_1="$ISO" --var BOOTFROM=d --var NUMDISKS=2 \
	--var HDD_1="$TMP/base.qcow2" --var KEEPHDDS=1 --var NEEDLES_DIR="$PWD/examples/grub/needles" \
	--var QEMU_NUMA=1 > "$TMP/cd.out" 2>&1
rc=$?
cat "$TMP/cd.out"
check "cd: GRUB boots from ISO_1 with BOOTFROM=d (exit 0)" [ $rc -eq 0 ]
check "cd: ISO_1 is cd1 with bootindex 0 and -boot order=d" \
	sh -c "grep -q 'ide-cd,drive=cd1,id=cd1-device,serial=cd1,bootindex=0' '$TMP/cd/vigil-log.txt' && grep -q -- '-boot order=d' '$TMP/cd/vigil-log.txt'"
check "cd: KEEPHDDS keeps both disks" [ -f "$TMP/cd/.vm/hd0-overlay.qcow2" -a -f "$TMP/cd/.vm/hd1-overlay.qcow2" ]
check "cd: HDD_1 is the backing file of disk 1's overlay" \
	sh -c "qemu-img info '$TMP/cd/.vm/hd0-overlay.qcow2' | grep -q 'backing file: $TMP/base.qcow2'"
check "cd: HDD_1's image is untouched" [ "$(md5sum < "$TMP/base.qcow2")" = "$base_before" ]
check "cd: QEMU_NUMA named as unsupported at start" \
	grep -q "backend variables that vigil does not support: QEMU_NUMA" "$TMP/cd/vigil-log.txt"
check "cd: no test variable named as unsupported" eval "! grep -q 'not support.*ROLE' '$TMP/cd/vigil-log.txt'"
finish
