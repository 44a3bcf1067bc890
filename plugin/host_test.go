package plugin_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/internal/test/nvimtest"
	"flow/plugin"
	"flow/runtime/agent"
)

// The `flow nvim` host driven from Lua through jobstart, with the test host
// (the real plugin.ServeHost over a fake runtime that writes through the
// buffer-aware file system).

// withPlugin starts Neovim in root with flow set up to use the test host.
func withPlugin(t *testing.T, root string, trusted bool) *nvim.Nvim {
	t.Helper()
	bin := testHost(t)
	v := nvimtest.New(t, nvimtest.Options{Dir: root})
	lua(t, v, `require('flow').setup({ cmd = { (select(1, ...)) }, trusted = select(2, ...),
		log_file = select(3, ...), notify = false })`, bin, trusted, filepath.Join(t.TempDir(), "flow.log"))
	lua(t, v, "_G.flow_test_results = {}")
	return v
}

// waitFor polls the Lua expression until it is true (and returns its
// value), failing after 15 s.
func waitFor(t *testing.T, v *nvim.Nvim, expr string, args ...any) any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out := lua(t, v, "return "+expr, args...)
		if out != nil && out != false {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", expr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// build runs require('flow').build and returns the report on_done gets.
func build(t *testing.T, v *nvim.Nvim, task string) map[string]any {
	t.Helper()
	n := asInt(lua(t, v, `local i = #_G.flow_test_results + 1
		_G.flow_test_results[i] = false
		require('flow').build(..., { on_done = function(r) _G.flow_test_results[i] = r end })
		return i`, task))
	return waitFor(t, v, "_G.flow_test_results[...]", n).(map[string]any)
}

func TestPluginBuildWritesThroughBuffers(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "old\n", "b.txt": "b\n"})
	v := withPlugin(t, root, true)
	lua(t, v, "vim.cmd('edit b.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'unsaved'}); vim.cmd('edit a.txt')")

	rep := build(t, v, "write a.txt hello there")
	if rep["status"] != "ok" || fmt.Sprint(rep["changed_files"]) != "[a.txt]" {
		t.Fatalf("build(write a.txt) = %v", rep)
	}
	if got := readFile(t, root, "a.txt"); got != "hello there\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := bufLines(t, v, "a.txt"); !slices.Equal(got, []any{"hello there"}) {
		t.Errorf("a.txt buffer = %v, want the new text", got)
	}
	if got := lua(t, v, "return vim.bo.modified"); got != false {
		t.Errorf("a.txt modified = %v, want false", got)
	}
	lua(t, v, "vim.cmd('silent normal! u')")
	if got := bufLines(t, v, "a.txt"); !slices.Equal(got, []any{"old"}) {
		t.Errorf("a.txt after u = %v, want the old text", got)
	}
	if last := lua(t, v, "return require('flow').last_report.status"); last != "ok" {
		t.Errorf("last_report.status = %v", last)
	}
	run := lua(t, v, "return table.concat(vim.api.nvim_buf_get_lines(require('flow.ui').buffer(), 0, -1, false), '\\n')").(string)
	for _, want := range []string{"build: write a.txt hello there", "tool file_write", "flow run: ok", "changed: a.txt"} {
		if !strings.Contains(run, want) {
			t.Errorf("flow://run = %q, want containing %q", run, want)
		}
	}
	qf := lua(t, v, "return vim.tbl_map(function(e) return vim.fn.bufname(e.bufnr) end, vim.fn.getqflist())")
	if fmt.Sprint(qf) != "[a.txt]" {
		t.Errorf("quickfix = %v, want a.txt", qf)
	}

	// A buffer with unsaved changes is never overwritten.
	rep = build(t, v, "write b.txt flow")
	if rep["status"] != "error" || !strings.Contains(fmt.Sprint(rep["error"]), "unsaved changes in Neovim") {
		t.Errorf("build(write b.txt) over an unsaved buffer = %v, want a refusal", rep)
	}
	if got := readFile(t, root, "b.txt"); got != "b\n" {
		t.Errorf("b.txt = %q, want unchanged", got)
	}
	if got := bufLines(t, v, "b.txt"); !slices.Equal(got, []any{"unsaved"}) {
		t.Errorf("b.txt buffer = %v, want unchanged", got)
	}
}

