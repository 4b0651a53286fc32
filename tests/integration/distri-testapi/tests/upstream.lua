-- os-autoinst's upstream Lua module form: use("testapi"), a global run,
-- test_flags and post_fail_hook, a helper from lib/ with require.
use("testapi")
use("testapi", { "assert_script_run", "$serialdev" })
local helper = require("uphelper")

function run(self)
   assert(helper.answer() == 42, "lib/uphelper.lua")
   assert(type(self) == "table", "run gets the module table")
   -- Perl's flat named arguments: a "timeout", N pair is a timeout
   assert(check_screen("shell-banner", "timeout", 30), "check_screen with 'timeout', 30")
   local ok, err = pcall(use, "lockapi")
   assert(not ok and tostring(err):find("no Perl modules"), "use of a Perl module: " .. tostring(err))
   select_console("serial")
   assert_script_run("echo upstream-form > /dev/" .. serialdev)
   set_var("UPSTREAM_RAN", "1")
end

function test_flags()
   return { fatal = 1 }
end
