return {
   run = function()
      local t = nil
      t.field = 1
   end,
   post_fail_hook = function()
      record_info("hook", "post_fail_hook ran")
   end,
}
