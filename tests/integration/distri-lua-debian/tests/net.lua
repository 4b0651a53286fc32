-- SPDX-License-Identifier: MIT
-- net.lua - distri-perl-debian's net.pm in Lua: the command server from the
-- guest over QEMU's user network, on the virtio terminal (data_url,
-- autoinst_url, save_tmp_file, upload_logs, upload_asset, parse_junit_log).
use("testapi")
local d = require("distri")
function run(self)
   d.select("root-virtio-terminal")
   save_tmp_file("x/y.txt", "tmp-content")
   -- in a subshell: the shell's directory stays (x11.lua starts X from it)
   assert_script_run("(cd /tmp && curl -sf -o hello.txt " .. data_url("hello.txt")
      .. " && curl -sf " .. data_url("dir") .. " | cpio -id --quiet"
      .. " && curl -sf " .. autoinst_url("/vars") .. " | grep -q '\"DISTRI\":\"perl-debian\"'"
      .. " && curl -sf " .. autoinst_url("/files/x/y.txt") .. " | grep -qx tmp-content)")
   upload_logs("/tmp/data/sub/b.bin")
   upload_asset("/tmp/data/sub/b.bin")
   upload_asset("/tmp/hello.txt", true)
   assert_script_run([[echo '<testsuites><testsuite package="guest.junit" id="0" failures="0" errors="0" tests="2">]]
      .. [[<testcase name="first" status="success"><system-out>out one</system-out></testcase>]]
      .. [[<testcase name="second" status="success"/></testsuite></testsuites>' > /tmp/junit.xml]])
   parse_junit_log("/tmp/junit.xml")
end
