-- The guest draws LATENCY-MARK on tty0 one second after the command is typed,
-- so assert_screen is already waiting; it prints its clock before and after
-- the draw. latency.py takes vigil's "matched" log time minus the draw moment.
return {
   run = function()
      select_console("serial")
      for i = 1, tonumber(get_var("LATENCY_ITERS", "10")) do
         type_string("sleep 1; t0=$(date +%s.%N); printf '\\033[H\\033[J\\033[12;30HLATENCY-MARK' > /dev/tty0; "
                     .. "echo DRAW-$t0-$(date +%s.%N)-\n")
         diag("BENCH-LATENCY-START " .. i)
         assert_screen("latency-mark", 10)
         local out = wait_serial("DRAW-[0-9.]+-[0-9.]+-", 10)
         if not out then error("no draw time on the serial port") end
         diag("BENCH-DRAW " .. i .. " " .. out:match("DRAW%-([0-9.]+%-[0-9.]+)%-[^D]*$"))
         type_string("printf '\\033[H\\033[J' > /dev/tty0; echo CLR-$((20+2))\n")
         wait_serial("CLR-22", 10)
         sleep(0.5)
      end
   end,
}
