-- Power the guest off from inside and see QEMU report the shutdown.
return {
   run = function()
      select_console("serial")
      type_string("poweroff -f\n")
      assert_shutdown(60)
   end,
}
