package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
)

// `--nvim SOCKET` on run, check and status means the editor: the same
// bridge as `flow serve --nvim`, against a real Neovim that provides flow's
// editor tool module under Rose's name.
func TestNvimSocketCommands(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	sock := filepath.Join(socketDir(t), "nvim.sock")
	nvimtest.Listen(t, sock, nvimtest.Options{Dir: ws})
	v, err := nvim.Dial(sock)
	if err != nil {
		t.Fatalf("dial %s: %v", sock, err)
	}
	t.Cleanup(func() { v.Close() })
	nvimtest.Exec(t, v, `package.loaded['rose.tools'] = require('flow.tools').setup({ workspace = select(1, ...), trusted = true })
		vim.cmd('edit a.go')`, ws)
	srv := ollamatest.New(t, buildScript(write("w1", "a.go", newGo))...)
	cfg := nvimConfig(t, ws, srv.URL, lintGrep...)
	logFile := filepath.Join(t.TempDir(), "flow.log")
	env := hermeticEnv(t, "FLOW_LOG_FILE="+logFile)
	flow := func(args ...string) (int, map[string]any, string) {
		t.Helper()
		r := runFlow(t, ws, env, append(args, "-c", cfg, "--nvim", sock, "--json")...)
		var rep map[string]any
		if r.code != 2 {
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("flow %v stdout = %q (exit %d, stderr %q): %v", args, r.stdout, r.code, r.stderr, err)
			}
		}
		return r.code, rep, r.stderr
	}

	// status reports the attached editor.
	code, st, stderr := flow("status")
	ed, _ := st["editor"].(map[string]any)
	caps, _ := st["capabilities"].(map[string]any)
	if ed["status"] != "ok" || ed["attached"] != true || caps["file_io"] != "editor" {
		t.Errorf("flow status --nvim = exit %d, editor %v, capabilities %v; stderr %q", code, ed, caps, stderr)
	}

	// check runs with clean buffers and refuses with a dirty one.
	if code, rep, stderr := flow("check", "--trusted"); code != 0 || rep["status"] != "ok" {
		t.Errorf("flow check --nvim with clean buffers = exit %d, %v; stderr %q", code, rep, stderr)
	}
	const unsaved = "package a\n\nfunc Unsaved() {}"
	nvimtest.Exec(t, v, "vim.api.nvim_buf_set_lines(vim.fn.bufnr('a.go'), 0, -1, false, vim.split(..., '\\n'))", unsaved)
	code, rep, stderr := flow("check", "--trusted")
	checks, _ := rep["checks"].([]any)
	if code != 1 || rep["status"] != "stale" || !strings.Contains(strings.ToLower(fmt.Sprint(rep["reason"])), "unsaved") || len(checks) != 0 {
		t.Errorf("flow check --nvim with an unsaved buffer = exit %d, %v; stderr %q; want stale, no check run", code, rep, stderr)
	}

	// run: the coder's write over the unsaved buffer is refused; the
	// buffer and the disk are unchanged.
	code, rep, stderr = flow("run", "--trusted", "add New")
	if code != 1 || rep["status"] == "ok" {
		t.Errorf("flow run --nvim over an unsaved buffer = exit %d, status %v; stderr %q", code, rep["status"], stderr)
	}
	if res := toolResultByID(t, srv, "w1"); !strings.Contains(res, "unsaved changes") {
		t.Errorf("file_write result = %q, want the unsaved-changes refusal", res)
	}
	if got := readAll(t, ws, "a.go"); got != oldGo {
		t.Errorf("a.go on disk = %q, want it unchanged %q", got, oldGo)
	}
	buf := nvimtest.Exec(t, v, `local b = vim.fn.bufnr('a.go')
		return { table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'), vim.api.nvim_buf_get_option(b, 'modified') }`).([]any)
	if buf[0] != unsaved || buf[1] != true {
		t.Errorf("a.go buffer = %q (modified %v), want the unsaved text, still modified", buf[0], buf[1])
	}

	// Every bridge call is in the log, with its tool and duration.
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"editor bridge call", "tool=file_write", "tool=editor_context", "duration="} {
		if !strings.Contains(string(data), want) {
			t.Errorf("FLOW_LOG_FILE lacks %q:\n%s", want, data)
		}
	}
}

// --nvim is refused (exit 2) by every command that would not honour it,
// rather than accepted and ignored.
func TestNvimFlagRefused(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	sock := filepath.Join(socketDir(t), "nvim.sock")
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"undo", "--nvim", sock}, "--nvim is only valid with run, check, status and serve: undo restores"},
		{[]string{"doctor", "--nvim", sock}, "--nvim is only valid"},
		{[]string{"tui", "--nvim", sock}, "--nvim is only valid"},
		{[]string{"--nvim", sock}, "--nvim is only valid"},
		{[]string{"nvim", "--nvim", sock}, "--nvim is only valid"},
		{[]string{"--version", "--nvim", sock}, "version prints"},
		{[]string{"status", "--nvim="}, "--nvim needs the path of a Neovim socket"},
		{[]string{"run", "--editor-module", "rose.tools", "task"}, "--editor-module needs --nvim"},
	}
	for _, tc := range tests {
		r := runFlow(t, ws, hermeticEnv(t), tc.argv...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("flow %v = exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.argv, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
