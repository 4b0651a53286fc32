-- From the menu to GRUB's command line, run a command, check its output,
-- and go back to the menu with esc.
return {
   run = function()
      send_key("c")
      assert_screen("grub-cmdline")
      type_string("echo hello vigil\n")
      local m = assert_screen("grub-echo")
      -- The needle's ocr area reads the command's output.
      if not (m.ocr and m.ocr[1] and m.ocr[1]:find("hello vigil", 1, true)) then
         record_soft_failure("ocr did not read 'hello vigil': " .. tostring(m.ocr and m.ocr[1]))
      end
      send_key("esc")
      assert_screen("grub-menu")
   end,
}
