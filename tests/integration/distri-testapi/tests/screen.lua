-- Screen, keyboard and mouse functions on the VGA console.
return {
   run = function()
      select_console("sut")
      assert_screen("shell-banner", 30)
      click_lastmatch({ mousehide = true })
      assert_and_dclick("shell-banner")
      mouse_set(100, 100)
      mouse_tclick()
      mouse_drag({ startx = 10, starty = 10, endx = 200, endy = 150 })
      mouse_drag({ startpoint = "shell-banner", endx = 300, endy = 300, button = "right" })
      hold_key("shift")
      release_key("shift")
      -- the serial shell writes to the VGA console: the screen changes
      assert_screen_change(function()
         select_console("serial")
         assert_script_run("echo VIGIL-CHANGE > /dev/tty0")
      end, 30)
      -- a reader on tty0 makes the kernel echo what is typed on the VGA console
      background_script_run("cat /dev/tty0 > /dev/null")
      select_console("sut")
      assert_screen_change(function()
         type_string("typed in pieces", { wait_screen_change = 4, max_interval = 200 })
      end, 30)
   end,
}
