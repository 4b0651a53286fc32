-- DHCP fails on the NIC's empty QEMU hub; click "Configure network
-- manually" and Continue, then fill the fields by keyboard and click
-- Continue after each: an address, the proposed netmask, no gateway
-- (netcfg would ping a gateway for up to 50 s on a link with no peer)
-- and no name servers.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-gtk-net-failed", 300)
      assert_and_click("di-gtk-continue")
      assert_and_click("di-gtk-net-method", 60)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-ip", 60)
      type_string("10.0.2.15")
      assert_screen("di-gtk-ip-typed", 30)
      assert_and_click("di-gtk-continue")
      -- 255.255.255.0 is proposed (selected): keep it
      assert_screen("di-gtk-netmask", 60)
      assert_and_click("di-gtk-continue")
      -- 10.0.2.1 is proposed (selected): delete it
      assert_screen("di-gtk-gateway", 60)
      send_key("backspace")
      assert_screen("di-gtk-gateway-empty", 30)
      assert_and_click("di-gtk-continue")
      assert_screen("di-gtk-dns", 60)
      assert_and_click("di-gtk-continue")
   end,
}
