-- The command line under a tag no needle carries: fails at once, unless developer
-- mode holds it and a needle appears before the retry.
return {
   run = function()
      assert_screen("devmode-fixed", 2)
   end,
}
