-- Language, location and keyboard by mouse: click the wanted list entry
-- (the default one), then the Continue button.
return {
   flags = { fatal = true },
   run = function()
      assert_and_click("di-gtk-language")
      assert_and_click("di-gtk-continue")
      assert_and_click("di-gtk-location", 120)
      assert_and_click("di-gtk-continue")
      assert_and_click("di-gtk-keyboard", 120)
      assert_and_click("di-gtk-continue")
   end,
}
