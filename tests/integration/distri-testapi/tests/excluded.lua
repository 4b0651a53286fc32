-- Never scheduled: EXCLUDE_MODULES / INCLUDE_MODULES leave it out.
return function() error("an excluded module ran") end
