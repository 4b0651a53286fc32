-- Back to the main menu, "Execute a shell" (one above the last entry),
-- and commands in busybox ash whose output comes back over the serial
-- port (script_output writes its markers to /dev/$SERIALDEV).
return {
   flags = { fatal = true },
   run = function()
      send_key("esc")
      assert_screen("di-text-main-menu", 60)
      send_key("end")
      send_key("up")
      assert_screen("di-text-menu-shell", 30)
      send_key("ret")
      assert_screen("di-text-shell-note", 60)
      send_key("ret")
      assert_screen("di-text-shell", 60)
      local hostname = script_output("hostname", 60)
      if hostname ~= "vigil-di" then
         error("hostname in the installer is '" .. hostname .. "', not vigil-di")
      end
      local mirror = script_output("debconf-get mirror/http/hostname", 60)
      if mirror ~= "deb.debian.org" then
         error("debconf has mirror '" .. mirror .. "', not deb.debian.org")
      end
      -- The manual configuration: the address on the NIC and the domain
      -- as netcfg's search domain.
      local addrs = script_output("ip -4 -o addr show scope global | awk '{print $4}'", 60)
      if addrs ~= "10.0.2.15/24" then
         error("the installer's global IPv4 addresses are '" .. addrs .. "', not 10.0.2.15/24")
      end
      local domain = script_output("debconf-get netcfg/get_domain", 60)
      if domain ~= "example.org" then
         error("debconf has domain '" .. domain .. "', not example.org")
      end
      local search = script_output("grep '^search' /etc/resolv.conf", 60)
      if search ~= "search example.org" then
         error("/etc/resolv.conf has '" .. search .. "', not 'search example.org'")
      end
   end,
}
