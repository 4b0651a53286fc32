-- The live view's test distribution (tests/web/test_live.py, bench/live.py):
-- the busybox shell image (examples/shell) whose VGA console shows a new
-- counter every 200 ms for LIVE_SECONDS, while the module records a step
-- each second.
loadtest "boot"
loadtest "ticker"
