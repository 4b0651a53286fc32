-- The command server from a Lua module (test_cmdsrv.sh): examples/shell's
-- busybox system with user networking (INITRD: the shell initramfs with
-- net-init, e1000 and the curl stand-in appended).
loadtest "net"
