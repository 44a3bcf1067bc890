-- Buffer-aware file tools of the editor tool module: file_read,
-- file_write and file_list (doc/design.md §11.6). Reads prefer a loaded buffer, so
-- unsaved edits are included; writes never clobber a buffer with unsaved
-- changes, are atomic on disk, and reload every loaded buffer for the path
-- so that it is unmodified, shows the new text and keeps its undo history.

local uv = vim.loop
local ws = require("flow.tools.workspace")
local sha256 = require("flow.tools.sha256")
local lsp = require("flow.tools.lsp")

local fail = ws.fail
local api = vim.api

local M = {}

-- Protected names at the workspace root (doc/design.md §3): the workspace's own
-- configuration files are never written by a tool.
local protected = { ["config.toml"] = true, [".flow.toml"] = true }

-- Reports whether s is valid UTF-8 (no overlong forms or surrogates).
local function valid_utf8(s)
  local i = 1
  while true do
    local j = s:find("[\128-\255]", i)
    if not j then
      return true
    end
    local n = ws.utf8_len(s, j)
    if not n then
      return false
    end
    i = j + n
  end
end
M.valid_utf8 = valid_utf8

-- The line separator of a buffer's 'fileformat'.
local function eol_of(b)
  local ff = api.nvim_buf_get_option(b, "fileformat")
  return ff == "dos" and "\r\n" or ff == "mac" and "\r" or "\n"
end

-- Reports whether a loaded buffer is empty (no line, not even an empty one):
-- such a buffer is written as zero bytes.
local function buffer_empty(b)
  if api.nvim_buf_line_count(b) ~= 1 or api.nvim_buf_get_lines(b, 0, 1, false)[1] ~= "" then
    return false
  end
  return api.nvim_buf_call(b, function()
    return vim.fn.line2byte(vim.fn.line("$") + 1)
  end) == -1
end

--- Returns the text of a loaded buffer as its file holds it: lines joined
--- with the 'fileformat' separator, a final separator when 'endofline' is
--- set (or, with fix = true, when 'fixendofline' would add one on write),
--- and a BOM when 'bomb' is set.
---@param b integer
---@param fix boolean|nil
---@return string
function M.buffer_text(b, fix)
  if buffer_empty(b) then
    return ""
  end
  local nl = eol_of(b)
  local text = table.concat(api.nvim_buf_get_lines(b, 0, -1, false), nl)
  local eol = api.nvim_buf_get_option(b, "endofline")
  if fix and api.nvim_buf_get_option(b, "fixendofline") then
    eol = true
  end
  if eol then
    text = text .. nl
  end
  if api.nvim_buf_get_option(b, "bomb") then
    text = "\239\187\191" .. text
  end
  return text
end

--- file_read {path}: the first loaded buffer's text (unsaved edits
--- included), else the file on disk.
function M.file_read(args)
  local r = ws.resolve(args.path)
  ws.observe(r.rel)
  local b = ws.loaded_buffers(r.rel)[1]
  local res = { status = "ok", path = r.rel }
  if b then
    res.content = M.buffer_text(b)
    res.source = "buffer"
    res.bufnr = b
    res.modified = api.nvim_buf_get_option(b, "modified")
    res.changedtick = api.nvim_buf_get_changedtick(b)
  else
    if not r.st then
      fail("no such file; check the path with file_list", { code = "not_found" })
    end
    if r.st.type ~= "file" then
      fail("only regular files can be read; this is a " .. r.st.type)
    end
    local data, err = ws.read_file(r.abs, r.st)
    if not data then
      fail(err)
    end
    res.content = data
    res.source = "disk"
    res.modified = false
  end
  if #res.content > ws.max_bytes then
    fail("file exceeds " .. ws.max_bytes .. " byte limit", { code = "too_large" })
  end
  res.bytes = #res.content
  res.sha256 = sha256.hex(res.content)
  return res
end

