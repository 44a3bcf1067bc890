-- flow.install: building bin/flow from this plugin's own checkout, for
-- installs that never ran `make build` (a plugin manager loading flow from
-- a local directory, a native pack/*/start clone). :FlowInstall runs
-- `go build` with progress and then generates the help tags; a missing
-- binary is reported with what to do instead of Neovim's E475.

local config = require("flow.config")
local log = require("flow.log")

local M = {}

local building -- the job id of a running build

--- The plugin's checkout (the repository root), or nil.
---@return string|nil
function M.root()
  return config.plugin_root()
end

--- The binary :FlowInstall builds: bin/flow in the checkout.
---@return string|nil
function M.bin()
  local root = M.root()
  return root and root .. "/bin/flow"
end

-- True when the checkout holds flow's Go source.
local function buildable(root)
  return root ~= nil and vim.fn.filereadable(root .. "/go.mod") == 1 and vim.fn.isdirectory(root .. "/cmd/flow") == 1
end

--- How to get a flow binary here, as one clause.
---@return string
function M.how()
  local root = M.root()
  if not buildable(root) then
    return "put flow on PATH (`go install ./cmd/flow` in flow's repository) or set `cmd` in setup()"
  end
  if vim.fn.executable("go") ~= 1 then
    return "install Go (it is not on PATH), then run :FlowInstall to build " .. M.bin()
  end
  return "run :FlowInstall to build " .. M.bin() .. " (or `make build` in " .. root .. ")"
end

--- Returns nil when argv0 can be started, else one sentence saying why
--- not and what to do.
---@param argv0 string
---@return string|nil
function M.problem(argv0)
  if vim.fn.executable(argv0) == 1 then
    return nil
  end
  if config.options.cmd then
    return string.format("flow: `cmd` %s is not executable: fix `cmd` in setup(), or remove it and %s", argv0, M.how())
  end
  if building then
    return "flow is being built (:FlowInstall); try again when it is done"
  end
  return "flow is not built yet: " .. M.how()
end

--- Generates the help tags of the checkout's doc/. Returns true, or false
--- and the error.
---@return boolean, string|nil
function M.helptags()
  local root = M.root()
  if not root then
    return false, "the plugin's directory is unknown"
  end
  local ok, err = pcall(vim.cmd, "helptags " .. vim.fn.fnameescape(root .. "/doc"))
  return ok, not ok and tostring(err) or nil
end

-- The version stamped into the binary: what `make build` stamps.
local function version(root)
  if vim.fn.executable("git") ~= 1 then
    return nil
  end
  local out = vim.fn.systemlist({ "git", "-C", root, "describe", "--tags", "--always", "--dirty" })
  if vim.v.shell_error ~= 0 or type(out[1]) ~= "string" or out[1] == "" then
    return nil
  end
  return out[1]
end

--- The HEAD commit of the checkout root (default: the plugin's), or nil
--- when root is not the top of a git checkout or git is missing.
---@param root string|nil
---@return string|nil
function M.head(root)
  root = root or M.root()
  if not root or vim.fn.executable("git") ~= 1 then
    return nil
  end
  local out = vim.fn.systemlist({ "git", "-C", root, "rev-parse", "--show-toplevel", "HEAD" })
  if vim.v.shell_error ~= 0 or type(out[1]) ~= "string" or type(out[2]) ~= "string" then
    return nil
  end
  -- A plugin folder inside another repository (a dotfiles checkout) has
  -- that repository's HEAD, which says nothing about flow's source.
  local top = vim.loop.fs_realpath(out[1]) or out[1]
  if top ~= (vim.loop.fs_realpath(root) or root) or not out[2]:match("^%x+$") then
    return nil
  end
  return out[2]
end

--- Returns one sentence when bin is the checkout's bin/flow and was built
--- from another commit than the checkout's HEAD (built is the commit the
--- binary reports, nil or "" when it carries none), saying how to rebuild;
--- nil when it is current, not the checkout's binary, or the checkout is
--- not a git checkout.
---@param bin string|nil
---@param built string|nil
---@return string|nil
function M.stale(bin, built)
  local own = M.bin()
  if not own or not bin or bin == "" then
    return nil
  end
  local real = vim.loop.fs_realpath(vim.fn.exepath(bin))
  if not real or real ~= vim.loop.fs_realpath(own) then
    return nil
  end
  local head = M.head()
  if not head or built == head then
    return nil
  end
  local fix = "run :FlowInstall (or `make build` in " .. M.root() .. ") to rebuild it"
  if built == nil or built == "" then
    return string.format("flow: %s carries no commit, so it may be older than the checkout (at %s); %s", own, head:sub(1, 12), fix)
  end
  return string.format("flow: %s was built from commit %s, but the checkout is at %s; %s", own, built:sub(1, 12), head:sub(1, 12), fix)
end

-- Shows a progress line in the command line without filling :messages.
local function progress(line)
  vim.schedule(function()
    pcall(vim.api.nvim_echo, { { "flow: " .. line } }, false, {})
  end)
end

---@class flow.InstallResult
---@field status string "ok" or "failed"
---@field bin string|nil the binary built
---@field error string|nil why it failed

--- Builds bin/flow with `go build` in the checkout, then generates the
--- help tags. Returns the job id, or nil and the reason it did not start
--- (also passed to on_done). Progress shows in the command line; the
--- outcome with vim.notify.
---@param opts {on_done?: fun(result: flow.InstallResult)}|nil
---@return integer|nil, string|nil
function M.install(opts)
  opts = opts or {}
  local function done(result)
    local level = result.status == "ok" and vim.log.levels.INFO or vim.log.levels.ERROR
    log.write(result.status == "ok" and "INFO" or "ERROR", "install: " .. (result.error or ("built " .. result.bin)))
    log.notify(result.status == "ok"
      and ("flow: built " .. result.bin .. " and the help tags (:help flow); :FlowStatus shows the set-up")
      or result.error, level)
    if opts.on_done then
      vim.schedule(function()
        pcall(opts.on_done, result)
      end)
    end
  end
  local function refuse(msg)
    done({ status = "failed", error = msg })
    return nil, msg
  end
  if building then
    return refuse("flow: a build is already running")
  end
  local root = M.root()
  if not buildable(root) then
    return refuse("flow: :FlowInstall builds flow from its source, which is not here (" .. tostring(root) .. "); "
      .. "put flow on PATH or set `cmd` in setup()")
  end
  if vim.fn.executable("go") ~= 1 then
    return refuse("flow: building flow needs Go, which is not on PATH; install Go and run :FlowInstall again")
  end
  local bin = M.bin()
  local argv = { "go", "build" }
  -- Stamped as `make build` stamps it, so that M.stale can tell this
  -- binary from one of an older checkout.
  local flags = {}
  local v = version(root)
  if v then
    flags[#flags + 1] = "-X main.version=" .. v
  end
  local head = M.head(root)
  if head then
    flags[#flags + 1] = "-X main.commit=" .. head
  end
  if #flags > 0 then
    vim.list_extend(argv, { "-ldflags", table.concat(flags, " ") })
  end
  vim.list_extend(argv, { "-o", bin, "./cmd/flow" })
  local tail = {}
  local function on_output(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= "" then
        log.write("INSTALL", line)
        tail[#tail + 1] = line
        if #tail > 15 then
          table.remove(tail, 1)
        end
        progress(line)
      end
    end
  end
  log.info("install: " .. table.concat(argv, " ") .. " in " .. root)
  local ok, job = pcall(vim.fn.jobstart, argv, {
    cwd = root,
    on_stdout = on_output,
    on_stderr = on_output,
    on_exit = function(_, code)
      building = nil
      if code ~= 0 or vim.fn.executable(bin) ~= 1 then
        local out = #tail > 0 and (":\n" .. table.concat(tail, "\n")) or ""
        done({ status = "failed", error = string.format("flow: building %s failed (go build exited %d)%s", bin, code, out) })
        return
      end
      local tok, terr = M.helptags()
      if not tok then
        done({ status = "failed", bin = bin, error = "flow: built " .. bin .. ", but :helptags failed: " .. terr })
        return
      end
      -- A running host is the old binary (or none); the next request
      -- starts the new one.
      local rpc = package.loaded["flow.rpc"]
      if rpc then
        rpc.stop_host()
      end
      done({ status = "ok", bin = bin })
    end,
  })
  if not ok or type(job) ~= "number" or job <= 0 then
    return refuse("flow: cannot run go build: " .. tostring(job))
  end
  building = job
  log.notify("flow: building " .. bin .. " with go build (a first build also downloads its modules)…")
  return job
end

--- :FlowInstall
function M.command()
  M.install()
end

return M
