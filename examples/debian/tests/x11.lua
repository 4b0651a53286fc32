-- X on tty7 (xinit with the image's /root/.xinitrc: twm and an xterm), then
-- the VGA screen: twm gives the keyboard to the window under the pointer,
-- which starts in the middle of the screen, outside the xterm. Move the
-- pointer into the xterm and click, type into it, check the output, then
-- iconify the window with its title bar button and restore it from its icon.
return {
   run = function()
      select_console("serial")
      assert_script_run("setsid -f xinit -- :0 vt7 > /tmp/xinit.log 2>&1 < /dev/null")
      select_console("vga")
      assert_screen("xterm-ready", 120)
      -- Into the xterm's text area. The pointer stays there (assert_and_click
      -- would move it back), so the xterm keeps the keyboard.
      mouse_set(200, 200)
      mouse_click()
      assert_screen("xterm-focused", 30)
      type_string("echo vigil-xterm-$((6*7))\n")
      assert_screen("xterm-echo-42", 60)
      -- assert_and_click puts the pointer back at 200,200 after each click:
      -- on the empty root window after iconifying, on the xterm again after
      -- restoring it.
      assert_and_click("xterm-focused")
      assert_and_click("xterm-icon", { timeout = 30 })
      assert_screen("xterm-echo-42", 30)
      assert_screen("xterm-focused", 30)
   end,
   post_fail_hook = function()
      select_console("serial")
      upload_logs("/tmp/xinit.log", { failok = true })
      upload_logs("/var/log/Xorg.0.log", { failok = true })
   end,
}
