-- Workspace state of the editor tool module: the root, trust, the observed
-- paths, path rules, the buffer ↔ path mapping, disk records and the
-- freshness snapshot (doc/design.md §11.7). Works on Neovim 0.7.2 (vim.loop only).

local uv = vim.loop
local sha256 = require("flow.tools.sha256")
local sysio = require("flow.tools.sysio")

-- File system calls: LuaJIT's FFI where it has them, else Vim's and luv's.
local getftype = sysio.available and sysio.ftype or vim.fn.getftype
-- getbufvar() reads a buffer option in a third of nvim_buf_get_option()'s
-- time on Neovim 0.10, where the latter is deprecated (and as fast on 0.7).
local getbufvar = vim.fn.getbufvar
local open = sysio.available and sysio.open or function(path, flags)
  return uv.fs_open(path, flags, 0)
end
local fstat = sysio.available and sysio.fstat or uv.fs_fstat
local pread = sysio.available and sysio.pread or uv.fs_read
local close = sysio.available and sysio.close or uv.fs_close

local M = {}

--- Largest file read or written through the module (doc/design.md §15).
M.max_bytes = 262144

---@class flow.tools.State
---@field root string|nil real path of the workspace root
---@field dev integer|nil
---@field ino integer|nil
---@field trusted boolean
---@field observed table<string, boolean> paths read, written or named
M.state = { root = nil, trusted = false, observed = {} }

--- Raises a tool error: call() turns it into {status = status, error = msg}
--- plus the fields of extra.
---@param msg string
---@param extra table|nil
function M.fail(msg, extra)
  error({ flow_error = true, message = msg, extra = extra }, 0)
end

local fail = M.fail

--- Resets the state for a workspace (opts.workspace, default the current
--- directory) and trust (only opts.trusted == true counts).
---@param opts table|nil
function M.setup(opts)
  opts = opts or {}
  local ws = opts.workspace
  if ws == nil or ws == vim.NIL then
    ws = uv.cwd()
  end
  if type(ws) ~= "string" or ws == "" then
    fail("workspace must be a directory path")
  end
  local real = uv.fs_realpath(ws)
  local st = real and uv.fs_stat(real)
  if not st or st.type ~= "directory" then
    fail("workspace is not an existing directory: " .. ws)
  end
  M.state = { root = real, dev = st.dev, ino = st.ino, trusted = opts.trusted == true, observed = {} }
end

--- Sets the module up with defaults if setup() never ran, then checks that
--- the root still names the same directory.
function M.ensure()
  if not M.state.root then
    M.setup({})
  end
  local s = M.state
  local st = uv.fs_lstat(s.root)
  if not st or st.type ~= "directory" or st.dev ~= s.dev or st.ino ~= s.ino or uv.fs_realpath(s.root) ~= s.root then
    fail("workspace root changed or is unavailable; restart flow")
  end
end

--- Records rel as an observed path (it joins every later snapshot).
function M.observe(rel)
  if rel and rel ~= "." then
    M.state.observed[rel] = true
  end
end

--- Returns the length of the valid UTF-8 sequence that starts at byte i of
--- s, or nil when the bytes there are not one. The second byte's range
--- shuts out overlong forms (after E0 and F0), UTF-16 surrogates (after ED)
--- and code points above U+10FFFF (after F4), as Go's decoder does.
---@param s string
---@param i integer
---@return integer|nil
function M.utf8_len(s, i)
  local c = s:byte(i)
  if not c or c < 0x80 then
    return c and 1 or nil
  end
  local n
  if c >= 0xC2 and c <= 0xDF then
    n = 2
  elseif c >= 0xE0 and c <= 0xEF then
    n = 3
  elseif c >= 0xF0 and c <= 0xF4 then
    n = 4
  else
    return nil
  end
  local lo = (c == 0xE0 and 0xA0) or (c == 0xF0 and 0x90) or 0x80
  local hi = (c == 0xED and 0x9F) or (c == 0xF4 and 0x8F) or 0xBF
  for k = 1, n - 1 do
    local b = s:byte(i + k)
    if not b or b < lo or b > hi then
      return nil
    end
    lo, hi = 0x80, 0xBF
  end
  return n
end

-- The number of characters of s as Go counts them (utf8.RuneCountInString):
-- a valid UTF-8 sequence is one character and so is each byte that is not
-- part of one. Counting only the bytes that start a sequence would count an
-- invalid path short, and accept a path that flow's Go side refuses as too
-- long.
local function nchars(s)
  local n, i = 0, 1
  while true do
    local j = s:find("[\128-\255]", i)
    if not j then
      return n + #s - i + 1
    end
    n = n + (j - i) + 1
    i = j + (M.utf8_len(s, j) or 1)
  end
