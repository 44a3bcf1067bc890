-- flow: run flow's planner → coder → reviewer workflow from Neovim.
--
--   require("flow").setup({ trusted = true })          -- optional
--   require("flow").build("add a test", { on_done = function(report) end })
--
-- Every operation is asynchronous: it returns at once and calls on_done
-- with the report (a Lua table) when flow finishes. See :help flow-api.

local M = {}

--- The last report any operation returned (run, check or undo).
---@type table|nil
M.last_report = nil

--- The last run report (of build), the one :FlowDiff shows.
---@type table|nil
M.last_run = nil

--- Configures flow (see :help flow-config). Optional: commands work with
--- the defaults. Calling it again replaces the configuration; a running
--- host keeps its settings until it restarts (:FlowStop does not restart
--- it; the host restarts after it exits).
---@param opts flow.Config|nil
function M.setup(opts)
  return require("flow.config").setup(opts)
end

---@class flow.Callbacks
---@field on_done? fun(result: table)

-- Starts a job: its events go to the run buffer, its result becomes
-- M.last_report, is shown, and is passed to opts.on_done (scheduled).
local function job(op, method, arg, opts, title)
  opts = opts or {}
  local ui = require("flow.ui")
  ui.start(title)
  return require("flow.rpc").job(op, method, arg, {
    on_event = ui.on_event,
    on_done = function(result)
      M.last_report = result
      if op == "run" then
        M.last_run = result
      end
      local shown, err = pcall(ui.on_done, op, result)
      if not shown then
        require("flow.log").error("showing the result: " .. tostring(err))
      end
      if opts.on_done then
        vim.schedule(function()
          local ok, err = pcall(opts.on_done, result)
          if not ok then
            require("flow.log").error("on_done callback: " .. tostring(err))
          end
        end)
      end
    end,
  })
end

--- Starts a run of task. Returns the job token, or nil and an error.
---@param task string
---@param opts flow.Callbacks|nil
function M.build(task, opts)
  if type(task) ~= "string" or vim.trim(task) == "" then
    local err = "flow: build needs a task"
    vim.notify(err, vim.log.levels.ERROR, { title = "flow" })
    return nil, err
  end
  local rpc = require("flow.rpc")
  return job("run", rpc.methods.run, task, opts, "build: " .. task)
end

--- Runs the named check, or every configured check when name is nil.
---@param name string|nil
---@param opts flow.Callbacks|nil
function M.check(name, opts)
  local rpc = require("flow.rpc")
  return job("check", rpc.methods.check, name or "", opts, "check " .. (name or "(all)"))
end

--- Undoes a run (nil: the workspace's last run) through the buffer-aware
--- file system.
---@param run_id string|nil
---@param opts flow.Callbacks|nil
function M.undo(run_id, opts)
  local rpc = require("flow.rpc")
  return job("undo", rpc.methods.undo, run_id or "", opts, "undo " .. (run_id or "(last run)"))
end

--- Lists the hunks of a finished run (nil: the workspace's last run) and
--- applies the decisions of opts: `keep` and `revert`, lists of hunk ids,
--- changed files' paths or "all". The host writes each revert through the
--- buffer-aware file system, so the loaded buffers already show it when
--- this returns. Returns the review report (status ok, conflict when a
--- decision was refused, error) and passes it to opts.on_done.
---@param run_id string|nil
---@param opts {keep?: string[], revert?: string[], on_done?: fun(result: table)}|nil
---@return table
function M.review(run_id, opts)
  opts = opts or {}
  local rpc = require("flow.rpc")
  local ok, res = rpc.request(rpc.methods.review, run_id or "", opts.keep or {}, opts.revert or {})
  if not ok or type(res) ~= "table" then
    res = { status = "error", error = tostring(res), message = tostring(res) }
  end
  if opts.on_done then
    vim.schedule(function()
      opts.on_done(res)
    end)
  end
  return res
end

--- Fetches the status report (flow never contacts the model for it) and
--- calls on_done with it. Also returns it.
---@param opts flow.Callbacks|nil
---@return table
function M.status(opts)
  opts = opts or {}
  local rpc = require("flow.rpc")
  local ok, res = rpc.request(rpc.methods.status)
  if not ok or type(res) ~= "table" then
    res = { status = "error", error = tostring(res) }
  end
  if opts.on_done then
    vim.schedule(function()
      opts.on_done(res)
    end)
  end
  return res
end

--- The last run's report for :FlowDiff: the one this Neovim got, else the
--- workspace's last report kept by flow (when it carries diffs).
---@return table|nil
function M.last_diff_report()
  if M.last_run then
    return M.last_run
  end
  local ok, st = pcall(M.status)
  if ok and type(st) == "table" and type(st.last_report) == "table" and type(st.last_report.diffs) == "table" then
    return st.last_report
  end
  return nil
end

--- Cancels every running job; they report "cancelled". Returns how many
--- were running.
---@return integer
function M.stop()
  local rpc = require("flow.rpc")
  if not rpc.channel() then
    return 0
  end
  local ok, res = rpc.request(rpc.methods.stop)
  return ok and type(res) == "table" and res.stopped or 0
end

return M
