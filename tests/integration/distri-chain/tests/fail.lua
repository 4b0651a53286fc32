-- A parent that fails: its chained children must end skipped.
return {
   run = function()
      error("this parent fails on purpose")
   end,
}
