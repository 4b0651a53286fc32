-- Guest-host clock offset. busybox's date has no %N, so the guest clock is
-- read with adjtimex, which prints time.tv_sec / time.tv_usec (ns when its
-- status has STA_NANO) straight to the serial port; diag() logs the host time
-- when vigil has read it. The smallest (host - guest) over the samples is the
-- offset plus the shortest one-way delay.
return {
   flags = { fatal = true },
   run = function()
      select_console("serial")
      for _ = 1, tonumber(get_var("LATENCY_CLOCK_SAMPLES", "10")) do
         type_string("adjtimex\n")
         local out = wait_serial("return value: *[0-9]+", 10)
         if not out then error("no adjtimex output on the serial port") end
         local st = out:match("status:%s*(%d+)")
         local s, u = out:match("tv_sec:%s*(%d+).-tv_usec:%s*(%d+)")
         diag(string.format("BENCH-CLOCK %s %s %s", s, u, st))
      end
   end,
}
