-- UEFI=1 with HDD_1 = scripts/build-debian-gpt's disk: OVMF starts GRUB
-- from the EFI system partition of a GPT disk, GRUB boots the installed
-- Debian on the second partition, and the system says it runs on UEFI.
return {
   flags = { fatal = true },
   run = function()
      if not wait_serial("vigil: UEFI GRUB on the GPT disk", { timeout = 120, no_regex = true }) then
         error("GRUB did not start from the EFI system partition")
      end
      select_console("serial")
      if not wait_serial("vigil-debian login:", { timeout = 180, no_regex = true }) then
         error("no login prompt on the serial terminal")
      end
      type_string("root\n")
      if not wait_serial("Password:", { timeout = 30, no_regex = true }) then
         error("no password prompt on the serial terminal")
      end
      type_password()
      type_string("\n")
      if not wait_serial("root@vigil-debian:~# ", { timeout = 60, no_regex = true }) then
         error("no root prompt on the serial terminal")
      end
      assert_script_run("bind 'set enable-bracketed-paste off'")
      -- Booted by UEFI (64-bit firmware), root on the GPT's second partition.
      local size = script_output("cat /sys/firmware/efi/fw_platform_size")
      if not size:match("64") then
         error("not booted by 64-bit UEFI: fw_platform_size '" .. size .. "'")
      end
      local root = script_output("findmnt -n -o SOURCE /")
      if not root:match("^/dev/[sv]da2") then
         error("the root file system is not the disk's second partition: '" .. root .. "'")
      end
      -- A GPT: its header ("EFI PART") in the disk's second sector.
      local disk = root:match("^(/dev/[sv]da)2")
      local sig = script_output("dd if=" .. disk .. " bs=512 skip=1 count=1 2>/dev/null | head -c 8; echo")
      if not sig:match("EFI PART") then
         error("no GPT header on " .. disk .. ": '" .. sig .. "'")
      end
   end,
}
