package plugin_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/internal/test/nvimtest"
	"flow/runtime/model"
	"flow/runtime/tools"
)

// The editor tools against real language servers: gopls, pinned and built
// by scripts/lsp-test.sh, attached to the headless Neovim the tests drive.
// A missing server skips these tests, unless FLOW_TEST_LSP=required (CI,
// `make test-lsp`), which fails them instead.

var (
	lspOnce  sync.Once
	lspPaths map[string]string
	lspErr   error
)

// lspServer returns the path of the pinned server name (gopls, pyright)
// that scripts/lsp-test.sh installs; FLOW_TEST_GOPLS or FLOW_TEST_PYRIGHT
// override it.
func lspServer(t testing.TB, name string) string {
	t.Helper()
	lspOnce.Do(func() {
		lspPaths = map[string]string{}
		out, err := exec.Command(filepath.Join(nvimtest.RepoRoot(t), "scripts", "lsp-test.sh"), "env").Output()
		if err != nil {
			lspErr = err
			return
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "=")
			lspPaths[k] = v
		}
	})
	key := "FLOW_TEST_" + strings.ToUpper(name)
	p := os.Getenv(key)
	if p == "" {
		p = lspPaths[key]
	}
	if lspErr != nil || p == "" {
		lspMissing(t, name+": scripts/lsp-test.sh env failed: "+errString(lspErr))
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		lspMissing(t, name+" is not installed at "+p+" (run scripts/lsp-test.sh prepare)")
	}
	return p
}

func errString(err error) string {
	if err == nil {
		return "no path"
	}
	return err.Error()
}

func lspMissing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("FLOW_TEST_LSP") == "required" {
		t.Fatalf("%s; FLOW_TEST_LSP=required", why)
	}
	t.Skipf("%s; set FLOW_TEST_LSP=required to fail instead", why)
}

// goEnv returns the Go toolchain's cache locations and an offline module
// set-up for gopls inside a test Neovim, whose HOME is a temporary
// directory.
func goEnv(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOMODCACHE=" + vals[0], "GOCACHE=" + vals[1], "PATH=" + filepath.Join(vals[2], "bin") + ":" + os.Getenv("PATH"),
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOTELEMETRY=off"}
}

// attach starts the language server cmd in Neovim with root as its root
// directory and attaches it to the buffers of files (opened in order; the
// first stays current). settings, when not nil, are sent once the server
// is initialized (workspace/didChangeConfiguration), as nvim-lspconfig
// does: pyright analyzes nothing until it has them. It returns the client
// id.
func attach(t testing.TB, v *nvim.Nvim, name string, cmd []string, settings map[string]any, root string, files ...string) int64 {
	t.Helper()
	id := lua(t, v, `local name, cmd, settings, root, files = ...
		local conf = { name = name, cmd = cmd, root_dir = root }
		if settings and settings ~= vim.NIL then
			conf.settings = settings
			conf.on_init = function(c)
				c.notify('workspace/didChangeConfiguration', { settings = settings })
			end
		end
		local id = vim.lsp.start_client(conf)
		assert(id, 'vim.lsp.start_client failed for ' .. name)
		for i = #files, 1, -1 do
			vim.cmd('edit ' .. vim.fn.fnameescape(files[i]))
			vim.lsp.buf_attach_client(0, id)
		end
		return id`, name, cmd, settings, root, files)
	t.Cleanup(func() {
		nvimtest.Try(v, nvimtest.CallTimeout, "local c = vim.lsp.get_client_by_id(...); if c then c.stop(true) end", id)
	})
	return asInt(id)
}

const (
	goMod  = "module example.com/lsp\n\ngo 1.22\n"
	goAdd  = "package lsp\n\n// Add returns x+y.\nfunc Add(x, y int) int { return x + y }\n\nvar Bad int = \"text\"\n"
	goUse  = "package lsp\n\nfunc Use() int { return Add(1, 2) + Add(3, 4) }\n"
	goPath = "add.go"
)

