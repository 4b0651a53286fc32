-- A known failure turned into a soft failure by its post_fail_hook.
return {
   flags = { no_rollback = true, always_rollback = true },
   run = function()
      error("known bug")
   end,
   post_fail_hook = function()
      force_soft_failure("bsc#1: known")
   end,
}
