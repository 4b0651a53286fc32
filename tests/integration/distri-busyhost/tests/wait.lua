-- The busybox shell on the serial port, then a guest that keeps its CPU
-- busy, then a 10 s wait for text that never comes: on a host where QEMU
-- shares its CPU with a busy loop, the wait takes longer than 10 s of wall
-- time (time QEMU waited for the CPU does not count).
return {
   flags = { fatal = true },
   run = function()
      select_console("serial")
      if not wait_serial("VIGIL-SHELL-READY", 600) then
         error("the initramfs did not report ready on the serial port")
      end
      type_string("\n")
      if not wait_serial("vigil-shell# ", { timeout = 120, no_regex = true }) then
         error("no shell prompt on the serial port")
      end
      type_string("while :; do :; done &\n")
      if not wait_serial("vigil-shell# ", { timeout = 120, no_regex = true }) then
         error("no shell prompt after starting the guest's busy loop")
      end
      record_info("busy", "the guest's busy loop runs")
      if wait_serial("NEVER-PRINTED-MARK", 10) then
         error("found text nobody printed")
      end
   end,
}
