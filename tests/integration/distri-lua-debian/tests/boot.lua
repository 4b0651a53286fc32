-- SPDX-License-Identifier: MIT
-- boot.lua - the kernel boots until getty asks for a login on tty1.
use("testapi")
function run(self)
   assert_screen("debian-login", 180)
end
function test_flags() return { fatal = 1 } end