// TestLSPGopls: with gopls attached, editor_diagnostics returns gopls's
// type error, editor_symbols the document's symbols and editor_references
// the references in both files; each call waits (boundedly) for a server
// that was just started.
func TestLSPGopls(t *testing.T) {
	gopls := lspServer(t, "gopls")
	root := workspace(t, map[string]string{"go.mod": goMod, goPath: goAdd, "use.go": goUse})
	v := nvimtest.New(t, nvimtest.Options{Dir: root, Env: goEnv(t)})
	lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)
	attach(t, v, "gopls", []string{gopls}, nil, root, goPath)

	// The first call waits for the server to start and publish.
	res := callTool(t, v, "editor_diagnostics", map[string]any{"path": goPath, "timeout": 60000})
	items, _ := res["diagnostics"].([]any)
	if res["status"] != "failed" || len(items) == 0 {
		t.Fatalf("editor_diagnostics(%s) = %v, want failed with gopls's type error", goPath, res)
	}
	d := items[0].(map[string]any)
	if !strings.Contains(d["message"].(string), `cannot use "text"`) || d["severity_name"] != "error" || asInt(d["line"]) != 6 {
		t.Errorf("diagnostic = %v, want gopls's error on line 6", d)
	}
	t.Logf("editor_diagnostics: %v", d)

	res = callTool(t, v, "editor_symbols", map[string]any{"path": goPath, "timeout": 60000})
	if res["status"] != "unverified" {
		t.Fatalf("editor_symbols(%s) = %v, want unverified with gopls's symbols", goPath, res)
	}
	var names []string
	for _, c := range res["clients"].([]any) {
		for _, s := range c.(map[string]any)["symbols"].([]any) {
			names = append(names, s.(map[string]any)["name"].(string))
		}
	}
	sort.Strings(names)
	if !slices.Equal(names, []string{"Add", "Bad"}) {
		t.Errorf("editor_symbols names = %v, want [Add Bad]", names)
	}
	t.Logf("editor_symbols: %v", names)

	// Add's name on line 4, column 5.
	res = callTool(t, v, "editor_references", map[string]any{"path": goPath, "line": 4, "column": 5, "timeout": 60000})
	if res["status"] != "unverified" {
		t.Fatalf("editor_references(%s) = %v, want unverified with gopls's references", goPath, res)
	}
	count := map[string]int{}
	for _, c := range res["clients"].([]any) {
		for _, r := range c.(map[string]any)["references"].([]any) {
			count[r.(map[string]any)["path"].(string)]++
		}
	}
	if count[goPath] != 1 || count["use.go"] != 2 {
		t.Errorf("editor_references of Add = %v, want the declaration in %s and 2 uses in use.go", count, goPath)
	}
	t.Logf("editor_references of Add: %v", count)
}

// TestLSPStartingAndAbsent: a buffer with no server is unavailable with a
// reason; a server that never finishes starting (it never answers
// initialize) makes every LSP tool unavailable within its timeout, saying
// it is still starting.
func TestLSPStartingAndAbsent(t *testing.T) {
	root := workspace(t, map[string]string{"go.mod": goMod, goPath: goAdd})
	v := editor(t, root, true)
	lua(t, v, "vim.cmd('edit ' .. ...)", goPath)
	res := callTool(t, v, "editor_diagnostics", map[string]any{"path": goPath})
	if res["status"] != "unavailable" || !strings.Contains(res["reason"].(string), "no language server is attached to "+goPath) {
		t.Errorf("editor_diagnostics without a server = %v, want unavailable naming the missing server", res)
	}
	// A server that reads everything and never answers initialize: the
	// client stays starting.
	attach(t, v, "silent", []string{"sh", "-c", "cat >/dev/null"}, nil, root, goPath)
	for _, tool := range []string{"editor_diagnostics", "editor_symbols", "editor_references"} {
		res := callTool(t, v, tool, map[string]any{"path": goPath, "timeout": 300})
		reason, _ := res["reason"].(string)
		if res["status"] != "unavailable" || !strings.Contains(reason, "the language server silent attached to "+goPath+" is still starting") {
			t.Errorf("%s with a starting server = %v, want unavailable saying it is still starting", tool, res)
		}
	}
}

// goFixed is goAdd with its type error fixed.
const goFixed = "package lsp\n\n// Add returns x+y.\nfunc Add(x, y int) int { return x + y }\n\nvar Bad int = 1\n"

// editorFiles returns the coder's file tools over the buffer-aware file
// system of v, as a run inside Neovim has them.
func editorFiles(t testing.TB, v *nvim.Nvim, root string) *tools.Registry {
	t.Helper()
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return tools.New(bufferfs.NewEditor(d, newBridge(t, v, root, "", 30*time.Second)), tools.Options{Trusted: true})
}

// callFile calls a file tool as the coder and decodes its JSON result.
func callFile(t testing.TB, reg *tools.Registry, name string, args map[string]any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(args)
	res := reg.Call(t.Context(), "coder", model.ToolCall{ID: "1", Name: name, Arguments: string(raw)})
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil || res.Status != "ok" {
		t.Fatalf("%s = %s %q, want ok JSON", name, res.Status, res.Content)
	}
	return out
}

