-- The language-server side of the editor tools: the clients attached to a
-- buffer, a bounded wait for them to finish starting, a bounded wait for a
-- just-attached server's first diagnostics (editor_diagnostics), and the
-- edited buffer's new errors after a write (file_write, M.after_edit).
-- flow never starts a language server itself.
-- Neovim 0.7.2+: vim.lsp.get_clients (0.10) falls back to
-- vim.lsp.buf_get_clients; DiagnosticChanged exists since 0.7.

local api = vim.api

local M = {}

-- The buffer variable DiagnosticChanged increments, so that
-- editor_diagnostics can tell "published once" from "nothing yet". plugin/flow.lua counts the
-- same way from startup; M.track() covers a Neovim that never sourced it.
M.counter = "flow_diagnostic_changes"

--- Installs the DiagnosticChanged counter unless plugin/flow.lua did.
function M.track()
  if vim.g.flow_diagnostics_tracked or vim.fn.exists("##DiagnosticChanged") ~= 1 then
    return
  end
  vim.g.flow_diagnostics_tracked = true
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = api.nvim_create_augroup("flow_diagnostics", { clear = true }),
    callback = function(a)
      if a.buf and api.nvim_buf_is_valid(a.buf) then
        local ok, n = pcall(api.nvim_buf_get_var, a.buf, M.counter)
        api.nvim_buf_set_var(a.buf, M.counter, (ok and type(n) == "number" and n or 0) + 1)
      end
    end,
  })
end

--- How many times buffer b's diagnostics changed since tracking began.
---@param b integer
---@return integer
function M.changes(b)
  local ok, n = pcall(api.nvim_buf_get_var, b, M.counter)
  return ok and type(n) == "number" and n or 0
end

