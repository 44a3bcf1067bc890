package plugin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The contract of lua/flow/tools.lua (doc/design.md §11.6), driven through the same
// fixed Lua strings flow evaluates.

func TestToolsSchemas(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	out := lua(t, v, "return require('flow.tools').schemas()")
	list, ok := out.([]any)
	if !ok {
		t.Fatalf("schemas() = %#v, want an array", out)
	}
	var names []string
	for _, e := range list {
		m := e.(map[string]any)
		fn := m["function"].(map[string]any)
		name := fn["name"].(string)
		names = append(names, name)
		if m["type"] != "function" || fn["description"] == "" {
			t.Errorf("schema %s = %v, want a described function tool", name, m)
		}
		params := fn["parameters"].(map[string]any)
		if params["type"] != "object" || params["additionalProperties"] != false {
			t.Errorf("schema %s parameters = %v, want a closed object", name, params)
		}
		if _, ok := params["properties"].(map[string]any); !ok {
			t.Errorf("schema %s properties = %#v, want a map", name, params["properties"])
		}
		if _, ok := params["required"].([]any); !ok {
			t.Errorf("schema %s required = %#v, want an array", name, params["required"])
		}
	}
	want := []string{"editor_context", "editor_diagnostics", "editor_symbols", "editor_references", "file_read", "file_write", "file_list"}
	if !slices.Equal(names, want) {
		t.Errorf("schemas() names = %v, want %v", names, want)
	}
}

// call() never raises, whatever it is given, and the editor survives.
func TestToolsCallNeverRaises(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "x\n"})
	v := editor(t, root, true)
	tests := []struct {
		name string
		tool string // Lua expression
		args string // Lua expression
		want string
	}{
		{"nil name", "nil", "nil", "unknown tool"},
		{"number name", "42", "{}", "unknown tool"},
		{"injection in name", `"x'); os.exit() --"`, "{}", "unknown tool"},
		{"string args", `"file_read"`, `"path"`, "arguments must be an object"},
		{"array args", `"file_read"`, `{1, 2}`, "must be an object"},
		{"unknown key", `"file_read"`, `{path = "a.txt", bogus = 1}`, "unknown argument: bogus"},
		{"missing key", `"file_write"`, `{path = "a.txt"}`, "missing argument: content"},
		{"wrong type", `"file_read"`, `{path = 12}`, "path must be a string"},
		{"nil value", `"file_read"`, `{path = vim.NIL}`, "path must be a string"},
		{"fraction for integer", `"file_list"`, `{limit = 1.5}`, "limit must be an integer"},
		{"boolean for integer", `"file_list"`, `{limit = true}`, "limit must be an integer"},
		{"below minimum", `"file_list"`, `{limit = 0}`, "between 1 and 1000"},
		{"infinite", `"file_list"`, `{limit = math.huge}`, "limit must be an integer"},
		{"injection in path", `"file_read"`, `{path = "a'); os.exit(1) --"}`, "no such file"},
		{"absolute path", `"file_read"`, `{path = "/etc/passwd"}`, "absolute"},
		{"traversal", `"file_read"`, `{path = "../x"}`, "parent traversal"},
		{"git", `"file_read"`, `{path = ".GIT/config"}`, ".git"},
		{"deep path", `"file_read"`, `{path = string.rep("d/", 33) .. "f"}`, "32 components"},
		{"directory", `"file_read"`, `{path = "."}`, "not workspace root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := lua(t, v, "return require('flow.tools').call("+tc.tool+", "+tc.args+")")
			res, ok := out.(map[string]any)
			if !ok {
				t.Fatalf("call(%s, %s) = %#v, want an object", tc.tool, tc.args, out)
			}
			msg, _ := res["error"].(string)
			if res["status"] != "error" || !strings.Contains(msg, tc.want) {
				t.Errorf("call(%s, %s) = %v, want status error containing %q", tc.tool, tc.args, res, tc.want)
			}
		})
	}
	if got := lua(t, v, "return 1 + 1"); asInt(got) != 2 {
		t.Fatalf("Neovim after garbage calls: %v", got)
	}
}

