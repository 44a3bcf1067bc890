-- flow.rpc: the `flow nvim` host channel. The host is started lazily with
-- jobstart({bin, "nvim", ...}, {rpc = true}) on first use and restarted by
-- the next request after it exits. Long operations (run, check, undo)
-- return a token at once; the host pushes their progress and result back
-- by evaluating `return require('flow.rpc').on_event(...)`.

local config = require("flow.config")
local log = require("flow.log")

local M = {}

--- The RPC methods of the host; equal to plugin/methods.go (a test checks).
M.methods = {
  configure = "flow_configure",
  run = "flow_run",
  check = "flow_check",
  status = "flow_status",
  stop = "flow_stop",
  undo = "flow_undo",
}

local state = {
  chan = nil, -- channel id of the running host
  pid = nil,
  pending = {}, -- token → {op, on_done}
  early = {}, -- token → result that arrived before its request returned
  stderr = {}, -- last lines of the host's stderr
  host = nil, -- flow_configure's answer
}

--- The channel id of the running host, or nil.
function M.channel()
  return state.chan
end

--- The pid of the running host, or nil.
function M.pid()
  return state.pid
end

--- The answer of flow_configure from the running host, or nil.
function M.host()
  return state.host
end

local function on_stderr(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= "" then
      log.write("HOST", line)
      table.insert(state.stderr, line)
      if #state.stderr > 20 then
        table.remove(state.stderr, 1)
      end
    end
  end
end

-- Fails every pending job of a host that exited.
local function fail_pending(chan, code)
  local pending = state.pending
  state.pending = {}
  local tail = table.concat(state.stderr, "\n")
  for token, p in pairs(pending) do
    if p.chan == chan then
      M.finish(p, {
        status = "error",
        error = string.format("flow host exited (code %d)%s", code, tail ~= "" and ": " .. tail or ""),
      })
    else
      state.pending[token] = p
    end
  end
end

--- Starts the host unless it runs. Returns the channel, or nil and an error
--- message.
---@return integer|nil, string|nil
function M.start()
  if state.chan then
    return state.chan
  end
  local argv = config.host_argv()
  local missing = require("flow.install").problem(argv[1])
  if missing then
    return nil, missing
  end
  local ws = config.workspace()
  -- The editor tool module must agree with the host on workspace and trust.
  local ok, err = pcall(function()
    require("flow.tools").setup({ workspace = ws, trusted = config.options.trusted })
  end)
  if not ok then
    return nil, tostring(err)
  end
  state.stderr = {}
  state.early = {}
  local cok, chan = pcall(vim.fn.jobstart, argv, {
    rpc = true,
    cwd = ws,
    env = { FLOW_LOG_FILE = config.log_file() },
    on_stderr = on_stderr,
    on_exit = function(job, code)
      if state.chan == job then
        state.chan, state.pid, state.host = nil, nil, nil
      end
      log.info("host exited with code " .. tostring(code))
      fail_pending(job, code)
    end,
  })
  if not cok or type(chan) ~= "number" or chan <= 0 then
    return nil, "cannot start " .. tostring(argv[1]) .. ": " .. (cok and "not executable" or tostring(chan))
  end
  state.chan = chan
  state.pid = vim.fn.jobpid(chan)
  log.info("host started: " .. table.concat(argv, " "))
  local rok, res = pcall(vim.rpcrequest, chan, M.methods.configure, {
    workspace = ws,
    trusted = config.options.trusted,
    log_file = config.log_file(),
  })
  if not rok then
    M.stop_host()
    return nil, "flow host did not start: " .. tostring(res) .. "\n" .. table.concat(state.stderr, "\n")
  end
  state.host = res
  for _, p in ipairs(type(res) == "table" and res.problems or {}) do
    log.notify("flow: " .. p, vim.log.levels.WARN)
  end
  return chan
end

--- Stops the host process (the next request starts a new one).
function M.stop_host()
  local chan = state.chan
  state.chan, state.pid, state.host = nil, nil, nil
  if chan then
    pcall(vim.fn.jobstop, chan)
  end
end

--- Sends a request, starting the host first. Never raises: returns true
--- and the result, or false and an error message.
---@param method string
---@return boolean, any
function M.request(method, ...)
  local chan, err = M.start()
  if not chan then
    return false, err
  end
  local ok, res = pcall(vim.rpcrequest, chan, method, ...)
  if not ok then
    log.error(method .. ": " .. tostring(res))
  end
  return ok, res
end

--- Starts a long operation (flow_run, flow_check, flow_undo) and calls
--- on_done(result) when the host reports it. Returns the token, or nil and
--- an error (the result is then passed to on_done too).
---@param op string
---@param method string
---@param arg any
---@param on_done fun(result: table)|nil
---@return integer|nil, string|nil
function M.job(op, method, arg, on_done)
  local ok, res = M.request(method, arg)
  local p = { op = op, on_done = on_done, chan = state.chan }
  if not ok then
    M.finish(p, { status = "error", error = tostring(res) })
    return nil, tostring(res)
  end
  if type(res) ~= "table" or res.token == nil then
    local result = type(res) == "table" and res or { status = "error", error = "unexpected answer" }
    M.finish(p, result)
    return nil, result.error or result.status
  end
  local early = state.early[res.token]
  state.early[res.token] = nil
  if early then
    M.finish(p, early)
  else
    state.pending[res.token] = p
  end
  return res.token
end

--- Delivers a result to its callback (scheduled; errors are logged).
function M.finish(p, result)
  if p.op == "run" or p.op == "check" or p.op == "undo" then
    require("flow").last_report = result
  end
  pcall(require("flow.ui").on_done, p.op, result)
  if p.on_done then
    vim.schedule(function()
      local ok, err = pcall(p.on_done, result)
      if not ok then
        log.error("on_done callback: " .. tostring(err))
      end
    end)
  end
end

--- Called by the host for every job event: {token, op, kind = "event" |
--- "done", text?, event?, result?}.
---@param payload table
function M.on_event(payload)
  if type(payload) ~= "table" then
    return
  end
  if payload.kind == "event" then
    pcall(require("flow.ui").on_event, payload)
    return
  end
  if payload.kind == "done" then
    local result = type(payload.result) == "table" and payload.result or { status = "error", error = "no result" }
    local p = state.pending[payload.token]
    state.pending[payload.token] = nil
    if p then
      M.finish(p, result)
    else
      -- The job ended before its request returned to M.job.
      state.early[payload.token] = result
    end
  end
end

return M