-- The clients attached to b that have not finished initializing:
-- vim.lsp.get_clients (0.10) and vim.lsp.buf_get_clients (0.7) list only
-- initialized clients, and no public API lists the others by buffer. Client
-- ids are sequential, so they are probed with vim.lsp.get_client_by_id up
-- to 32 ids past the highest initialized one; vim.lsp.buf_is_attached
-- counts a starting client on both versions.
local function starting(b, seen)
  local top = 0
  for _, c in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    top = math.max(top, c.id)
  end
  local out, misses, id = {}, 0, 1
  while misses < 32 do
    local c = vim.lsp.get_client_by_id(id)
    if c then
      misses = 0
      if not seen[id] and not c.initialized and vim.lsp.buf_is_attached(b, id) then
        out[#out + 1] = c
      end
    elseif id > top then
      misses = misses + 1
    end
    id = id + 1
  end
  return out
end

--- The LSP clients attached to buffer b, sorted by id, including those
--- still starting.
---@param b integer|nil
---@return table[]
function M.clients(b)
  if not b then
    return {}
  end
  local list, seen = {}, {}
  local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = b }) or vim.lsp.buf_get_clients(b) or {}
  for _, c in pairs(attached) do
    list[#list + 1] = c
    seen[c.id] = true
  end
  vim.list_extend(list, starting(b, seen))
  table.sort(list, function(x, y)
    return x.id < y.id
  end)
  return list
end

local function ready(c)
  return c.initialized and not (c.is_stopped and c.is_stopped())
end

--- Waits at most timeout ms for every client attached to b to finish
--- initializing. Returns the ready clients and the names of those still
--- starting.
---@param b integer
---@param timeout integer
---@return table[], string[]
function M.wait_ready(b, timeout)
  local list = M.clients(b)
  local function all_ready()
    for _, c in ipairs(list) do
      if not ready(c) then
        return false
      end
    end
    return true
  end
  if #list > 0 and not all_ready() then
    vim.wait(timeout, all_ready, 20)
  end
  local ok, starting = {}, {}
  for _, c in ipairs(list) do
    if ready(c) then
      ok[#ok + 1] = c
    else
      starting[#starting + 1] = c.name or ("client " .. c.id)
    end
  end
  return ok, starting
end

--- Waits at most timeout ms for buffer b's diagnostics to change after
--- the count since (M.changes before the edit). Returns whether they did
--- and the milliseconds waited.
---@param b integer
---@param since integer
---@param timeout integer
---@return boolean, integer
function M.wait_published(b, since, timeout)
  local t0 = vim.loop.hrtime()
  local done = vim.wait(timeout, function()
    return not api.nvim_buf_is_valid(b) or M.changes(b) > since
  end, 10)
  return done and true or false, math.floor((vim.loop.hrtime() - t0) / 1e6)
end

--- How long a file write waits for the edited buffer's new diagnostics.
M.after_edit_ms = 1500

-- Most error diagnostics an edit's result carries.
local max_errors = 20

local publish = "textDocument/publishDiagnostics"

-- How long an empty publish without a version waits for a later one.
M.settle_ms = 150

-- Classifies a publishDiagnostics result for buffer b: "answer" when it
-- carries the document version or diagnostics, "maybe" when it is empty and
-- unversioned, nil when it is about another file. A "maybe" can be the
-- empty publish a server sends when the reload's didClose reaches it
-- (pyright does), or a real answer from a server that leaves out version 0
-- (gopls does, and the reload restarts the version at 0): the first time
-- it counts only when nothing follows within M.settle_ms, and which of
-- the two it was is remembered per client (maybe_final).
local function classify(result, b)
  if type(result) ~= "table" or type(result.uri) ~= "string" then
    return nil
  end
  local ok, fname = pcall(vim.uri_to_fname, result.uri)
  if not ok or fname ~= api.nvim_buf_get_name(b) then
    return nil
  end
  if result.version ~= nil or (type(result.diagnostics) == "table" and #result.diagnostics > 0) then
    return "answer"
  end
  return "maybe"
end

-- What each client's empty unversioned publish after a reload turned out
-- to be: client id → true when nothing followed it (its answer: gopls),
-- false when an answer followed (a didClose publish: pyright). Learned on
-- the first edit, so that later edits need not wait M.settle_ms.
local maybe_final = {}

-- Clients that answered no edit within M.after_edit_ms (a server that
-- publishes no diagnostics at all: a formatter, a completion-only one):
-- client id → true. Later edits do not wait for them; any publish of theirs
-- for a watched buffer takes them off the list.
local silent = {}

-- Wraps each client's publishDiagnostics handler (client.handlers, which
-- both 0.7 and 0.10 consult before vim.lsp.handlers) to note the answers
-- for b: w.got for an answer, w.maybe the time of an undecided "maybe";
-- w.done() says whether to stop waiting, w.restore() puts the handlers
-- back.
local function watch(b, list)
  local w = { got = false, heard = {} }
  local saved = {}
  for _, c in ipairs(list) do
    if type(c.handlers) == "table" then
      local own = c.handlers[publish]
      saved[#saved + 1] = { c = c, own = own }
      c.handlers[publish] = function(err, result, ctx, config)
        local h = own or vim.lsp.handlers[publish]
        local r = h and h(err, result, ctx, config)
        local kind = classify(result, b)
        if kind then
          w.heard[c.id], silent[c.id] = true, nil
        end
        if kind == "answer" then
          if w.maybe_client == c.id then
            maybe_final[c.id] = false
          end
          w.got = true
        elseif kind == "maybe" then
          if maybe_final[c.id] then
            w.got = true
          elseif maybe_final[c.id] == nil then
            w.maybe, w.maybe_client = vim.loop.hrtime(), c.id
          end
        end
        return r
      end
    end
  end
  function w.done()
    if w.got then
      return true
    end
    if w.maybe ~= nil and vim.loop.hrtime() - w.maybe >= M.settle_ms * 1e6 then
      maybe_final[w.maybe_client] = true
      return true
    end
    return false
  end
  function w.restore()
    for _, s in ipairs(saved) do
      s.c.handlers[publish] = s.own
    end
  end
  return w
end

--- The edited buffer b's new error diagnostics, for a file write's result:
--- waits at most M.after_edit_ms for a language server's diagnostics of
--- the reloaded buffer. It must be called right after the reload, before
--- Neovim's loop runs, so that no answer is missed. nil when no language
--- server is attached to b, or only servers that answered no earlier edit
--- in time (they are not waited for again until they publish).
---@param b integer
---@param rel string
---@return table|nil
function M.after_edit(b, rel)
  local list = M.clients(b)
  local names, waiting = {}, 0
  for _, c in ipairs(list) do
    names[#names + 1] = c.name or ("client " .. c.id)
    if not silent[c.id] then
      waiting = waiting + 1
    end
  end
  if waiting == 0 then
    return nil
  end
  local w = watch(b, list)
  local t0 = vim.loop.hrtime()
  local ok, published = pcall(vim.wait, M.after_edit_ms, function()
    return w.done() or not api.nvim_buf_is_valid(b)
  end, 5)
  published = published or w.maybe ~= nil
  w.restore()
  local out = { clients = names, waited_ms = math.floor((vim.loop.hrtime() - t0) / 1e6) }
  if not ok or not published or not api.nvim_buf_is_valid(b) then
    for _, c in ipairs(list) do
      if c.initialized and not w.heard[c.id] then
        silent[c.id] = true
      end
    end
    out.status = "unavailable"
    out.reason = "no new diagnostics for " .. rel .. " within " .. M.after_edit_ms
      .. " ms of the edit (the language server may be slow or still starting); call editor_diagnostics to see them later"
    return out
  end
  local errors = {}
  local all = vim.diagnostic.get(b, { severity = vim.diagnostic.severity.ERROR })
  for i, d in ipairs(all) do
    if i > max_errors then
      break
    end
    errors[#errors + 1] = {
      line = d.lnum + 1,
      column = d.col,
      message = d.message,
      source = d.source,
      code = d.code,
    }
  end
  out.errors = errors
  out.omitted = #all > max_errors and (#all - max_errors) or nil
  out.status = #all > 0 and "failed" or "ok"
  if #all > 0 then
    out.reason = rel .. " has " .. #all .. " error diagnostic(s) from the editor's language server after this edit; fix them before running the checks"
  end
  return out
end

return M
