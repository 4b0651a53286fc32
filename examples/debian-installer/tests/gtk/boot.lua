-- Boot the graphical installer's kernel and initrd until d-i asks for the
-- language. The pointer goes to the corner so that no needle sees it.
return {
   flags = { fatal = true },
   run = function()
      mouse_hide()
      assert_screen("di-gtk-language", 400)
   end,
}