// TestLSPGoplsDiagnosticsAfterEdit: inside Neovim, a file_write or
// file_edit of a buffer gopls is attached to carries gopls's new error
// diagnostics, so that the coder sees a type error before the checks run;
// the fixing edit carries none. A file no server is attached to carries
// no editor_diagnostics at all.
func TestLSPGoplsDiagnosticsAfterEdit(t *testing.T) {
	gopls := lspServer(t, "gopls")
	clean := strings.Replace(goAdd, "var Bad int = \"text\"\n", "", 1)
	root := workspace(t, map[string]string{"go.mod": goMod, goPath: clean, "use.go": goUse, "notes.txt": "n\n"})
	v := nvimtest.New(t, nvimtest.Options{Dir: root, Env: goEnv(t)})
	lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)
	lua(t, v, "vim.cmd('edit notes.txt')")
	attach(t, v, "gopls", []string{gopls}, nil, root, goPath)
	// Wait until gopls has started and diagnosed the clean file.
	if res := callTool(t, v, "editor_diagnostics", map[string]any{"path": goPath, "timeout": 60000}); res["status"] != "unverified" {
		t.Fatalf("editor_diagnostics(clean %s) = %v, want unverified", goPath, res)
	}
	reg := editorFiles(t, v, root)

	out := callFile(t, reg, "file_write", map[string]any{"path": goPath, "content": goAdd})
	d, _ := out["editor_diagnostics"].(map[string]any)
	errs, _ := d["errors"].([]any)
	if d["status"] != "failed" || len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["message"].(string), `cannot use "text"`) {
		t.Fatalf("file_write of a type error = %v, want editor_diagnostics failed with gopls's error", out)
	}
	if e := errs[0].(map[string]any); e["line"] != float64(6) || e["source"] != "compiler" {
		t.Errorf("error = %v, want line 6 from the compiler", e)
	}
	t.Logf("file_write: editor_diagnostics %v", d)

	out = callFile(t, reg, "file_edit", map[string]any{"path": goPath, "old_string": `var Bad int = "text"`, "new_string": "var Bad int = 1"})
	d, _ = out["editor_diagnostics"].(map[string]any)
	if d["status"] != "ok" || d["errors"] != nil {
		t.Errorf("file_edit fixing the error = %v, want editor_diagnostics ok without errors", out)
	}
	if got := readFile(t, root, goPath); got != goFixed {
		t.Errorf("%s = %q, want the fixed text", goPath, got)
	}
	// The server is still attached after the reloads.
	if n := lua(t, v, "return #require('flow.tools.lsp').clients(vim.fn.bufnr(...))", goPath); asInt(n) != 1 {
		t.Errorf("clients of %s after two edits = %v, want gopls still attached", goPath, n)
	}

	out = callFile(t, reg, "file_write", map[string]any{"path": "notes.txt", "content": "m\n"})
	if _, ok := out["editor_diagnostics"]; ok {
		t.Errorf("file_write of a buffer without a server = %v, want no editor_diagnostics", out)
	}
}

const (
	pyCalc  = "def add(x: int, y: int) -> int:\n    return x + y\n\n\nbad: int = \"text\"\n"
	pyFixed = "def add(x: int, y: int) -> int:\n    return x + y\n\n\nbad: int = 1\n"
	pyUse   = "from calc import add\n\nprint(add(1, 2) + add(3, 4))\n"
)

