-- SPDX-License-Identifier: MIT
-- distri.lua - what distri-perl-debian's vigildistri.pm does, for Lua: the
-- consoles added once, a login the first time a console is selected (the
-- Perl side's activate_console), and the same x11_start_program.
local M = { activations = {} }

local function expect(cond, what)
   if not cond then error(what, 3) end
end
M.expect = expect

function M.init()
   if M.ready then return end
   M.ready = true
   add_console("vga-console", "tty-console", { tty = 1 })
   add_console("root-console", "tty-console", { tty = 2 })
   add_console("x11", "tty-console", { tty = 7 })
   add_console("root-virtio-terminal", "virtio-terminal", { persistent = true })
end

-- A root login on a terminal console: a plain prompt, no line editing.
local function serial_login()
   type_string("\n")
   expect(wait_serial("login:", 90), "no login prompt on the terminal")
   type_string("root\n")
   expect(wait_serial("Password:", 30), "no password prompt on the terminal")
   type_password()
   type_string("\n")
   expect(wait_serial("root@vigil-debian:~# ", 60), "no root prompt on the terminal")
   type_string("export TERM=dumb PS1='# '; stty cols 2048; bind 'set enable-bracketed-paste off'; echo vigil-$((1+1))-ready\n")
   expect(wait_serial("vigil-2-ready", { timeout = 10, no_regex = true }), "no plain prompt")
end

local function activate(name)
   M.activations[name] = (M.activations[name] or 0) + 1
   if name == "root-console" then
      assert_screen("debian-tty2-login", 60)
      type_string("root\n")
      assert_screen("debian-password", 30)
      type_password()
      send_key("ret")
      type_string("touch .hushlogin; clear; echo vigil-vga-$((6*7))\n")
      assert_screen("debian-vga-42", 60)
   elseif name == "root-virtio-terminal" then
      serial_login()
   end
end

-- select_console with the distribution's activation.
function M.select(name)
   M.init()
   local _, activated = select_console(name)
   if activated then activate(name) end
end

-- twm has no run dialog: as vigildistri.pm's x11_start_program.
function x11_start_program(program, timeout, opts)
   if type(timeout) == "table" then opts, timeout = timeout, nil end
   opts = opts or {}
   type_string(program .. " -geometry 40x8+420+360 &\n")
   if opts.no_wait or opts.target_match == "none" then return end
   return assert_screen(opts.target_match or program, opts.match_timeout or timeout or 90)
end

return M
