-- The Debian installer's kernel with vigil's busybox initramfs
-- (scripts/build-initramfs): a root shell on the serial port.
loadtest "boot"
loadtest "commands"
loadtest "shutdown"
