-- The same note asserted as the two notes: the module fails, and goes on
-- (os-autoinst's assert_recorded_sound records the failure, it does not die).
return {
   run = function()
      start_audiocapture()
      type_string("clear; set v=wrong; play 60 660 1; echo vigil-$v\n", { max_interval = 100 }) -- slower: GRUB drops keys on a loaded host
      assert_screen("grub-played-wrong", 60)
      if assert_recorded_sound("grub-beeps") == nil then set_var("WRONG_WENT_ON", "1") end
   end,
}
