-- SPDX-License-Identifier: MIT
-- python_shell.lua - the steps of distri-perl-debian's Python module.
use("testapi")
local d = require("distri")
function run(self)
   d.select("root-virtio-terminal")
   local out = script_output("echo python-$((6*7))")
   d.expect(out == "python-42", "script_output returned '" .. tostring(out) .. "'")
   local host = script_output("cat /etc/hostname")
   d.expect(host == "vigil-debian", "hostname '" .. tostring(host) .. "'")
   assert_script_run("test -d /root")
   record_info("python", "script_output " .. out)
end
function test_flags() return { fatal = 1 } end
