-- A chained pair sharing one disk (tests/integration/test_chained.sh): the
-- parent (ROLE=write) puts MARKER on its blank disk 1, which the worker
-- publishes (PUBLISH_HDD_1); the child (ROLE=read) boots with that disk as
-- HDD_1 and must find MARKER on it. ROLE=fail is a parent that fails at once.
local role = get_var("ROLE", "read")
if role == "fail" then
   loadtest "fail"
   return
end
loadtest "boot"
if role == "write" then
   loadtest "write"
else
   loadtest "read"
end
loadtest "shutdown"
