-- The mirror step by mouse: click the highlighted country and mirror,
-- leave the proxy empty; d-i cannot reach deb.debian.org and reports a
-- bad archive mirror. Continue leads back to the mirror country list.
return {
   flags = { fatal = true },
   run = function()
      assert_and_click("di-gtk-mirror-country", 60)
      assert_and_click("di-gtk-continue")
      assert_and_click("di-gtk-mirror", 60)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-proxy", 60)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-mirror-error", 120)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-mirror-country", 60)
   end,
}
