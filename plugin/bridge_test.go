package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"

	"flow/bufferfs"
	"flow/plugin"
)

// evilModule is a tool module (a Go string, never a Lua file under plugin/)
// that advertises tools flow must drop and misbehaves on request.
const evilModule = `
local root = ...
local M = {}
M.schemas = function()
  local function fn(name, props)
    return { type = 'function', ['function'] = { name = name, description = name,
      parameters = { type = 'object', properties = props or vim.empty_dict(), required = {}, additionalProperties = false } } }
  end
  return {
    fn('editor_context'),
    fn('evil_lua'),
    fn('file_write', { path = { type = 'string' } }),
    fn('editor_debug', { action = { type = 'string', enum = { 'status', 'run' } } }),
    { type = 'function', ['function'] = { name = 'editor_lint' } },
    'junk',
  }
end
M.seen = {}
M.call = function(name, args)
  table.insert(M.seen, name)
  if name == 'editor_context' then
    local res = { status = 'ok', workspace = root, modified = false, changedtick = 0,
      dirty_buffers = {}, workspace_snapshot = vim.empty_dict(), workspace_snapshot_version = 1 }
    if M.old_api then res.workspace_snapshot_version = nil end
    return res
  end
  if name == 'editor_scip' then vim.loop.sleep(3000) end
  if name == 'editor_debug' then return { status = 'ok', action = args.action } end
  if name == 'editor_symbols' then return 'not an object' end
  return { status = 'ok', name = name }
end
package.loaded['evil.tools'] = M
`

func newBridge(t testing.TB, v *nvim.Nvim, root, module string, timeout time.Duration) *plugin.Bridge {
	t.Helper()
	b, err := plugin.NewBridge(v, plugin.BridgeOptions{Module: module, Root: root, Timeout: timeout})
	if err != nil {
		t.Fatalf("NewBridge(%q) = %v", module, err)
	}
	return b
}

func TestBridgeSchemasFilter(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	lua(t, v, evilModule, root)
	b := newBridge(t, v, root, "evil.tools", 10*time.Second)
	schemas, err := b.Schemas(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Tools(t.Context()); !slices.Equal(got, []string{"editor_context", "editor_debug"}) {
		t.Errorf("Tools() = %v, want editor_context, editor_debug", got)
	}
	debug := schemas[1]["function"].(map[string]any)["parameters"].(map[string]any)["properties"].(map[string]any)["action"]
	if fmt.Sprint(debug) != "map[enum:[status] type:string]" {
		t.Errorf("editor_debug action = %v, want narrowed to status", debug)
	}

	// flow.tools: the editor tools it has, never the file tools.
	fb := newBridge(t, v, root, "", 10*time.Second)
	if got := fb.Tools(t.Context()); !slices.Equal(got, []string{"editor_context", "editor_diagnostics", "editor_symbols", "editor_references"}) {
		t.Errorf("flow.tools Tools() = %v", got)
	}
}

func TestBridgeTooManySchemas(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	lua(t, v, `package.loaded['many.tools'] = { schemas = function()
		local l = {}
		for i = 1, 65 do l[i] = { type = 'function', ['function'] = { name = 'editor_context', parameters = vim.empty_dict() } } end
		return l
	end, call = function() return { status = 'ok' } end }`)
	b := newBridge(t, v, root, "many.tools", 10*time.Second)
	if _, err := b.Schemas(t.Context()); err == nil || !strings.Contains(err.Error(), "more than 64") {
		t.Errorf("Schemas() with 65 entries = %v, want an error", err)
	}
	if b.Err() == nil {
		t.Error("a failed schema fetch must mark the bridge unavailable")
	}
}

func TestBridgeCallPolicy(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	lua(t, v, evilModule, root)
	b := newBridge(t, v, root, "evil.tools", 10*time.Second)
	ctx := t.Context()
	tests := []struct {
		tool   string
		args   map[string]any
		status string
		want   string
	}{
		{"evil_lua", nil, "error", "not allowlisted"},
		{"x'); os.exit() --", nil, "error", "not allowlisted"},
		{"file_list", nil, "error", "not allowlisted"},
		{"editor_debug", map[string]any{"action": "run"}, "error", "manual"},
		{"editor_debug", nil, "ok", ""},
		{"editor_symbols", nil, "error", "non-object"},
		{"editor_lint", nil, "ok", ""},
	}
	for _, tc := range tests {
		res, err := b.Call(ctx, tc.tool, tc.args)
		if err != nil {
			t.Fatalf("Call(%q) = %v", tc.tool, err)
		}
		msg, _ := res["error"].(string)
		if res["status"] != tc.status || !strings.Contains(msg, tc.want) {
			t.Errorf("Call(%q, %v) = %v, want status %s containing %q", tc.tool, tc.args, res, tc.status, tc.want)
		}
	}
	res, _ := b.Call(ctx, "editor_debug", nil)
	if res["action"] != "status" {
		t.Errorf("editor_debug reached the editor with action %v, want status", res["action"])
	}
	seen := lua(t, v, "return table.concat(package.loaded['evil.tools'].seen, ',')").(string)
	if strings.Contains(seen, "evil") || strings.Contains(seen, "exit") || strings.Contains(seen, "run") {
		t.Errorf("the editor saw %q, want no refused call", seen)
	}
	// Every call but editor_context went through the freshness gate.
	if !strings.Contains(seen, "editor_context,editor_debug") {
		t.Errorf("calls seen = %q, want editor_context before each tool", seen)
	}
}

// Lua code in arguments is data: it reaches the module as a string.
func TestBridgeInjectionIsData(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, true)
	b := newBridge(t, v, root, "", 10*time.Second)
	res, err := b.Call(t.Context(), "file_write", map[string]any{"path": "x.txt", "content": "]]); os.exit(3) --[["})
	if err != nil || res["status"] != "ok" {
		t.Fatalf("file_write with Lua in content = %v, %v", res, err)
	}
	if got := readFile(t, root, "x.txt"); got != "]]); os.exit(3) --[[" {
		t.Errorf("x.txt = %q", got)
	}
	res, err = b.Call(t.Context(), "file_read", map[string]any{"path": "a'); os.exit() --"})
	if err != nil || res["status"] != "error" {
		t.Errorf("file_read with Lua in path = %v, %v, want an error result", res, err)
	}
	// The name travels as RPC data to the module's fixed call string.
	if res := callTool(t, v, "x'); os.exit() --", map[string]any{}); res["status"] != "error" {
		t.Errorf("call with Lua code as the tool name = %v, want an error result", res)
	}
	if got := lua(t, v, "return 40 + 2"); asInt(got) != 42 {
		t.Fatal("Neovim did not survive")
	}
	if _, err := plugin.NewBridge(v, plugin.BridgeOptions{Module: "x');os.exit()--", Root: root}); err == nil {
		t.Error("NewBridge accepted Lua code as a module name")
	}
}

