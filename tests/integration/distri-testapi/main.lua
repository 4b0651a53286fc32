-- The test API's later functions (docs/testapi.md) against the shell image
-- (examples/shell: busybox on the serial port); test_testapi_more.sh.
loadtest "boot"
loadtest "serial"
loadtest "screen"
loadtest "forced"
