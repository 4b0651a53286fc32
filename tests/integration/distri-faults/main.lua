-- Faults the runner must survive; FAULT selects the schedule.
local fault = get_var("FAULT", "modules")
if fault == "modules" then
   loadtest "luaerror"
   loadtest "busy"
   loadtest "ok"
elseif fault == "still" then
   loadtest "still"
elseif fault == "frozen" then
   loadtest "frozen"
else
   loadtest "never"
end
