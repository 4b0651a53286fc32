-- The disk this job booted with must carry the parent's marker.
return {
   run = function()
      local marker = get_var("MARKER")
      local found = script_output("head -c " .. #marker .. " /dev/sda | tr -c 'a-z0-9-' '.'")
      if found ~= marker then
         error("disk 1 starts with '" .. found .. "', expected the parent's marker '" .. marker .. "'")
      end
      record_info("marker", "disk 1 carries '" .. found .. "' written by the parent job")
   end,
}
