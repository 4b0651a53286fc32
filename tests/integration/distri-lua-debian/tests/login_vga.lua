-- SPDX-License-Identifier: MIT
-- login_vga.lua - root logs in on tty1, the console "sut" shows at start.
use("testapi")
local d = require("distri")
function run(self)
   d.init()
   d.expect(current_console() == "sut", "the current console is " .. tostring(current_console()))
   d.select("sut")
   type_string("root\n")
   assert_screen("debian-password", 30)
   type_password()
   send_key("ret")
   assert_screen("debian-vga-prompt", 60)
end
