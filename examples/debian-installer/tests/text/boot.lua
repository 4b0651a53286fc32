-- Boot the text installer's kernel and initrd until d-i asks for the
-- language (20-60 s under KVM-less TCG, more on a loaded machine).
return {
   flags = { fatal = true },
   run = function()
      assert_screen("di-text-language", 400)
   end,
}
