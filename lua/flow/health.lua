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
    r.error("flow binary not found or not executable: " .. bin, {
      "build it with `make build` (bin/flow) or `go install ./cmd/flow`, or set `cmd` in setup()",
    })
    return false
  end
  r.ok("binary: " .. vim.fn.exepath(bin))
  local argv = vim.deepcopy(cmd)
  argv[#argv + 1] = "version"
  local res = M.probe(argv, config.options.timeout)
  local version = res.stdout:match("^flow%s+(%S+)")
  if res.code == 0 and version then
    r.ok("version: " .. version)
  elseif res.code == -1 then
    r.error("`flow version` did not answer within " .. config.options.timeout .. " ms")
    return false
  else
    r.error("`flow version` failed: " .. vim.trim(res.stderr ~= "" and res.stderr or res.stdout))
    return false
  end
  return true
end

-- Renders one doctor probe.
local function render_probe(r, p)
  if type(p) ~= "table" then
    return
  end
  local text = tostring(p.name or p.check or "probe") .. ": " .. tostring(p.message or p.detail or p.error or p.status)
  local s = p.status
  if s == "ok" then
    r.ok(text)
  elseif s == "warning" or s == "warn" or s == "unverified" or s == "unavailable" then
    r.warn(text)
  else
    r.error(text)
  end
end

local function check_doctor(r, config)
  r.start("Backend and checks (flow doctor)")
  local argv = config.cmd()
  argv[#argv + 1] = "doctor"
  if config.options.config then
    argv[#argv + 1] = "--config"
    argv[#argv + 1] = config.options.config
  end
  argv[#argv + 1] = "--workspace"
  argv[#argv + 1] = config.workspace()
  local res = M.probe(argv, config.options.timeout)
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
  local probes = report.checks or report.probes
  if type(probes) == "table" and #probes > 0 then
    for _, p in ipairs(probes) do
      render_probe(r, p)
    end
  else
    render_probe(r, { name = "doctor", status = report.status, message = report.error or report.status })
  end
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
