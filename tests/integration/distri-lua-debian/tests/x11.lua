-- SPDX-License-Identifier: MIT
-- x11.lua - X on tty7 started from the virtio terminal, the pointer into
-- the xterm, typing, iconify and restore, a second xterm through
-- x11_start_program (the distribution's, lib/distri.lua).
use("testapi")
local d = require("distri")
function run(self)
   d.select("root-virtio-terminal")
   assert_script_run("setsid -f xinit -- :0 vt7 > /tmp/xinit.log 2>&1 < /dev/null")
   d.select("x11")
   assert_screen("xterm-ready", 120)
   mouse_set(200, 200)
   mouse_click()
   assert_screen("xterm-focused", 30)
   type_string("echo vigil-xterm-$((6*7))\n")
   assert_screen("xterm-echo-42", 60)
   assert_and_click("xterm-focused")
   assert_and_click("xterm-icon", { timeout = 30 })
   assert_screen("xterm-echo-42", 30)
   assert_screen("xterm-focused", 30)
   x11_start_program("xterm")
   mouse_hide()
end
function post_fail_hook(self)
   d.select("root-virtio-terminal")
   script_run("cat /tmp/xinit.log")
end
