-- Runs only when nothing stopped the job before it.
return function() set_var("AFTER_RAN", "1") end
