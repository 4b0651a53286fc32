-- The proposed hostname is selected, so typing replaces it. Without a
-- configured network d-i asks no domain.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-gtk-hostname", 60)
      type_string("vigil-di")
      assert_screen("di-gtk-hostname-typed", 30)
      assert_and_click("di-gtk-continue")
   end,
}
