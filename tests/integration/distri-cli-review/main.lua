-- The command-line review suite's distribution (test_cli_review.sh): GRUB
-- boots; then either a check on a tag no needle carries and a near miss
-- (a plain run), or a check whose needle is made at the terminal
-- (CLI_INTERACTIVE=1, under --interactive).
loadtest "boot"
if get_var("CLI_INTERACTIVE") then
   loadtest "made"
else
   loadtest "unknown"
   loadtest "nearmiss"
end
