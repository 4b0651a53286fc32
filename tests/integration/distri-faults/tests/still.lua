-- A check that waits past two 5 s full-search intervals on a still
-- screen must time out, not hang (a regression test).
return function()
   assert_screen("grub-menu", 60)
   send_key("down") -- stops GRUB's countdown: the screen stays still
   if check_screen("tag-no-needle-has", 12) then
      error("a tag no needle carries matched")
   end
end
