-- flow.tools: the editor tool module flow calls over msgpack-RPC (doc/design.md
-- §11.6). It has the contract of Rose's rose.tools:
--
--   require("flow.tools").setup({ workspace = "/abs/dir", trusted = true })
--   require("flow.tools").schemas()        --> OpenAI function-tool schemas
--   require("flow.tools").call(name, args) --> { status = "ok", ... }
--
-- call() never raises: every failure is { status = "error", error = msg }
-- (plus a machine-readable code where one applies). Arguments are checked
-- against the tool's schema first (closed objects, exact types; see
-- flow.tools.args).
--
-- flow evaluates only the two fixed strings
--   return require('flow.tools').schemas()
--   return require('flow.tools').call(...)
-- with the tool name and arguments passed as RPC data. This module
-- requires only cheap modules and never a UI module. Neovim 0.7.2+.

local ws = require("flow.tools.workspace")
local validate = require("flow.tools.args").validate

local M = {}

local path_prop = { type = "string", description = "Workspace-relative path, for example \"src/main.go\"." }
local timeout_prop = {
  type = "integer",
  minimum = 1,
  maximum = 120000,
  description = "Total deadline in milliseconds (default 5000).",
}

-- The tools, in the order schemas() returns them. Each has a description,
-- its properties, the required keys and the handler's module.
local specs = {
  {
    name = "editor_context",
    description = "Describe the editor: the buffer of path (or the current one), unsaved buffers and the workspace freshness snapshot (API v1).",
    properties = { path = path_prop },
    module = "editor",
  },
  {
    name = "editor_diagnostics",
    description = "Current vim.diagnostic items of a loaded buffer (or of every loaded workspace buffer). With path, waits (timeout) for a just-attached language server's first diagnostics. A snapshot, never proof.",
    properties = { path = path_prop, timeout = timeout_prop },
    module = "editor",
  },
  {
    name = "editor_symbols",
    description = "Document symbols from the LSP clients already attached to the file's loaded buffer.",
    properties = { path = path_prop, timeout = timeout_prop },
    module = "editor",
  },
  {
    name = "editor_references",
    description = "References of the symbol at line (1-based) and column (0-based byte) from attached LSP clients.",
    properties = {
      path = path_prop,
      timeout = timeout_prop,
      line = { type = "integer", minimum = 1, description = "1-based line." },
      column = { type = "integer", minimum = 0, description = "0-based UTF-8 byte column." },
      include_declaration = { type = "boolean", description = "Include the declaration (default true)." },
    },
    module = "editor",
  },
  {
    name = "file_read",
    description = "Read a file: a loaded buffer's text including unsaved edits, else the file on disk (at most 262144 bytes).",
    properties = { path = path_prop },
    required = { "path" },
    module = "files",
  },
  {
    name = "file_write",
    description = "Atomically write a file and refresh its loaded buffers. Refuses unsaved, read-only or non-UTF-8 buffers and buffers that differ from disk.",
    properties = {
      path = path_prop,
      content = { type = "string", description = "The complete new content." },
      expected_sha256 = { type = "string", description = "SHA-256 of the disk content the caller last read." },
      expected_changedtick = { type = "integer", minimum = 0, description = "changedtick of the buffer the caller last read." },
    },
    required = { "path", "content" },
    module = "files",
  },
  {
    name = "file_list",
    description = "List one workspace directory (not recursive), sorted by name.",
    properties = {
      path = { type = "string", description = "Workspace-relative directory (default \".\")." },
      limit = { type = "integer", minimum = 1, maximum = 1000, description = "Most entries returned (default 200)." },
    },
    module = "files",
  },
}

-- Each tool's parameters schema, which call() checks the arguments
-- against; schemas() hands out copies of it.
local by_name = {}
for _, s in ipairs(specs) do
  by_name[s.name] = s
  s.parameters = {
    type = "object",
    properties = next(s.properties) and s.properties or vim.empty_dict(),
    required = s.required or {},
    additionalProperties = false,
  }
end

--- Resets the module for a workspace: opts.workspace (default: the current
--- directory, resolved to its real path) and opts.trusted (only true
--- counts). The observed paths are forgotten. Returns the module.
---@param opts {workspace?: string, trusted?: boolean}|nil
---@return table
function M.setup(opts)
  local ok, err = pcall(ws.setup, opts)
  if not ok then
    error("flow.tools: " .. (type(err) == "table" and err.message or tostring(err)), 2)
  end
  return M
end

