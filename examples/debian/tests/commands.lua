-- Commands on the serial terminal: exit codes, output, a failing command.
return {
   run = function()
      select_console("serial")
      assert_script_run("uname -a")
      local state = script_output("systemctl is-system-running --wait",
                                  { timeout = 120, proceed_on_failure = true })
      if state ~= "running" then
         error("systemd says '" .. state .. "': " ..
               script_output("systemctl --failed --no-legend --no-pager", { proceed_on_failure = true }))
      end
      local release = script_output(". /etc/os-release; echo $ID $VERSION_ID")
      if release ~= "debian 12" then
         error("/etc/os-release says '" .. release .. "'")
      end
      local out = script_output("echo vigil > /tmp/file; cat /tmp/file; echo second line")
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
      upload_logs("/proc/cmdline")
   end,
}
