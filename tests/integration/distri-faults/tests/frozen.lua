-- QEMU is stopped (SIGSTOP, by test_faults.sh) once the menu matched: the
-- wait that follows (FROZEN_WAIT: assert_screen, wait_serial or
-- wait_still_screen) ends with no progress from the VM, and the job must
-- end incomplete naming the stopped QEMU and the wait, not failed (and,
-- wait_still_screen, not passed: a stopped screen is still). A
-- regression test. FROZEN_FLAG appears once QEMU is stopped: only then
-- does the wait start, however slow the machine.
return function()
   assert_screen("grub-menu", 60)
   send_key("down") -- stops GRUB's countdown
   local flag = get_var("FROZEN_FLAG")
   while true do
      local f = io.open(flag)
      if f then
         f:close()
         break
      end
      sleep(0.1)
   end
   local wait = get_var("FROZEN_WAIT", "assert_screen")
   if wait == "wait_serial" then
      if not wait_serial("output GRUB never writes", 5) then
         error("wait_serial ran out")
      end
   elseif wait == "wait_still_screen" then
      if not wait_still_screen(2, 10) then
         error("wait_still_screen ran out")
      end
   else
      assert_screen("tag-no-needle-has", 5)
   end
end
