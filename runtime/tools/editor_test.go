package tools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"flow/runtime/config"
	"flow/runtime/model"
)

// fakeEditor advertises editor tools like plugin.Bridge does and records
// the calls that reach it.
type fakeEditor struct {
	mu     sync.Mutex
	calls  []string
	args   []map[string]any
	result map[string]any
	err    error
}

func (f *fakeEditor) Schemas(context.Context) ([]map[string]any, error) {
	fn := func(name string, props map[string]any) map[string]any {
		return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": "the " + name + " tool",
			"parameters": map[string]any{"type": "object", "properties": props, "required": []any{}, "additionalProperties": false}}}
	}
	path := map[string]any{"path": map[string]any{"type": "string"}}
	return []map[string]any{
		fn("editor_context", path),
		fn("editor_diagnostics", path),
		fn("editor_lint", path),
		fn("editor_check", map[string]any{"path": map[string]any{"type": "string"}, "name": map[string]any{"type": "string"}}),
		fn("editor_debug", map[string]any{"action": map[string]any{"type": "string", "enum": []any{"status", "run"}}}),
	}, nil
}

func (f *fakeEditor) Call(_ context.Context, tool string, args map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, tool)
	f.args = append(f.args, args)
	if f.err != nil {
		return nil, f.err
	}
	if f.result != nil {
		return f.result, nil
	}
	return map[string]any{"status": "ok", "tool": tool}, nil
}

