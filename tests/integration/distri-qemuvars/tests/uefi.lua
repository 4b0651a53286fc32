-- OVMF reaches its UEFI shell; a non-volatile shell variable goes into the
-- run's UEFI variables (the shell mirrors its console on the serial port).
return {
   flags = { fatal = true },
   run = function()
      assert_screen("uefi-shell", 60)
      local mark = get_var("MARK", "x")
      type_string("set VIGILMARK " .. mark .. "\n")
      type_string("set\n")
      if not wait_serial("VIGILMARK[^=\\n]*=[^\\n]*" .. mark, 20) then
         error("the shell did not list VIGILMARK")
      end
   end,
}
