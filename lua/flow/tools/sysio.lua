-- Descriptor calls through LuaJIT's FFI for the reads of the editor tool
-- module: the type of a path (as getftype()), open, fstat (by statx),
-- pread and close.
--
-- The freshness snapshot reads and hashes the file of every workspace
-- buffer at each editor_context call; luv's fs_fstat builds a table of
-- sixteen fields (four of them tables) per file and every luv call goes
-- through a request object, which was a third of the snapshot's time with
-- 100 buffers. These functions take and return what luv's do (the same
-- descriptors, the same values), so a caller may mix them.
--
-- M.available is false off Linux, without LuaJIT's FFI or without statx in
-- the C library (glibc 2.28, musl 1.2.5); callers use luv then.

local M = { available = false }

local ok, ffi = pcall(require, "ffi")
if not ok or not jit or jit.os ~= "Linux" then
  return M
end

-- struct statx is the same on every Linux architecture (linux/stat.h).
-- The declarations are made once per Neovim: a reloaded module finds them.
local declared = pcall(ffi.typeof, "struct flow_statx")
local cdef_ok = declared or pcall(
  ffi.cdef,
  [[
struct flow_statx_timestamp { int64_t tv_sec; uint32_t tv_nsec; int32_t reserved; };
struct flow_statx {
  uint32_t mask; uint32_t blksize; uint64_t attributes;
  uint32_t nlink; uint32_t uid; uint32_t gid; uint16_t mode; uint16_t spare0;
  uint64_t ino; uint64_t size; uint64_t blocks; uint64_t attributes_mask;
  struct flow_statx_timestamp atime, btime, ctime, mtime;
  uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
  uint64_t spare2[14];
};
int statx(int dirfd, const char *pathname, int flags, unsigned int mask, struct flow_statx *buf);
int64_t pread(int fd, void *buf, size_t count, int64_t offset) __asm__("pread64");
int open(const char *pathname, int flags, ...);
int close(int fd);
char *strerror(int errnum);
]]
)
if not cdef_ok then
  -- Another module declared one of these C functions differently.
  return M
end

local C = ffi.C
local bit = require("bit")
if not pcall(function()
  return C.statx and C.pread and C.open and C.close and C.strerror
end) then
  return M
end

local AT_FDCWD = -100
local AT_SYMLINK_NOFOLLOW = 0x100
local AT_EMPTY_PATH = 0x1000
local STATX_TYPE = 0x1
local STATX_BASIC_STATS = 0x7ff

local sx = ffi.new("struct flow_statx")
local buf, cap = nil, 0

-- luv's names of the file types (st_mode & S_IFMT).
local types = {
  [0x8000] = "file",
  [0x4000] = "directory",
  [0xA000] = "link",
  [0x1000] = "fifo",
  [0xC000] = "socket",
  [0x2000] = "char",
  [0x6000] = "block",
}

-- glibc's makedev(), which libuv applies to statx's device numbers.
local function makedev(major, minor)
  local ma, mi = ffi.cast("uint64_t", major), ffi.cast("uint64_t", minor)
  local dev = bit.lshift(bit.band(ma, 0xfffff000ULL), 32)
    + bit.lshift(bit.band(ma, 0xfffULL), 8)
    + bit.lshift(bit.band(mi, 0xffffff00ULL), 12)
    + bit.band(mi, 0xffULL)
  return tonumber(dev)
end

local function errmsg(what)
  local e = ffi.errno()
  return what .. ": " .. ffi.string(C.strerror(e)), e
end

local function ts(t)
  return { sec = tonumber(t.tv_sec), nsec = tonumber(t.tv_nsec) }
end

-- getftype()'s names where they differ from luv's.
local vim_names = { directory = "dir", char = "cdev", block = "bdev" }

--- The type of path itself (a final symlink is not followed) as Vim's
--- getftype() names it: "file", "dir", "link", …; "" when path cannot be
--- inspected.
---@param path string
---@return string
function M.ftype(path)
  if C.statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE, sx) ~= 0 then
    return ""
  end
  local t = types[bit.band(sx.mode, 0xF000)]
  return t and (vim_names[t] or t) or "other"
end

--- Opens path with the numeric open(2) flags, as luv's fs_open(path,
--- flags, 0): a descriptor, or nil and luv's message (a failed open is
--- asked of luv again, for its message).
---@param path string
---@param flags integer
---@return integer|nil, string|nil
function M.open(path, flags)
  local fd = C.open(path, flags)
  if fd < 0 then
    return vim.loop.fs_open(path, flags, 0)
  end
  return fd
end

--- The fstat of descriptor fd with the fields of luv's fs_fstat() that
--- the module reads (type, mode, size, ino, dev, nlink, mtime, ctime),
--- each with luv's value; or nil and a message.
---@param fd integer
---@return table|nil, string|nil
function M.fstat(fd)
  if C.statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, sx) ~= 0 then
    return nil, errmsg("fstat")
  end
  local mode = sx.mode
  return {
    type = types[bit.band(mode, 0xF000)] or "unknown",
    mode = mode,
    size = tonumber(sx.size),
    ino = tonumber(sx.ino),
    dev = makedev(sx.dev_major, sx.dev_minor),
    nlink = tonumber(sx.nlink),
    mtime = ts(sx.mtime),
    ctime = ts(sx.ctime),
  }
end

--- Up to n bytes of fd from offset, as luv's fs_read(fd, n, offset): a
--- string ("" at the end of the file), or nil and a message.
---@param fd integer
---@param n integer
---@param offset integer
---@return string|nil, string|nil
function M.pread(fd, n, offset)
  if n > cap then
    buf, cap = ffi.new("uint8_t[?]", n), n
  end
  local got = C.pread(fd, buf, n, offset)
  if got < 0 then
    return nil, errmsg("read")
  end
  return ffi.string(buf, got)
end

--- Closes fd.
---@param fd integer
function M.close(fd)
  C.close(fd)
end

-- A call that must work: the declarations may be another module's.
M.available = pcall(function()
  assert(M.ftype("/") == "dir")
end)
return M
