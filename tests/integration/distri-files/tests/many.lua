-- Writes FILES (5000) screenshot-named files into the run's testresults,
-- then rewrites probe.png PROBES times, each time waiting until the suite
-- has seen it arrive at the server (it creates RELEASE-<n>): the worker's
-- scans during the run, counted, not timed.
local PNG = "\137\80\78\71\13\10\26\10\0\0\0\13\73\72\68\82\0\0\0\1\0\0\0\1\8\0\0\0\0\58\126\155\85" ..
   "\0\0\0\10\73\68\65\84\120\156\99\96\0\0\0\2\0\1\72\175\164\113\0\0\0\0\73\69\78\68\174\66\96\130"

-- The run's --out, from this process's command line (vigil run ... --out DIR).
local function out_dir()
   local f = assert(io.open("/proc/self/cmdline", "rb"))
   local args = {}
   for a in f:read("a"):gmatch("([^%z]*)%z") do args[#args + 1] = a end
   f:close()
   for i = 1, #args - 1 do
      if args[i] == "--out" then return args[i + 1] end
   end
   error("no --out on the command line")
end

local function write(path, bytes)
   local f = assert(io.open(path, "wb"))
   f:write(bytes)
   f:close()
end

local function exists(path)
   local f = io.open(path, "rb")
   if f then f:close() end
   return f ~= nil
end

return {
   run = function()
      local tr = out_dir() .. "/testresults"
      local release = get_var("RELEASE")
      for i = 1, tonumber(get_var("FILES", "5000")) do
         write(string.format("%s/f%05d.png", tr, i), PNG)
      end
      for n = 1, tonumber(get_var("PROBES", "3")) do
         -- Another size each time: the worker sends a file again when it changed.
         write(tr .. "/probe.png", PNG .. string.rep("\0", n))
         -- Bounded only so that a broken worker ends the job at last.
         local waited = 0
         while not exists(release .. "-" .. n) and waited < 36000 do
            sleep(0.1)
            waited = waited + 1
         end
         assert(exists(release .. "-" .. n), "probe " .. n .. " never arrived")
      end
   end,
}
