-- Commands on the serial terminal: exit codes, output, a failing command.
return {
   run = function()
      select_console("serial")
      assert_script_run("uname -a")
      assert_script_run("mkdir -p /tmp/work && echo vigil > /tmp/work/file")

      local out = script_output("cat /tmp/work/file; echo second line")
      if out ~= "vigil\nsecond line" then
         error("script_output returned '" .. out .. "'")
      end

      -- A failing command must be judged as failing.
      local rc = script_run("ls /nonexistent")
      if rc == 0 then
         error("ls of a missing file reported success")
      end
      local ok, err = pcall(assert_script_run, "false")
      if ok then
         error("assert_script_run('false') did not fail")
      end
      record_info("expected failure", tostring(err))

      local kernel = script_output("uname -r")
      set_var("GUEST_KERNEL", kernel)
      upload_logs("/proc/cmdline")
   end,
}