// call() sends only what RPC can carry, whatever a handler returns: it
// drops functions, non-finite numbers and cycles, keeps only the string
// keys of a mixed table, keeps empty maps maps, and passes a plain result
// through unchanged, also when the thing to drop is deep inside it.
func TestToolsCallCleansResults(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	out := lua(t, v, `local ed = require('flow.tools.editor')
		local orig = ed.editor_context
		local cyc = { name = 'c' }
		cyc.self = cyc
		ed.editor_context = function()
			return {
				status = 'ok',
				plain = { list = { 1, 2, { a = 'x', t = true } }, map = { k = { n = 3.5 } } },
				deep = { a = { b = { c = { keep = 1, f = print, nan = 0 / 0, inf = math.huge } } } },
				mixed = { 'dropped', key = 'kept' },
				cycle = cyc,
				empty_map = vim.empty_dict(),
				empty_list = {},
				meta = setmetatable({ m = 1 }, { __index = function() return 'x' end }),
				only_bad = { f = print },
			}
		end
		local ok, res = pcall(require('flow.tools').call, 'editor_context', {})
		ed.editor_context = orig
		assert(ok, res)
		return res`)
	res, ok := out.(map[string]any)
	if !ok {
		t.Fatalf("call() = %#v, want an object", out)
	}
	for key, want := range map[string]string{
		"plain":      "map[list:[1 2 map[a:x t:true]] map:map[k:map[n:3.5]]]",
		"deep":       "map[a:map[b:map[c:map[keep:1]]]]",
		"mixed":      "map[key:kept]",
		"cycle":      "map[name:c]",
		"empty_map":  "map[]",
		"empty_list": "[]",
		"meta":       "map[m:1]",
		"only_bad":   "map[]",
	} {
		if got := fmt.Sprint(res[key]); got != want {
			t.Errorf("call() %s = %s, want %s", key, got, want)
		}
	}
	if _, isMap := res["empty_map"].(map[string]any); !isMap {
		t.Errorf("call() empty_map = %#v, want a map", res["empty_map"])
	}
	if _, isMap := res["only_bad"].(map[string]any); !isMap {
		t.Errorf("call() only_bad = %#v, want a map", res["only_bad"])
	}
	if _, isList := res["empty_list"].([]any); !isList {
		t.Errorf("call() empty_list = %#v, want a list", res["empty_list"])
	}
}

func TestToolsSymlinkRefused(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "x\n"})
	if err := os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	v := editor(t, root, true)
	for _, p := range []string{"link.txt", "out/x.txt"} {
		for _, tool := range []string{"file_read", "file_write"} {
			args := map[string]any{"path": p}
			if tool == "file_write" {
				args["content"] = "y"
			}
			res := callTool(t, v, tool, args)
			if res["status"] != "error" || !strings.Contains(res["error"].(string), "symlink") {
				t.Errorf("%s(%s) = %v, want a symlink refusal", tool, p, res)
			}
		}
	}
	if got := readFile(t, root, "a.txt"); got != "x\n" {
		t.Errorf("a.txt = %q, want unchanged", got)
	}
}

func TestToolsFileRead(t *testing.T) {
	bin := "a\x00b\xff\n"
	root := workspace(t, map[string]string{"a.txt": "one\ntwo\n", "bin.dat": bin})
	v := editor(t, root, false)
	res := callTool(t, v, "file_read", map[string]any{"path": "a.txt"})
	if res["content"] != "one\ntwo\n" || res["source"] != "disk" || res["sha256"] != hash("one\ntwo\n") {
		t.Errorf("file_read(a.txt) from disk = %v", res)
	}
	res = callTool(t, v, "file_read", map[string]any{"path": "bin.dat"})
	if res["sha256"] != hash(bin) || asInt(res["bytes"]) != int64(len(bin)) {
		t.Errorf("file_read(bin.dat) = %v, want the hash of the raw bytes %s", res, hash(bin))
	}
	lua(t, v, "vim.cmd('edit a.txt'); vim.api.nvim_buf_set_lines(0, 1, 2, false, {'TWO', 'three'})")
	res = callTool(t, v, "file_read", map[string]any{"path": "a.txt"})
	want := "one\nTWO\nthree\n"
	if res["content"] != want || res["source"] != "buffer" || res["modified"] != true || res["sha256"] != hash(want) {
		t.Errorf("file_read(a.txt) from a modified buffer = %v, want %q", res, want)
	}
	lua(t, v, "vim.cmd('enew | setlocal fileformat=dos noendofline | file dos.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'a', 'b'})")
	res = callTool(t, v, "file_read", map[string]any{"path": "dos.txt"})
	if res["content"] != "a\r\nb" {
		t.Errorf("file_read(dos.txt) = %q, want CRLF and no final EOL", res["content"])
	}
}

func TestToolsFileWriteRefusesModifiedBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "one\n"})
	v := editor(t, root, true)
	lua(t, v, "vim.cmd('edit a.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'unsaved'})")
	res := callTool(t, v, "file_write", map[string]any{"path": "a.txt", "content": "new\n"})
	if res["status"] != "error" || res["code"] != "dirty_buffer" || asInt(res["bufnr"]) != 1 {
		t.Errorf("file_write on a modified buffer = %v, want a dirty_buffer refusal naming buffer 1", res)
	}
	if got := bufLines(t, v, "a.txt"); len(got) != 1 || got[0] != "unsaved" {
		t.Errorf("buffer = %v, want unchanged", got)
	}
	if got := lua(t, v, "return vim.bo.modified"); got != true {
		t.Errorf("modified = %v, want true", got)
	}
	if got := readFile(t, root, "a.txt"); got != "one\n" {
		t.Errorf("disk = %q, want unchanged", got)
	}
}

