-- flow.commands: the :Flow* commands (defined in plugin/flow.lua) and
-- their completion. It sits on top: it uses the public API (flow), which
-- never requires it back.

local M = {}

local check_names -- cached from the last status report

--- Remembers the configured check names of a status report for
--- :FlowCheck completion.
---@param status table
function M.remember_checks(status)
  if type(status) == "table" and type(status.checks) == "table" then
    check_names = {}
    for _, c in ipairs(status.checks) do
      if type(c) == "table" and type(c.name) == "string" then
        check_names[#check_names + 1] = c.name
      end
    end
  end
end

--- Completes :FlowCheck with the configured check names (fetched once
--- with a status request, then cached).
---@param arglead string
---@return string[]
function M.complete_check(arglead)
  if not check_names then
    local ok, st = pcall(require("flow").status)
    if ok then
      M.remember_checks(st)
    end
  end
  local out = {}
  for _, n in ipairs(check_names or {}) do
    if n:sub(1, #arglead) == arglead then
      out[#out + 1] = n
    end
  end
  return out
end

-- The location of the selected lines: path relative to the workspace when
-- inside it, with the line range.
local function location(o)
  local name = vim.api.nvim_buf_get_name(0)
  if name == "" then
    return nil
  end
  local real = vim.loop.fs_realpath(name) or name
  local root = require("flow.config").workspace()
  local prefix = root == "/" and "/" or root .. "/"
  if real:sub(1, #prefix) == prefix then
    real = real:sub(#prefix + 1)
  end
  return string.format("%s:%d-%d", real, o.line1, o.line2)
end

--- :[range]FlowBuild [task]: runs task; with a range, the selected lines'
--- location is added; without a task, prompts for one.
---@param o table the user command's argument table
function M.build(o)
  local loc = o.range and o.range > 0 and location(o) or nil
  local function go(task)
    if not task or vim.trim(task) == "" then
      return
    end
    if loc then
      task = task .. "\n\nSelected lines: " .. loc
    end
    require("flow").build(task)
  end
  if vim.trim(o.args or "") ~= "" then
    go(o.args)
  else
    vim.ui.input({ prompt = "FlowBuild: " }, go)
  end
end

--- :FlowCheck [name]
function M.check(o)
  local name = vim.trim(o.args or "")
  require("flow").check(name ~= "" and name or nil)
end

--- :FlowStatus: shows the status report.
function M.status()
  local r = require("flow").status()
  M.remember_checks(r)
  local lines = { "flow status: " .. tostring(r.status) }
  if r.error then
    lines[#lines + 1] = "error: " .. tostring(r.error)
  end
  if r.workspace then
    lines[#lines + 1] = "workspace: " .. tostring(r.workspace) .. (r.trusted and " (trusted)" or " (read-only)")
  end
  if type(r.models) == "table" then
    -- Each role's model, with its server when that is not [ollama].
    local servers = type(r.models.servers) == "table" and r.models.servers or {}
    local function on(role)
      local s = servers[role]
      local m = tostring(r.models[role])
      return (type(s) == "string" and s ~= "ollama") and (m .. " on " .. s) or m
    end
    lines[#lines + 1] = string.format("models: planner %s, coder %s, reviewer %s", on("planner"), on("coder"), on("reviewer"))
  end
  if type(r.checks) == "table" then
    local names = {}
    for _, c in ipairs(r.checks) do
      names[#names + 1] = tostring(c.name) .. (c.required and "" or "?")
    end
    lines[#lines + 1] = "checks: " .. (#names > 0 and table.concat(names, ", ") or "none")
  end
  if type(r.editor) == "table" then
    lines[#lines + 1] = "editor: " .. tostring(r.editor.status) .. (r.editor.error ~= nil and r.editor.error ~= vim.NIL and (" (" .. tostring(r.editor.error) .. ")") or "")
  end
  for _, w in ipairs(type(r.warnings) == "table" and r.warnings or {}) do
    lines[#lines + 1] = "warning: " .. tostring(w)
  end
  if r.busy then
    lines[#lines + 1] = "busy: a run or check is in progress"
  end
  vim.notify(table.concat(lines, "\n"), r.status == "ok" and vim.log.levels.INFO or vim.log.levels.WARN, { title = "flow" })
end

--- :FlowStop
function M.stop()
  local n = require("flow").stop()
  vim.notify(n > 0 and "flow: stopping " .. n .. " job(s)" or "flow: nothing is running", vim.log.levels.INFO, { title = "flow" })
end

--- :FlowUndo [run_id]
function M.undo(o)
  local id = vim.trim(o.args or "")
  require("flow").undo(id ~= "" and id or nil)
end

--- :FlowReview [run_id]: shows the run's hunks (default: the workspace's
--- last run) in the buffers and the quickfix list.
function M.review(o)
  local id = vim.trim(o.args or "")
  require("flow.review").open(id ~= "" and id or nil)
end

--- Completes :FlowReview with the runs this Neovim knows: the one under
--- review, the last build's and the workspace's last run.
---@param arglead string
---@return string[]
function M.complete_review(arglead)
  local ids, seen = {}, {}
  local function add(r)
    local id = type(r) == "table" and r.run_id
    if type(id) == "string" and id ~= "" and not seen[id] and id:sub(1, #arglead) == arglead then
      seen[id] = true
      ids[#ids + 1] = id
    end
  end
  add(require("flow.review").report())
  add(require("flow").last_run)
  local ok, st = pcall(require("flow").status)
  if ok and type(st) == "table" then
    add(st.last_report)
  end
  return ids
end

--- :FlowLog: opens the log file in a split, at its end (the latest run and
--- the output of its failing checks).
function M.log()
  local path = require("flow.config").log_file()
  vim.cmd("split " .. vim.fn.fnameescape(path))
  vim.bo.readonly = true
  vim.cmd("silent! normal! G")
end

--- :FlowDiff: shows the last run's diff in the flow://diff scratch buffer
--- (filetype diff).
function M.diff()
  local r = require("flow").last_diff_report()
  if not require("flow.ui").show_diff(r) then
    local why = "flow: no run yet in this workspace"
    if r and type(r.changed_files) == "table" and #r.changed_files > 0 then
      why = "flow: the last run's report carries no diff"
    elseif r then
      why = "flow: the last run changed no file"
    end
    vim.notify(why, vim.log.levels.INFO, { title = "flow" })
  end
end

return M
