-- Boot the rescue ISO to the menu, open the command line, echo: as boot.pm.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("grub-menu", 60)
      send_key("c")
      assert_screen("grub-cmdline")
      type_string("echo hello vigil\n")
      assert_screen("grub-echo")
   end,
}
