package plugin_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// flow.tools.sysio answers as luv and Vim do for every kind of file: the
// stat fields the module reads, the bytes at any offset (NUL bytes and a
// read larger than any before included), getftype()'s names, and luv's
// message for an open that fails. On Linux with LuaJIT it must be in use:
// the snapshot's speed depends on it.
func TestToolsSysioAnswersAsLuv(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 40000) // 640,000 bytes
	root := workspace(t, map[string]string{
		"a.txt":     "one\x00two\nthree\n",
		"big.bin":   big,
		"d/x.go":    "package x\n",
		"empty.txt": "",
	})
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "d/x.go"), filepath.Join(root, "hard.go")); err != nil {
		t.Fatal(err)
	}
	v := editor(t, root, false)
	out := lua(t, v, `
local sysio = require("flow.tools.sysio")
local uv = vim.loop
local root = select(1, ...)
local problems = {}
local function check(what, got, want)
  if vim.inspect(got) ~= vim.inspect(want) then
    problems[#problems + 1] = what .. ": got " .. vim.inspect(got) .. ", want " .. vim.inspect(want)
  end
end
if not sysio.available then
  return { available = false, ffi = jit ~= nil and jit.os or "no LuaJIT" }
end
local flags = 0x800 + ((jit.arch == "arm" or jit.arch == "arm64") and 0x8000 or 0x20000)
for _, name in ipairs({ "a.txt", "big.bin", "d/x.go", "empty.txt", "hard.go", "fifo", "d", "." }) do
  local abs = root .. "/" .. name
  local fd = assert(sysio.open(abs, flags))
  local got, want = assert(sysio.fstat(fd)), assert(uv.fs_fstat(fd))
  for _, k in ipairs({ "type", "mode", "size", "ino", "dev", "nlink", "mtime", "ctime" }) do
    check(name .. " " .. k, got[k], want[k])
  end
  if want.type == "file" then
    for _, r in ipairs({ { 1, 0 }, { 7, 2 }, { want.size + 1, 0 }, { 65536, 600000 }, { 10, want.size } }) do
      check(name .. " pread " .. r[1] .. "@" .. r[2], sysio.pread(fd, r[1], r[2]), uv.fs_read(fd, r[1], r[2]))
    end
  end
  sysio.close(fd)
  check(name .. " ftype", sysio.ftype(abs), vim.fn.getftype(abs))
end
for _, name in ipairs({ "link", "missing", "a.txt/x" }) do
  local abs = root .. "/" .. name
  check(name .. " ftype", sysio.ftype(abs), vim.fn.getftype(abs))
  local fd, err = sysio.open(abs, flags)
  local lfd, lerr = uv.fs_open(abs, flags, 0)
  check(name .. " open", { fd, err }, { lfd, lerr })
end
-- A reloaded module (a plugin developer's :lua package.loaded[...] = nil)
-- finds its FFI declarations and uses them again.
package.loaded["flow.tools.sysio"], package.loaded["flow.tools.sha256"] = nil, nil
local again = require("flow.tools.sysio")
check("reloaded available", again.available, true)
check("reloaded ftype", again.ftype(root .. "/d"), "dir")
check("reloaded sha256", require("flow.tools.sha256").hex("abc"), vim.fn.sha256("abc"))
return { available = true, problems = problems }
`, root)
	res, _ := out.(map[string]any)
	if res["available"] != true {
		t.Fatalf("flow.tools.sysio is not available on this Linux Neovim: %v", res)
	}
	if p, _ := res["problems"].([]any); len(p) > 0 {
		for _, x := range p {
			t.Error(x)
		}
	}
}

