-- SPDX-License-Identifier: Apache-2.0
-- DDL lanes for Slurm's cli_filter/lua: turn --ddl-lanes=N (or DDL_LANES=N)
-- into the request it implies, for srun, sbatch and salloc alike (a SPANK
-- plugin cannot change the request itself).
--
--   N tasks per GPU (--ntasks-per-gpu=N; for sbatch and salloc with
--   --gpus-per-node=G, --ntasks-per-node=G x N, which their steps inherit
--   without it overriding a step's own -n): lane 0 owns the GPU and runs the
--   application, lanes 1..N-1 are helpers on one core each.
--
--   Cores per GPU: the user's --cpus-per-task=C or --cpus-per-gpu=C, else the
--   site's owner_cores=K from the plugin's plugstack line (C = K + N - 1),
--   else one core per lane.  Slurm gives every task the same count, so each
--   gets ceil(C / N) and the plugin then hands the owner its GPU's share of
--   the cores minus one per helper.
--
-- Use it from a site's own cli_filter.lua (pcall: a node without this file
-- still runs every job):
--   package.path = "/usr/share/ddl-lanes/?.lua;" .. package.path
--   local have_ddl, ddl_lanes = pcall(require, "ddl_lanes")
--   -- first thing in slurm_cli_pre_submit(options, offset):
--   if have_ddl then local rc = ddl_lanes.pre_submit(options, offset); if rc ~= slurm.SUCCESS then return rc end end
-- or install the standalone cli_filter.lua beside it.
--
-- What it did is said at srun/sbatch -v (and in errors); a plain request
-- prints nothing.
local M = {}

local function positive_int(v)
   local n = tonumber(v or "")
   if n == nil or n < 1 or n ~= math.floor(n) then
      return nil
   end
   return n
end

-- The lanes asked for, and where: "--ddl-lanes" or the environment's
-- "DDL_LANES" (which the library reads too, so a job without GPUs that
-- inherits it is not a request for lanes).
local function lanes_requested(options)
   local spank = options.spank and options.spank["ddl"]
   local lanes, from = spank and spank["ddl-lanes"], "--ddl-lanes"
   if lanes == nil or lanes == "" then
      lanes, from = os.getenv("DDL_LANES"), "DDL_LANES"
   end
   if lanes == nil or lanes == "" then
      return nil
   end
   return positive_int(lanes), from -- nil: the plugin rejects it with a message of its own
end

-- What the filter did: at -v (options.verbose counts the -v flags), not on
-- every srun.
local function tell(options, fmt, ...)
   if (tonumber(options["verbose"] or "") or 0) > 0 then
      slurm.log_info(fmt, ...)
   end
end

-- A task count the user gave is theirs: the plugin then checks it against the
-- GPUs and lanes and fails the step with what to change.
-- Inside a job, srun starts from the job's counts (SLURM_NTASKS,
-- SLURM_NTASKS_PER_GPU, SLURM_NTASKS_PER_NODE), which are not the user's
-- choice for this step: a step with other lanes than the job's gets its own.
local function user_set_tasks(options)
   local in_job = os.getenv("SLURM_JOB_ID") ~= nil
   local function given(key, env)
      local v = positive_int(options[key])
      return v ~= nil and not (in_job and v == tonumber(os.getenv(env) or ""))
   end
   -- -n: outside a job 1 is also the default; inside, the job's count is.
   local total = tonumber(options["ntasks"] or "")
   local inherited = in_job and tonumber(os.getenv("SLURM_NTASKS") or "")
   return given("ntasks-per-gpu", "SLURM_NTASKS_PER_GPU") or given("ntasks-per-node", "SLURM_NTASKS_PER_NODE") or
      (total ~= nil and ((in_job and total ~= inherited) or (not in_job and total > 1)))
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