func TestPluginFlowBuildCommand(t *testing.T) {
	root := workspace(t, map[string]string{"src.txt": "1\n2\n3\n4\n"})
	v := withPlugin(t, root, true)
	lua(t, v, "vim.cmd('edit src.txt'); vim.cmd('2,3FlowBuild write out.txt range')")
	waitFor(t, v, "require('flow').last_report")
	if got := readFile(t, root, "out.txt"); !strings.Contains(got, "range") || !strings.Contains(got, "src.txt:2-3") {
		t.Errorf("out.txt = %q, want the task with the selection's location src.txt:2-3", got)
	}
	// Without a task, :FlowBuild prompts.
	lua(t, v, `require('flow').last_report = nil
		vim.ui.input = function(opts, cb) _G.flow_prompt = opts.prompt; cb('write prompted.txt yes') end
		vim.cmd('FlowBuild')`)
	waitFor(t, v, "require('flow').last_report")
	if got := readFile(t, root, "prompted.txt"); got != "yes\n" {
		t.Errorf("prompted.txt = %q", got)
	}
	if p := lua(t, v, "return _G.flow_prompt"); p != "FlowBuild: " {
		t.Errorf("prompt = %v", p)
	}
}

func TestPluginStop(t *testing.T) {
	root := workspace(t, nil)
	v := withPlugin(t, root, true)
	n := asInt(lua(t, v, `_G.flow_test_results[1] = false
		require('flow').build('wait', { on_done = function(r) _G.flow_test_results[1] = r end })
		return 1`))
	waitFor(t, v, "require('flow').status().busy")
	busy := build(t, v, "write x.txt no")
	if busy["status"] != "busy" {
		t.Errorf("a second build while one runs = %v, want busy", busy)
	}
	lua(t, v, "vim.cmd('FlowStop')")
	rep := waitFor(t, v, "_G.flow_test_results[...]", n).(map[string]any)
	if rep["status"] != "cancelled" {
		t.Errorf("report after :FlowStop = %v, want cancelled", rep)
	}
}

// Killing the host resets the channel; the next command starts a new one.
func TestPluginHostRestarts(t *testing.T) {
	root := workspace(t, nil)
	v := withPlugin(t, root, false)
	if st := lua(t, v, "return require('flow').status().status"); st != "ok" {
		t.Fatalf("status = %v", st)
	}
	pid := int(asInt(lua(t, v, "return require('flow.rpc').pid()")))
	if pid <= 0 {
		t.Fatalf("host pid = %d", pid)
	}
	lua(t, v, `_G.flow_test_results[1] = false
		require('flow').build('wait', { on_done = function(r) _G.flow_test_results[1] = r end })`)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, v, "require('flow.rpc').channel() == nil")
	// The job of the dead host ends with an error, not silence.
	rep := waitFor(t, v, "_G.flow_test_results[1]").(map[string]any)
	if rep["status"] != "error" || !strings.Contains(fmt.Sprint(rep["error"]), "flow host exited") {
		t.Errorf("a running build when the host died = %v, want an error", rep)
	}
	st := lua(t, v, "return require('flow').status()").(map[string]any)
	if st["status"] != "ok" || st["workspace"] != root {
		t.Errorf("status after the host was killed = %v", st)
	}
	if p := int(asInt(lua(t, v, "return require('flow.rpc').pid()"))); p == pid || p <= 0 {
		t.Errorf("new host pid = %d, want a new process (old %d)", p, pid)
	}
}

