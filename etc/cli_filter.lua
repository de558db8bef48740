-- DDL lanes: turn --ddl-lanes=N (or DDL_LANES=N) into the task request it
-- implies: N tasks per GPU, one core each.  A SPANK plugin cannot change the
-- request itself; Slurm's cli_filter/lua can, for srun, sbatch and salloc alike.
--
-- Enable: put this file beside slurm.conf as cli_filter.lua and add
--   CliFilterPlugins=cli_filter/lua
-- to slurm.conf (read without a restart).

local function lanes_requested(options)
   local spank = options.spank and options.spank["ddl"]
   local lanes = spank and spank["ddl-lanes"]
   if lanes == nil or lanes == "" then
      lanes = os.getenv("DDL_LANES")
   end
   if lanes == nil or lanes == "" then
      return nil
   end
   local n = tonumber(lanes)
   if n == nil or n < 1 or n ~= math.floor(n) then
      return nil -- the plugin rejects it with a message of its own
   end
   return n
end

function slurm_cli_setup_defaults(options, early_pass)
   return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
   local lanes = lanes_requested(options)
   if lanes == nil then
      return slurm.SUCCESS
   end
   options["ntasks-per-gpu"] = tostring(lanes)
   options["cpus-per-task"] = "1"
   slurm.log_info("ddl: %d lanes per GPU: --ntasks-per-gpu=%d --cpus-per-task=1", lanes, lanes)
   return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
