-- The UEFI variables of an earlier run (UEFI_PFLASH_VARS): the shell
-- variable it set is still there. (The shell colours the name: escapes
-- lie between it and "=".)
return {
   flags = { fatal = true },
   run = function()
      assert_screen("uefi-shell", 60)
      type_string("set\n")
      if not wait_serial("VIGILMARK[^=\\n]*=[^\\n]*" .. get_var("MARK", "x"), 20) then
         error("VIGILMARK is not among the shell's variables")
      end
   end,
}
