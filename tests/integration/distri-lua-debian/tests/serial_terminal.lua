-- SPDX-License-Identifier: MIT
-- serial_terminal.lua - the virtio terminal (hvc0): assert_script_run,
-- script_run, script_output, validate_script_output; the module hooks.
use("testapi")
local d = require("distri")
function pre_run_hook(self) self.hooked = "pre" end
function run(self)
   d.expect(self.hooked == "pre", "pre_run_hook did not run")
   d.select("root-virtio-terminal")
   d.expect(is_serial_terminal(), "root-virtio-terminal is no serial terminal")
   assert_script_run("test $(tty) = /dev/hvc0")
   local rc = script_run("ls /nonexistent")
   d.expect(rc and rc ~= 0, "ls of a missing file returned " .. tostring(rc))
   local out = script_output("echo vigil-$((6*7))")
   d.expect(out == "vigil-42", "script_output returned '" .. tostring(out) .. "'")
   validate_script_output("uname -s", "^Linux$")
   validate_script_output("hostname", function(o) return o:match("^vigil%-debian$") end)
   record_info("root-virtio-terminal", "tty /dev/hvc0, script_output '" .. out .. "'")
   d.select("root-console")
   d.expect(not is_serial_terminal(), "root-console is a serial terminal")
end
function post_run_hook(self)
   record_info("post_run_hook", "after run, pre_run_hook said " .. tostring(self.hooked))
end
