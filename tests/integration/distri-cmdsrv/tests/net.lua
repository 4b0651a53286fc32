-- data_url (a file, a directory as cpio), upload_logs and upload_asset
-- over HTTP, autoinst_url('/vars') and save_tmp_file's files/, from the
-- guest over QEMU's user network; then holds while test_cmdsrv.sh checks
-- the server from the host (HOSTCHECK: a directory the script watches).
local function wait_file(path)
   for _ = 1, 600 do
      local f = io.open(path)
      if f then
         f:close()
         return
      end
      sleep(1)
   end
   error("nobody created " .. path)
end

return {
   flags = { fatal = true },
   run = function()
      assert_screen("shell-banner", 120)
      select_console("serial")
      if not wait_serial("VIGIL-SHELL-READY", 60) then
         error("the initramfs did not report ready on the serial port")
      end
      type_string("\n")
      wait_serial("vigil-shell# ", { timeout = 30, no_regex = true })

      assert_script_run("wget -q -O /tmp/hello.txt '" .. data_url("hello.txt") .. "'")
      upload_logs("/tmp/hello.txt", { log_name = "hello-back.txt" })
      assert_script_run("mkdir -p /tmp/d && cd /tmp/d && wget -q -O - '" .. data_url("dir") ..
                        "' | cpio -id && cd /")
      upload_logs("/tmp/d/data/sub/b.bin")
      upload_logs("/tmp/d/data/a.txt", { log_name = "a-back.txt" })

      set_var("CMDSRV_MARK", "set-by-lua")
      assert_script_run("wget -q -O /tmp/vars.json '" .. autoinst_url("/vars") .. "'")
      upload_logs("/tmp/vars.json", { log_name = "vars-seen.json" })

      assert_script_run("dd if=/dev/urandom of=/tmp/disk.img bs=1k count=64 2>/dev/null")
      upload_asset("/tmp/disk.img")
      upload_asset("/tmp/hello.txt", { public = true })
      upload_logs("/tmp/disk.img", { log_name = "disk-copy.img" })

      save_tmp_file("x/y.txt", "tmp-content")
      assert_script_run("wget -q -O /tmp/y.txt '" .. autoinst_url("/files/x/y.txt") ..
                        "' && grep -qx tmp-content /tmp/y.txt")
      local bad = autoinst_url("/vars"):gsub("/" .. get_var("JOBTOKEN") .. "/", "/not-the-token/")
      assert_script_run("! wget -q -O /dev/null '" .. bad .. "'")

      -- the NIC's link down and up again (os-autoinst's switch_network)
      switch_network({ network_enabled = false })
      switch_network({ network_enabled = true, network_link_name = "qanet0" })
      local ok, err = pcall(switch_network, { network_link_name = "nonic" })
      if ok or not tostring(err):find("nonic") then
         error("switch_network of a missing NIC: " .. tostring(err))
      end

      local hc = get_var("HOSTCHECK")
      if hc then
         local f = assert(io.open(hc .. "/url.tmp", "w"))
         f:write(autoinst_url("", nil, { inside_sut = false }), "\n")
         f:close()
         os.rename(hc .. "/url.tmp", hc .. "/url")
         wait_file(hc .. "/done")
      end
   end,
}
