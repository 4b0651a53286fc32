-- Language, location and keyboard: the defaults (English, United States,
-- American English) are highlighted; Enter takes each.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-language")
      send_key("ret")
      assert_screen("di-text-location", 120)
      send_key("ret")
      assert_screen("di-text-keyboard", 120)
      send_key("ret")
   end,
}
