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

-- A task count the user gave is theirs: the plugin then checks it against the
-- GPUs and lanes and fails the step with what to change.
local function user_set_tasks(options)
   local per_gpu = tonumber(options["ntasks-per-gpu"] or "")
   local per_node = tonumber(options["ntasks-per-node"] or "")
   local total = tonumber(options["ntasks"] or "")
   return (per_gpu and per_gpu > 0) or (per_node and per_node > 0) or (total and total > 1)
end

local function is_set(v)
   return v ~= nil and v ~= "" and v ~= "0"
end

local function gpus_requested(options)
   for _, key in ipairs({"gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket"}) do
      if is_set(options[key]) then
         return true
      end
   end
   local gres = options["gres"]
   return gres ~= nil and string.find(gres, "gpu") ~= nil
end

function slurm_cli_pre_submit(options, offset)
   local lanes = lanes_requested(options)
   if lanes == nil then
      return slurm.SUCCESS
   end
   if not gpus_requested(options) then
      slurm.log_error("ddl: --ddl-lanes=%d gives lanes to GPUs, but no GPU is requested: add --gpus-per-node=N (or --gpus=N)", lanes)
      return slurm.ERROR
   end
   if user_set_tasks(options) then
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