end

-- Reports whether p starts with a Windows drive ("C:", "c:foo"). Only ASCII
-- letters count, whatever the locale says %a is.
local function has_drive(p)
  return p:find("^[A-Za-z]:") ~= nil
end

local not_relative = "absolute and Windows-style paths are not allowed; use a path relative to the workspace root"

--- Applies the lexical path rules and returns the cleaned path ("." for the
--- root) and its components. The rules and their order are those of flow's
--- Go side (bufferfs.ValidPath): both are held to one table of cases,
--- bufferfs/testdata/paths.json, because this module is also the only check
--- for editor clients that do not go through flow.
---@param p any
---@param allow_root boolean|nil
---@return string rel, string[] parts
function M.clean(p, allow_root)
  if type(p) ~= "string" or p == "" or p:find("\0", 1, true) then
    fail("path must be a nonempty relative string")
  end
  -- A string of at most 1024 bytes has at most 1024 characters.
  if #p > 1024 and nchars(p) > 1024 then
    fail("path exceeds 1024 characters")
  end
  if p:sub(1, 1) == "/" or p:find("\\", 1, true) or has_drive(p) then
    fail(not_relative)
  end
  local parts = {}
  for c in (p .. "/"):gmatch("([^/]*)/") do
    if c == ".." or (#c == 4 and c:lower() == ".git") then
      fail("parent traversal and .git access are not allowed")
    end
    if c ~= "" and c ~= "." then
      parts[#parts + 1] = c
    end
  end
  -- Dropping "." components can bring a drive to the front: "./C:" is "C:".
  if parts[1] and has_drive(parts[1]) then
    fail(not_relative)
  end
  if #parts > 32 then
    fail("path exceeds 32 components")
  end
  if #parts == 0 then
    if not allow_root then
      fail("expected a file path, not workspace root")
    end
    return ".", parts
  end
  return table.concat(parts, "/"), parts
end

--- Resolves a tool path inside the root without following any symlink:
--- every existing component is lstat'ed; intermediate ones must be
--- directories. A missing tail is allowed (st is nil then). root_checked
--- says the caller ran ensure() for this tool call already.
---
--- dirs, given only by the snapshot, memoises the lstat of intermediate
--- components (absolute path → {st, code}) for the rest of one snapshot, so
--- the shared parents of many paths are inspected once per call. The last
--- component is always inspected afresh; with dirs, a regular file is
--- found by getftype() (an lstat that builds no table) and the result has
--- kind = "file" and no st: disk_record() then describes the file by the
--- fstat of the descriptor it reads.
---@return {rel: string, abs: string, st: table|nil, parent_exists: boolean, kind: string|nil}
function M.resolve(p, allow_root, root_checked, dirs)
  if not root_checked then
    M.ensure()
  end
  local rel, parts = M.clean(p, allow_root)
  local root = M.state.root
  local abs = root
  -- With root_checked, ensure() just found the root a directory; only the
  -- root itself (no parts) needs its own stat then.
  local st = (root_checked and #parts > 0) and { type = "directory" } or uv.fs_lstat(root)
  local parent_exists = true
  for i, c in ipairs(parts) do
    abs = (abs == "/" and "" or abs) .. "/" .. c
    if st and dirs and i == #parts then
      local kind = getftype(abs)
      if kind == "link" then
        fail("symlinks are not allowed in file paths; use the real location of the file")
      elseif kind == "file" then
        return { rel = rel, abs = abs, parent_exists = true, kind = "file" }
      end
      -- Anything else (missing, a directory, a special file): lstat it.
    end
    if st then
      local cst, code
      local memo = dirs and i < #parts and dirs[abs]
      if memo then
        cst, code = memo.st, memo.code
      else
        local _
        cst, _, code = uv.fs_lstat(abs)
        if dirs and i < #parts then
          dirs[abs] = { st = cst, code = code }
        end
      end
      if not cst then
        if code == "ENOTDIR" then
          fail("a parent of the path is not a directory")
        elseif code ~= "ENOENT" then
          fail("cannot inspect path: " .. tostring(code))
        end
        parent_exists = i == #parts
      elseif cst.type == "link" then
        fail("symlinks are not allowed in file paths; use the real location of the file")
      elseif i < #parts and cst.type ~= "directory" then
        fail("a parent of the path is not a directory")
      end
      st = cst
    end
  end
  return { rel = rel, abs = abs, st = st, parent_exists = parent_exists }
end

-- The canonical absolute form of a buffer name: its real path, or the real
-- path of its directory joined with its base name when the file is missing.
local function canonical(name)
  local real = uv.fs_realpath(name)
  if real then
    return real
  end
  local dir, base = name:match("^(.*)/([^/]+)$")
  if not dir then
    return name
  end
  local rdir = uv.fs_realpath(dir == "" and "/" or dir)
  if rdir then
    return (rdir == "/" and "" or rdir) .. "/" .. base
  end
  return name
end

--- Returns the workspace-relative path of a normal file buffer, or nil
--- when the buffer is not a file inside the workspace. A name under the
--- root whose components resolve() accepts is its own real path (the root
--- is real and no component is a symlink), which spares a realpath; its
--- resolve() result goes into resolved[rel] when resolved is given; dirs
--- is as for resolve().
---@param bufnr integer
---@param resolved table|nil
---@param dirs table|nil
---@return string|nil
function M.buffer_rel(bufnr, resolved, dirs)
  if getbufvar(bufnr, "&buftype") ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:sub(1, 1) ~= "/" then
    return nil
  end
  local root = M.state.root
  local prefix = root == "/" and "/" or root .. "/"
  if name:sub(1, #prefix) == prefix then
    local rel = name:sub(#prefix + 1)
    local ok, r = pcall(M.resolve, rel, false, true, dirs)
    if ok and r.rel == rel then
      if resolved then
        resolved[rel] = r
      end
      return rel
    end
  end
  local canon = canonical(name)
  if canon:sub(1, #prefix) ~= prefix then
    return nil
  end
  local ok, rel = pcall(M.clean, canon:sub(#prefix + 1))
  if not ok then
    return nil
  end
  return rel
end

local function by_bufnr(a, b)
  return a.bufnr < b.bufnr
end

--- Maps every normal buffer inside the workspace (loaded or not) to its
--- path: rel → list of {bufnr, changedtick, modified, loaded} by bufnr.
--- resolved and dirs are as for buffer_rel().
---@param resolved table|nil
---@param dirs table|nil
---@return table<string, table[]>
function M.buffers(resolved, dirs)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local rel = vim.api.nvim_buf_is_valid(b) and M.buffer_rel(b, resolved, dirs)
    if rel then
      local loaded = vim.api.nvim_buf_is_loaded(b)
      local list = out[rel] or {}
      out[rel] = list
      list[#list + 1] = {
        bufnr = b,
        changedtick = vim.api.nvim_buf_get_changedtick(b),
        modified = loaded and getbufvar(b, "&modified") == 1,
        loaded = loaded,
      }
    end
  end
  for _, list in pairs(out) do
    if #list > 1 then
      table.sort(list, by_bufnr)
    end
  end
  return out
end

--- Returns the loaded buffers for rel, by bufnr.
---@param rel string
---@return integer[]
function M.loaded_buffers(rel)
  local found = {}
  for _, e in ipairs(M.buffers()[rel] or {}) do
    if e.loaded then
      found[#found + 1] = e.bufnr
    end
  end
  return found
end

-- open(2) flags for reading without following a final symlink and without
-- blocking on a FIFO swapped in after the checks (Linux values).
local function read_flags()
  if jit and jit.os == "Linux" then
    local nofollow = (jit.arch == "arm" or jit.arch == "arm64") and 0x8000 or 0x20000
    return 0x800 + nofollow -- O_RDONLY | O_NONBLOCK | O_NOFOLLOW
  end
  return "r"
end

--- Reads the regular file abs that lstat described as st, refusing it if
--- the opened file is not that file (when st is given), not regular,
--- multiply linked or larger than limit. Returns the bytes, or nil and a
--- message; and the fstat of the opened file, when it could be opened.
---@return string|nil, string|nil, table|nil
function M.read_file(abs, st, limit)
  limit = limit or M.max_bytes
  local fd, err = open(abs, read_flags())
  if not fd then
    return nil, "cannot open file: " .. tostring(err)
  end
  local fst = fstat(fd)
  local problem
  if not fst or fst.type ~= "file" then
    problem = "only regular files can be read"
  elseif st and (fst.ino ~= st.ino or fst.dev ~= st.dev) then
    problem = "the file changed while it was opened; try again"
  elseif fst.nlink > 1 then
    problem = "multiply linked files are not allowed in file paths"
  elseif fst.size > limit then
    problem = "file exceeds " .. limit .. " byte limit"
  end
  if problem then
    close(fd)
    return nil, problem, fst
  end
  -- Reads ask for one byte more than the file had at fstat, so a file
  -- that grew meanwhile is still read to its end; a short read of a
  -- regular file is its end, which spares the read that would return "".
  local chunks, total = {}, 0
  local want = math.min(fst.size, limit) + 1
  while true do
    local data, rerr = pread(fd, want, total)
    if not data then
      close(fd)
      return nil, "cannot read file: " .. tostring(rerr), fst
    end
    total = total + #data
    if total > limit then
      close(fd)
      return nil, "file exceeds " .. limit .. " byte limit", fst
    end
    if #data < want and #chunks == 0 then
      close(fd)
      return data, nil, fst -- the whole file in one read, the usual case
    end
    chunks[#chunks + 1] = data
    if #data < want then
      break
    end
    want = 65536
  end
  close(fd)
  return table.concat(chunks), nil, fst
end

--- Describes rel on disk for the snapshot: {exists = false}, a stat record
--- with sha256 (or hash_status = "unavailable"), or an error record.
--- root_checked and dirs are as for resolve(); r, when given, is rel's
--- resolve() result from this same call.
---@param rel string
---@param root_checked boolean|nil
---@param r table|nil
---@param dirs table|nil
---@return table
function M.disk_record(rel, root_checked, r, dirs)
  local ok = true
  if not r then
    ok, r = pcall(M.resolve, rel, false, root_checked, dirs)
  end
  if not ok then
    return { status = "error", reason = "path is no longer safely accessible" }
  end
  local st, data = r.st, nil
  if r.kind == "file" then
    -- A regular file by getftype(): the record and the hash both come
    -- from the one descriptor read (O_NOFOLLOW), so they describe the same
    -- file. Opened with O_NOFOLLOW, it cannot be a symlink swapped in since;
    -- one that cannot be opened any more is described by lstat instead.
    local bytes, _, fst = M.read_file(r.abs, nil)
    data = bytes
    if not fst then
      return M.disk_record(rel, root_checked)
    end
    st = fst
  elseif not st then
    return { exists = false }
  else
    data = st.type == "file" and st.size <= M.max_bytes and M.read_file(r.abs, st)
  end
  local rec = {
    exists = true,
    type = st.type,
    size = st.size,
    ino = st.ino,
    dev = st.dev,
    -- luv's time tables are {sec, nsec}, made afresh by every stat.
    mtime = st.mtime,
    ctime = st.ctime,
  }
  if data then
    rec.sha256 = sha256.hex(data)
  else
    rec.hash_status = "unavailable"
  end
  return rec
end

--- Returns the workspace snapshot: a map from path to {path, buffers,
--- disk} covering every workspace buffer and every observed path (an empty
--- map when there is none), and the dirty buffers sorted by path and
--- changedtick.
---@return table snapshot, table[] dirty
function M.snapshot()
  -- The root is checked once for the whole snapshot, not once per path:
  -- every record is still read and hashed from the bytes on disk now.
  -- The paths of the buffers are resolved once, for both the mapping and
  -- the disk record, and each parent directory is lstat'ed once per
  -- snapshot; each path's own lstat, open and hash are never reused.
  local root_ok = pcall(M.ensure)
  local resolved = root_ok and {} or nil
  local dirs = root_ok and {} or nil
  local bufs = M.buffers(resolved, dirs)
  local snap, dirty = {}, {}
  local function add(rel)
    if rel ~= "." and not snap[rel] then
      local disk = M.disk_record(rel, root_ok, resolved and resolved[rel], dirs)
      snap[rel] = { path = rel, buffers = bufs[rel] or {}, disk = disk }
    end
  end
  for rel, list in pairs(bufs) do
    add(rel)
    for _, e in ipairs(list) do
      if e.loaded and e.modified then
        dirty[#dirty + 1] = { path = rel, changedtick = e.changedtick }
      end
    end
  end
  for rel in pairs(M.state.observed) do
    add(rel)
  end
  table.sort(dirty, function(a, b)
    if a.path ~= b.path then
      return a.path < b.path
    end
    return a.changedtick < b.changedtick
  end)
  if next(snap) == nil then
    snap = vim.empty_dict()
  end
  return snap, dirty
end

return M
