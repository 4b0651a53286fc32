-- The busybox shell on the serial port, then the USB disk driver modules
-- (packed into the initramfs by test_chained.sh) so disk 1 is /dev/sda.
return {
   flags = { fatal = true },
   run = function()
      save_screenshot() -- uploaded while the job runs (the server-restart test)
      select_console("serial")
      if not wait_serial("VIGIL-SHELL-READY", 120) then
         error("the initramfs did not report ready on the serial port")
      end
      type_string("\n")
      if not wait_serial("vigil-shell# ", { timeout = 30, no_regex = true }) then
         error("no shell prompt on the serial port")
      end
      -- No modules.dep: load them in passes until each found what it needs.
      assert_script_run("for p in 1 2 3 4 5; do for m in $(find /lib/modules -name '*.ko'); do"
         .. " insmod $m 2>/dev/null; done; done; true", 120)
      assert_script_run("for i in $(seq 30); do test -b /dev/sda && break; sleep 1; done; test -b /dev/sda", 60)
      -- HOLD=N keeps the job running N more seconds (the server-restart test).
      local hold = tonumber(get_var("HOLD", "0")) or 0
      if hold > 0 then
         assert_script_run("sleep " .. hold, hold + 60)
      end
   end,
}
