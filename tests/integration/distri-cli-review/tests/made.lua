-- A tag no needle carries, made into a needle at the terminal
-- (--interactive); the check then passes.
return {
   run = function()
      assert_screen("cli-made", 30)
   end,
}
