-- parse_junit_log / parse_extra_log (openQA's parser: extra test results),
-- save_storage_drives, a recording of a guest that plays nothing (switch_network is
-- tests/integration/distri-cmdsrv's: it needs the user network, and with it
-- upload_logs goes over HTTP, which this busybox guest cannot).
local function expect(cond, what)
   if not cond then error(what, 2) end
end
return {
   run = function()
      select_console("serial")
      assert_script_run([[echo '<?xml version="1.0"?><testsuites><testsuite package="vigil.junit" id="0" failures="0" errors="0" tests="2"><testcase name="first" status="success"><system-out>out one</system-out></testcase><testcase name="second" status="success"/></testsuite></testsuites>' > /tmp/junit.xml]])
      parse_junit_log("/tmp/junit.xml")
      assert_script_run([[printf 't/x.tap ..\n1..2\nok 1 - tap one\nok 2 - tap two\n' > /tmp/x.tap]])
      parse_extra_log("TAP", "/tmp/x.tap")
      local ok, err = pcall(parse_extra_log, "NoSuchFormat", "/tmp/x.tap")
      expect(not ok and tostring(err):find("NoSuchFormat"), "an unknown format: " .. tostring(err))
      save_storage_drives("drives")
      assert_script_run("true") -- the VM runs on
      -- silence: a white spectrogram, no sound needle found (test_sound.sh plays)
      start_audiocapture()
      expect(check_recorded_sound("no-such-sound") == nil, "check_recorded_sound of silence")
      ok, err = pcall(ensure_installed, "foo")
      expect(not ok and tostring(err):find("implement 'ensure_installed'"), "ensure_installed without DISTRI: " .. tostring(err))
   end,
}
