-- The NIC sits on a QEMU hub with nothing else on it: d-i finds the
-- hardware, DHCP times out and it says so. Choose "Configure network
-- manually" (the third entry of the method menu) and give an address with
-- no gateway: netcfg would ping a gateway for up to 50 s on a link with no
-- peer, and without one it goes straight on. No name servers either.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-net-failed", 300)
      send_key("ret")
      assert_screen("di-text-net-method", 60)
      send_key("home")
      send_key("down")
      send_key("down")
      -- the needle's highlighted entry is "Configure network manually"
      assert_screen("di-text-net-method", 30)
      send_key("ret")
      assert_screen("di-text-ip", 60)
      type_string("10.0.2.15")
      assert_screen("di-text-ip-typed", 30)
      send_key("ret")
      -- 255.255.255.0 is proposed: keep it
      assert_screen("di-text-netmask", 60)
      send_key("ret")
      -- 10.0.2.1 is proposed: delete it, leaving no gateway
      assert_screen("di-text-gateway", 60)
      for _ = 1, #"10.0.2.1" + 2 do
         send_key("backspace")
      end
      assert_screen("di-text-gateway-empty", 30)
      send_key("ret")
      assert_screen("di-text-dns", 60)
      send_key("ret")
   end,
}
