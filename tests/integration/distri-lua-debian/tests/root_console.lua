-- SPDX-License-Identifier: MIT
-- root_console.lua - tty2 with a login the first time, tty1 again, tty2
-- again without a second login.
use("testapi")
local d = require("distri")
function run(self)
   d.select("root-console")
   d.select("vga-console")
   assert_screen("debian-vga-prompt", 30)
   d.select("root-console")
   assert_screen("debian-vga-42", 30)
   d.expect(d.activations["root-console"] == 1, "root-console activated " .. tostring(d.activations["root-console"]) .. " times")
   hold_key("shift")
   release_key("shift")
end
