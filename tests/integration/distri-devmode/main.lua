-- Developer mode's test distribution (test_devmode.sh): GRUB's command line, then a
-- check no needle carries until the test puts one in place (retry), then a
-- check that stays unmatched (skip). needles/ is filled by the test from
-- examples/grub.
loadtest "boot"
loadtest "fix"
loadtest "give_up"
