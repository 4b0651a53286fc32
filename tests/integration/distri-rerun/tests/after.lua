-- The menu is still there.
return function()
   assert_screen("grub-menu", 10)
end