func TestPluginCheckAndUndo(t *testing.T) {
	root := workspace(t, nil)
	v := withPlugin(t, root, true)
	lua(t, v, "_G.flow_test_results = {false, false}")
	lua(t, v, `require('flow').check('lint', { on_done = function(r) _G.flow_test_results[1] = r end })
		require('flow').undo(nil, { on_done = function(r) end })`)
	rep := waitFor(t, v, "_G.flow_test_results[1]").(map[string]any)
	checks, _ := rep["checks"].([]any)
	if rep["status"] != "ok" || len(checks) != 1 || checks[0].(map[string]any)["name"] != "lint" {
		t.Errorf("check('lint') = %v", rep)
	}
	got := lua(t, v, "return vim.fn.getcompletion('FlowCheck ', 'cmdline')")
	if fmt.Sprint(got) != "[tests lint]" {
		t.Errorf("FlowCheck completion = %v, want the configured checks", got)
	}
	got = lua(t, v, "return vim.fn.getcompletion('FlowCheck li', 'cmdline')")
	if fmt.Sprint(got) != "[lint]" {
		t.Errorf("FlowCheck li completion = %v", got)
	}
}

func TestPluginRPCContract(t *testing.T) {
	v := nvimtest.New(t, nvimtest.Options{})
	out := lua(t, v, "local l = vim.tbl_values(require('flow.rpc').methods); table.sort(l); return l")
	var got []string
	for _, m := range out.([]any) {
		got = append(got, m.(string))
	}
	if !slices.Equal(got, plugin.Methods) {
		t.Errorf("Lua methods = %v, Go methods = %v; they must be equal", got, plugin.Methods)
	}
	cmds := lua(t, v, "local l = vim.tbl_keys(vim.api.nvim_get_commands({})); table.sort(l); return l")
	var names []string
	for _, c := range cmds.([]any) {
		if strings.HasPrefix(c.(string), "Flow") {
			names = append(names, c.(string))
		}
	}
	want := []string{"FlowBuild", "FlowCheck", "FlowDiff", "FlowInstall", "FlowLog", "FlowReview", "FlowStatus", "FlowStop", "FlowUndo"}
	if !slices.Equal(names, want) {
		t.Errorf("commands = %v, want %v", names, want)
	}
	if ch := lua(t, v, "return require('flow.rpc').channel()"); ch != nil {
		t.Errorf("the host started before first use (channel %v)", ch)
	}
}

func TestPluginConfigValidation(t *testing.T) {
	v := nvimtest.New(t, nvimtest.Options{})
	tests := []struct {
		opts string
		want string
	}{
		{"{ trusted = 'yes' }", "flow: `trusted` should be boolean, not string"},
		{"{ cmd = {} }", "flow: `cmd` should be a non-empty list of strings"},
		{"{ config = 'relative.toml' }", "flow: `config` should be an absolute path"},
		{"{ timeout = 5 }", "flow: `timeout` should be between"},
		{"{ bogus = 1 }", "flow: unknown option `bogus`"},
	}
	for _, tc := range tests {
		out := lua(t, v, `local msgs = {}
			local notify = vim.notify
			vim.notify = function(m) table.insert(msgs, m) end
			require('flow').setup(`+tc.opts+`)
			vim.notify = notify
			return table.concat(msgs, '\n')`)
		if !strings.Contains(out.(string), tc.want) {
			t.Errorf("setup(%s) reported %q, want %q", tc.opts, out, tc.want)
		}
	}
	argv := lua(t, v, `require('flow').setup({ cmd = { '/x/flow', '-q' }, trusted = true, config = '/etc/flow.toml', workspace = '/' })
		return require('flow.config').host_argv()`)
	if fmt.Sprint(argv) != "[/x/flow -q nvim --workspace / --trusted --config /etc/flow.toml]" {
		t.Errorf("host argv = %v", argv)
	}
}

// The runtime's Service is what cmd/flow hands to ServeHost.
var _ plugin.Runtime = (*agent.Service)(nil)

// A panicking run becomes an error result; the host keeps serving.
func TestPluginRunPanicIsContained(t *testing.T) {
	root := workspace(t, nil)
	v := withPlugin(t, root, true)
	rep := build(t, v, "panic")
	if rep["status"] != "error" || !strings.Contains(fmt.Sprint(rep["error"]), "internal error in run") {
		t.Errorf("build(panic) = %v, want an internal error", rep)
	}
	if st := lua(t, v, "return require('flow').status().status"); st != "ok" {
		t.Errorf("status after a panicking run = %v, want the host alive", st)
	}
	if got := build(t, v, "write after.txt fine"); got["status"] != "ok" {
		t.Errorf("build after a panicking run = %v", got)
	}
}
