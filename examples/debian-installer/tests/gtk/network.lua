-- DHCP fails on the NIC's empty QEMU hub; click "Do not configure the
-- network at this time" and Continue.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-gtk-net-failed", 300)
      assert_and_click("di-gtk-continue")
      assert_and_click("di-gtk-net-method", 60)
      assert_screen("di-gtk-net-skip", 30)
      assert_and_click("di-gtk-continue")
   end,
}
