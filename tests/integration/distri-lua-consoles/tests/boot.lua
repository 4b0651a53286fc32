-- Wait for the shell: its banner on the screen, its prompt on the serial port.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("shell-banner", 120)
      select_console("serial")
      if not wait_serial("VIGIL-SHELL-READY", 60) then
         error("the initramfs did not report ready on the serial port")
      end
      -- Wake the shell and wait for its prompt.
      type_string("\n")
      if not wait_serial("vigil-shell# ", { timeout = 30, no_regex = true }) then
         error("no shell prompt on the serial port")
      end
   end,
}
