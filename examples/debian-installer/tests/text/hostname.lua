-- Replace the proposed hostname "debian"; the shell module reads it back.
-- Without a configured network d-i asks no domain.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-hostname", 60)
      for _ = 1, #"debian" + 2 do
         send_key("backspace")
      end
      type_string("vigil-di")
      send_key("ret")
   end,
}
