-- GRUB's rescue ISO as ISO_1 (no ISO) with BOOTFROM=d boots to its menu.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
