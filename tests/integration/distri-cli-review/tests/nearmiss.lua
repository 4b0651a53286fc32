-- A needle whose pixels are a little off (tests/web/distri-web-fail's
-- make-needle.py): the failure line and the difference image.
return {
   run = function()
      assert_screen("web-nearmiss", 2)
   end,
}
