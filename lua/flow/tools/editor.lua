-- Editor tools of the editor tool module: editor_context (freshness API
-- v1, doc/design.md §11.7), editor_diagnostics (vim.diagnostic), editor_symbols and
-- editor_references (attached LSP clients only, bounded time).

local ws = require("flow.tools.workspace")
local lsp = require("flow.tools.lsp")

local fail = ws.fail
local api = vim.api

lsp.track()

local M = {}

-- Captures the buffer a tool works on: the loaded buffer of args.path, or
-- the current buffer when it is a workspace file. Returns {rel?, bufnr?}.
local function capture(path)
  if path ~= nil then
    local r = ws.resolve(path)
    ws.observe(r.rel)
    return { rel = r.rel, bufnr = ws.loaded_buffers(r.rel)[1], exists = r.st ~= nil }
  end
  ws.ensure()
  local cur = api.nvim_get_current_buf()
  local rel = ws.buffer_rel(cur)
  if rel and api.nvim_buf_is_loaded(cur) then
    return { rel = rel, bufnr = cur }
  end
  return {}
end

local clients_of = lsp.clients

local function lsp_summary(b)
  local out = {}
  for _, c in ipairs(clients_of(b)) do
    local caps = c.server_capabilities or {}
    out[#out + 1] = {
      id = c.id,
      name = c.name,
      initialized = c.initialized and true or false,
      encoding = c.offset_encoding or "utf-16",
      capabilities = {
        document_symbols = caps.documentSymbolProvider and true or false,
        references = caps.referencesProvider and true or false,
      },
    }
  end
  return { status = #out > 0 and "unverified" or "unavailable", clients = out }
end

--- editor_context {path?}: the captured buffer and the freshness fields.
function M.editor_context(args)
  local cap
  if args.path ~= nil then
    -- As capture(), but the path's buffer comes from the snapshot, which
    -- maps every buffer anyway (observe() puts the path in it).
    local r = ws.resolve(args.path)
    ws.observe(r.rel)
    cap = { rel = r.rel }
  else
    cap = capture(nil)
  end
  local snapshot, dirty = ws.snapshot()
  if args.path ~= nil then
    local entry = snapshot[cap.rel]
    for _, e in ipairs(entry and entry.buffers or {}) do
      if e.loaded then
        cap.bufnr = e.bufnr -- the lowest loaded bufnr, as loaded_buffers()
        break
      end
    end
  end
  local b = cap.bufnr
  return {
    status = "ok",
    workspace = ws.state.root,
    trusted = ws.state.trusted,
    path = cap.rel,
    bufnr = b,
    loaded = b ~= nil,
    filetype = b and api.nvim_buf_get_option(b, "filetype") or nil,
    changedtick = b and api.nvim_buf_get_changedtick(b) or 0,
    modified = b and api.nvim_buf_get_option(b, "modified") or false,
    dirty_buffers = dirty,
    workspace_snapshot = snapshot,
    workspace_snapshot_version = 1,
    lsp = lsp_summary(b),
    verified = false,
    safety = "Snapshot of editor state only; it proves nothing about correctness.",
  }
end

local severity_names = { "error", "warning", "info", "hint" }

local function diagnostic_items(b, rel, out)
  for _, d in ipairs(vim.diagnostic.get(b)) do
    out[#out + 1] = {
      path = rel,
      line = d.lnum + 1,
      column = d.col,
      end_line = (d.end_lnum or d.lnum) + 1,
      end_column = d.end_col or d.col,
      severity = d.severity,
      severity_name = severity_names[d.severity] or "unknown",
      message = d.message,
      source = d.source,
      code = d.code,
      namespace = d.namespace,
    }
  end
end

-- Waits, within timeout ms, for the language servers attached to target
-- t to start and to publish t's diagnostics once, when nothing has been
-- published for the buffer yet (a server that was just attached). Returns
-- nil, or one sentence saying what is still missing.
local function first_publish(t, timeout)
  local b = t.bufnr
  if #clients_of(b) == 0 or lsp.changes(b) > 0 or #vim.diagnostic.get(b) > 0 then
    return nil
  end
  local t0 = vim.loop.hrtime()
  local _, starting = lsp.wait_ready(b, timeout)
  if #starting > 0 then
    return "the language server " .. table.concat(starting, ", ") .. " attached to " .. t.rel
      .. " is still starting (not ready after " .. timeout .. " ms); call editor_diagnostics again in a moment"
  end
  local left = math.max(timeout - math.floor((vim.loop.hrtime() - t0) / 1e6), 0)
  if lsp.wait_published(b, 0, left) then
    return nil
  end
  return "the language server attached to " .. t.rel .. " has published no diagnostics for it within "
    .. timeout .. " ms; call editor_diagnostics again in a moment"
end

--- editor_diagnostics {path?, timeout?}: current diagnostics of one path's loaded
--- buffer, or of every loaded workspace buffer. failed when any has ERROR
--- severity; unavailable when nothing is loaded or nothing can report.
function M.editor_diagnostics(args)
  local items, targets = {}, {}
  if args.path ~= nil then
    local cap = capture(args.path)
    if not cap.bufnr then
      return {
        status = "unavailable",
        path = cap.rel,
        diagnostics = {},
        verified = false,
        reason = "the file is not loaded in a buffer; Neovim never opens files for diagnostics",
      }
    end
    targets[1] = { rel = cap.rel, bufnr = cap.bufnr }
  else
    ws.ensure()
    for rel, list in pairs(ws.buffers()) do
      for _, e in ipairs(list) do
        if e.loaded then
          targets[#targets + 1] = { rel = rel, bufnr = e.bufnr }
        end
      end
    end
    table.sort(targets, function(x, y)
      return x.bufnr < y.bufnr
    end)
  end
  local nclients, failed, waiting = 0, false, nil
  if args.path ~= nil then
    waiting = first_publish(targets[1], args.timeout or 5000)
  end
  for _, t in ipairs(targets) do
    diagnostic_items(t.bufnr, t.rel, items)
    nclients = nclients + #clients_of(t.bufnr)
  end
  for _, d in ipairs(items) do
    failed = failed or d.severity == vim.diagnostic.severity.ERROR
  end
  local status, reason = "unverified", "cached editor diagnostics are a snapshot, never proof of correctness"
  if failed then
    status = "failed"
  elseif #items == 0 and nclients == 0 then
    status = "unavailable"
    if args.path ~= nil then
      reason = "no language server is attached to " .. targets[1].rel .. " and nothing else reported diagnostics; "
        .. "flow never starts language servers, so configure one in Neovim for this file type"
    end
  elseif #items == 0 and waiting then
    status = "unavailable"
    reason = waiting
  end
  local res = {
    status = status,
    diagnostics = items,
    verified = false,
    coordinates = "line and end_line are 1-based; column and end_column are 0-based byte offsets",
    reason = reason,
  }
  if args.path ~= nil then
    local b = targets[1].bufnr
    res.path = targets[1].rel
    res.filetype = api.nvim_buf_get_option(b, "filetype")
    res.changedtick = api.nvim_buf_get_changedtick(b)
  end
  return res
end

-- Maps an LSP location URI to a workspace path, or nil when outside.
local function uri_rel(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok or type(fname) ~= "string" then
    return nil
  end
  local root = ws.state.root
  local prefix = root == "/" and "/" or root .. "/"
  local real = vim.loop.fs_realpath(fname) or fname
  if real:sub(1, #prefix) ~= prefix then
    return nil
  end
  return real:sub(#prefix + 1)
end

-- Sends method to the clients of the captured buffer that support it and
-- waits at most timeout ms. Returns the common result fields and, per
-- client, the raw LSP result.
local function lsp_request(args, method, capability, make_params)
  local cap = capture(args.path)
  local b = cap.bufnr
  local base = { path = cap.rel, verified = false, coordinates = "LSP ranges: 0-based lines, columns in each client's encoding" }
  if not b then
    base.status = "unavailable"
    base.reason = "the file is not loaded in a buffer; flow never opens files or starts language servers"
    return base
  end
  base.changedtick = api.nvim_buf_get_changedtick(b)
  if #clients_of(b) == 0 then
    base.status = "unavailable"
    base.reason = "no language server is attached to " .. cap.rel
      .. "; flow never starts language servers, so configure one in Neovim for this file type"
    return base
  end
  local timeout = args.timeout or 5000
  local t0 = vim.loop.hrtime()
  local ready, starting = lsp.wait_ready(b, timeout)
  local capable = {}
  for _, c in ipairs(ready) do
    if (c.server_capabilities or {})[capability] then
      capable[#capable + 1] = c
    end
  end
  if #capable == 0 then
    base.status = "unavailable"
    if #starting > 0 then
      base.starting = starting
      base.reason = "the language server " .. table.concat(starting, ", ") .. " attached to " .. cap.rel
        .. " is still starting (not ready after " .. timeout .. " ms); call the tool again in a moment"
    else
      base.reason = "no language server attached to " .. cap.rel .. " supports " .. method
    end
    return base
  end
  local tick, name = base.changedtick, api.nvim_buf_get_name(b)
  local left = math.max(timeout - math.floor((vim.loop.hrtime() - t0) / 1e6), 1)
  local results, err = vim.lsp.buf_request_sync(b, method, make_params(b, capable[1]), left)
  if not results then
    base.status = "timeout"
    base.error = "LSP request " .. method .. " did not finish within " .. timeout .. " ms (" .. tostring(err)
      .. "); the server may still be loading the workspace: call the tool again, or with a larger timeout"
    return base
  end
  if api.nvim_buf_get_changedtick(b) ~= tick or api.nvim_buf_get_name(b) ~= name then
    base.stale = true
  end
  return base, results, capable
end

-- Combines per-client statuses: the worst wins.
local rank = { error = 7, timeout = 6, stale = 5, failed = 4, unavailable = 3, unverified = 2, ok = 1 }
local function worst(list)
  local w
  for _, s in ipairs(list) do
    if not w or (rank[s] or 7) > (rank[w] or 7) then
      w = s
    end
  end
  return w or "unavailable"
end

local function collect(base, results, capable, key, convert)
  local clients, statuses, omitted = {}, {}, 0
  for _, c in ipairs(capable) do
    local r = results[c.id]
    local entry = { client_id = c.id, client_name = c.name, encoding = c.offset_encoding or "utf-16" }
    if not r then
      entry.status = "timeout"
    elseif r.error or r.err then
      entry.status = "error"
      local e = r.error or r.err
      entry.error = type(e) == "table" and tostring(e.message) or tostring(e)
    else
      local items, dropped = convert(r.result or {})
      entry.status = "unverified"
      entry[key] = items
      omitted = omitted + dropped
    end
    statuses[#statuses + 1] = entry.status
    clients[#clients + 1] = entry
  end
  base.clients = clients
  base.omitted_outside_workspace = omitted
  base.status = base.stale and "stale" or worst(statuses)
  base.stale = nil
  return base
end

local function convert_symbols(list, depth)
  local out, dropped = {}, 0
  depth = depth or 1
  for _, s in ipairs(list) do
    local item = { name = s.name, detail = s.detail, kind = s.kind, range = s.range, selection_range = s.selectionRange }
    if s.location then
      local rel = uri_rel(s.location.uri)
      if rel then
        item.location = { path = rel, range = s.location.range }
      else
        dropped = dropped + 1
        item = nil
      end
    end
    if item then
      if s.children and depth < 32 then
        local kids, d = convert_symbols(s.children, depth + 1)
        item.children = kids
        dropped = dropped + d
      end
      out[#out + 1] = item
    end
  end
  return out, dropped
end

--- editor_symbols {path?, timeout?}: document symbols from attached clients.
function M.editor_symbols(args)
  local base, results, capable = lsp_request(args, "textDocument/documentSymbol", "documentSymbolProvider", function(b)
    return { textDocument = { uri = vim.uri_from_bufnr(b) } }
  end)
  if not results then
    return base
  end
  return collect(base, results, capable, "symbols", function(r)
    return convert_symbols(r)
  end)
end

--- editor_references {path?, line?, column?, include_declaration?, timeout?}:
--- references of the symbol at a 1-based line and 0-based byte column.
function M.editor_references(args)
  local base, results, capable = lsp_request(args, "textDocument/references", "referencesProvider", function(b, client)
    local line = args.line
    local col = args.column
    if line == nil or col == nil then
      if b == api.nvim_get_current_buf() then
        local cur = api.nvim_win_get_cursor(0)
        line, col = line or cur[1], col or cur[2]
      else
        line, col = line or 1, col or 0
      end
    end
    local text = api.nvim_buf_get_lines(b, line - 1, line, false)[1]
    if not text then
      fail("line " .. line .. " is past the end of the buffer")
    end
    if col > #text then
      fail("column " .. col .. " is past the end of line " .. line)
    end
    local character = col
    if (client.offset_encoding or "utf-16") ~= "utf-8" then
      local ok, u32, u16 = pcall(vim.str_utfindex, text, col)
      if not ok then
        fail("column " .. col .. " splits a UTF-8 character")
      end
      character = client.offset_encoding == "utf-32" and u32 or u16
    end
    return {
      textDocument = { uri = vim.uri_from_bufnr(b) },
      position = { line = line - 1, character = character },
      context = { includeDeclaration = args.include_declaration ~= false },
    }
  end)
  if not results then
    return base
  end
  return collect(base, results, capable, "references", function(r)
    local out, dropped = {}, 0
    for _, loc in ipairs(r) do
      local rel = uri_rel(loc.uri)
      if rel then
        out[#out + 1] = { path = rel, range = loc.range }
      else
        dropped = dropped + 1
      end
    end
    return out, dropped
  end)
end

return M