func names(ts []model.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestEditorToolboxSchemas(t *testing.T) {
	for _, tc := range []struct {
		role    string
		trusted bool
		want    []string
	}{
		{config.RolePlanner, true, []string{"editor_context", "editor_diagnostics", "editor_debug"}},
		{config.RoleReviewer, true, []string{"editor_context", "editor_diagnostics", "editor_debug"}},
		{config.RoleCoder, false, []string{"editor_context", "editor_diagnostics", "editor_debug"}},
		{config.RoleCoder, true, []string{"editor_context", "editor_diagnostics", "editor_lint", "editor_check", "editor_debug"}},
	} {
		reg := New(newDisk(t, tc.trusted, nil), Options{Trusted: tc.trusted})
		box := withEditor(t, reg, &fakeEditor{})
		all := box.Schemas(tc.role)
		var editor []string
		for _, n := range names(all) {
			if strings.HasPrefix(n, "editor_") {
				editor = append(editor, n)
			}
		}
		if !slices.Equal(editor, tc.want) {
			t.Errorf("Schemas(%s, trusted %v) editor tools = %v, want %v", tc.role, tc.trusted, editor, tc.want)
		}
		if !slices.Equal(names(all[:len(all)-len(editor)]), names(reg.Schemas(tc.role))) {
			t.Errorf("Schemas(%s) does not start with the built-in tools: %v", tc.role, names(all))
		}
		for _, s := range all {
			if s.Name == EditorDebug {
				action := s.Parameters["properties"].(map[string]any)["action"].(map[string]any)
				if !slices.Equal(action["enum"].([]any), []any{"status"}) {
					t.Errorf("editor_debug action = %v, want enum [status]", action)
				}
			}
		}
	}
}

func TestEditorToolboxCall(t *testing.T) {
	ed := &fakeEditor{}
	box := withEditor(t, New(newDisk(t, true, map[string]string{"a.go": "x"}), Options{Trusted: true}), ed)
	tests := []struct {
		role, name, args string
		status, want     string
	}{
		{config.RoleCoder, "editor_context", `{"path":"a.go"}`, "ok", ""},
		{config.RoleCoder, "editor_context", `{"path":"../x"}`, "error", "parent traversal"},
		{config.RoleCoder, "editor_context", `{"bogus":1}`, "error", "Invalid arguments for editor_context"},
		{config.RoleCoder, "editor_context", `[1]`, "error", "Invalid tool arguments"},
		{config.RoleCoder, "editor_debug", `{"action":"run"}`, "error", "Invalid arguments"},
		{config.RoleCoder, "editor_debug", `{}`, "ok", ""},
		{config.RolePlanner, "editor_lint", `{"path":"a.go"}`, "error", "unavailable for role planner"},
		{config.RoleCoder, "editor_lint", `{"path":"a.go"}`, "ok", ""},
		{config.RoleCoder, "file_read", `{"path":"a.go"}`, "ok", ""},
		{config.RoleCoder, "editor_nope", `{}`, "error", "unknown tool"},
	}
	for _, tc := range tests {
		res := box.Call(t.Context(), tc.role, model.ToolCall{ID: "1", Name: tc.name, Arguments: tc.args})
		decodeContent(t, res)
		if res.Status != tc.status || !strings.Contains(res.Error, tc.want) {
			t.Errorf("Call(%s, %s %s) = %s %q, want %s %q", tc.role, tc.name, tc.args, res.Status, res.Error, tc.status, tc.want)
		}
	}
	if want := []string{"editor_context", "editor_debug", "editor_lint"}; !slices.Equal(ed.calls, want) {
		t.Errorf("calls reaching the editor = %v, want %v", ed.calls, want)
	}
}

func TestEditorToolboxResults(t *testing.T) {
	ed := &fakeEditor{result: map[string]any{"status": "failed", "path": "a.go", "diagnostics": strings.Repeat("x", 2*MaxResultChars)}}
	box := withEditor(t, New(newDisk(t, true, nil), Options{Trusted: true}), ed)
	res := box.Call(t.Context(), config.RoleCoder, model.ToolCall{ID: "1", Name: "editor_diagnostics", Arguments: `{"path":"a.go"}`})
	body := decodeContent(t, res)
	if res.Status != "failed" || !res.Truncated || body["path"] != "a.go" || body["truncated"] != true {
		t.Errorf("oversized editor result = %s truncated %v %v, want failed, truncated, path kept", res.Status, res.Truncated, body)
	}

	ed.err = errors.New("Neovim bridge unavailable: Neovim request timed out")
	res = box.Call(t.Context(), config.RoleCoder, model.ToolCall{ID: "2", Name: "editor_context", Arguments: `{}`})
	decodeContent(t, res)
	if res.Status != "unavailable" || !strings.Contains(res.Error, "timed out") {
		t.Errorf("Call with a failed bridge = %s %q, want unavailable", res.Status, res.Error)
	}
	if ev := box.Lint(t.Context(), "a.go"); ev["status"] != "unavailable" {
		t.Errorf("Lint with a failed bridge = %v, want unavailable", ev)
	}
}

func TestEditorEvidence(t *testing.T) {
	ed := &fakeEditor{result: map[string]any{"status": "ok", "verified": true}}
	box := withEditor(t, New(newDisk(t, true, nil), Options{Trusted: true}), ed)
	if ev := box.Lint(t.Context(), "a.go"); ev["status"] != "ok" || ed.args[0]["path"] != "a.go" {
		t.Errorf("Lint(a.go) = %v with args %v", ev, ed.args)
	}
	if ev := box.Diagnostics(t.Context(), "a.go"); ev["status"] != "ok" {
		t.Errorf("Diagnostics(a.go) = %v", ev)
	}
	// An editor that does not advertise a tool gives no evidence.
	none := withEditor(t, New(newDisk(t, true, nil), Options{Trusted: true}), editorWithout{})
	if ev := none.Lint(t.Context(), "a.go"); ev != nil {
		t.Errorf("Lint without editor_lint = %v, want nil", ev)
	}
}

// editorWithout advertises nothing.
type editorWithout struct{}

func (editorWithout) Schemas(context.Context) ([]map[string]any, error) { return nil, nil }
func (editorWithout) Call(context.Context, string, map[string]any) (map[string]any, error) {
	return nil, errors.New("not called")
}

// withEditor builds an editor toolbox, failing the test when the editor
// cannot list its tools.
func withEditor(t *testing.T, reg *Registry, ed Editor) *EditorToolbox {
	t.Helper()
	box, err := WithEditor(t.Context(), reg, ed)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// schemaFailure fails to list its tools and records the context it got.
type schemaFailure struct {
	editorWithout
	ctx context.Context
}

func (s *schemaFailure) Schemas(ctx context.Context) ([]map[string]any, error) {
	s.ctx = ctx
	return nil, errors.New("Neovim request timed out")
}

// TestEditorSchemasFailureIsReported: the schemas are fetched with the
// caller's context, and a failure is returned (for the run to report)
// while the toolbox still offers the built-in tools.
func TestEditorSchemasFailureIsReported(t *testing.T) {
	reg := New(newDisk(t, true, nil), Options{Trusted: true})
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "run")
	ed := &schemaFailure{}
	box, err := WithEditor(ctx, reg, ed)
	if err == nil || !strings.Contains(err.Error(), "editor tools unavailable: Neovim request timed out") {
		t.Errorf("WithEditor with a failing editor = %v, want the failure", err)
	}
	if ed.ctx == nil || ed.ctx.Value(key{}) != "run" {
		t.Error("the schemas were not fetched with the caller's context")
	}
	if box == nil || !slices.Equal(names(box.Schemas(config.RoleCoder)), names(reg.Schemas(config.RoleCoder))) {
		t.Error("a toolbox whose editor failed does not offer exactly the built-in tools")
	}
}
