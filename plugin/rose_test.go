package plugin_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"flow/bufferfs"
	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
	"flow/plugin"
	"flow/runtime/agent"
	"flow/runtime/config"
	floweditor "flow/runtime/editor"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
)

// roseModule provides flow's editor tool module under Rose's name, with
// the one rule of Rose's rose.tools that flow.tools does not have
// (reference doc/design.md §11.7): editor_context without a path describes
// the current buffer, and a named current buffer that is not a normal
// workspace file (a help page, a terminal, a file tree) is an error, which
// Rose raises with Lua's file:line: position. It records every call as
// "tool path" in _G.rose_calls.
const roseModule = `
local root = select(1, ...)
local flow = require('flow.tools').setup({ workspace = root, trusted = true })
_G.rose_calls = {}
package.loaded['rose.tools'] = {
  schemas = flow.schemas,
  call = function(name, args)
    local path = type(args) == 'table' and args.path or nil
    table.insert(_G.rose_calls, name .. ' ' .. tostring(path))
    if name == 'editor_context' and path == nil then
      local b = vim.api.nvim_get_current_buf()
      local bufname = vim.api.nvim_buf_get_name(b)
      if bufname ~= '' and (vim.api.nvim_buf_get_option(b, 'buftype') ~= '' or bufname:sub(1, #root + 1) ~= root .. '/') then
        return { status = 'error', error = '/home/u/.local/share/nvim/lazy/rose.nvim/lua/rose/tooling/workspace.lua:88: expected absolute filename' }
      end
    end
    return flow.call(name, args)
  end,
}`

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A Rose user's current buffer is a help page: the freshness gate asks
// about the file being read or written, so checks, reads and writes all
// go through the bridge; a dirty buffer elsewhere in the workspace still
// refuses checks; the log records each bridge call; the editor's errors
// reach the model without Lua's position.
func TestRoseHelpPageCurrent(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a; var broken int\n", "b.go": "package a\n"})
	sock := filepath.Join(privateDir(t), "nvim.sock")
	nvimtest.Listen(t, sock, nvimtest.Options{Dir: root})
	disk, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env, v, err := plugin.AttachSocket(sock, disk, true, plugin.SocketOptions{Module: "rose.tools", Timeout: 10 * time.Second, Logger: logger})
	if err != nil {
		t.Fatalf("AttachSocket(%s) = %v", sock, err)
	}
	defer v.Close()
	lua(t, v, roseModule, root)
	lua(t, v, "vim.cmd('help')")
	if bt := lua(t, v, "return vim.bo.buftype"); bt != "help" {
		t.Fatalf("current buftype = %v, want help", bt)
	}
	// The rule is in force: the current buffer cannot be described.
	if res := lua(t, v, "return require('rose.tools').call('editor_context', {})").(map[string]any); res["status"] != "error" {
		t.Fatalf("rose.tools editor_context {} on a help page = %v, want an error", res)
	}

	client, err := ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Workspace, cfg.Trusted = root, true
	cfg.Agent.Planner = config.PlannerAlways // the test scripts a planner turn
	cfg.Checks = []config.Check{{Name: "lint", Cmd: []string{"grep", "-q", "package", "a.go"}, Timeout: 10000,
		Required: true, Kind: config.KindLint, Filetypes: []string{"go"}}}
	svc := agent.NewService(&cfg, env.ServiceOptions(agent.ServiceOptions{Backend: client, Version: "test"}))

	// Nothing read yet: the probe falls back on a workspace file.
	if rep := svc.Check(t.Context(), "", nil); rep.Status != report.StatusOK {
		t.Fatalf("Check() with a help page current = %s %q, want ok", rep.Status, rep.Reason)
	}

	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "1. Fix a.go."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			{ID: "c0", Name: "editor_context", Arguments: `{}`},
			{ID: "c1", Name: "file_read", Arguments: `{"path":"a.go"}`},
			{ID: "c2", Name: "file_write", Arguments: `{"path":"a.go","content":"package a; var fixed int\n"}`},
		}},
		ollamatest.Turn{Content: "Fixed a.go."},
		ollamatest.Turn{Content: `{"approved": true, "summary": "looks right", "issues": []}`},
	)
	if client, err = ollama.New(ollama.Options{BaseURL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	// The test is about the bridge, not about evidence: its check passed
	// before the run too, so the task is declared to change no behaviour.
	cfg.Verify.BehaviourPreserving = true
	svc = agent.NewService(&cfg, env.ServiceOptions(agent.ServiceOptions{Backend: client, Version: "test"}))
	rep := svc.Run(t.Context(), "fix a.go", nil)
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() with a help page current = %s verified=%v reason %q error %q", rep.Status, rep.Verified, rep.Reason, rep.Error)
	}
	if got := readFile(t, root, "a.go"); got != "package a; var fixed int\n" {
		t.Errorf("a.go on disk = %q, want the model's text", got)
	}
	calls := fmt.Sprint(lua(t, v, "return _G.rose_calls"))
	for _, want := range []string{"file_read a.go", "file_write a.go", "editor_context a.go"} {
		if !strings.Contains(calls, want) {
			t.Errorf("rose.tools calls = %s, want %q (through the bridge)", calls, want)
		}
	}
	if bt := lua(t, v, "return vim.bo.buftype"); bt != "help" {
		t.Errorf("current buftype after the run = %v, want help (flow never switches buffers)", bt)
	}
	// The model's own editor_context {} got Rose's error, said once.
	var bodies strings.Builder
	for _, r := range srv.Requests() {
		fmt.Fprint(&bodies, r.Body)
	}
	if s := bodies.String(); !strings.Contains(s, "expected absolute filename") || strings.Contains(s, "workspace.lua:88") {
		t.Errorf("editor_context {} result to the model: want Rose's message without its Lua position; requests: %.2000s", s)
	}

	// An unsaved buffer elsewhere in the workspace (not current, not the
	// probe's file) still refuses the checks.
	lua(t, v, `local b = vim.fn.bufadd('b.go'); vim.fn.bufload(b)
		vim.api.nvim_buf_set_lines(b, 0, -1, false, {'package b'})`)
	if bt := lua(t, v, "return vim.bo.buftype"); bt != "help" {
		t.Fatalf("current buftype = %v, want help", bt)
	}
	chk := svc.Check(t.Context(), "", nil)
	if chk.Status != report.StatusStale || !strings.Contains(strings.ToLower(chk.Reason), "unsaved") || len(chk.Checks) != 0 {
		t.Errorf("Check() with unsaved b.go = %s %q (%d checks), want stale without running", chk.Status, chk.Reason, len(chk.Checks))
	}

	// The log has one debug record per bridge call: tool, duration, and
	// the failure of the refused one.
	log := logs.String()
	for _, want := range []string{"tool=file_write", "tool=file_read", "tool=editor_context", "duration=", "expected absolute filename"} {
		if !strings.Contains(log, want) {
			t.Errorf("bridge log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "workspace.lua:88") {
		t.Errorf("bridge log keeps Lua's position:\n%s", log)
	}
}

// flow.tools answers editor_context {path = ...} whatever the current
// buffer is: the freshness fields of that file, with the dirty-buffer list
// of the whole workspace.
func TestToolsEditorContextPath(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	v := editor(t, root, true)
	lua(t, v, `local b = vim.fn.bufadd('b.go'); vim.fn.bufload(b)
		vim.api.nvim_buf_set_lines(b, 0, -1, false, {'package c'})
		vim.cmd('help')`)
	for _, tc := range []struct {
		path           string
		loaded, exists bool
	}{{"a.go", false, true}, {"b.go", true, true}, {"new/c.go", false, false}} {
		res := callTool(t, v, "editor_context", map[string]any{"path": tc.path})
		c, err := floweditor.ParseContext(res, root)
		if err != nil {
			t.Fatalf("editor_context {path = %q} with a help page current = %v (%v)", tc.path, err, res)
		}
		if res["path"] != tc.path || res["loaded"] != tc.loaded || res["modified"] != tc.loaded {
			t.Errorf("editor_context {path = %q} = path %v loaded %v modified %v, want %s loaded %v modified %v",
				tc.path, res["path"], res["loaded"], res["modified"], tc.path, tc.loaded, tc.loaded)
		}
		if d := c.DirtyBuffers; len(d) != 1 || d[0].(map[string]any)["path"] != "b.go" {
			t.Errorf("editor_context {path = %q} dirty_buffers = %v, want b.go only", tc.path, d)
		}
		entry, _ := c.Snapshot[tc.path].(map[string]any)
		disk, _ := entry["disk"].(map[string]any)
		if disk["exists"] != tc.exists {
			t.Errorf("snapshot[%s].disk = %v, want exists %v (the path is observed)", tc.path, disk, tc.exists)
		}
	}
}

// A Neovim without the editor module: the failure names the module once,
// without Lua's positions or traceback.
func TestBridgeMissingModule(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	v := editor(t, root, true)
	b := newBridge(t, v, root, "rose.tools", 10*time.Second)
	_, err := b.Context(t.Context())
	if err == nil {
		t.Fatal("Context() without rose.tools = nil error")
	}
	msg := err.Error()
	t.Logf("Context() = %s", msg)
	if !strings.Contains(msg, "Neovim has no Lua module rose.tools") || strings.Contains(msg, "[string") || strings.Contains(msg, ".lua:") ||
		strings.Contains(msg, "\n") || strings.Count(msg, "unavailable") > 1 {
		t.Errorf("Context() without rose.tools = %q, want one line naming the module, without Lua positions", msg)
	}
}
