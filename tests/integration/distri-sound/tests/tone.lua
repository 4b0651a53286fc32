-- One 660 Hz note: the two notes' needle does not match it.
return {
   run = function()
      start_audiocapture()
      type_string("clear; set v=tone; play 60 660 1; echo vigil-$v\n", { max_interval = 100 }) -- slower: GRUB drops keys on a loaded host
      assert_screen("grub-played-tone", 60)
      if check_recorded_sound("grub-beeps") then
         error("the two notes' needle matched one note")
      end
      set_var("TONE_CHECKED", "nil")
      -- once per module, as os-autoinst's basetest
      local ok, err = pcall(start_audiocapture)
      assert(not ok and tostring(err):find("already in progress", 1, true), tostring(err))
   end,
}