--- Returns the function-tool schemas, in a fixed order. Every parameters
--- object is closed (additionalProperties = false).
---@return table[]
function M.schemas()
  local out = {}
  for _, s in ipairs(specs) do
    out[#out + 1] = {
      type = "function",
      ["function"] = { name = s.name, description = s.description, parameters = vim.deepcopy(s.parameters) },
    }
  end
  return out
end

-- Makes a result safe to send over RPC: functions, userdata, cycles and
-- non-finite numbers are dropped, nesting is cut at 40 levels, a table with
-- both string and other keys keeps only its string keys, and empty maps
-- stay maps (vim.empty_dict()). A plain table (no metatable) that needs none
-- of this is returned as it is, so a large clean result (the workspace
-- snapshot) is walked but not copied; any other table is copied.
local clean

-- Copies table v for clean(): only its string keys when it has any.
local function clean_copy(v, depth, seen, has_string)
  seen[v] = true
  local out = {}
  for k, x in pairs(v) do
    if not has_string or type(k) == "string" then
      out[k] = clean(x, depth + 1, seen)
    end
  end
  seen[v] = nil
  if has_string and next(out) == nil then
    return vim.empty_dict()
  end
  return out
end

clean = function(v, depth, seen)
  local t = type(v)
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then
      return nil
    end
    return v
  elseif t == "string" or t == "boolean" then
    return v
  elseif t ~= "table" or depth > 40 or seen[v] then
    return nil
  end
  if v == vim.NIL then
    return nil
  end
  local mt = getmetatable(v)
  if next(v) == nil then
    if mt == nil then
      return v
    end
    return mt == getmetatable(vim.empty_dict()) and vim.empty_dict() or {}
  end
  if mt ~= nil then
    local has_string = false
    for k in pairs(v) do
      has_string = has_string or type(k) == "string"
    end
    return clean_copy(v, depth, seen, has_string)
  end
  -- One walk that changes nothing; a copy from the first value that
  -- cleaning changes, or when the keys turn out mixed.
  seen[v] = true
  local has_string, has_other, changed = false, false, false
  for k, x in pairs(v) do
    if type(k) == "string" then
      has_string = true
    else
      has_other = true
    end
    if clean(x, depth + 1, seen) ~= x then
      changed = true
      break
    end
  end
  seen[v] = nil
  if changed or (has_string and has_other) then
    if not has_string then
      for k in pairs(v) do
        if type(k) == "string" then
          has_string = true
          break
        end
      end
    end
    return clean_copy(v, depth, seen, has_string)
  end
  return v
end

local function error_result(msg, extra)
  local res = { status = "error", error = msg }
  for k, v in pairs(extra or {}) do
    res[k] = v
  end
  return res
end

-- Tools of the editor contract that only the editor module (Rose) has,
-- with why flow.tools does not (:help flow-tools-parity).
local elsewhere = {
  editor_lint = "editor_lint runs the linters of Rose's Diver registry, which this module does not have; "
    .. "use editor_diagnostics for Neovim's diagnostics, and flow's own checks for linting",
  editor_check = "editor_check runs checks configured in the editor; with this module flow runs its own "
    .. "configured checks ([checks.NAME], :FlowCheck) instead",
}

--- Calls tool name with args. Never raises; the result always has status.
---@param name any
---@param args any
---@return table
function M.call(name, args)
  local ok, res = pcall(function()
    if elsewhere[name] then
      return { status = "unavailable", error = elsewhere[name] }
    end
    if type(name) ~= "string" or not by_name[name] then
      return error_result("unknown tool: " .. (type(name) == "string" and name or type(name)))
    end
    local spec = by_name[name]
    if args == nil or args == vim.NIL then
      args = {}
    end
    local msg = validate(spec.parameters, args)
    if msg then
      return error_result(msg, { code = "invalid_arguments" })
    end
    local handler = require("flow.tools." .. spec.module)[name]
    local hok, out = pcall(handler, args)
    if not hok then
      if type(out) == "table" and out.flow_error then
        return error_result(out.message, out.extra)
      end
      return error_result(tostring(out))
    end
    if type(out) ~= "table" or type(out.status) ~= "string" then
      return error_result("tool " .. name .. " returned no status")
    end
    return out
  end)
  if not ok then
    return { status = "error", error = "internal error: " .. tostring(res) }
  end
  local cok, cleaned = pcall(clean, res, 0, {})
  if not cok or type(cleaned) ~= "table" or cleaned.status == nil then
    return { status = "error", error = "internal error: unserialisable result" }
  end
  return cleaned
end

return M
