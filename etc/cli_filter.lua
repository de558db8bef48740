-- SPDX-License-Identifier: Apache-2.0
-- A ready cli_filter for sites without one of their own: DDL lanes only
-- (ddl_lanes.lua does the work).  Enable: put this file and ddl_lanes.lua
-- beside slurm.conf and add CliFilterPlugins=cli_filter/lua to slurm.conf
-- (read without a restart).  A site that has a cli_filter.lua adds the three
-- lines shown in ddl_lanes.lua to it instead.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local ddl_lanes = require("ddl_lanes")

function slurm_cli_setup_defaults(options, early_pass)
   return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
   return ddl_lanes.pre_submit(options, offset)
end

function slurm_cli_post_submit(offset, job_id, step_id)
   return slurm.SUCCESS
end
