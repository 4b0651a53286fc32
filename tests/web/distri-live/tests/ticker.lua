-- The guest draws "TICK n" on its VGA console every 200 ms for LIVE_SECONDS
-- (printf from the serial shell to /dev/tty0), so the screen is known to
-- change five times a second; a text step each second moves the step count.
return {
   run = function()
      select_console("serial")
      local secs = tonumber(get_var("LIVE_SECONDS", "20"))
      type_string("i=0; while [ $i -lt " .. (secs * 5) .. " ]; do "
                  .. "printf '\\033[H\\033[J\\033[12;30HTICK %d' $i > /dev/tty0; i=$((i+1)); sleep 0.2; done; "
                  .. "echo TICK-$((6*7))\n")
      for s = 1, secs do
         sleep(1)
         record_info("tick", "second " .. s)
      end
      if not wait_serial("TICK-42", 120) then
         error("the guest's ticker did not finish")
      end
   end,
}
