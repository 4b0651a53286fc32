-- The console model from Lua (runner/core/console.c, docs/testapi.md):
-- add_console, select_console's activation, console objects, reset_consoles,
-- current_console and an unsupported class, on the shell image
-- (examples/shell); test_testapi_more.sh runs it.
loadtest "boot"
loadtest "consoles"
