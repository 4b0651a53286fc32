-- The NIC sits on a QEMU hub with nothing else on it: d-i finds the
-- hardware, DHCP times out and it says so. Choose "Do not configure the
-- network at this time", the last entry of the method menu.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-net-failed", 300)
      send_key("ret")
      assert_screen("di-text-net-method", 60)
      send_key("end")
      assert_screen("di-text-net-skip", 30)
      send_key("ret")
   end,
}
