-- :checkhealth flow — Neovim version, the flow binary and its version,
-- the configuration, the backend and checks (flow doctor), the log file.

local M = {}

-- vim.health (0.8+) or the 0.7 health module.
local function reporter()
  local h = vim.health
  if not h or not (h.start or h.report_start) then
    h = require("health")
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

--- Runs argv with a timeout (ms) and returns {code, stdout, stderr};
--- code is nil when it could not start, -1 when it timed out (it is then
--- killed).
---@param argv string[]
---@param timeout integer
---@return {code: integer|nil, stdout: string, stderr: string}
function M.probe(argv, timeout)
  local out, err = {}, {}
  local ok, job = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out = data
    end,
    on_stderr = function(_, data)
      err = data
    end,
  })
  if not ok or type(job) ~= "number" or job <= 0 then
    return { code = nil, stdout = "", stderr = ok and "not executable" or tostring(job) }
  end
  local code = vim.fn.jobwait({ job }, timeout)[1]
  if code == -1 then
    vim.fn.jobstop(job)
  end
  -- Let the buffered callbacks run.
  vim.wait(50, function()
    return #out > 0 or #err > 0
  end, 10)
  return { code = code, stdout = table.concat(out, "\n"), stderr = table.concat(err, "\n") }
end

local function check_neovim(r)
  r.start("Neovim")
  local v = vim.version()
  local text = string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7.2") == 1 then
    r.ok(text .. " (0.7.2 or newer is required)")
  else
    r.error(text .. ": flow needs Neovim 0.7.2 or newer")
  end
end

-- Reports whether a warning of the doctor's list speaks of any of words
-- (lower case), so that the plugin's own finding is not shown twice.
local function mentions(warnings, words)
  for _, w in ipairs(warnings) do
    local lower = tostring(w):lower()
    for _, word in ipairs(words) do
      if lower:find(word, 1, true) then
        return true
      end
    end
  end
  return false
end

-- The workspace is / or the home directory: flow would read and check
-- everything below it.
local function workspace_warning(ws)
  local home = vim.loop.os_homedir()
  home = home and (vim.loop.fs_realpath(home) or home)
  if ws == "/" then
    return "The workspace is the root directory /"
  elseif home and ws == home then
    return "The workspace is your home directory " .. ws
  end
  return nil
end

local function check_config(r, config)
  r.start("Configuration")
  local problems, warnings = config.validate(config.user or {})
  for _, p in ipairs(problems) do
    r.error(p)
  end
  for _, w in ipairs(warnings) do
    r.warn(w)
  end
  if #problems == 0 then
    r.ok("setup() options are valid")
  end
  r.info("workspace: " .. config.workspace() .. (config.options.trusted and " (trusted)" or " (read-only; set trusted = true to allow edits)"))
  if config.options.config then
    if vim.fn.filereadable(config.options.config) == 1 then
      r.ok("configuration file: " .. config.options.config)
    else
      r.error("configuration file not readable: " .. config.options.config)
    end
  end
end

