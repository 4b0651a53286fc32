-- GRUB's menu, then its command line. On the way, the exported variable
-- vars (os-autoinst's %vars): the job's variables, live.
use("testapi", { "%vars", "$serialdev" })
return {
   flags = { fatal = true },
   run = function()
      assert(vars.DISTRI == "sound", "vars.DISTRI: " .. tostring(vars.DISTRI))
      assert(vars.NO_SUCH_VAR == nil)
      vars.FROM_LUA = 42
      assert(get_var("FROM_LUA") == "42", "vars.X = v is set_var")
      set_var("FROM_SET_VAR", "yes")
      assert(vars.FROM_SET_VAR == "yes", "set_var shows in vars")
      vars.FROM_SET_VAR = nil
      assert(get_var("FROM_SET_VAR") == nil, "vars.X = nil deletes")
      local keys = {}
      for k, v in pairs(vars) do
         assert(type(v) == "string")
         keys[#keys + 1] = k
      end
      assert(#keys > 3 and keys[1] < keys[2], "pairs(vars): every variable, sorted")
      set_var("VARS_SEEN", table.concat({ vars.DISTRI, vars.FROM_LUA, tostring(#keys > 3) }, ","))
      assert_screen("grub-menu", 60)
      send_key("c")
      assert_screen("grub-cmdline")
   end,
}
