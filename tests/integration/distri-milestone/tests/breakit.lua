-- Leaves GRUB on its command line, then fails.
return function()
   send_key("c")
   assert_screen("grub-cmdline")
   error("deliberate failure after leaving the menu")
end
