package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/internal/test/ollamatest"
)

// End-to-end tests of the Neovim plugin against the real flow binary: a
// real headless Neovim (plugin/nvimtest) whose plugin starts `flow nvim`
// (flowBin) against the scripted fake Ollama.

// nvimSession is a headless Neovim in a workspace whose flow plugin starts
// the real flow binary with an operator configuration.
type nvimSession struct {
	t   *testing.T
	v   *nvim.Nvim
	ws  string
	log string
}

// startNvim starts Neovim in ws with flow set up (trusted) to run flowBin
// with the configuration cfg; the flow log is shown when the test fails.
func startNvim(t *testing.T, ws, cfg string) *nvimSession {
	t.Helper()
	return startNvimWith(t, ws, cfg, nvimOptions{})
}

// nvimOptions change how startNvimWith starts Neovim.
type nvimOptions struct {
	// UI attaches an 80×24 UI and turns notifications on, as a person
	// sees them with no notification plugin.
	UI bool
	// Env holds extra KEY=VALUE entries for Neovim (and so flow and its
	// checks).
	Env []string
}

// startNvimWith is startNvim with options.
func startNvimWith(t *testing.T, ws, cfg string, o nvimOptions) *nvimSession {
	t.Helper()
	s := &nvimSession{t: t, ws: ws, log: filepath.Join(t.TempDir(), "flow.log")}
	s.v = nvimtest.New(t, nvimtest.Options{Dir: ws, Env: o.Env})
	s.lua(`require('flow').setup({ cmd = { (select(1, ...)) }, config = select(2, ...), trusted = true,
		log_file = select(3, ...), notify = select(4, ...) })`, flowBin, cfg, s.log, o.UI)
	if o.UI {
		nvimtest.AttachUI(t, s.v, 80, 24)
	}
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(s.log)
			t.Logf("flow log:\n%s", data)
		}
	})
	return s
}

// lua evaluates code in Neovim and returns its result.
func (s *nvimSession) lua(code string, args ...any) any {
	s.t.Helper()
	return nvimtest.Exec(s.t, s.v, code, args...)
}

