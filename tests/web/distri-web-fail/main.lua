-- The web UI's failing job: GRUB boots, then a check that nearly matches
-- (a needle whose pixels are slightly off) fails and needs review.
loadtest "boot"
loadtest "nearmiss"
