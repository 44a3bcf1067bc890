-- flow.log: appends lines to the log file shared with the host
-- (config.log_file). Never raises.

local M = {}

--- Appends one line, prefixed with the time and level.
---@param level string
---@param msg string
function M.write(level, msg)
  pcall(function()
    local path = require("flow.config").log_file()
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    local f = io.open(path, "a")
    if f then
      f:write(os.date("%Y-%m-%dT%H:%M:%S"), " ", level, " ", (tostring(msg):gsub("\n+$", "")), "\n")
      f:close()
    end
  end)
end

--- Appends a title line and then each line of a block (a failing check's
--- output), indented, so that :FlowLog shows it as it was.
---@param level string
---@param title string
---@param lines string[]
function M.block(level, title, lines)
  local out = { title }
  for _, l in ipairs(lines or {}) do
    out[#out + 1] = "    " .. tostring(l)
  end
  M.write(level, table.concat(out, "\n"))
end

function M.info(msg)
  M.write("INFO", msg)
end

function M.warn(msg)
  M.write("WARN", msg)
end

function M.error(msg)
  M.write("ERROR", msg)
end

--- Shows msg with vim.notify (scheduled, titled "flow").
---@param msg string
---@param level integer|nil
function M.notify(msg, level)
  vim.schedule(function()
    vim.notify(msg, level or vim.log.levels.INFO, { title = "flow" })
  end)
end

return M
