-- Detection latency benchmark (bench/latency.py): the busybox shell image
-- draws text on its VGA console (tty0) from the serial shell and prints its
-- clock to the serial port; vigil's log times say when the match was made.
loadtest "boot"
loadtest "clock"
loadtest "latency"
loadtest "flash"
