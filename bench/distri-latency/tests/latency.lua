-- The guest draws LATENCY-MARK on tty0 one second after the command is typed,
-- so assert_screen is already waiting; it reads its clock (adjtimex, into
-- files, printed afterwards) just before and just after the draw.
-- latency.py takes vigil's "matched" log time minus the draw moment.
local function clocks(out)
   local t = {}
   for s, u in out:gmatch("tv_sec:%s*(%d+).-tv_usec:%s*(%d+)") do
      t[#t + 1] = s .. " " .. u
   end
   return table.concat(t, " ")
end

return {
   run = function()
      select_console("serial")
      for i = 1, tonumber(get_var("LATENCY_ITERS", "10")) do
         type_string("sleep 1; adjtimex > /tmp/t0; printf '\\033[H\\033[J\\033[12;30HLATENCY-MARK' > /dev/tty0; "
                     .. "adjtimex > /tmp/t1; cat /tmp/t0 /tmp/t1; echo DRAW-$((5+5))\n")
         diag("BENCH-LATENCY-START " .. i)
         assert_screen("latency-mark", 10)
         local out = wait_serial("DRAW-10", 10)
         if not out then error("no draw time on the serial port") end
         diag("BENCH-DRAW " .. i .. " " .. clocks(out) .. " " .. (out:match("status:%s*(%d+)") or "0"))
         type_string("printf '\\033[H\\033[J' > /dev/tty0; echo CLR-$((20+2))\n")
         wait_serial("CLR-22", 10)
         sleep(0.5)
      end
   end,
}
