-- A helper library of the upstream-form module (tests/upstream.lua): found
-- by require through the distribution's lib/ directory.
local M = {}
function M.answer() return 42 end
return M