// The snapshot is the same with the FFI calls as with luv's, record for
// record (device numbers, times and hashes included): a regular file, one
// in a directory, one over the size limit, a directory and a missing path.
func TestToolsEditorContextSameWithoutFFI(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "aaaa\n", "d/b.txt": "b\n", "big.txt": strings.Repeat("x", 300000)})
	v := editor(t, root, false)
	for _, p := range []string{"a.txt", "d/b.txt", "big.txt", "d", "missing.txt"} {
		callTool(t, v, "editor_context", map[string]any{"path": p})
	}
	withFFI := callTool(t, v, "editor_context", map[string]any{})["workspace_snapshot"]
	// The same module loaded afresh with the FFI calls turned off.
	without := lua(t, v, `
for _, m in ipairs({ "flow.tools", "flow.tools.workspace", "flow.tools.files", "flow.tools.editor", "flow.tools.sysio" }) do
  package.loaded[m] = nil
end
package.loaded["flow.tools.sysio"] = { available = false }
local tools = require("flow.tools")
tools.setup({ workspace = select(1, ...) })
for _, p in ipairs({ "a.txt", "d/b.txt", "big.txt", "d", "missing.txt" }) do
  tools.call("editor_context", { path = p })
end
return tools.call("editor_context", {}).workspace_snapshot
`, root)
	if !reflect.DeepEqual(withFFI, without) {
		t.Errorf("snapshot with FFI = %v\nwithout = %v", withFFI, without)
	}
	snap, _ := withFFI.(map[string]any)
	for _, p := range []string{"a.txt", "d/b.txt", "big.txt", "d", "missing.txt"} {
		if _, ok := snap[p]; !ok {
			t.Errorf("snapshot has no %s: %v", p, snap)
		}
	}
}

// flow.tools.sha256 gives crypto/sha256's digest for any bytes, on every
// path it has: libcrypto's SHA256() (in use wherever libcrypto.so.3 is
// installed), vim.fn.sha256 and the Lua code for strings with NUL bytes,
// which M.hex uses when LuaJIT's FFI is missing.
func TestToolsSha256AllPaths(t *testing.T) {
	inputs := []string{"", "abc", "a\x00b", strings.Repeat("x", 55), strings.Repeat("y", 64),
		strings.Repeat("\xff\x00", 1000), strings.Repeat("0123456789", 100000)}
	v := editor(t, t.TempDir(), false)
	out := lua(t, v, `
local sha = require("flow.tools.sha256")
local res = { libcrypto = sha.uses_libcrypto(), hex = {}, lua = {}, vim = {}, fallback = {} }
for i, s in ipairs(select(1, ...)) do
  res.hex[i] = sha.hex(s)
  res.lua[i] = sha.lua(s)
  res.vim[i] = s:find("\0", 1, true) and res.lua[i] or vim.fn.sha256(s)
end
-- The module as it loads where LuaJIT's FFI is missing.
local ffi = package.loaded.ffi
package.loaded.ffi, package.preload.ffi = nil, function() error("no FFI here") end
package.loaded["flow.tools.sha256"] = nil
local plain = require("flow.tools.sha256")
res.plain_libcrypto = plain.uses_libcrypto()
for i, s in ipairs(select(1, ...)) do
  res.fallback[i] = plain.hex(s)
end
package.loaded.ffi, package.preload.ffi = ffi, nil
package.loaded["flow.tools.sha256"] = sha
return res
`, inputs)
	res, _ := out.(map[string]any)
	if res["plain_libcrypto"] != false {
		t.Errorf("without the FFI, flow.tools.sha256 still claims libcrypto: %v", res["plain_libcrypto"])
	}
	for _, path := range []string{"hex", "lua", "vim", "fallback"} {
		got, _ := res[path].([]any)
		if len(got) != len(inputs) {
			t.Fatalf("%s: %d digests for %d inputs", path, len(got), len(inputs))
		}
		for i, s := range inputs {
			if got[i] != hash(s) {
				t.Errorf("%s of input %d (%d bytes) = %v, want %s", path, i, len(s), got[i], hash(s))
			}
		}
	}
	installed := false
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib"} {
		if _, err := os.Stat(filepath.Join(dir, "libcrypto.so.3")); err == nil {
			installed = true
		}
	}
	if installed && res["libcrypto"] != true {
		t.Error("libcrypto.so.3 is installed but flow.tools.sha256 does not use it")
	}
}
