-- A message shown for 300 ms and cleared: vigil must see it every time.
return {
   run = function()
      select_console("serial")
      if get_var("FLASH_HOLD") then -- only to make the needle: keep the message
         type_string("printf '\\033[H\\033[J\\033[12;30HFLASH-MESSAGE' > /dev/tty0\n")
         sleep(2)
         check_screen("flash-message", 1) -- a failed check records the screen
         return
      end
      for i = 1, tonumber(get_var("FLASH_ITERS", "5")) do
         type_string("sleep 1; printf '\\033[H\\033[J\\033[12;30HFLASH-MESSAGE' > /dev/tty0; sleep 0.3; "
                     .. "printf '\\033[H\\033[J' > /dev/tty0; echo FL-$((3+4))\n")
         local m = check_screen("flash-message", 5)
         diag("BENCH-FLASH " .. i .. " " .. (m and "caught" or "missed"))
         wait_serial("FL-7", 10)
         sleep(0.5)
      end
   end,
}
