-- A tag no needle ever carries: skipped from developer mode, it fails as
-- it would have.
return {
   run = function()
      assert_screen("devmode-never", 2)
   end,
}
