-- Only passes when the VM was rolled back to the menu.
return function()
   assert_screen("grub-menu", 10)
end