// waitLua polls the Lua expression until it is truthy and returns its
// value, failing after 20 s.
func (s *nvimSession) waitLua(expr string, args ...any) any {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if out := s.lua("return "+expr, args...); out != nil && out != false {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s", expr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// command runs an Ex command that reports through last_report (:FlowBuild,
// :FlowCheck) and returns the report once it arrives.
func (s *nvimSession) command(cmd string) map[string]any {
	s.t.Helper()
	s.lua("require('flow').last_report = nil; vim.cmd(...)", cmd)
	return s.waitLua("require('flow').last_report").(map[string]any)
}

// notified waits until the notification of an operation (starting with
// prefix, such as "flow check") is in :messages, checks that Neovim waits
// at no prompt and returns :messages.
func (s *nvimSession) notified(prefix string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if mode, blocked := nvimtest.Prompt(s.t, s.v); blocked {
			s.t.Fatalf("Neovim waits at a prompt (mode %q) after the operation", mode)
		}
		msgs := s.lua("return vim.api.nvim_exec('messages', true)").(string)
		if strings.Contains(msgs, prefix) {
			nvimtest.NoPrompt(s.t, s.v)
			if m := s.lua("return vim.fn.mode(1)"); m != "n" {
				s.t.Errorf("mode after the operation = %v, want n", m)
			}
			return msgs
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no notification %q in :messages:\n%s", prefix, msgs)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// lines returns the lines of the buffer of path.
func (s *nvimSession) lines(path string) string {
	s.t.Helper()
	out := s.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", path)
	var l []string
	for _, x := range out.([]any) {
		l = append(l, x.(string))
	}
	return strings.Join(l, "\n")
}

// modified reports 'modified' of the buffer of path.
func (s *nvimSession) modified(path string) bool {
	s.t.Helper()
	return s.lua("return vim.api.nvim_buf_get_option(vim.fn.bufnr(...), 'modified')", path) == true
}

// nvimConfig writes an operator configuration for ws with one cycle and a
// lint check for Go files running argv.
func nvimConfig(t *testing.T, ws, url string, argv ...string) string {
	t.Helper()
	var q []string
	for _, a := range argv {
		q = append(q, tomlString(a))
	}
	return writeFile(t, t.TempDir(), "ops.toml", `workspace_dir = `+tomlString(ws)+`
[ollama]
base_url = `+tomlString(url)+`
[agent]
planner = "always" # the test scripts a planner turn
max_cycles = 1
[checks.lint]
cmd = [`+strings.Join(q, ", ")+`]
kind = "lint"
filetypes = ["go"]
[verify]
# The test is about the editor, not about evidence: its check passes
# before the run too, so the task is declared to change no behaviour.
behaviour_preserving = true
`)
}

// goWorkspace is a workspace holding a.go.
func goWorkspace(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	writeFile(t, ws, "a.go", oldGo)
	return ws
}

const (
	oldGo = "package a\n\nfunc Old() {}\n"
	newGo = "package a\n\nfunc New() {}\n"
)

// lintGrep is a check that passes while a.go is a Go file.
var lintGrep = []string{"grep", "-q", "package", "a.go"}

// waitChats waits (bounded) until the fake model got n chat requests.
func waitChats(t *testing.T, srv *ollamatest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(srv.Chats()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the fake model got %d chat requests, want %d", len(srv.Chats()), n)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// toolResultByID returns the content of the tool result with id in any chat
// request, or "" when there is none.
func toolResultByID(t *testing.T, srv *ollamatest.Server, id string) string {
	t.Helper()
	for _, r := range srv.Chats() {
		for _, res := range toolResults(t, r.Body) {
			if res.id == id {
				return res.content
			}
		}
	}
	return ""
}

// verification returns the verification object of a run report.
func verification(rep map[string]any) map[string]any {
	v, _ := rep["verification"].(map[string]any)
	return v
}

// buildScript is the model's side of one cycle: a plan, a coder turn making
// calls, the coder's summary and the reviewer's approval.
func buildScript(calls ...ollamatest.Call) []ollamatest.Turn {
	return []ollamatest.Turn{
		{Content: "Plan: change a.go."},
		{ToolCalls: calls},
		{Content: "Done."},
		{Content: approve},
	}
}

// TestNvimFlowBuildRewritesOpenBuffer: :FlowBuild edits a.go while it is
// loaded and unmodified: the run verifies, the buffer shows the new text,
// is unmodified, and `u` restores the old text.
func TestNvimFlowBuildRewritesOpenBuffer(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(call("e1", "file_edit", map[string]any{
		"path": "a.go", "old_string": "func Old() {}", "new_string": "func New() {}"}))...)
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))
	s.lua("vim.cmd('edit a.go')")

	rep := s.command("FlowBuild fix a.go")
	if rep["status"] != "ok" || rep["verified"] != true || verification(rep)["status"] != "ok" {
		t.Fatalf(":FlowBuild report = %v, want ok and verified", rep)
	}
	if fmt.Sprint(rep["changed_files"]) != "[a.go]" || rep["task"] != "fix a.go" {
		t.Errorf("report changed_files/task = %v/%v, want [a.go]/fix a.go", rep["changed_files"], rep["task"])
	}
	if got := readAll(t, ws, "a.go"); got != newGo {
		t.Errorf("a.go on disk = %q, want %q", got, newGo)
	}
	if got := s.lines("a.go"); got != strings.TrimSuffix(newGo, "\n") {
		t.Errorf("a.go buffer = %q, want the new text", got)
	}
	if s.modified("a.go") {
		t.Error("a.go buffer is modified after flow wrote it")
	}
	s.lua("vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('silent normal! u') end)", "a.go")
	if got := s.lines("a.go"); got != strings.TrimSuffix(oldGo, "\n") {
		t.Errorf("a.go buffer after u = %q, want the old text", got)
	}
}

// TestNvimFlowBuildRefusesUnsavedBuffer: a write to a file whose buffer has
// unsaved changes is refused with an error the model sees; buffer and disk
// stay as they were and the run does not verify.
func TestNvimFlowBuildRefusesUnsavedBuffer(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(write("w1", "a.go", newGo))...)
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))
	s.lua("vim.cmd('edit a.go'); vim.api.nvim_buf_set_lines(0, 2, 3, false, {'func Mine() {}'})")

	rep := s.command("FlowBuild rewrite a.go")
	// The checks never run over the unsaved buffer: the verification is
	// stale, asking to save.
	if v := verification(rep); rep["verified"] != false || v["status"] != "stale" || !strings.Contains(fmt.Sprint(v["reason"]), "save") {
		t.Errorf(":FlowBuild over an unsaved buffer = verified %v, verification %v; want not verified, stale", rep["verified"], v)
	}
	if fmt.Sprint(rep["changed_files"]) != "[]" {
		t.Errorf("changed_files = %v, want none", rep["changed_files"])
	}
	if res := toolResultByID(t, srv, "w1"); !strings.Contains(res, `"status":"error"`) || !strings.Contains(res, "unsaved changes") {
		t.Errorf("tool result of the refused write = %q, want an error about unsaved changes", res)
	}
	if got := readAll(t, ws, "a.go"); got != oldGo {
		t.Errorf("a.go on disk = %q, want unchanged", got)
	}
	if got := s.lines("a.go"); got != "package a\n\nfunc Mine() {}" || !s.modified("a.go") {
		t.Errorf("a.go buffer = %q (modified %v), want the user's unsaved text", got, s.modified("a.go"))
	}
}