// TestLSPPyright: the same tools with pyright (from the committed npm
// lockfile plugin/testdata/lsp/package-lock.json) attached to a Python
// buffer: its type error, its symbols, the references in both files, and
// its new errors in the result of a write.
func TestLSPPyright(t *testing.T) {
	pyright := lspServer(t, "pyright")
	if _, err := exec.LookPath("node"); err != nil {
		lspMissing(t, "node is not on PATH, and pyright runs on it")
	}
	root := workspace(t, map[string]string{"calc.py": pyFixed, "use.py": pyUse})
	v := nvimtest.New(t, nvimtest.Options{Dir: root})
	lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)
	settings := map[string]any{"python": map[string]any{"analysis": map[string]any{"diagnosticMode": "openFilesOnly"}}}
	attach(t, v, "pyright", []string{pyright, "--stdio"}, settings, root, "calc.py")

	res := callTool(t, v, "editor_diagnostics", map[string]any{"path": "calc.py", "timeout": 60000})
	if res["status"] != "unverified" {
		t.Fatalf("editor_diagnostics(clean calc.py) = %v, want unverified", res)
	}
	reg := editorFiles(t, v, root)
	out := callFile(t, reg, "file_write", map[string]any{"path": "calc.py", "content": pyCalc})
	d, _ := out["editor_diagnostics"].(map[string]any)
	errs, _ := d["errors"].([]any)
	if d["status"] != "failed" || len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["message"].(string), `is not assignable to declared type "int"`) {
		t.Fatalf("file_write of a type error = %v, want editor_diagnostics failed with pyright's error", out)
	}
	t.Logf("file_write: editor_diagnostics %v", d)

	res = callTool(t, v, "editor_diagnostics", map[string]any{"path": "calc.py"})
	items, _ := res["diagnostics"].([]any)
	if res["status"] != "failed" || len(items) != 1 || items[0].(map[string]any)["source"] != "Pyright" || asInt(items[0].(map[string]any)["line"]) != 5 {
		t.Errorf("editor_diagnostics(calc.py) = %v, want failed with pyright's error on line 5", res)
	}

	res = callTool(t, v, "editor_symbols", map[string]any{"path": "calc.py", "timeout": 60000})
	var names []string
	for _, c := range res["clients"].([]any) {
		for _, s := range c.(map[string]any)["symbols"].([]any) {
			names = append(names, s.(map[string]any)["name"].(string))
		}
	}
	sort.Strings(names)
	if res["status"] != "unverified" || !slices.Equal(names, []string{"add", "bad"}) {
		t.Errorf("editor_symbols(calc.py) = %v (names %v), want unverified with [add bad]", res, names)
	}
	t.Logf("editor_symbols: %v", names)

	// add's name on line 1, column 4: the definition, the import and two
	// calls in use.py.
	res = callTool(t, v, "editor_references", map[string]any{"path": "calc.py", "line": 1, "column": 4, "timeout": 60000})
	count := map[string]int{}
	for _, c := range res["clients"].([]any) {
		for _, r := range c.(map[string]any)["references"].([]any) {
			count[r.(map[string]any)["path"].(string)]++
		}
	}
	if res["status"] != "unverified" || count["calc.py"] != 1 || count["use.py"] != 3 {
		t.Errorf("editor_references of add = %v (%v), want 1 in calc.py and 3 in use.py", res, count)
	}
	t.Logf("editor_references of add: %v", count)

	out = callFile(t, reg, "file_write", map[string]any{"path": "calc.py", "content": pyFixed})
	if d, _ := out["editor_diagnostics"].(map[string]any); d["status"] != "ok" || d["errors"] != nil {
		t.Errorf("file_write fixing the error = %v, want editor_diagnostics ok without errors", out)
	}
}

// TestLSPSilentServerWaitedForOnce: a server that never publishes
// diagnostics (plugin/testdata/lsp/silent_server.py, like a formatter)
// makes the first write's editor_diagnostics unavailable after the bounded
// wait; later writes do not wait for it and carry no editor_diagnostics.
func TestLSPSilentServerWaitedForOnce(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		lspMissing(t, "python3 is not on PATH, and the silent test server runs on it")
	}
	server := filepath.Join(nvimtest.RepoRoot(t), "plugin", "testdata", "lsp", "silent_server.py")
	root := workspace(t, map[string]string{"notes.md": "# notes\n"})
	v := editor(t, root, true)
	attach(t, v, "silent", []string{python, server}, nil, root, "notes.md")
	if res := callTool(t, v, "editor_symbols", map[string]any{"path": "notes.md", "timeout": 30000}); res["status"] != "unavailable" ||
		!strings.Contains(res["reason"].(string), "no language server attached to notes.md supports") {
		t.Fatalf("editor_symbols with the silent server = %v, want unavailable: it supports no symbols", res)
	}
	reg := editorFiles(t, v, root)
	out := callFile(t, reg, "file_write", map[string]any{"path": "notes.md", "content": "# notes\n\none\n"})
	d, _ := out["editor_diagnostics"].(map[string]any)
	if d["status"] != "unavailable" || !strings.Contains(d["reason"].(string), "no new diagnostics for notes.md within 1500 ms") {
		t.Errorf("first file_write with a silent server = %v, want editor_diagnostics unavailable after the wait", out)
	}
	out = callFile(t, reg, "file_write", map[string]any{"path": "notes.md", "content": "# notes\n\ntwo\n"})
	if _, ok := out["editor_diagnostics"]; ok {
		t.Errorf("second file_write with a silent server = %v, want no editor_diagnostics (no wait)", out)
	}
}
