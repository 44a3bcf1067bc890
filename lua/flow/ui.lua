-- flow.ui: the flow://run buffer (live progress and final summaries),
-- notifications and the quickfix list of changed files.

local config = require("flow.config")

local M = {}

local NAME = "flow://run"
local MAX_LINES = 10000

--- Returns the flow://run buffer, creating it when needed.
---@return integer
function M.buffer()
  local b = vim.fn.bufnr("^" .. NAME .. "$")
  if b > 0 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, NAME)
  vim.api.nvim_buf_set_option(b, "buftype", "nofile")
  vim.api.nvim_buf_set_option(b, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(b, "swapfile", false)
  vim.api.nvim_buf_set_option(b, "filetype", "flowrun")
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  return b
end

--- Shows the flow://run buffer in a bottom split without leaving the
--- current window (does nothing when a window already shows it).
function M.open()
  local b = M.buffer()
  if vim.fn.bufwinid(b) ~= -1 then
    return
  end
  local win = vim.api.nvim_get_current_win()
  vim.cmd("botright 12split")
  vim.api.nvim_win_set_buf(0, b)
  vim.api.nvim_set_current_win(win)
end

--- Appends lines to the flow://run buffer (at most MAX_LINES are kept) and
--- scrolls the windows that show it.
---@param lines string[]
function M.append(lines)
  local b = M.buffer()
  local clean = {}
  for _, l in ipairs(lines) do
    for part in (tostring(l) .. "\n"):gmatch("([^\n]*)\n") do
      clean[#clean + 1] = part
    end
  end
  vim.api.nvim_buf_set_option(b, "modifiable", true)
  local n = vim.api.nvim_buf_line_count(b)
  local empty = n == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ""
  vim.api.nvim_buf_set_lines(b, empty and 0 or n, -1, false, clean)
  n = vim.api.nvim_buf_line_count(b)
  if n > MAX_LINES then
    vim.api.nvim_buf_set_lines(b, 0, n - MAX_LINES, false, {})
  end
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(b), 0 })
  end
end

--- Marks the start of an operation in the run buffer.
---@param what string
function M.start(what)
  M.append({ "", "== " .. os.date("%H:%M:%S") .. " " .. what })
  if config.options.open_run then
    M.open()
  end
end

--- Renders one progress event pushed by the host.
---@param payload table
function M.on_event(payload)
  M.append({ payload.text or vim.inspect(payload.event) })
end

--- The summary lines of a result: status, verified, changed files, failing
--- checks, reviewer summary, error.
---@param op string|nil
---@param r table
---@return string[]
function M.summary(op, r)
  local lines = {}
  local head = string.format("flow %s: %s", op or "result", tostring(r.status))
  if r.verified ~= nil then
    head = head .. (r.verified and " (verified)" or " (not verified)")
  end
  lines[#lines + 1] = head
  if type(r.changed_files) == "table" and #r.changed_files > 0 then
    lines[#lines + 1] = "changed: " .. table.concat(r.changed_files, ", ")
  end
  for _, c in ipairs(type(r.checks) == "table" and r.checks or {}) do
    if type(c) == "table" and c.status ~= "ok" then
      lines[#lines + 1] = string.format("check %s: %s", tostring(c.name), tostring(c.status))
    end
  end
  for _, role in ipairs(type(r.roles) == "table" and r.roles or {}) do
    if type(role) == "table" and role.role == "reviewer" and role.summary and role.summary ~= "" then
      lines[#lines + 1] = "reviewer: " .. role.summary
    end
  end
  if r.reason and r.reason ~= "" then
    lines[#lines + 1] = "reason: " .. tostring(r.reason)
  end
  if r.error and r.error ~= "" then
    lines[#lines + 1] = "error: " .. tostring(r.error)
  end
  return lines
end

--- Shows a finished operation's result: in the run buffer, with
--- vim.notify, and its changed files in the quickfix list.
---@param op string|nil
---@param result table
function M.on_done(op, result)
  if op == "status" then
    return
  end
  local lines = M.summary(op, result)
  M.append(lines)
  if config.options.notify then
    local level = result.status == "ok" and vim.log.levels.INFO or vim.log.levels.WARN
    vim.schedule(function()
      vim.notify(table.concat(lines, "\n"), level, { title = "flow" })
    end)
  end
  if config.options.quickfix and type(result.changed_files) == "table" and #result.changed_files > 0 then
    local root = result.workspace or config.workspace()
    local items = {}
    for _, p in ipairs(result.changed_files) do
      items[#items + 1] = { filename = root .. "/" .. p, lnum = 1, text = "changed by flow (" .. tostring(result.status) .. ")" }
    end
    vim.fn.setqflist({}, " ", { title = "flow: changed files", items = items })
  end
end

return M