-- Checks one loaded buffer before a write; old is the disk text (nil for a
-- missing file). Returns nothing or raises the refusal.
local function check_buffer(b, old, expected_tick)
  local extra = { bufnr = b }
  if api.nvim_buf_get_option(b, "modified") then
    extra.code = "dirty_buffer"
    fail("refusing to overwrite an unsaved buffer (buffer " .. b .. "); save or discard its changes first", extra)
  end
  if api.nvim_buf_get_option(b, "readonly") or not api.nvim_buf_get_option(b, "modifiable") then
    extra.code = "read_only"
    fail("buffer is read-only or not modifiable (buffer " .. b .. ")", extra)
  end
  local fenc = api.nvim_buf_get_option(b, "fileencoding")
  if fenc ~= "" and fenc ~= "utf-8" and fenc ~= "utf8" then
    extra.code = "encoding"
    fail("non-UTF-8 buffers are unsupported (buffer " .. b .. " is " .. fenc .. ")", extra)
  end
  if api.nvim_buf_get_option(b, "bomb") then
    extra.code = "encoding"
    fail("BOM buffers require manual saving (buffer " .. b .. ")", extra)
  end
  local text = M.buffer_text(b)
  if text ~= (old or "") and M.buffer_text(b, true) ~= (old or "") then
    extra.code = "conflict"
    fail("disk differs from loaded buffer " .. b .. "; reload it manually", extra)
  end
  if expected_tick ~= nil and api.nvim_buf_get_changedtick(b) ~= expected_tick then
    extra.code = "conflict"
    fail("buffer changed since read (buffer " .. b .. ")", extra)
  end
end

-- Returns a fresh temporary name in dir, shaped like bufferfs's own
-- (.flow-tmp-<pid>-<16 hex digits>) so its stale-file cleanup and listings
-- recognise it.
local function temp_name(dir)
  local ok, raw = pcall(uv.random, 8)
  if not ok or type(raw) ~= "string" then
    raw = tostring(uv.hrtime()) .. tostring(math.random())
    raw = vim.fn.sha256(raw):sub(1, 8)
  end
  local hex = raw:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end)
  return dir .. "/.flow-tmp-" .. uv.os_getpid() .. "-" .. hex:sub(1, 16)
end

-- Writes data to a new temporary file next to abs, fsyncs it, runs
-- recheck, and renames it over abs; the directory is fsynced afterwards.
-- The temporary file never survives a failure.
local function atomic_write(abs, data, mode, recheck)
  local dir = abs:match("^(.*)/[^/]+$")
  dir = dir == "" and "/" or dir
  local tmp, fd, err
  for _ = 1, 10 do
    tmp = temp_name(dir)
    fd, err = uv.fs_open(tmp, "wx", 384)
    if fd then
      break
    end
  end
  if not fd then
    fail("cannot create temporary file: " .. tostring(err))
  end
  local ok, perr = pcall(function()
    local off = 0
    while off < #data do
      local n, werr = uv.fs_write(fd, data:sub(off + 1), off)
      if not n then
        error("write temporary file: " .. tostring(werr), 0)
      end
      off = off + n
    end
    assert(uv.fs_fchmod(fd, mode))
    assert(uv.fs_fsync(fd))
    assert(uv.fs_close(fd))
    fd = nil
    recheck()
    assert(uv.fs_rename(tmp, abs))
  end)
  if fd then
    uv.fs_close(fd)
  end
  if not ok then
    uv.fs_unlink(tmp)
    if type(perr) == "table" then
      error(perr, 0)
    end
    fail("atomic write failed: " .. tostring(perr))
  end
  local dfd = uv.fs_open(dir, "r", 0)
  if dfd then
    uv.fs_fsync(dfd)
    uv.fs_close(dfd)
  end
end

-- Reloads buffer b from disk so that it shows the new text, is unmodified
-- and keeps its undo history (a reload is undoable while the buffer has
-- fewer lines than 'undoreload'; the option is raised around the reload).
-- :edit! detaches the buffer's LSP clients (on 0.7 and 0.10 alike); those
-- that were attached are attached again, which sends the server the new
-- text (didOpen), whether or not the user's set-up re-attaches on FileType.
local function reload(b)
  local attached = lsp.clients(b)
  local ur = vim.o.undoreload
  local need = math.max(api.nvim_buf_line_count(b), 1) + 1
  local ok, err = pcall(function()
    if ur >= 0 and ur < need then
      vim.o.undoreload = need
    end
    api.nvim_buf_call(b, function()
      vim.cmd("silent keepalt keepjumps edit!")
    end)
  end)
  vim.o.undoreload = ur
  for _, c in ipairs(attached) do
    if not vim.lsp.buf_is_attached(b, c.id) and not (c.is_stopped and c.is_stopped()) then
      pcall(vim.lsp.buf_attach_client, b, c.id)
    end
  end
  return ok, err
end

-- Returns the stat fields that identify a file's content version.
local function version(st)
  if not st then
    return "missing"
  end
  return table.concat({ st.ino, st.dev, st.size, st.mtime.sec, st.mtime.nsec, st.ctime.sec, st.ctime.nsec }, ":")
end

