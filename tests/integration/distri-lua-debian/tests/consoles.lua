-- SPDX-License-Identifier: MIT
-- consoles.lua - console objects, reset_consoles (a persistent console
-- stays active), current_console, freeze_vm/resume_vm.
use("testapi")
local d = require("distri")
function run(self)
   local key = console("root-console"):console_key()
   d.expect(key == "ctrl-alt-f2", "console_key is " .. tostring(key))
   reset_consoles()
   d.select("vga-console")
   d.select("root-virtio-terminal")
   d.expect(d.activations["vga-console"] == 2, "vga-console activated " .. tostring(d.activations["vga-console"]) .. " times")
   d.expect(d.activations["root-virtio-terminal"] == 1, "root-virtio-terminal activated again")
   d.expect(current_console() == "root-virtio-terminal", "current_console is " .. tostring(current_console()))
   freeze_vm()
   resume_vm()
   assert_script_run("true")
end
