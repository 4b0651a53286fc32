-- Milestone snapshots: a failing module is followed by a rollback to the
-- last milestone, so "after" finds the menu again.
loadtest "boot"
loadtest "breakit"
loadtest "after"
