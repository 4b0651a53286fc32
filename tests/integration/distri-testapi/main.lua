-- The test API's later functions (docs/testapi.md) against the shell image
-- (examples/shell: busybox on the serial port); test_testapi_more.sh runs
-- it twice: all but "excluded" and "dies", then from SKIPTO=forced.
loadtest "boot"
loadtest "serial"
loadtest "upstream"
loadtest "extra"
loadtest "screen"
loadtest "forced"
loadtest "excluded"
loadtest "dies"
loadtest "after"
