-- The UEFI variables of an earlier run (UEFI_PFLASH_VARS): the shell
-- variable it set is still there (echoed, as tests/uefi.lua does).
return {
   flags = { fatal = true },
   run = function()
      assert_screen("uefi-shell", 60)
      type_string("echo mark=%VIGILMARK%=\n")
      if not wait_serial("mark=" .. get_var("MARK", "x") .. "=", 60) then
         error("VIGILMARK is not among the shell's variables")
      end
   end,
}
