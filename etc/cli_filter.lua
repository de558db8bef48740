-- SPDX-License-Identifier: Apache-2.0
-- A ready cli_filter for sites without one of their own: DDL lanes only
-- (ddl_lanes.lua does the work).  Enable: put this file and ddl_lanes.lua
-- beside slurm.conf and add CliFilterPlugins=cli_filter/lua to slurm.conf
-- (read without a restart).  A site that has a cli_filter.lua adds the three
-- lines shown in ddl_lanes.lua to it instead.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
-- Without ddl_lanes.lua (the package removed, a login node without it) every
-- job still goes through unchanged; only a request for lanes is refused.
local have_ddl, ddl_lanes = pcall(require, "ddl_lanes")

function slurm_cli_setup_defaults(options, early_pass)
   return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
   if have_ddl then
      return ddl_lanes.pre_submit(options, offset)
   end
   local spank = options.spank and options.spank["ddl"]
   if spank and spank["ddl-lanes"] and spank["ddl-lanes"] ~= "" then
      slurm.log_error("ddl: --ddl-lanes needs ddl_lanes.lua beside this cli_filter.lua (%s), which is not there: " ..
                      "reinstall the DDL lanes package on this node or ask the admin", here)
      return slurm.ERROR
   end
   return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