func TestBridgeFreshnessGate(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "one\n"})
	v := editor(t, root, true)
	lua(t, v, evilModule, root)
	b := newBridge(t, v, root, "evil.tools", 10*time.Second)
	lua(t, v, "package.loaded['evil.tools'].old_api = true")
	res, err := b.Call(t.Context(), "editor_lint", nil)
	if err != nil || res["status"] != "unavailable" || !strings.Contains(res["error"].(string), "freshness API v1") {
		t.Errorf("Call without freshness fields = %v, %v, want unavailable", res, err)
	}
	seen := lua(t, v, "return table.concat(package.loaded['evil.tools'].seen, ',')").(string)
	if strings.Contains(seen, "editor_lint") {
		t.Errorf("editor_lint reached the editor past a failed gate: %s", seen)
	}

	// flow.tools set up for another directory: a workspace mismatch.
	other := workspace(t, nil)
	lua(t, v, "require('flow.tools').setup({workspace = ..., trusted = true})", other)
	fb := newBridge(t, v, root, "", 10*time.Second)
	res, err = fb.Call(t.Context(), "file_write", map[string]any{"path": "a.txt", "content": "x"})
	if err != nil || res["status"] != "unavailable" || !strings.Contains(res["error"].(string), "mismatch") {
		t.Errorf("file_write with a workspace mismatch = %v, %v", res, err)
	}
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = bufferfs.NewEditor(d, fb).Write(t.Context(), "a.txt", []byte("x"), bufferfs.WriteOptions{})
	if !errors.Is(err, bufferfs.ErrEditorUnavailable) {
		t.Errorf("Editor.Write with a workspace mismatch = %v, want ErrEditorUnavailable", err)
	}
	if got := readFile(t, root, "a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q, want unchanged", got)
	}
}

func TestBridgeTimeoutPoisons(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	lua(t, v, evilModule, root)
	b := newBridge(t, v, root, "evil.tools", 200*time.Millisecond)
	start := time.Now()
	_, err := b.Call(t.Context(), "editor_scip", nil) // sleeps 3 s in Neovim
	if err == nil || !strings.Contains(err.Error(), "timed out") || !errors.Is(err, bufferfs.ErrEditorUnavailable) {
		t.Fatalf("Call(slow) = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("Call(slow) returned after %s, want about the 200ms timeout", d)
	}
	if _, err := b.Call(t.Context(), "editor_context", nil); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("Call after a timeout = %v, want the bridge unavailable", err)
	}
	ed := b.Status(t.Context())
	if ed.Status != "unavailable" || ed.Attached || ed.Error == nil {
		t.Errorf("Status() = %+v, want unavailable", ed)
	}
}

func TestBridgeConcurrentCalls(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "x\n"})
	v := editor(t, root, false)
	b := newBridge(t, v, root, "", 10*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.Call(context.Background(), "file_read", map[string]any{"path": "a.txt"})
			if err == nil && res["content"] != "x\n" {
				err = fmt.Errorf("file_read = %v", res)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := b.Status(t.Context()); st.Status != "ok" || !st.Attached || st.Workspace != root {
		t.Errorf("Status() = %+v, want ok and attached", st)
	}
}
