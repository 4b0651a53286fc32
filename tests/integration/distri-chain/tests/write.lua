-- Put the marker at the start of the raw disk and flush it.
return {
   run = function()
      local marker = get_var("MARKER")
      assert_script_run("echo " .. marker .. " > /dev/sda && sync")
      local back = script_output("head -c " .. #marker .. " /dev/sda")
      if back ~= marker then
         error("read back '" .. back .. "' right after writing '" .. marker .. "'")
      end
   end,
}
