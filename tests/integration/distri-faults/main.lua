-- Faults the runner must survive; FAULT selects the schedule.
local fault = get_var("FAULT", "modules")
if fault == "modules" then
   loadtest "luaerror"
   loadtest "busy"
   loadtest "ok"
else
   loadtest "never"
end
