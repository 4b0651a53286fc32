-- Boot the rescue ISO until GRUB shows its menu.
return {
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
