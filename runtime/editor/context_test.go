package editor_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
	"flow/runtime/editor"
)

// edContext returns a valid editor_context result for root.
func edContext(root string) map[string]any {
	return map[string]any{
		"status":                     "ok",
		"workspace":                  root,
		"modified":                   false,
		"changedtick":                int64(3),
		"dirty_buffers":              []any{},
		"workspace_snapshot":         map[string]any{},
		"workspace_snapshot_version": int64(1),
	}
}

func TestParseEditorContext(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(m map[string]any)
		want   string // "" = valid
		dirty  bool
		remove string
	}{
		{name: "valid", edit: func(map[string]any) {}},
		{name: "version as float", edit: func(m map[string]any) { m["workspace_snapshot_version"] = 1.0 }},
		{name: "empty snapshot as array", edit: func(m map[string]any) { m["workspace_snapshot"] = []any{} }},
		{name: "empty dirty list as map", edit: func(m map[string]any) { m["dirty_buffers"] = map[string]any{} }},
		{name: "dirty buffer", edit: func(m map[string]any) {
			m["dirty_buffers"] = []any{map[string]any{"path": "a.go", "changedtick": int64(9)}}
		}, dirty: true},
		{name: "modified", edit: func(m map[string]any) { m["modified"] = true }, dirty: true},
		{name: "error status", edit: func(m map[string]any) { m["status"] = "error"; m["error"] = "/x/rose/tooling/workspace.lua:88: boom" }, want: "boom"},
		{name: "workspace through a symlink", edit: func(m map[string]any) { m["workspace"] = link }},
		{name: "workspace with a trailing slash", edit: func(m map[string]any) { m["workspace"] = root + "/" }},
		{name: "other workspace", edit: func(m map[string]any) { m["workspace"] = t.TempDir() }, want: "workspace mismatch"},
		{name: "symlink to another workspace", edit: func(m map[string]any) {
			other := filepath.Join(t.TempDir(), "other")
			if err := os.Symlink(t.TempDir(), other); err != nil {
				t.Fatal(err)
			}
			m["workspace"] = other
		}, want: "workspace mismatch"},
		{name: "missing version", remove: "workspace_snapshot_version", want: "freshness API v1"},
		{name: "version 2", edit: func(m map[string]any) { m["workspace_snapshot_version"] = int64(2) }, want: "freshness API v1"},
		{name: "missing snapshot", remove: "workspace_snapshot", want: "freshness API v1"},
		{name: "missing dirty list", remove: "dirty_buffers", want: "freshness API v1"},
		{name: "missing modified", remove: "modified", want: "freshness API v1"},
		{name: "snapshot not an object", edit: func(m map[string]any) { m["workspace_snapshot"] = "x" }, want: "freshness API v1"},
		{name: "non-empty array snapshot", edit: func(m map[string]any) { m["workspace_snapshot"] = []any{1} }, want: "freshness API v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := edContext(root)
			if tc.edit != nil {
				tc.edit(m)
			}
			delete(m, tc.remove)
			c, err := editor.ParseContext(m, root)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ParseContext() = %v, want valid", err)
				}
				if c.Dirty() != tc.dirty {
					t.Errorf("Dirty() = %v, want %v", c.Dirty(), tc.dirty)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, bufferfs.ErrEditorUnavailable) {
				t.Errorf("ParseContext() = %v, want ErrEditorUnavailable containing %q", err, tc.want)
			}
		})
	}
}

func edEntry(sha string, buffers ...map[string]any) map[string]any {
	list := []any{}
	for _, b := range buffers {
		list = append(list, b)
	}
	return map[string]any{
		"path":    "a.go",
		"buffers": list,
		"disk": map[string]any{"exists": true, "size": int64(3), "sha256": sha,
			"mtime": map[string]any{"sec": int64(10), "nsec": int64(5)}},
	}
}

func edBuf(n, tick int64, modified bool) map[string]any {
	return map[string]any{"bufnr": n, "changedtick": tick, "modified": modified, "loaded": true}
}