--- file_write {path, content, expected_sha256?, expected_changedtick?}.
function M.file_write(args)
  if not ws.state.trusted then
    ws.ensure()
    if not ws.state.trusted then
      fail("workspace is not trusted; execution and writes are disabled", { code = "read_only" })
    end
  end
  local content = args.content
  if #content > ws.max_bytes then
    fail("content exceeds " .. ws.max_bytes .. " byte limit; write smaller files", { code = "too_large" })
  end
  local r = ws.resolve(args.path)
  ws.observe(r.rel)
  if protected[r.rel] then
    fail("operator configuration cannot be modified by file tools", { code = "protected" })
  end
  if not r.parent_exists then
    fail("parent directory does not exist; create it first", { code = "not_found" })
  end
  local old, mode = nil, 420 -- 0644 for a new file
  if r.st then
    if r.st.type ~= "file" then
      fail("only regular files can be overwritten; this is a " .. r.st.type)
    end
    local err
    old, err = ws.read_file(r.abs, r.st)
    if not old then
      fail(err)
    end
    mode = r.st.mode % 512
  end
  local bufs = ws.loaded_buffers(r.rel)
  if args.expected_changedtick ~= nil and #bufs == 0 then
    fail("expected_changedtick requires a loaded buffer")
  end
  local ticks = {}
  for _, b in ipairs(bufs) do
    check_buffer(b, old, args.expected_changedtick)
    ticks[b] = api.nvim_buf_get_changedtick(b)
  end
  if args.expected_sha256 ~= nil and (old == nil or sha256.hex(old) ~= args.expected_sha256) then
    fail("disk changed since read", { code = "conflict" })
  end
  if #bufs > 0 and not valid_utf8(content) or #bufs > 0 and content:find("\0", 1, true) then
    fail("content for a loaded buffer must be UTF-8 text without NUL bytes", { code = "encoding" })
  end
  local before = version(r.st)
  atomic_write(r.abs, content, mode, function()
    local now = ws.resolve(args.path)
    if version(now.st) ~= before then
      fail("disk changed while writing", { code = "conflict" })
    end
    for _, b in ipairs(bufs) do
      if not api.nvim_buf_is_loaded(b) or api.nvim_buf_get_changedtick(b) ~= ticks[b] then
        fail("buffer changed while writing (buffer " .. b .. ")", { code = "conflict", bufnr = b })
      end
    end
  end)
  local updated, problems = {}, {}
  for _, b in ipairs(bufs) do
    local ok, err = reload(b)
    if ok and M.buffer_text(b) == content and not api.nvim_buf_get_option(b, "modified") then
      updated[#updated + 1] = b
    else
      problems[#problems + 1] = "buffer " .. b .. " was not refreshed: " .. tostring(err or "its text differs")
    end
  end
  -- The first refreshed buffer's new error diagnostics, when a language
  -- server is attached to it (bounded wait, lsp.after_edit_ms).
  local diagnostics
  if updated[1] then
    diagnostics = lsp.after_edit(updated[1], r.rel)
  end
  local res = {
    status = "ok",
    path = r.rel,
    bytes = #content,
    sha256 = sha256.hex(content),
    created = r.st == nil,
    buffers_updated = updated,
    diagnostics = diagnostics,
  }
  if #problems > 0 then
    res.warnings = problems
  end
  return res
end

--- file_list {path?, limit?}: one directory, sorted by name, without .git
--- and without following symlinks (they are counted as omitted_unsafe).
function M.file_list(args)
  local r = ws.resolve(args.path or ".", true)
  if not r.st then
    fail("directory not found; use \".\" for the workspace root", { code = "not_found" })
  end
  if r.st.type ~= "directory" then
    fail("not a directory; read a file with file_read")
  end
  local limit = args.limit or 200
  local handle = uv.fs_scandir(r.abs)
  if not handle then
    fail("cannot list directory")
  end
  local entries, omitted = {}, 0
  while true do
    local name, typ = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    if name:lower() == ".git" or name:match("^%.flow%-tmp%-") then
      -- never listed
    elseif typ == "link" then
      omitted = omitted + 1
    else
      entries[#entries + 1] = { name = name, type = typ or "unknown" }
    end
  end
  table.sort(entries, function(a, b)
    return a.name < b.name
  end)
  local truncated = #entries > limit
  local out = {}
  for i = 1, math.min(#entries, limit) do
    local e = entries[i]
    e.path = r.rel == "." and e.name or r.rel .. "/" .. e.name
    out[i] = e
  end
  return { status = "ok", path = r.rel, entries = out, omitted_unsafe = omitted, truncated = truncated, recursive = false }
end

return M
