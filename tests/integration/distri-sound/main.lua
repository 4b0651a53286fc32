-- test_sound.sh's Lua distribution: GRUB's `play` drives the PC speaker,
-- which QEMU_APPEND connects to the recorded audiodev snd0; each recording
-- is matched against sound needles (spectrograms) as os-autoinst does.
loadtest "boot"
loadtest "beep"
loadtest "tone"
loadtest "wrong"
