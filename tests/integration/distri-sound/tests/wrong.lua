-- The same note asserted as the two notes: the module fails.
return {
   run = function()
      start_audiocapture()
      type_string("clear; set v=wrong; play 60 660 1; echo vigil-$v\n")
      assert_screen("grub-played-wrong", 60)
      assert_recorded_sound("grub-beeps")
   end,
}
