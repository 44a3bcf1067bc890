package plugin_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"flow/bufferfs"
	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
	"flow/plugin"
	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/model/ollama"
	"flow/runtime/report"
	toolspkg "flow/runtime/tools"
)

// The runtime's Service wired through RuntimeEnv.ServiceOptions to a real
// Neovim over a socket (as `flow serve --nvim` has it): checks refuse to
// run over unsaved buffers (doc/design.md §9), the status report shows the editor,
// and the coder is offered the editor tools.
func TestServiceWithEditor(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	sock := filepath.Join(privateDir(t), "nvim.sock")
	nvimtest.Listen(t, sock, nvimtest.Options{Dir: root})
	disk, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	env, v, err := plugin.AttachSocket(sock, disk, true, plugin.SocketOptions{Module: "flow.tools", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("AttachSocket(%s) = %v", sock, err)
	}
	defer v.Close()
	lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", root)

	cfg := config.Default()
	cfg.Workspace, cfg.Trusted = root, true
	cfg.Checks = []config.Check{{Name: "ok", Cmd: []string{"true"}, Timeout: 10000, Required: true, Kind: config.KindTest, Filetypes: []string{"*"}}}
	svc := agent.NewService(&cfg, env.ServiceOptions(agent.ServiceOptions{Version: "test"}))

	st := svc.Status(t.Context())
	if st.Editor.Status != report.StatusOK || !st.Editor.Attached || st.Capabilities.FileIO != plugin.FileIOEditor ||
		!slices.Contains(st.Editor.Tools, "editor_context") {
		t.Errorf("Status().Editor = %+v, file_io %q", st.Editor, st.Capabilities.FileIO)
	}
	if rep := svc.Check(t.Context(), "", nil); rep.Status != report.StatusOK {
		t.Errorf("Check() with clean buffers = %s %q, want ok", rep.Status, rep.Reason)
	}
	lua(t, v, "vim.cmd('edit a.go'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'package b'})")
	rep := svc.Check(t.Context(), "", nil)
	if rep.Status != report.StatusStale || rep.Reason != "a.go has unsaved changes in the editor, which the checks would not see: save or discard it, then run again" || len(rep.Checks) != 0 {
		t.Errorf("Check() with an unsaved buffer = %s %q (%d checks), want stale without running", rep.Status, rep.Reason, len(rep.Checks))
	}
	names := svc.ToolNames()
	if !slices.Contains(names, "file_write") {
		t.Errorf("ToolNames() = %v", names)
	}
	box, err := toolspkg.WithEditor(t.Context(), toolspkg.New(env.FS, toolspkg.Options{Trusted: true}), env.Editor)
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, s := range box.Schemas(config.RoleCoder) {
		offered = append(offered, s.Name)
	}
	if !strings.Contains(strings.Join(offered, ","), "editor_context,editor_diagnostics,editor_symbols,editor_references") {
		t.Errorf("coder tools = %v, want the editor tools after the built-in ones", offered)
	}
}

// One full run through the editor: a scripted model (ollamatest, the real
// wire protocol) plans, writes a.go with file_write, and the reviewer
// approves; the write goes through Neovim, whose loaded buffer shows the
// new text, unmodified; the model was offered the editor tools.
func TestServiceRunThroughEditor(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a; var broken int\n"})
	v := editor(t, root, true)
	lua(t, v, "vim.cmd('edit a.go')")
	disk, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	b := newBridge(t, v, root, "", 10*time.Second)
	env := plugin.RuntimeEnv{Root: root, Trusted: true, FS: bufferfs.NewEditor(disk, b), Editor: b}

	srv := ollamatest.New(t,
		ollamatest.Turn{Content: "1. Fix a.go."},
		ollamatest.Turn{ToolCalls: []ollamatest.Call{{ID: "c1", Name: "file_write",
			Arguments: `{"path":"a.go","content":"package a; var fixed int\n"}`}}},
		ollamatest.Turn{Content: "Fixed a.go."},
		ollamatest.Turn{Content: `{"approved": true, "summary": "looks right", "issues": []}`},
	)
	client, err := ollama.New(ollama.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Workspace, cfg.Trusted = root, true
	cfg.Agent.Planner = config.PlannerAlways // the test scripts a planner turn
	cfg.Checks = []config.Check{{Name: "lint", Cmd: []string{"grep", "-q", "fixed", "a.go"}, Timeout: 10000,
		Required: true, Kind: config.KindLint, Filetypes: []string{"go"}}}
	svc := agent.NewService(&cfg, env.ServiceOptions(agent.ServiceOptions{Backend: client, Version: "test"}))
	rep := svc.Run(t.Context(), "fix a.go", nil)
	if rep.Status != report.StatusOK || !rep.Verified {
		t.Fatalf("Run() = %s verified=%v reason %q error %q", rep.Status, rep.Verified, rep.Reason, rep.Error)
	}
	if got := bufLines(t, v, "a.go"); !slices.Equal(got, []any{"package a; var fixed int"}) {
		t.Errorf("a.go buffer = %v, want the model's text", got)
	}
	if got := lua(t, v, "return vim.bo.modified"); got != false {
		t.Errorf("a.go modified = %v, want false", got)
	}
	reqs := srv.Chats()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	toolsJSON := fmt.Sprint(reqs[0].Body["tools"])
	if !strings.Contains(toolsJSON, "editor_context") || strings.Contains(toolsJSON, "editor_lint") {
		t.Errorf("planner tools = %s, want the read-only editor tools", toolsJSON)
	}
}
