-- Power off from inside; the disk was synced before.
return {
   run = function()
      select_console("serial")
      type_string("poweroff -f\n")
      assert_shutdown(60)
   end,
}
