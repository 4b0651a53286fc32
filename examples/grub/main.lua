-- The GRUB rescue ISO (Debian package grub-rescue-pc): the fast CI target.
loadtest "boot"
loadtest "menu"
loadtest "cmdline"
