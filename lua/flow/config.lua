-- flow.config: defaults, validation and the host command line.

local M = {}

---@class flow.Config
---@field cmd? string[] program and leading arguments that start flow
---@field config? string absolute path of the operator configuration file
---@field trusted? boolean enable edits and named checks
---@field workspace? string workspace root (default: the current directory)
---@field log_file? string where flow and the plugin log
---@field timeout? integer milliseconds for the health probes
---@field notify? boolean show run summaries with vim.notify
---@field quickfix? boolean put changed files in the quickfix list
---@field open_run? boolean open the flow://run buffer when a build starts
---@field mappings? boolean map the default keys of :FlowReview in reviewed buffers

-- The directory of this plugin (the repository root): lua/flow/config.lua
-- is two levels below it.
local function plugin_root()
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) ~= "@" then
    return nil
  end
  local file = vim.loop.fs_realpath(src:sub(2)) or src:sub(2)
  return vim.fn.fnamemodify(file, ":h:h:h")
end

local function default_log_file()
  local ok, dir = pcall(vim.fn.stdpath, "log")
  if not ok or type(dir) ~= "string" or dir == "" then
    dir = vim.fn.stdpath("cache")
  end
  return dir .. "/flow.log"
end

--- The plugin's directory (the repository root), or nil.
---@return string|nil
function M.plugin_root()
  return plugin_root()
end

--- Returns the default command: the repository's bin/flow when it was
--- built, else flow on PATH.
---@return string[]
function M.default_cmd()
  local root = plugin_root()
  local bin = root and root .. "/bin/flow"
  if bin and vim.fn.executable(bin) == 1 then
    return { bin }
  end
  return { "flow" }
end

--- The defaults; every key is documented in :help flow-config.
M.defaults = {
  -- Program and leading arguments that start flow; nil = bin/flow of this
  -- repository if built, else "flow" on PATH. The plugin appends "nvim"
  -- and the flags for config, trusted and workspace.
  cmd = nil,
  -- Operator configuration file passed as --config (absolute path); nil =
  -- flow's own default ($XDG_CONFIG_HOME/flow/config.toml).
  config = nil,
  -- Pass --trusted: enables edits and named checks.
  trusted = false,
  -- Workspace root; nil = Neovim's current directory when the host starts.
  workspace = nil,
  -- Log file of the plugin and the host (FLOW_LOG_FILE).
  log_file = nil,
  -- Milliseconds for the health probes (flow version, flow doctor).
  timeout = 10000,
  -- Show the summary of finished runs and checks with vim.notify.
  notify = true,
  -- Put the changed files of a run in the quickfix list.
  quickfix = true,
  -- Open the flow://run buffer in a split when a build starts.
  open_run = true,
  -- Map the default keys of :FlowReview (]h, [h, <LocalLeader>hk, ...) in
  -- the buffers a review marks; the <Plug>(flow-review-*) mappings exist
  -- either way.
  mappings = true,
}

local types = {
  cmd = "table",
  config = "string",
  trusted = "boolean",
  workspace = "string",
  log_file = "string",
  timeout = "number",
  notify = "boolean",
  quickfix = "boolean",
  open_run = "boolean",
  mappings = "boolean",
}

M.options = vim.deepcopy(M.defaults)

--- Returns every option name, sorted.
---@return string[]
function M.keys()
  local keys = vim.tbl_keys(types)
  table.sort(keys)
  return keys
end

--- Validates user options. Returns the problems (errors) and the warnings
--- (unknown keys), each a list of "flow: ..." messages.
---@param opts table
---@return string[] problems, string[] warnings
function M.validate(opts)
  local problems, warnings = {}, {}
  if type(opts) ~= "table" then
    return { "flow: setup() expects a table, not " .. type(opts) }, {}
  end
  for k, v in pairs(opts) do
    local want = types[k]
    if not want then
      warnings[#warnings + 1] = string.format("flow: unknown option `%s`", tostring(k))
    elseif type(v) ~= want then
      problems[#problems + 1] = string.format("flow: `%s` should be %s, not %s", k, want, type(v))
    end
  end
  if type(opts.cmd) == "table" then
    if #opts.cmd == 0 then
      problems[#problems + 1] = "flow: `cmd` should be a non-empty list of strings"
    end
    for i, a in ipairs(opts.cmd) do
      if type(a) ~= "string" or a == "" or a:find("\0", 1, true) then
        problems[#problems + 1] = string.format("flow: `cmd[%d]` should be a non-empty string", i)
      end
    end
  end
  if type(opts.config) == "string" and opts.config:sub(1, 1) ~= "/" then
    problems[#problems + 1] = "flow: `config` should be an absolute path"
  end
  if type(opts.timeout) == "number" and (opts.timeout < 100 or opts.timeout > 660000) then
    problems[#problems + 1] = "flow: `timeout` should be between 100 and 660000 milliseconds"
  end
  return problems, warnings
end

--- The options last given to setup() (for :checkhealth).
M.user = {}

--- Merges opts over the defaults after validating them. Invalid options
--- are reported once and leave the configuration unchanged.
---@param opts table|nil
---@return boolean ok
function M.setup(opts)
  opts = opts or {}
  local problems, warnings = M.validate(opts)
  M.user = opts
  for _, w in ipairs(warnings) do
    vim.notify(w, vim.log.levels.WARN, { title = "flow" })
  end
  if #problems > 0 then
    vim.notify(table.concat(problems, "\n"), vim.log.levels.ERROR, { title = "flow" })
    return false
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.cmd then
    M.options.cmd = vim.deepcopy(opts.cmd) -- lists replace, never merge
  end
  return true
end

--- The effective command (program and leading arguments).
---@return string[]
function M.cmd()
  return vim.deepcopy(M.options.cmd or M.default_cmd())
end

--- The workspace root: the option, else the current directory, as a real
--- path.
---@return string
function M.workspace()
  local ws = M.options.workspace or vim.loop.cwd()
  return vim.loop.fs_realpath(ws) or ws
end

--- The log file path.
---@return string
function M.log_file()
  return M.options.log_file or default_log_file()
end

--- The host's argv: cmd, then "nvim", then --workspace, --trusted and
--- --config.
---@return string[]
function M.host_argv()
  local argv = M.cmd()
  argv[#argv + 1] = "nvim"
  argv[#argv + 1] = "--workspace"
  argv[#argv + 1] = M.workspace()
  if M.options.trusted then
    argv[#argv + 1] = "--trusted"
  end
  if M.options.config then
    argv[#argv + 1] = "--config"
    argv[#argv + 1] = M.options.config
  end
  return argv
end

return M