// TestNvimBufferChangedDuringReviewIsStale: the user edits a changed file's
// buffer while the reviewer works; the verification becomes stale.
func TestNvimBufferChangedDuringReviewIsStale(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	turns := buildScript(write("w1", "a.go", newGo))
	turns[3].Delay = 2 * time.Second
	srv := ollamatest.New(t, turns...)
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))
	s.lua("vim.cmd('edit a.go')")

	s.lua("require('flow').last_report = nil; vim.cmd('FlowBuild add New')")
	waitChats(t, srv, 4) // the reviewer's request: verification is done
	if got := s.lines("a.go"); got != strings.TrimSuffix(newGo, "\n") {
		t.Fatalf("a.go buffer before review ends = %q, want flow's text", got)
	}
	s.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 0, false, {'// user edit'})", "a.go")
	rep := s.waitLua("require('flow').last_report").(map[string]any)
	if v := verification(rep); rep["verified"] != false || v["status"] != "stale" || v["verified"] != false {
		t.Errorf("report after an edit during review = verified %v, verification %v; want stale", rep["verified"], v)
	}
	if hist, _ := rep["verification_history"].([]any); len(hist) != 1 || hist[0].(map[string]any)["status"] != "stale" {
		t.Errorf("verification_history = %v, want one stale entry", rep["verification_history"])
	}
}

// TestNvimFlowCheckDirtyBufferIsStale: :FlowCheck with unsaved buffers runs
// nothing and reports stale, asking to save.
func TestNvimFlowCheckDirtyBufferIsStale(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	s := startNvim(t, ws, nvimConfig(t, ws, "http://127.0.0.1:1", "touch", "check-ran"))
	s.lua("vim.cmd('edit a.go'); vim.api.nvim_buf_set_lines(0, 0, 0, false, {'// unsaved'})")

	rep := s.command("FlowCheck")
	if rep["status"] != "stale" || rep["verified"] != false || !strings.Contains(fmt.Sprint(rep["reason"]), "save") {
		t.Errorf(":FlowCheck with a dirty buffer = %v, want stale with a reason to save", rep)
	}
	if _, err := os.Stat(filepath.Join(ws, "check-ran")); err == nil {
		t.Error("the check ran although a buffer was unsaved")
	}
	// Once saved, the same check runs (so the marker proves something).
	s.lua("vim.cmd('write')")
	if rep := s.command("FlowCheck lint"); rep["status"] != "ok" || rep["verified"] != true {
		t.Errorf(":FlowCheck lint after :write = %v, want ok", rep)
	}
	if _, err := os.Stat(filepath.Join(ws, "check-ran")); err != nil {
		t.Errorf("the check did not run after :write: %v", err)
	}
}

// TestNvimFlowStopAndHostRestart: :FlowStop cancels a run waiting on the
// model; the same host then runs a second build; after the host is killed
// the next request starts a new one.
func TestNvimFlowStopAndHostRestart(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, ollamatest.Turn{Content: "never", Delay: time.Minute})
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))

	s.lua("require('flow').last_report = nil; vim.cmd('FlowBuild slow task')")
	waitChats(t, srv, 1)
	pid := int(asInt(s.lua("return require('flow.rpc').pid()")))
	s.lua("vim.cmd('FlowStop')")
	rep := s.waitLua("require('flow').last_report").(map[string]any)
	if rep["status"] != "cancelled" || rep["verified"] != false {
		t.Fatalf("report after :FlowStop = %v, want cancelled", rep)
	}

	srv.Enqueue(buildScript(write("w1", "a.go", newGo))...)
	rep = s.command("FlowBuild add New")
	if rep["status"] != "ok" || rep["verified"] != true {
		t.Errorf("second :FlowBuild = %v, want ok and verified", rep)
	}
	if p := int(asInt(s.lua("return require('flow.rpc').pid()"))); pid <= 0 || p != pid {
		t.Errorf("host pid = %d after the second build, want the same host %d", p, pid)
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitLua("require('flow.rpc').channel() == nil")
	s.lua("_G.flow_status = nil; require('flow').status({ on_done = function(r) _G.flow_status = r end })")
	st := s.waitLua("_G.flow_status").(map[string]any)
	if st["status"] != "ok" || st["workspace"] != ws || st["trusted"] != true {
		t.Errorf("status after the host was killed = %v, want ok from a new host", st)
	}
	if p := int(asInt(s.lua("return require('flow.rpc').pid()"))); p <= 0 || p == pid {
		t.Errorf("host pid after restart = %d, want a new process (old %d)", p, pid)
	}
}

