-- The anchors' isotovideo GRUB scenario (shared/anchors/isotovideo/distri-grub)
-- in vigil's Lua, for the whole-runner benchmark: same steps, same needles
-- (NEEDLES_DIR points at the anchors' needles), same ISO.
loadtest "boot"
