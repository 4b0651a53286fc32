-- Fails while the file RERUN_FLAG names is missing (the test creates it
-- between the first run and the re-run).
return function()
   local f = io.open(get_var("RERUN_FLAG", ""), "r")
   if not f then
      error("deliberate failure: " .. get_var("RERUN_FLAG", "(RERUN_FLAG unset)") .. " does not exist")
   end
   f:close()
   assert_screen("grub-menu", 10)
end