// TestNvimEditorToolsReachTheModel: the planner calls editor_diagnostics
// and editor_context; their results (a diagnostic set in Neovim and the
// freshness fields) reach the model.
func TestNvimEditorToolsReachTheModel(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t,
		ollamatest.Turn{ToolCalls: []ollamatest.Call{
			call("d1", "editor_diagnostics", map[string]any{"path": "a.go"}),
			call("x1", "editor_context", map[string]any{}),
		}},
		ollamatest.Turn{Content: "Plan: nothing to change."},
		ollamatest.Turn{Content: "Nothing to do."},
		ollamatest.Turn{Content: approve},
	)
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))
	s.lua(`vim.cmd('edit a.go')
		local ns = vim.api.nvim_create_namespace('flow_e2e')
		vim.diagnostic.set(ns, vim.fn.bufnr('a.go'), {{ lnum = 0, col = 0,
			severity = vim.diagnostic.severity.ERROR, message = 'boom from test' }})`)

	rep := s.command("FlowBuild look at the diagnostics")
	if rep["status"] == "error" {
		t.Fatalf(":FlowBuild = %v", rep)
	}
	reqs := srv.Chats()
	if len(reqs) < 2 {
		t.Fatalf("chat requests = %d, want at least 2", len(reqs))
	}
	// Every role (planner, coder, reviewer) is offered flow.tools' read-only
	// editor tools once each, after the built-in tools; the editor's own
	// file_* tools are not offered twice.
	for i, r := range reqs {
		var names, editor []string
		for _, tool := range r.Body["tools"].([]any) {
			fn, _ := tool.(map[string]any)["function"].(map[string]any)
			name, _ := fn["name"].(string)
			if slices.Contains(names, name) {
				t.Errorf("request %d offers %s twice", i, name)
			}
			names = append(names, name)
			if strings.HasPrefix(name, "editor_") {
				editor = append(editor, name)
			}
		}
		if got := strings.Join(editor, ","); got != "editor_context,editor_diagnostics,editor_symbols,editor_references" {
			t.Errorf("request %d offers editor tools %s, want flow.tools' four read-only tools", i, got)
		}
	}
	if diag := toolResultByID(t, srv, "d1"); !strings.Contains(diag, `"message":"boom from test"`) || !strings.Contains(diag, `"severity_name":"error"`) {
		t.Errorf("editor_diagnostics result = %q, want the diagnostic set in Neovim", diag)
	}
	ctx := toolResultByID(t, srv, "x1")
	for _, want := range []string{`"status":"ok"`, `"workspace_snapshot_version":1`, `"dirty_buffers"`, `"workspace_snapshot"`, `"a.go"`, `"workspace":` + mustJSON(ws)} {
		if !strings.Contains(ctx, want) {
			t.Errorf("editor_context result lacks %s:\n%s", want, ctx)
		}
	}
}

