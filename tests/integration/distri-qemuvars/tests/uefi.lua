-- OVMF reaches its UEFI shell; a non-volatile shell variable goes into the
-- run's UEFI variables (the shell mirrors its console on the serial port).
-- The variable is read back with a short echo, not the whole `set` listing:
-- OVMF drops serial output when QEMU's UART stays full on a loaded host.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("uefi-shell", 60)
      local mark = get_var("MARK", "x")
      type_string("set VIGILMARK " .. mark .. "\n")
      type_string("echo mark=%VIGILMARK%=\n")
      if not wait_serial("mark=" .. mark .. "=", 60) then
         error("the shell did not echo VIGILMARK")
      end
   end,
}
