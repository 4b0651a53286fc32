-- The mirror step: country, mirror and proxy keep their defaults, then
-- d-i cannot reach deb.debian.org and reports a bad archive mirror.
-- Continue leads back to the mirror country list.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-mirror-country", 60)
      send_key("ret")
      assert_screen("di-text-mirror", 60)
      send_key("ret")
      assert_screen("di-text-proxy", 60)
      send_key("ret")
      assert_screen("di-text-mirror-error", 120)
      send_key("ret")
      assert_screen("di-text-mirror-country", 60)
   end,
}