// TestNvimCheckHealth: :checkhealth flow with the real binary reports OK
// for the binary, its version, the configuration file, the backend, the
// model and the check; the user file is shown when setup() names none; a
// backend that is down gives no advice about models; a missing binary is an
// error. The health buffer is parsed (nvimtest.ParseHealth), so the test
// holds on every Neovim renderer (0.7 "- OK: x", 0.10 "- OK x").
func TestNvimCheckHealth(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t)
	srv.SetModels("coder:7b")
	srv.SetCapabilities("coder:7b", "completion", "tools")
	settings := `[ollama]
base_url = ` + tomlString(srv.URL) + `
model = "coder:7b"
[checks.lint]
cmd = ["grep", "-q", "package", "a.go"]
`
	cfg := writeFile(t, t.TempDir(), "ops.toml", "workspace_dir = "+tomlString(ws)+"\n"+settings)
	v := nvimtest.New(t, nvimtest.Options{Dir: ws})
	health := func(cmd, cfg string) ([]nvimtest.HealthItem, string) {
		t.Helper()
		// cfg "" sets no `config`.
		nvimtest.Exec(t, v, `local cmd, cfg = ...
			require('flow').setup({ cmd = { cmd }, config = cfg ~= '' and cfg or nil })`, cmd, cfg)
		return nvimtest.Health(t, v, "flow")
	}
	want := func(items []nvimtest.HealthItem, text, level, sub string) nvimtest.HealthItem {
		t.Helper()
		it, ok := nvimtest.FindHealth(items, level, sub)
		if !ok {
			t.Errorf("checkhealth flow =\n%s\nwant a %s report containing %q", text, level, sub)
		}
		return it
	}
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}

	items, text := health(flowBin, cfg)
	for _, sub := range []string{"Neovim 0.", "setup() options are valid", "configuration file: " + cfg,
		"binary: " + flowBin, "version: ", "backend " + srv.URL,
		"model coder:7b (planner, coder, reviewer): present, can call tools",
		"check lint: grep (" + grep + ")"} {
		want(items, text, "OK", sub)
	}
	if it := want(items, text, "OK", "backend "+srv.URL); !strings.Contains(it.Text, "reachable") {
		t.Errorf("backend report = %q, want it reachable", it.Text)
	}
	want(items, text, "INFO", "log file: ")
	n := 0
	for _, it := range items {
		if it.Level == "ERROR" {
			t.Errorf("checkhealth flow with a working set-up has an error: %v", it)
		}
		if strings.Contains(it.Text, "configuration file") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("checkhealth flow =\n%s\nwant the configuration file reported once, got %d", text, n)
	}

	// Without `config`, flow reads the user file: shown when it exists,
	// named when it does not.
	xdg := nvimtest.Exec(t, v, "return vim.env.XDG_CONFIG_HOME").(string)
	user := writeFile(t, filepath.Join(xdg, "flow"), "config.toml", settings)
	items, text = health(flowBin, "")
	want(items, text, "OK", "configuration file: "+user)
	want(items, text, "OK", "backend "+srv.URL)
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	items, text = health(flowBin, "")
	want(items, text, "INFO", "configuration file: none, the defaults are in use (flow reads "+user+" when it exists)")

	// A backend that is down: its error, and no advice to pull a model
	// whose presence could not be checked.
	down := writeFile(t, t.TempDir(), "down.toml", "workspace_dir = "+tomlString(ws)+"\n[ollama]\nbase_url = "+
		tomlString(closedURL(t))+"\nmodel = \"coder:7b\"\n")
	items, text = health(flowBin, down)
	if _, ok := nvimtest.FindHealth(items, "OK", "backend "); ok {
		t.Errorf("checkhealth flow with the backend down =\n%s\nwant no OK backend report", text)
	}
	want(items, text, "WARNING", "model coder:7b (planner, coder, reviewer): not checked, the backend is unreachable")
	if strings.Contains(text, "ollama pull") {
		t.Errorf("checkhealth flow with the backend down =\n%s\nwant no advice to pull a model", text)
	}

	// Two servers, the reviewer's down: each server's line names its
	// roles, and only the reviewer's model goes unchecked.
	two := writeFile(t, t.TempDir(), "two.toml", "workspace_dir = "+tomlString(ws)+"\n"+settings+
		"[servers.gpu]\nbase_url = "+tomlString(closedURL(t))+"\nmodel = \"big\"\napi = \"openai\"\n[roles.reviewer]\nserver = \"gpu\"\n")
	items, text = health(flowBin, two)
	if it := want(items, text, "OK", "backend ollama "+srv.URL); !strings.HasSuffix(it.Text, "for planner, coder") {
		t.Errorf("[ollama]'s report = %q, want it reachable for planner, coder", it.Text)
	}
	want(items, text, "ERROR", "backend gpu ")
	if it, _ := nvimtest.FindHealth(items, "ERROR", "backend gpu "); !strings.Contains(it.Text, "(openai) for reviewer: ") {
		t.Errorf("gpu's report = %q, want it to name the reviewer", it.Text)
	}
	want(items, text, "OK", "model coder:7b (planner, coder on ollama): present")
	want(items, text, "WARNING", "model big (reviewer on gpu): not checked")

	items, text = health("/nonexistent/flow", cfg)
	want(items, text, "ERROR", "flow binary not found or not executable: /nonexistent/flow")
}

