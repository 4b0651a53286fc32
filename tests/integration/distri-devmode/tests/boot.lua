-- Boot the rescue ISO to GRUB's menu, then to its command line, which
-- stays on the screen (the menu would boot its default entry).
return {
   run = function()
      assert_screen("grub-menu", 120)
      send_key("c")
      assert_screen("grub-cmdline")
   end,
}