func TestSameSnapshot(t *testing.T) {
	a := map[string]any{"a.go": edEntry("h1", edBuf(1, 5, false))}
	// The same values decoded with other number types.
	b := map[string]any{"a.go": map[string]any{
		"path":    "a.go",
		"buffers": []any{map[string]any{"bufnr": uint64(1), "changedtick": 5.0, "modified": false, "loaded": true}},
		"disk": map[string]any{"exists": true, "size": 3.0, "sha256": "h1",
			"mtime": map[string]any{"sec": uint64(10), "nsec": 5.0}},
	}}
	if !editor.SameSnapshot(a, b) {
		t.Error("SameSnapshot(equal values, other number types) = false, want true")
	}
	if !editor.SameSnapshot(map[string]any{}, nil) {
		t.Error("SameSnapshot(empty, nil) = false, want true")
	}
	for name, other := range map[string]map[string]any{
		"disk hash":   {"a.go": edEntry("h2", edBuf(1, 5, false))},
		"changedtick": {"a.go": edEntry("h1", edBuf(1, 6, false))},
		"new path":    {"a.go": edEntry("h1", edBuf(1, 5, false)), "b.go": edEntry("h1")},
		"new buffer":  {"a.go": edEntry("h1", edBuf(1, 5, false), edBuf(2, 1, false))},
	} {
		if editor.SameSnapshot(a, other) {
			t.Errorf("SameSnapshot(%s changed) = true, want false", name)
		}
	}
}

func TestSameObserved(t *testing.T) {
	earlier := map[string]any{"a.go": edEntry("h1", edBuf(1, 5, false))}
	tests := []struct {
		name  string
		later map[string]any
		same  bool
	}{
		{"unchanged", map[string]any{"a.go": edEntry("h1", edBuf(1, 5, false))}, true},
		{"new path and buffer allowed", map[string]any{
			"a.go": edEntry("h1", edBuf(1, 5, false), edBuf(4, 2, true)),
			"b.go": edEntry("h9"),
		}, true},
		{"disk changed", map[string]any{"a.go": edEntry("h2", edBuf(1, 5, false))}, false},
		{"buffer changed", map[string]any{"a.go": edEntry("h1", edBuf(1, 6, false))}, false},
		{"buffer gone", map[string]any{"a.go": edEntry("h1")}, false},
		{"path gone", map[string]any{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			same, why := editor.SameObserved(earlier, tc.later)
			if same != tc.same {
				t.Errorf("SameObserved() = %v (%s), want %v", same, why, tc.same)
			}
			if !same && why == "" {
				t.Error("SameObserved() gave no reason")
			}
		})
	}
}

// Editor errors are said once, without Lua's positions or a traceback.
func TestMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/u/.local/share/nvim/lazy/rose.nvim/lua/rose/tooling/workspace.lua:88: expected absolute filename", "expected absolute filename"},
		{`[string "<nvim>"]:1: module 'rose.tools' not found:`, "module 'rose.tools' not found"},
		{"nvim:nvim_exec_lua exception: Error executing lua: lua/rose/tools.lua:12: lua/rose/tooling/files.lua:40: buffer is outside workspace\nstack traceback:\n\t[C]: in ?", "buffer is outside workspace"},
		{"refusing to overwrite an unsaved buffer", "refusing to overwrite an unsaved buffer"},
		{"time 12:30: fine", "time 12:30: fine"},
	}
	for _, tc := range tests {
		if got := editor.Message(tc.in); got != tc.want {
			t.Errorf("Message(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	root := t.TempDir()
	m := edContext(root)
	m["status"], m["error"] = "error", "/x/rose/tooling/workspace.lua:88: expected absolute filename"
	_, err := editor.ParseContext(m, root)
	if err == nil || err.Error() != "expected absolute filename" || !errors.Is(err, bufferfs.ErrEditorUnavailable) {
		t.Errorf("ParseContext(error) = %v, want exactly the editor's message, wrapping ErrEditorUnavailable", err)
	}
}
