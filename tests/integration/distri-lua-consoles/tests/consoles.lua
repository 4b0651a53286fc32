-- Consoles declared in Lua as a distribution declares them; the default
-- names (serial, vga) still need no add_console.
local function expect(cond, what)
   if not cond then error(what, 2) end
end

return {
   run = function()
      expect(current_console() == "serial", "boot left the serial console selected")
      local c = add_console("root-console", "tty-console", { tty = 2 })
      expect(c.class == "tty-console" and c:console_key() == "ctrl-alt-f2", "console_key of tty 2")
      local _, act = select_console("root-console")
      expect(act == true, "the first selection activates")
      expect(not is_serial_terminal(), "a tty-console is no serial terminal")
      _, act = select_console("root-console")
      expect(act == false, "the second selection does not activate")
      console("root-console"):set_tty(3)
      expect(console("root-console"):console_key() == "ctrl-alt-f3", "set_tty")
      local ok, err = pcall(function() return console("root-console"):kill_ssh() end)
      expect(not ok and err:find("vigil does not support the method 'kill_ssh'", 1, true), "an unknown method: " .. tostring(err))
      record_info("method refused", err)
      add_console("log", "serial-terminal", { persistent = true })
      _, act = select_console("log")
      expect(act and is_serial_terminal(), "serial-terminal")
      reset_consoles()
      _, act = select_console("log")
      expect(act == false, "a persistent console stays active")
      _, act = select_console("root-console")
      expect(act == true, "reset_consoles: activated again")
      add_console("x3270", "s3270")
      ok, err = pcall(select_console, "x3270")
      expect(not ok and err:find("console 'x3270' has class 's3270', which vigil does not support", 1, true),
             "an unsupported class: " .. tostring(err))
      record_info("class refused", err)
      expect(current_console() == "root-console", "a refused selection changes nothing")
      select_console("serial")
      type_string("echo vigil-$((6*7))\n")
      expect(wait_serial("vigil-42", 30), "the serial terminal after all that")
   end,
}
