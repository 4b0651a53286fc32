-- Log in as root on the serial terminal (systemd's serial-getty@ttyS0): every
-- later module works through this shell.
return {
   flags = { fatal = true },
   run = function()
      select_console("serial")
      -- The boot's login prompt went by long ago: ask getty for a fresh one.
      type_string("\n")
      if not wait_serial("vigil-debian login:", { timeout = 60, no_regex = true }) then
         error("no login prompt on the serial terminal")
      end
      type_string("root\n")
      if not wait_serial("Password:", { timeout = 30, no_regex = true }) then
         error("no password prompt on the serial terminal")
      end
      type_password()
      type_string("\n")
      if not wait_serial("root@vigil-debian:~# ", { timeout = 60, no_regex = true }) then
         error("no root prompt on the serial terminal")
      end
      -- Plain output for the checks below: no bracketed-paste escapes.
      assert_script_run("bind 'set enable-bracketed-paste off'")
   end,
}