// TestNvimCheckHealthOnboarding: :checkhealth flow warns a new user: no
// configuration file, no checks (runs cannot be verified), the workspace
// being the home directory; each once.
func TestNvimCheckHealthOnboarding(t *testing.T) {
	t.Parallel()
	v := nvimtest.New(t, nvimtest.Options{})
	home := nvimtest.Exec(t, v, "return vim.env.HOME").(string)
	nvimtest.Exec(t, v, "require('flow').setup({ cmd = { (select(1, ...)) }, workspace = select(2, ...) })", flowBin, home)
	items, text := nvimtest.Health(t, v, "flow")
	for _, sub := range []string{"No configuration file was loaded, so flow runs on its defaults",
		"No checks are configured, so runs cannot be verified", "The workspace is your home directory " + home} {
		it, ok := nvimtest.FindHealth(items, "WARNING", sub)
		if !ok {
			t.Errorf("checkhealth flow =\n%s\nwant a WARNING containing %q", text, sub)
			continue
		}
		n := 0
		for _, other := range items {
			if strings.Contains(other.Text, sub) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("checkhealth flow =\n%s\nwant %q reported once (%v), got %d", text, sub, it, n)
		}
	}

	// A project directory is no warning; a language no lint check covers
	// is one.
	ws := goWorkspace(t)
	writeFile(t, ws, "tool.py", "print(1)\n")
	cfg := nvimConfig(t, ws, closedURL(t), lintGrep...)
	nvimtest.Exec(t, v, "require('flow').setup({ cmd = { (select(1, ...)) }, workspace = select(2, ...), config = select(3, ...) })", flowBin, ws, cfg)
	items, text = nvimtest.Health(t, v, "flow")
	if _, ok := nvimtest.FindHealth(items, "WARNING", "The workspace is"); ok {
		t.Errorf("checkhealth flow in a project =\n%s\nwant no workspace warning", text)
	}
	if _, ok := nvimtest.FindHealth(items, "WARNING", "No lint check covers the python files"); !ok {
		t.Errorf("checkhealth flow with an uncovered Python file =\n%s\nwant a warning that no lint check covers it", text)
	}
}

// closedURL returns the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// readAll returns the content of ws/name.
func readAll(t *testing.T, ws, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// asInt converts a decoded msgpack number.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	}
	return -1
}

// TestNvimFlowUndoGoesThroughBuffers: :FlowUndo restores what :FlowBuild
// wrote through the buffers — the loaded buffer shows the old text and is
// unmodified — and never overwrites a buffer with unsaved changes.
func TestNvimFlowUndoGoesThroughBuffers(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(call("e1", "file_edit", map[string]any{
		"path": "a.go", "old_string": "func Old() {}", "new_string": "func New() {}"}))...)
	s := startNvim(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...))
	s.lua("vim.cmd('edit a.go')")
	if rep := s.command("FlowBuild fix a.go"); rep["status"] != "ok" {
		t.Fatalf(":FlowBuild report = %v, want ok", rep)
	}

	// Unsaved changes in the buffer: undo must not touch it.
	s.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('a.go'), 0, 1, false, {'// mine'})")
	rep := s.command("FlowUndo")
	if rep["status"] == "ok" || !strings.Contains(fmt.Sprint(rep), "unsaved changes") {
		t.Errorf(":FlowUndo over an unsaved buffer = %v, want a refusal naming the unsaved changes", rep)
	}
	if got := readAll(t, ws, "a.go"); got != newGo {
		t.Errorf("a.go on disk after the refused undo = %q, want the run's text", got)
	}
	if !s.modified("a.go") || !strings.HasPrefix(s.lines("a.go"), "// mine") {
		t.Errorf("a.go buffer = %q (modified %v), want the user's unsaved text", s.lines("a.go"), s.modified("a.go"))
	}

	// Discard the unsaved change: now undo restores through the buffer.
	s.lua("vim.api.nvim_buf_call(vim.fn.bufnr('a.go'), function() vim.cmd('silent edit!') end)")
	rep = s.command("FlowUndo")
	if rep["status"] != "ok" {
		t.Fatalf(":FlowUndo = %v, want ok", rep)
	}
	if got := readAll(t, ws, "a.go"); got != oldGo {
		t.Errorf("a.go on disk after undo = %q, want %q", got, oldGo)
	}
	if got := s.lines("a.go"); got != strings.TrimSuffix(oldGo, "\n") || s.modified("a.go") {
		t.Errorf("a.go buffer after undo = %q (modified %v), want the old text, unmodified", got, s.modified("a.go"))
	}
}