// A write to a loaded, unmodified buffer updates it, leaves it unmodified,
// and keeps undo: u brings the old text back.
func TestToolsFileWriteKeepsUndo(t *testing.T) {
	for _, hidden := range []bool{false, true} {
		name := map[bool]string{false: "current buffer", true: "hidden buffer"}[hidden]
		t.Run(name, func(t *testing.T) {
			root := workspace(t, map[string]string{"a.txt": "one\ntwo\n"})
			v := editor(t, root, true)
			lua(t, v, "vim.cmd('edit a.txt')")
			if hidden {
				lua(t, v, "vim.cmd('enew')")
			}
			res := callTool(t, v, "file_write", map[string]any{"path": "a.txt", "content": "one\nTWO\nthree\n"})
			if res["status"] != "ok" || res["sha256"] != hash("one\nTWO\nthree\n") {
				t.Fatalf("file_write = %v", res)
			}
			if upd, _ := res["buffers_updated"].([]any); len(upd) != 1 {
				t.Errorf("buffers_updated = %v, want one buffer", res["buffers_updated"])
			}
			if got := readFile(t, root, "a.txt"); got != "one\nTWO\nthree\n" {
				t.Errorf("disk = %q", got)
			}
			if got := bufLines(t, v, "a.txt"); !slices.Equal(got, []any{"one", "TWO", "three"}) {
				t.Errorf("buffer = %v, want the new text", got)
			}
			if got := lua(t, v, "return vim.bo[vim.fn.bufnr('a.txt')].modified"); got != false {
				t.Errorf("modified after write = %v, want false", got)
			}
			// Saving the buffer must not complain that the file changed.
			lua(t, v, "vim.api.nvim_buf_call(vim.fn.bufnr('a.txt'), function() vim.cmd('silent write') end)")
			lua(t, v, "vim.api.nvim_buf_call(vim.fn.bufnr('a.txt'), function() vim.cmd('silent normal! u') end)")
			if got := bufLines(t, v, "a.txt"); !slices.Equal(got, []any{"one", "two"}) {
				t.Errorf("buffer after u = %v, want the old text", got)
			}
			if got := lua(t, v, "return vim.bo[vim.fn.bufnr('a.txt')].modified"); got != true {
				t.Errorf("modified after u = %v, want true", got)
			}
		})
	}
}

func TestToolsFileWriteRules(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "one\n", "config.toml": "x = 1\n"})
	v := editor(t, root, true)
	tests := []struct {
		name string
		args map[string]any
		want string // code or message part
	}{
		{"stale expected_sha256", map[string]any{"path": "a.txt", "content": "x", "expected_sha256": hash("other")}, "conflict"},
		{"expected_changedtick without buffer", map[string]any{"path": "a.txt", "content": "x", "expected_changedtick": 3}, "requires a loaded buffer"},
		{"protected", map[string]any{"path": "config.toml", "content": "x"}, "protected"},
		{"missing parent", map[string]any{"path": "new/dir/x.txt", "content": "x"}, "parent directory does not exist"},
		{"oversized", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 262145)}, "too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, v, "file_write", tc.args)
			msg, _ := res["error"].(string)
			if res["status"] != "error" || res["code"] != tc.want && !strings.Contains(msg, tc.want) {
				t.Errorf("file_write(%s) = %v, want a refusal with %q", tc.name, res, tc.want)
			}
		})
	}
	if got := readFile(t, root, "a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q, want unchanged", got)
	}
	res := callTool(t, v, "file_write", map[string]any{"path": "a.txt", "content": "two\n", "expected_sha256": hash("one\n")})
	if res["status"] != "ok" || res["created"] != false {
		t.Errorf("file_write with the right expected_sha256 = %v", res)
	}
	res = callTool(t, v, "file_write", map[string]any{"path": "b.txt", "content": "new"})
	if res["status"] != "ok" || res["created"] != true {
		t.Errorf("file_write(b.txt) = %v", res)
	}
	if st, err := os.Stat(filepath.Join(root, "b.txt")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode = %v, %v, want 0644", st.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".flow-tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestToolsUntrustedWrite(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "one\n"})
	v := editor(t, root, false)
	res := callTool(t, v, "file_write", map[string]any{"path": "a.txt", "content": "x"})
	if res["status"] != "error" || !strings.Contains(res["error"].(string), "not trusted") {
		t.Errorf("untrusted file_write = %v, want a refusal", res)
	}
	if got := readFile(t, root, "a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q, want unchanged", got)
	}
}

func TestToolsFileList(t *testing.T) {
	root := workspace(t, map[string]string{"b.txt": "", "a/x.txt": "", ".git/config": ""})
	if err := os.Symlink("b.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	v := editor(t, root, false)
	res := callTool(t, v, "file_list", map[string]any{})
	entries, _ := res["entries"].([]any)
	var got []string
	for _, e := range entries {
		m := e.(map[string]any)
		got = append(got, m["path"].(string)+":"+m["type"].(string))
	}
	if !slices.Equal(got, []string{"a:directory", "b.txt:file"}) || asInt(res["omitted_unsafe"]) != 1 {
		t.Errorf("file_list() = %v (omitted %v), want a:directory, b.txt:file and one omitted symlink", got, res["omitted_unsafe"])
	}
	res = callTool(t, v, "file_list", map[string]any{"path": "a", "limit": 1})
	if entries, _ := res["entries"].([]any); len(entries) != 1 || res["truncated"] != false {
		t.Errorf("file_list(a) = %v", res)
	}
}
