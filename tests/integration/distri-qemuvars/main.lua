-- QEMU variables with os-autoinst's meanings (tests/integration/
-- test_qemu_vars.sh): ROLE=uefi boots OVMF to its shell and stores a
-- shell variable in the UEFI variables (PUBLISH_PFLASH_VARS keeps them);
-- ROLE=uefi-read boots with those variables and finds it; ROLE=cd boots
-- GRUB from ISO_1 with BOOTFROM=d; ROLE=uefi-debian boots the installed
-- Debian of scripts/build-debian-gpt through OVMF and GRUB.
local role = get_var("ROLE", "uefi")
if role == "cd" then
   loadtest "cd"
elseif role == "uefi-debian" then
   loadtest "uefi_debian"
elseif role == "uefi-read" then
   loadtest "uefi_read"
else
   loadtest "uefi"
end