// goTestWorkspace is a Go module whose test fails at calc_test.go:7, with
// the environment that lets `go test` run offline on the test's build
// cache; it skips the test when go is not installed.
func goTestWorkspace(t *testing.T) (ws, goBin string, env []string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	cache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	ws = workspace(t)
	writeFile(t, ws, "go.mod", "module example.com/calc\n\ngo 1.21\n")
	writeFile(t, ws, "calc.go", "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int { return a - b }\n")
	writeFile(t, ws, "calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"+
		"\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n")
	return ws, goBin, []string{"GOCACHE=" + strings.TrimSpace(string(cache)), "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"}
}

// TestNvimFlowCheckFailureInQuickfix: a failing :FlowCheck (a real `go
// test`) fills the quickfix list with calc_test.go:7, shows the failure in
// flow://run and the log, and ends with a one-line notification and no
// hit-enter prompt.
func TestNvimFlowCheckFailureInQuickfix(t *testing.T) {
	t.Parallel()
	ws, goBin, env := goTestWorkspace(t)
	cfg := writeFile(t, t.TempDir(), "ops.toml", "workspace_dir = "+tomlString(ws)+`
[ollama]
base_url = "http://127.0.0.1:1"
[checks.test]
cmd = [`+tomlString(goBin)+`, "test", "./..."]
kind = "test"
filetypes = ["go"]
timeout = 600000
`)
	s := startNvimWith(t, ws, cfg, nvimOptions{UI: true, Env: env})

	rep := s.command("FlowCheck")
	if rep["status"] == "ok" || rep["verified"] != false {
		t.Fatalf(":FlowCheck = %v, want the failing test", rep)
	}
	msgs := s.notified("flow check")
	if last := lastLine(msgs); !strings.HasPrefix(last, "flow check failed: ") {
		t.Errorf("notification = %q, want one line leading with the failure", last)
	}
	qf := s.lua(`local out = {}
		for _, it in ipairs(vim.fn.getqflist()) do
			out[#out + 1] = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ':t') .. ':' .. it.lnum .. ': ' .. it.text
		end
		return out`).([]any)
	if len(qf) == 0 || !strings.HasPrefix(qf[0].(string), "calc_test.go:7: Add(2, 3) = -1, want 5") {
		t.Errorf("quickfix after the failing check = %v, want calc_test.go:7 first", qf)
	}
	if at := s.lua("vim.cmd('silent cfirst'); return vim.fn.expand('%:p') .. ':' .. vim.fn.line('.')"); at != filepath.Join(ws, "calc_test.go")+":7" {
		t.Errorf(":cfirst jumps to %v, want calc_test.go:7", at)
	}
	run := s.lua("return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('^flow://run$'), 0, -1, false), '\\n')").(string)
	if !strings.Contains(run, "check test: failed (exit 1)") || !strings.Contains(run, "calc_test.go:7: Add(2, 3) = -1, want 5") {
		t.Errorf("flow://run =\n%s\nwant the failing check and its output", run)
	}
	if data, _ := os.ReadFile(s.log); !strings.Contains(string(data), "calc_test.go:7: Add(2, 3) = -1, want 5") {
		t.Errorf("log file =\n%s\nwant the failing check's output", data)
	}
}

// TestNvimFlowBuildUnsavedNotifies: :FlowBuild over an unsaved buffer ends
// with a one-line notification naming the file and saying to save or
// discard it (not the reviewer's approval), and no hit-enter prompt.
func TestNvimFlowBuildUnsavedNotifies(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(write("w1", "a.go", newGo))...)
	s := startNvimWith(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...), nvimOptions{UI: true})
	s.lua("vim.cmd('edit a.go'); vim.api.nvim_buf_set_lines(0, 2, 3, false, {'func Mine() {}'})")

	if rep := s.command("FlowBuild rewrite a.go"); rep["verified"] != false {
		t.Fatalf(":FlowBuild over an unsaved buffer = %v, want not verified", rep)
	}
	last := lastLine(s.notified("flow build"))
	if !strings.HasPrefix(last, "flow build ") || !strings.Contains(last, "a.go") || !strings.Contains(last, "save or discard") {
		t.Errorf("notification = %q, want a.go and \"save or discard\"", last)
	}
	if strings.Contains(last, "Add adds") || strings.Contains(last, "ask the user") {
		t.Errorf("notification = %q, want the cause, not the reviewer's summary or wording for the model", last)
	}
}

