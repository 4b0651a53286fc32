-- The Debian 12 netboot installer (d-i) without a network, in one of two
-- flavors picked by FLAVOR: "text" (newt, driven by keys, ends in the
-- installer's shell) or "gtk" (the graphical installer, driven by mouse
-- clicks). vars.json points KERNEL and INITRD at the flavor's images.
local flavor = get_var("FLAVOR", "text")
if flavor ~= "text" and flavor ~= "gtk" then
   error("FLAVOR='" .. flavor .. "': use text or gtk")
end
loadtest(flavor .. "/boot")
loadtest(flavor .. "/locale")
loadtest(flavor .. "/network")
loadtest(flavor .. "/hostname")
loadtest(flavor .. "/mirror")
if flavor == "text" then
   loadtest("text/shell")
end
