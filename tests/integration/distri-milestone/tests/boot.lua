return {
   -- NO_MILESTONE=1 is the control: without the snapshot "after" must fail.
   flags = { milestone = get_var("NO_MILESTONE") == nil },
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
