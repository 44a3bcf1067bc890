-- flow.rpc: the `flow nvim` host channel. The host is started lazily with
-- jobstart({bin, "nvim", ...}, {rpc = true}) on first use and restarted by
-- the next request after it exits. Long operations (run, check, undo)
-- return at once; the host pushes their progress and result back by
-- evaluating `return require('flow.rpc').on_event(...)`.
--
-- This module sits at the bottom: it requires only flow.config, flow.log
-- and flow.tools, never flow or flow.ui. What a job's events and result
-- mean is the caller's business, passed in as callbacks (M.job).
--
-- Lua names each job: M.job mints the token and registers the job before
-- it sends the request, and the host tags every push with that token. A
-- push can therefore never arrive for a job Lua does not know yet, which
-- a token minted by the host allowed (the result could arrive before the
-- request returned).

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
  review = "flow_review",
}

local state = {
  chan = nil, -- channel id of the running host
  pid = nil,
  pending = {}, -- token → {op, chan, on_event, on_done}
  next_token = 0,
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
  -- The first command of a session (and of a restarted host) warns about a
  -- bin/flow built from another commit than its checkout.
  local stale = require("flow.install").stale(argv[1], type(res) == "table" and res.commit or nil)
  if stale then
    log.notify(stale, vim.log.levels.WARN)
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

--- Starts a long operation (flow_run, flow_check, flow_undo) named by a
--- token minted here. handlers.on_event(payload) is called for every
--- progress push and handlers.on_done(result) exactly once, with the
--- result, the refusal (busy) or the failure. Returns the token, or nil and
--- an error (on_done has the error too).
---@param op string
---@param method string
---@param arg any
---@param handlers {on_event?: fun(payload: table), on_done?: fun(result: table)}|nil
---@return integer|nil, string|nil
function M.job(op, method, arg, handlers)
  handlers = handlers or {}
  local p = { op = op, on_event = handlers.on_event, on_done = handlers.on_done }
  local chan, err = M.start()
  if not chan then
    M.finish(p, { status = "error", error = tostring(err) })
    return nil, tostring(err)
  end
  state.next_token = state.next_token + 1
  local token = state.next_token
  p.chan = chan
  state.pending[token] = p
  local ok, res = pcall(vim.rpcrequest, chan, method, arg, token)
  if not ok then
    log.error(method .. ": " .. tostring(res))
  end
  if ok and type(res) == "table" and res.status == "started" then
    return token
  end
  -- Refused (busy), failed, or an unexpected answer: no push will come.
  if state.pending[token] == p then
    state.pending[token] = nil
  end
  local result = type(res) == "table" and res or { status = "error", error = ok and "unexpected answer" or tostring(res) }
  M.finish(p, result)
  return nil, result.error or result.status
end

--- Delivers a result to its job's on_done (errors are logged).
function M.finish(p, result)
  if p.on_done then
    local ok, err = pcall(p.on_done, result)
    if not ok then
      log.error("on_done callback: " .. tostring(err))
    end
  end
end

--- Called by the host for every job push: {token, op, kind = "event" |
--- "done", text?, event?, result?}.
---@param payload table
function M.on_event(payload)
  if type(payload) ~= "table" then
    return
  end
  local p = state.pending[payload.token]
  if not p then
    return
  end
  if payload.kind == "event" then
    if p.on_event then
      pcall(p.on_event, payload)
    end
    return
  end
  if payload.kind == "done" then
    state.pending[payload.token] = nil
    local result = type(payload.result) == "table" and payload.result or { status = "error", error = "no result" }
    M.finish(p, result)
  end
end

return M
