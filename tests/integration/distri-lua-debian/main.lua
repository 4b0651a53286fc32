-- SPDX-License-Identifier: MIT
-- main.lua - the Lua twin of distri-perl-debian: the same module names, the
-- same steps in the same order, written in os-autoinst's upstream Lua
-- module form. isotovideo 4.6 runs no Lua, so test_perl_debian.sh compares
-- this run with isotovideo's run of the Perl distribution (module results
-- and every needle match: compare_results.py --screens-only). Its needles
-- are the Perl distribution's (NEEDLES_DIR in the shared vars.json).
loadtest "boot"
loadtest "login_vga"
loadtest "root_console"
loadtest "serial_terminal"
loadtest "python_shell"
loadtest "consoles"
loadtest "net"
loadtest "x11"
loadtest "shutdown"
