-- SPDX-License-Identifier: MIT
-- shutdown.lua - power off from the virtio terminal.
use("testapi")
local d = require("distri")
function run(self)
   d.select("root-virtio-terminal")
   type_string("poweroff\n")
   assert_shutdown(120)
end