-- Returns true when the binary runs.
local function check_binary(r, config)
  r.start("flow binary")
  local cmd = config.cmd()
  local bin = cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    r.error("flow binary not found or not executable: " .. bin, { require("flow.install").how() })
    return false
  end
  r.ok("binary: " .. vim.fn.exepath(bin))
  local argv = vim.deepcopy(cmd)
  argv[#argv + 1] = "version"
  local res = M.probe(argv, config.options.timeout)
  local version = res.stdout:match("^flow%s+(%S+)")
  if res.code == 0 and version then
    r.ok("version: " .. version)
    local built = res.stdout:match("%(commit (%x+)%)")
    local stale = require("flow.install").stale(bin, built)
    if stale then
      r.warn(stale, { "run :FlowInstall, or `make build` in the plugin's directory, then :checkhealth flow again" })
    elseif built then
      r.info("built from commit " .. built)
    end
  elseif res.code == -1 then
    r.error("`flow version` did not answer within " .. config.options.timeout .. " ms")
    return false
  else
    r.error("`flow version` failed: " .. vim.trim(res.stderr ~= "" and res.stderr or res.stdout))
    return false
  end
  return true
end

-- Reports one doctor finding: ok, a warning, or an error.
local function render(r, status, text, advice)
  if status == "ok" then
    r.ok(text)
  elseif status == "warning" or status == "unverified" then
    r.warn(text, advice)
  else
    r.error(text, advice)
  end
end

-- Renders `flow doctor`'s report: the configuration file flow loaded (when
-- setup() did not name one), the backend, each role's model, each check's
-- executable, then its warnings (the onboarding ones among them: no
-- configuration file, no checks, a language no lint check covers, the
-- workspace being / or the home directory). The plugin's own findings on
-- the configuration file, the checks and the workspace are shown unless
-- the doctor already warns about them.
local function render_doctor(r, report, explicit, ws)
  local warnings = type(report.warnings) == "table" and report.warnings or {}
  if explicit then
    -- Shown under Configuration already.
  elseif type(report.config_path) == "string" then
    r.ok("configuration file: " .. report.config_path)
  else
    local user = type(report.user_config) == "string" and report.user_config ~= "" and report.user_config or nil
    local text = "configuration file: none, the defaults are in use"
      .. (user and (" (flow reads " .. user .. " when it exists)") or "")
    r.info(text)
    if not mentions(warnings, { "configuration file" }) then
      r.warn("No configuration file was loaded, so flow runs on its defaults with no checks",
        { "create " .. (user or "the configuration file") .. " with the project's checks, or set `config` in setup()" })
    end
  end
  local where_ws = workspace_warning(ws)
  if where_ws and not mentions(warnings, { "workspace is" }) then
    r.warn(where_ws, { "start Neovim in the project's directory, or set `workspace` in setup()" })
  end
  -- Every server a role uses (a flow without [servers.NAME] reports one
  -- backend), each with its roles.
  local servers = type(report.servers) == "table" and #report.servers > 0 and report.servers
    or { type(report.backend) == "table" and report.backend or {} }
  local up = {}
  for _, b in ipairs(servers) do
    local where = tostring(b.base_url or "?") .. " (" .. tostring(b.api or "native") .. ")"
    local for_roles = (#servers > 1 and type(b.roles) == "table") and (" for " .. table.concat(b.roles, ", ")) or ""
    local key = "backend " .. (#servers > 1 and b.name and (tostring(b.name) .. " ") or "")
    up[b.name or "ollama"] = b.status == "ok"
    if b.status == "ok" then
      r.ok(key .. where .. " reachable" .. (b.version and (", version " .. tostring(b.version)) or "") .. for_roles)
    else
      local table_name = (b.name and b.name ~= "ollama") and ("servers." .. tostring(b.name)) or "ollama"
      render(r, b.status or "error", key .. where .. for_roles .. ": " .. tostring(b.error or b.status), {
        "start the server (`ollama serve`) or fix " .. table_name .. ".base_url in the configuration",
      })
    end
  end
  for _, m in ipairs(type(report.models) == "table" and report.models or {}) do
    local roles = type(m.roles) == "table" and table.concat(m.roles, ", ") or "?"
    if #servers > 1 and m.server then
      roles = roles .. " on " .. tostring(m.server)
    end
    local text = "model " .. tostring(m.model) .. " (" .. roles .. ")"
    if not up[m.server or "ollama"] then
      -- Whether the model is there cannot be known: no advice to pull it.
      r.warn(text .. ": not checked, the backend is unreachable")
    elseif m.status == "ok" then
      r.ok(text .. ": present, can call tools")
    else
      render(r, m.status or "error", text .. ": " .. tostring(m.error or m.status), {
        "pull it with `ollama pull " .. tostring(m.model) .. "` or pick a tool-capable model",
      })
    end
  end
  local checks = type(report.checks) == "table" and report.checks or {}
  if #checks == 0 and not mentions(warnings, { "no check" }) then
    r.warn("No checks are configured, so runs cannot be verified", { "add [checks.NAME] tables with the project's test and lint commands" })
  end
  for _, c in ipairs(checks) do
    local text = "check " .. tostring(c.name) .. ": " .. tostring(c.executable)
    if c.status == "ok" then
      r.ok(text .. " (" .. tostring(c.path) .. ")")
    else
      render(r, c.status or "error", text .. ": " .. tostring(c.error or c.status))
    end
  end
  for _, w in ipairs(warnings) do
    r.warn(tostring(w))
  end
end

-- The argv of `flow SUB` for the configured workspace and configuration.
local function flow_argv(config, sub)
  local argv = config.cmd()
  argv[#argv + 1] = sub
  if config.options.config then
    argv[#argv + 1] = "--config"
    argv[#argv + 1] = config.options.config
  end
  argv[#argv + 1] = "--workspace"
  argv[#argv + 1] = config.workspace()
  return argv
end

-- Adds the status report's warnings (the onboarding ones) to the doctor's
-- report, each once: a flow whose doctor does not carry them still has
-- them in `flow status` (which never contacts the model).
local function add_status_warnings(config, report)
  local res = M.probe(flow_argv(config, "status"), config.options.timeout)
  local ok, st = pcall(vim.json.decode, res.code == 0 and res.stdout or "")
  if not ok or type(st) ~= "table" or type(st.warnings) ~= "table" then
    return
  end
  report.warnings = type(report.warnings) == "table" and report.warnings or {}
  local seen = {}
  for _, w in ipairs(report.warnings) do
    seen[w] = true
  end
  for _, w in ipairs(st.warnings) do
    if type(w) == "string" and not seen[w] then
      seen[w] = true
      report.warnings[#report.warnings + 1] = w
    end
  end
end

local function check_doctor(r, config)
  r.start("Backend and checks (flow doctor)")
  local res = M.probe(flow_argv(config, "doctor"), config.options.timeout)
  if res.code == -1 then
    r.error("`flow doctor` did not answer within " .. config.options.timeout .. " ms")
    return
  end
  local ok, report = pcall(vim.json.decode, res.stdout)
  if not ok or type(report) ~= "table" then
    local msg = vim.trim(res.stderr ~= "" and res.stderr or res.stdout)
    if msg:find("unknown command", 1, true) then
      r.warn("this flow has no `doctor` command; backend and checks were not probed")
    else
      r.error("`flow doctor` failed: " .. msg)
    end
    return
  end
  add_status_warnings(config, report)
  render_doctor(r, report, config.options.config ~= nil, config.workspace())
end

--- The :checkhealth entry point.
function M.check()
  local r = reporter()
  local config = require("flow.config")
  check_neovim(r)
  check_config(r, config)
  if check_binary(r, config) then
    check_doctor(r, config)
  end
  r.start("Logs")
  r.info("log file: " .. config.log_file())
end

return M
