-- Replace the proposed hostname "debian", then give the domain, which
-- netcfg asks for a configured network (manual or DHCP); the shell module
-- reads both back.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-hostname", 60)
      for _ = 1, #"debian" + 2 do
         send_key("backspace")
      end
      type_string("vigil-di")
      send_key("ret")
      assert_screen("di-text-domain", 60)
      type_string("example.org")
      assert_screen("di-text-domain-typed", 30)
      send_key("ret")
   end,
}
