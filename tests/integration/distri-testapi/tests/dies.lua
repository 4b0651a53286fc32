-- A hard failure: with TESTDEBUG set it ends the job.
return function() error("dies on purpose") end
