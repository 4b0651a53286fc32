-- The GRUB menu; its snapshot is where a re-run resumes.
return {
   flags = { milestone = true },
   run = function()
      assert_screen("grub-menu", 60)
   end,
}
