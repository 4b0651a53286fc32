-- The proposed hostname is selected, so typing replaces it; then the
-- domain, which netcfg asks for a configured network.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-gtk-hostname", 60)
      type_string("vigil-di")
      assert_screen("di-gtk-hostname-typed", 30)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-domain", 60)
      type_string("example.org")
      assert_screen("di-gtk-domain-typed", 30)
      assert_and_click("di-gtk-continue")
   end,
}
