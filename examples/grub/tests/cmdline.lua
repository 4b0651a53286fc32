-- From the menu to GRUB's command line, run a command, check its output,
-- and go back to the menu with esc.
return {
   run = function()
      send_key("c")
      assert_screen("grub-cmdline")
      type_string("echo hello vigil\n")
      assert_screen("grub-echo")
      send_key("esc")
      assert_screen("grub-menu")
   end,
}
