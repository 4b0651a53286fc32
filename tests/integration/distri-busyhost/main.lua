-- test_busy_host.sh: a wait on a host that keeps QEMU waiting for a CPU.
loadtest "wait"