-- The node count when it is one number: options.nodes reads "MIN-MAX" (srun
-- -N2 gives "2-2", no -N "1-0": a maximum of 0 is none), or nothing.
local function node_count(v)
   local lo, hi = string.match(v or "", "^(%d+)%-?(%d*)$")
   if lo == nil then
      return v == nil or v == "" and 1 or nil
   end
   if hi ~= "" and hi ~= "0" and hi ~= lo then
      return nil -- a range: the job's size is slurmctld's choice
   end
   return positive_int(lo)
end

-- N of a GPU count [type:]N.
local function gpu_count(v)
   return v and positive_int(string.match(v, "(%d+)$"))
end

-- GPUs per node, when --gpus-per-node=[type:]N says.
local function gpus_per_node(options)
   return gpu_count(options["gpus-per-node"])
end

-- The job's GPUs, when the request says: --gpus=[type:]N, or
-- --gpus-per-node=[type:]N with one node count.
local function total_gpus(options)
   local gpus = gpu_count(options["gpus"])
   if gpus then
      return gpus
   end
   local per_node, nodes = gpus_per_node(options), node_count(options["nodes"])
   return per_node and nodes and per_node * nodes
end

-- A step of a job that this filter shaped (sbatch/salloc --ddl-lanes) with
-- the job's lanes and tasks: srun starts from the job's tasks (per GPU, or
-- per node with the job's task count), but not from its cores.
local function job_step(options, lanes)
   if os.getenv("SLURM_JOB_ID") == nil then
      return false
   end
   local function same(key, env, want)
      return tonumber(os.getenv(env) or "") == want and tonumber(options[key] or "") == want
   end
   local per_node = gpus_per_node(options)
   return same("ntasks-per-gpu", "SLURM_NTASKS_PER_GPU", lanes) or
      (per_node ~= nil and same("ntasks-per-node", "SLURM_NTASKS_PER_NODE", per_node * lanes) and
       tonumber(options["ntasks"] or "") == tonumber(os.getenv("SLURM_NTASKS") or ""))
end

function M.pre_submit(options, offset)
   local lanes, from = lanes_requested(options)
   if lanes == nil then
      return slurm.SUCCESS
   end
   if not gpus_requested(options) then
      if from == "DDL_LANES" then
         tell(options, "ddl: DDL_LANES=%d in the environment, but no GPU is requested: no lanes for this job", lanes)
         return slurm.SUCCESS
      end
      slurm.log_error("ddl: --ddl-lanes=%d gives lanes to GPUs, but no GPU is requested: add --gpus-per-node=N (or --gpus=N)", lanes)
      return slurm.ERROR
   end
   if lanes > 1 and is_set(options["gpus-per-task"]) then
      -- Slurm refuses --ntasks-per-gpu beside it, and each task would see only its own GPU.
      if from == "DDL_LANES" then
         tell(options, "ddl: DDL_LANES=%d in the environment, but --gpus-per-task gives each task its own GPU: no lanes", lanes)
         return slurm.SUCCESS
      end
      slurm.log_error("ddl: --gpus-per-task gives every task a GPU of its own, but the %d lanes of a GPU share it: " ..
                      "ask for the GPUs with --gpus-per-node=N (or --gpus=N) instead, and the filter starts %d tasks per GPU",
                      lanes, lanes)
      return slurm.ERROR
   end
   if job_step(options, lanes) then
      if not positive_int(options["cpus-per-task"]) and not positive_int(options["cpus-per-gpu"]) then
         local per_gpu, per_task = os.getenv("SLURM_CPUS_PER_GPU"), os.getenv("SLURM_CPUS_PER_TASK")
         if positive_int(per_gpu) then
            options["cpus-per-gpu"] = per_gpu
         elseif positive_int(per_task) then
            options["cpus-per-task"] = per_task
         end
      end
      return slurm.SUCCESS
   end
   if user_set_tasks(options) then
      -- In a job, a step's own --ntasks-per-gpu or --ntasks-per-node still
      -- starts from the job's task count (SLURM_NTASKS): give the step the
      -- count it implies.
      local total = tonumber(options["ntasks"] or "")
      if os.getenv("SLURM_JOB_ID") and total == tonumber(os.getenv("SLURM_NTASKS") or "") then
         local per_gpu_tasks, gpus = positive_int(options["ntasks-per-gpu"]), total_gpus(options)
         local per_node_tasks = positive_int(options["ntasks-per-node"])
         local nodes = node_count(options["nodes"]) or positive_int(os.getenv("SLURM_NNODES"))
         if per_gpu_tasks and gpus then
            options["ntasks"] = tostring(gpus * per_gpu_tasks)
         elseif per_node_tasks and nodes then
            options["ntasks"] = tostring(nodes * per_node_tasks)
         end
      end
      return slurm.SUCCESS
   end
   -- An allocation with GPUs per node is shaped per node: its steps inherit
   -- --ntasks-per-node, which a step's own -n overrides (srun -n1 prepare.py,
   -- which then runs without lanes), where an inherited --ntasks-per-gpu
   -- would override it.  Steps, and allocations by --gpus=N, take
   -- --ntasks-per-gpu.
   local per_node = gpus_per_node(options)
   local allocation = options["type"] == "sbatch" or options["type"] == "salloc"
   -- A step of a job shaped per node inherits SLURM_NTASKS_PER_NODE, which
   -- Slurm refuses beside --ntasks-per-gpu: it is shaped per node too.
   local in_node_job = os.getenv("SLURM_JOB_ID") ~= nil and os.getenv("SLURM_NTASKS_PER_NODE") ~= nil
   local shape
   if per_node and (allocation or in_node_job) then
      options["ntasks-per-node"] = tostring(per_node * lanes)
      shape = "--ntasks-per-node=" .. (per_node * lanes)
   else
      options["ntasks-per-gpu"] = tostring(lanes)
      shape = "--ntasks-per-gpu=" .. lanes
   end
   -- Slurm sizes some requests from the task count alone (sbatch with
   -- --cpus-per-task, several nodes with --cpus-per-gpu): give it when known.
   local gpus = total_gpus(options)
   if gpus then
      options["ntasks"] = tostring(gpus * lanes)
   end
   local per_task = positive_int(options["cpus-per-task"])
   if per_task then
      -- Every task gets the same count: ceil(C / N) each gives the GPU at least C.
      local cpt = math.ceil(per_task / lanes)
      options["cpus-per-task"] = tostring(cpt)
      tell(options, "ddl: %d lanes per GPU, %d cores per GPU as asked: %s --cpus-per-task=%d", lanes, per_task,
           shape, cpt)
      return slurm.SUCCESS
   end
   local per_gpu, why = positive_int(options["cpus-per-gpu"]), "as asked"
   if not per_gpu then
      -- The plugin publishes the site's owner_cores (plugstack) to this process.
      local owner_cores = positive_int(os.getenv("DDL_SITE_OWNER_CORES"))
      per_gpu, why = owner_cores and owner_cores + lanes - 1 or lanes,
         owner_cores and "the site's owner_cores" or "one per lane"
   end
   per_gpu = math.max(per_gpu, lanes)
   -- A step cannot have more cores per GPU than its job: say so in our terms.
   local job_per_gpu = os.getenv("SLURM_JOB_ID") and positive_int(os.getenv("SLURM_CPUS_PER_GPU"))
   if job_per_gpu and per_gpu > job_per_gpu then
      slurm.log_error("ddl: %d lanes per GPU need %d cores per GPU, and this job has %d per GPU: submit the job with " ..
                      "--ddl-lanes=%d (or --cpus-per-gpu=%d), or use at most %d lanes in its steps", lanes, per_gpu,
                      job_per_gpu, lanes, per_gpu, job_per_gpu)
      return slurm.ERROR
   end
   options["cpus-per-gpu"] = tostring(per_gpu)
   tell(options, "ddl: %d lanes per GPU, %d cores per GPU (%s): %s --cpus-per-gpu=%d", lanes, per_gpu, why, shape,
        per_gpu)
   return slurm.SUCCESS
end

return M
