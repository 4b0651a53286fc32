-- Back to the main menu, "Execute a shell" (one above the last entry),
-- and commands in busybox ash whose output comes back over the serial
-- port (script_output writes its markers to /dev/$SERIALDEV).

-- cmd's output must be want; what names it in the error.
local function expect(cmd, want, what)
   local got = script_output(cmd, 60)
   if got ~= want then
      error(what .. " is '" .. got .. "', not '" .. want .. "'")
   end
end

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
      expect("hostname", "vigil-di", "the installer's hostname")
      expect("debconf-get mirror/http/hostname", "deb.debian.org", "debconf's mirror")
      -- The manual configuration: the address on the NIC and the domain
      -- as netcfg's search domain.
      expect("ip -4 -o addr show scope global | awk '{print $4}'", "10.0.2.15/24",
             "the installer's global IPv4 address")
      expect("debconf-get netcfg/get_domain", "example.org", "debconf's domain")
      expect("grep '^search' /etc/resolv.conf", "search example.org", "/etc/resolv.conf's search line")
   end,
}