// TestNvimFlowUndoUnsavedNamesFile: :FlowUndo refused for an unsaved
// buffer says which file, in one line.
func TestNvimFlowUndoUnsavedNamesFile(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(write("w1", "a.go", newGo))...)
	s := startNvimWith(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...), nvimOptions{UI: true})
	s.lua("vim.cmd('edit a.go')")
	if rep := s.command("FlowBuild add New"); rep["status"] != "ok" {
		t.Fatalf(":FlowBuild = %v, want ok", rep)
	}
	s.notified("flow build")
	s.lua("vim.cmd('messages clear'); vim.api.nvim_buf_set_lines(vim.fn.bufnr('a.go'), 0, 1, false, {'// mine'})")
	if rep := s.command("FlowUndo"); rep["status"] == "ok" {
		t.Fatalf(":FlowUndo over an unsaved buffer = %v, want a refusal", rep)
	}
	last := lastLine(s.notified("flow undo"))
	if !strings.Contains(last, "a.go") || !strings.Contains(last, "unsaved") || strings.Contains(last, "ask the user") {
		t.Errorf("notification of the refused undo = %q, want a.go and its unsaved changes", last)
	}
}

// lastLine returns the last non-empty line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return lines[len(lines)-1]
}

// TestNvimFlowDiffShowsHunk: after :FlowBuild edits a.go, flow://run shows
// the diff, the quickfix entry is at the hunk's first changed line (3, not
// 1), :FlowDiff shows the hunk in a diff buffer, and no hit-enter prompt
// follows the run.
func TestNvimFlowDiffShowsHunk(t *testing.T) {
	t.Parallel()
	ws := goWorkspace(t)
	srv := ollamatest.New(t, buildScript(call("e1", "file_edit", map[string]any{
		"path": "a.go", "old_string": "func Old() {}", "new_string": "func New() {}"}))...)
	s := startNvimWith(t, ws, nvimConfig(t, ws, srv.URL, lintGrep...), nvimOptions{UI: true})

	rep := s.command("FlowBuild rename Old")
	if rep["status"] != "ok" {
		t.Fatalf(":FlowBuild = %v, want ok", rep)
	}
	if last := lastLine(s.notified("flow build")); last != "flow build ok, verified: changed a.go +1 -1" {
		t.Errorf("notification = %q", last)
	}
	qf := s.lua(`local out = {}
		for _, it in ipairs(vim.fn.getqflist()) do
			out[#out + 1] = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ':t') .. ':' .. it.lnum
		end
		return out`)
	if fmt.Sprint(qf) != "[a.go:3]" {
		t.Errorf("quickfix after the run = %v, want [a.go:3]", qf)
	}
	run := s.lua("return table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('^flow://run$'), 0, -1, false), '\\n')").(string)
	// The edit's diff right after its event, and again in the summary.
	if !strings.Contains(run, "changed: a.go (modified, +1 -1)") || strings.Count(run, "\n+func New() {}") != 2 ||
		!regexp.MustCompile(`tool file_edit[^\n]*\n--- a/a.go\n`).MatchString(run) {
		t.Errorf("flow://run =\n%s\nwant the diff of a.go after the edit and in the summary", run)
	}

	s.lua("vim.cmd('FlowDiff')")
	cur := s.lua("return { vim.api.nvim_buf_get_name(0), vim.bo.filetype, table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n') }").([]any)
	want := "--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n package a\n \n-func Old() {}\n+func New() {}"
	if cur[0] != "flow://diff" || cur[1] != "diff" || cur[2] != want {
		t.Errorf(":FlowDiff = %q (filetype %v):\n%s\nwant flow://diff, filetype diff:\n%s", cur[0], cur[1], cur[2], want)
	}
	nvimtest.NoPrompt(t, s.v)
}

// TestNvimStatusServers: :FlowStatus names each role's model, with its
// server when that is not [ollama], from the status report's models.
func TestNvimStatusServers(t *testing.T) {
	t.Parallel()
	v := nvimtest.New(t, nvimtest.Options{Dir: t.TempDir()})
	got := nvimtest.Exec(t, v, `
		package.loaded['flow'] = { status = function()
			return { status = "ok", models = { planner = "a", coder = "a", reviewer = "b",
				servers = { planner = "ollama", coder = "ollama", reviewer = "gpu" } } }
		end }
		local shown
		vim.notify = function(msg) shown = msg end
		require('flow.commands').status()
		return shown`)
	if s, _ := got.(string); !strings.Contains(s, "models: planner a, coder a, reviewer b on gpu") {
		t.Errorf(":FlowStatus shows %q, want the reviewer's model on gpu", got)
	}
}
