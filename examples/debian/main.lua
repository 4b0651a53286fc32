-- Debian 12 built by scripts/build-debian-image: systemd, a VGA and a serial
-- login, commands, apt from a local repository on a second disk, X with twm
-- and an xterm driven by keyboard and mouse, and a clean power-off.
loadtest "boot"
loadtest "login_vga"
loadtest "login_serial"
loadtest "commands"
loadtest "packages"
loadtest "x11"
loadtest "shutdown"
