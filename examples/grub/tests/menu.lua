-- Move through the menu: a key press changes the screen, the highlight
-- reaches "Memtest86+" key by key, then the screen settles. Back to the
-- first entry for the next module.
return {
   run = function()
      assert_screen("grub-menu")
      if not wait_screen_change(function() send_key("down") end, 10) then
         error("pressing down did not change the screen")
      end
      send_key_until_needlematch("grub-menu-memtest", "down", 10, 0.5)
      if not wait_still_screen(1, 15) then
         error("the menu did not settle")
      end
      if check_screen("grub-cmdline") then
         error("the command line needle matched the menu")
      end
      send_key("home")
      assert_screen("grub-menu")
   end,
}
