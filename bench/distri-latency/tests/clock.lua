-- Guest-host clock offset: the guest prints its clock on the serial port and
-- diag() logs the host time when vigil has read it. The smallest difference
-- (host - guest) bounds the offset plus the one-way serial delay.
return {
   flags = { fatal = true },
   run = function()
      select_console("serial")
      for _ = 1, tonumber(get_var("LATENCY_CLOCK_SAMPLES", "10")) do
         type_string("echo CLK-$(date +%s.%N)-\n")
         local out = wait_serial("CLK-[0-9]+\\.[0-9]+-", 10)
         if not out then error("no clock sample on the serial port") end
         diag("BENCH-CLOCK " .. out:match("CLK%-([0-9.]+)%-[^C]*$"))
      end
   end,
}
