-- QEMU is stopped (SIGSTOP, by test_faults.sh) once the menu matched: the
-- check that follows runs out with no new frame, and the job must end
-- incomplete naming the stopped QEMU, not failed (a regression test).
return function()
   assert_screen("grub-menu", 60)
   send_key("down") -- stops GRUB's countdown
   assert_screen("tag-no-needle-has", 30)
end
