-- Power the guest off through systemd; QEMU (-no-shutdown) reports the
-- shutdown on QMP and vigil ends it.
return {
   run = function()
      select_console("serial")
      type_string("poweroff\n")
      assert_shutdown(120)
   end,
}
