-- Boot the rescue ISO until GRUB shows its menu.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
