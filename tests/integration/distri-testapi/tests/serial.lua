-- Serial-terminal functions: each check raises with what it saw.
local function expect(cond, what)
   if not cond then error(what, 2) end
end
return {
   pre_run_hook = function(self)
      set_var("PRE_HOOK", type(self.run))
   end,
   post_run_hook = function()
      set_var("POST_HOOK", get_var("PRE_HOOK"))
   end,
   run = function(self)
      expect(get_var("PRE_HOOK") == "function", "pre_run_hook did not run first with self")
      select_console("serial")
      -- exported variables
      expect(serialdev == "ttyS0", "serialdev is " .. tostring(serialdev))
      expect(type(cmd) == "table", "cmd is not a table")
      expect(password == "sekrit", "password is " .. tostring(password))
      -- variable arrays
      local a = get_var_array("LIST")
      expect(#a == 3 and a[1] == "a" and a[2] == "b" and a[3] == "c", "get_var_array LIST: " .. table.concat(a, "|"))
      local d = get_var_array("UNSET_LIST", "x;y")
      expect(#d == 2 and d[2] == "y", "get_var_array default: " .. table.concat(d, "|"))
      expect(check_var_array("LIST", "b") and not check_var_array("LIST", "d"), "check_var_array")
      -- validate_script_output: a regex, a function, a failure
      validate_script_output("echo hello   world", "hello\\s+world")
      validate_script_output("echo 42", function(out) return tonumber(out) == 42 end, { title = "answer" })
      local ok, err = pcall(validate_script_output, "echo nope", "^yes$", { fail_message = "not yes" })
      expect(not ok and tostring(err):find("not yes"), "validate_script_output did not fail: " .. tostring(err))
      -- wait_serial with a list of patterns (the command's echo shows no result)
      type_string("echo ZZ-$((1+1))\n")
      local out = wait_serial({ "ZZ-1\\b", "ZZ-2\\b" }, { timeout = 60, record_output = true })
      expect(out and out:find("ZZ%-2"), "wait_serial list: " .. tostring(out))
      local seen = wait_serial("NEVER-SEEN-XYZ", { timeout = 1, expect_not_found = true, quiet = true })
      expect(type(seen) == "string", "expect_not_found returns the text seen")
      -- script_run: options, nil on time-out, die_on_timeout
      expect(script_run("true", { output = "a comment", quiet = true }) == 0, "script_run true")
      expect(script_run("sleep 30", { timeout = 1, die_on_timeout = 0 }) == nil, "script_run time-out is nil")
      type_string("\003") -- ctrl-c the sleep
      local died = pcall(script_run, "sleep 30", { timeout = 1, die_on_timeout = 1 })
      expect(not died, "die_on_timeout = 1 raised no error")
      type_string("\003")
      -- background_script_run: a PID the shell knows
      local pid = background_script_run("sleep 1")
      expect(math.type(pid) == "integer" and pid > 1, "background_script_run pid " .. tostring(pid))
      assert_script_run("wait " .. pid)
      -- root
      become_root()
      assert_script_run("test $(id -u) -eq 0")
      -- files
      expect(get_test_data("hello.txt") == "hello data\n", "get_test_data")
      expect(get_test_data("missing.txt") == nil, "get_test_data of a missing file")
      local p = save_tmp_file("sub/tmp.txt", "tmp content")
      local f = io.open(p)
      expect(f and f:read("a") == "tmp content", "save_tmp_file wrote " .. tostring(p))
      if f then f:close() end
      -- VM control
      save_memory_dump({ filename = "mem" })
      assert_script_run("true") -- the VM runs on
      freeze_vm()
      resume_vm()
      assert_script_run("true")
      local ejected, why = pcall(eject_cd)
      expect(not ejected and tostring(why):find("eject_cd failed"), "eject_cd without a CD: " .. tostring(why))
   end,
}
