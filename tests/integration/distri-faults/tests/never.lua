return {
   run = function()
      assert_screen("tag-no-needle-has", 600)
   end,
}
