-- A tag no needle carries: said at once, then the time-out waited out.
return {
   run = function()
      assert_screen("cli-no-such-tag", 2)
   end,
}
