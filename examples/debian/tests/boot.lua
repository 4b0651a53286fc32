-- Boot the image's kernel until getty asks for a login on the VGA console.
return {
   flags = { fatal = true },
   run = function()
      assert_screen("debian-login", 180)
   end,
}
