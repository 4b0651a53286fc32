-- Re-run from a milestone (tests/integration/test_rerun.sh): boot is a
-- milestone, gate fails until the file RERUN_FLAG names exists, after
-- checks the menu again.
loadtest "boot"
loadtest "gate"
loadtest "after"
