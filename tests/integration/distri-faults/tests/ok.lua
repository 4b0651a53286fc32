return {
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
