-- apt installs a package from the local repository on the second disk
-- (/dev/vdb, built by scripts/build-debian-image): absent before, installed
-- after, and the program runs. The VM has no network.
return {
   run = function()
      select_console("serial")
      if script_run("dpkg -s hello") == 0 then
         error("hello is installed before apt-get install")
      end
      assert_script_run("mkdir -p /mnt && mount -o ro /dev/vdb /mnt")
      assert_script_run("echo 'deb [trusted=yes] file:/mnt/repo ./' > /etc/apt/sources.list.d/local.list")
      assert_script_run("apt-get update", 180)
      assert_script_run("DEBIAN_FRONTEND=noninteractive apt-get install -y hello", 300)
      local status = script_output("dpkg-query -W -f='${Status}' hello")
      if status ~= "install ok installed" then
         error("dpkg says hello is '" .. status .. "' after apt-get install")
      end
      local hello = script_output("hello")
      if hello ~= "Hello, world!" then
         error("hello printed '" .. hello .. "'")
      end
      assert_script_run("umount /mnt")
   end,
}
