package plugin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	floweditor "flow/runtime/editor"
)

// The freshness API v1 of editor_context (doc/design.md §11.7).
func TestToolsEditorContextFreshness(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	v := editor(t, root, true)

	// Nothing open and nothing observed: the snapshot is an empty map.
	res := callTool(t, v, "editor_context", map[string]any{})
	if snap, ok := res["workspace_snapshot"].(map[string]any); !ok || len(snap) != 0 {
		t.Errorf("empty workspace_snapshot = %#v, want an empty map", res["workspace_snapshot"])
	}
	if _, err := floweditor.ParseContext(res, root); err != nil {
		t.Fatalf("ParseEditorContext(empty) = %v", err)
	}

	lua(t, v, "vim.cmd('edit a.txt | edit b.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'changed'})")
	callTool(t, v, "file_read", map[string]any{"path": "c.txt"}) // observed, not loaded
	res = callTool(t, v, "editor_context", map[string]any{})
	c, err := floweditor.ParseContext(res, root)
	if err != nil {
		t.Fatalf("ParseEditorContext() = %v", err)
	}
	if !c.Dirty() || res["modified"] != true || res["path"] != "b.txt" || asInt(res["changedtick"]) <= 0 {
		t.Errorf("editor_context = modified %v path %v changedtick %v, want the modified current buffer b.txt",
			res["modified"], res["path"], res["changedtick"])
	}
	if res["workspace"] != root || asInt(res["workspace_snapshot_version"]) != 1 {
		t.Errorf("workspace = %v, version %v", res["workspace"], res["workspace_snapshot_version"])
	}
	if len(c.DirtyBuffers) != 1 || c.DirtyBuffers[0].(map[string]any)["path"] != "b.txt" {
		t.Errorf("dirty_buffers = %v, want b.txt only", c.DirtyBuffers)
	}
	var keys []string
	for k := range c.Snapshot {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a.txt", "b.txt", "c.txt"}) {
		t.Fatalf("workspace_snapshot keys = %v, want a.txt b.txt c.txt", keys)
	}
	a := c.Snapshot["a.txt"].(map[string]any)
	bufs := a["buffers"].([]any)
	buf := bufs[0].(map[string]any)
	if a["path"] != "a.txt" || len(bufs) != 1 || buf["loaded"] != true || buf["modified"] != false || asInt(buf["bufnr"]) != 1 {
		t.Errorf("snapshot[a.txt] = %v", a)
	}
	st, err := os.Stat(filepath.Join(root, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	disk := a["disk"].(map[string]any)
	mtime := disk["mtime"].(map[string]any)
	if disk["exists"] != true || disk["type"] != "file" || asInt(disk["size"]) != 2 || disk["sha256"] != hash("a\n") ||
		asInt(mtime["sec"]) != st.ModTime().Unix() || asInt(mtime["nsec"]) != int64(st.ModTime().Nanosecond()) {
		t.Errorf("snapshot[a.txt].disk = %v", disk)
	}
	for _, k := range []string{"ino", "dev", "ctime"} {
		if _, ok := disk[k]; !ok {
			t.Errorf("snapshot[a.txt].disk has no %s", k)
		}
	}
	cEntry := c.Snapshot["c.txt"].(map[string]any)
	if l, _ := cEntry["buffers"].([]any); len(l) != 0 {
		t.Errorf("snapshot[c.txt].buffers = %v, want none", cEntry["buffers"])
	}

	// A save changes the snapshot; a second context without changes does
	// not.
	again := callTool(t, v, "editor_context", map[string]any{})
	c2, _ := floweditor.ParseContext(again, root)
	if !floweditor.SameSnapshot(c.Snapshot, c2.Snapshot) {
		t.Error("two contexts without changes differ")
	}
	lua(t, v, "vim.cmd('silent write')")
	saved := callTool(t, v, "editor_context", map[string]any{})
	c3, _ := floweditor.ParseContext(saved, root)
	if floweditor.SameSnapshot(c.Snapshot, c3.Snapshot) || c3.Dirty() {
		t.Errorf("after :write: same snapshot %v, dirty %v; want a changed, clean snapshot",
			floweditor.SameSnapshot(c.Snapshot, c3.Snapshot), c3.Dirty())
	}
	if ok, _ := floweditor.SameObserved(c3.Snapshot, c3.Snapshot); !ok {
		t.Error("SameObserved(s, s) = false")
	}
}

// editor_context {path} describes that path's loaded buffer (its bufnr,
// changedtick and modified flag), or none, and the path joins the snapshot.
func TestToolsEditorContextPathBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('edit a.txt | edit b.txt'); vim.api.nvim_buf_set_lines(0, 0, -1, false, {'changed'})")
	for _, tc := range []struct {
		path     string
		bufnr    int64 // -1: none
		modified bool
		exists   bool
	}{
		{"a.txt", 1, false, true},
		{"./b.txt", 2, true, true},
		{"c.txt", -1, false, true},
		{"new.txt", -1, false, false},
	} {
		res := callTool(t, v, "editor_context", map[string]any{"path": tc.path})
		c, err := floweditor.ParseContext(res, root)
		if err != nil {
			t.Fatalf("editor_context {path = %s}: %v", tc.path, err)
		}
		rel := strings.TrimPrefix(tc.path, "./")
		loaded := tc.bufnr > 0
		if res["path"] != rel || res["loaded"] != loaded || asInt(res["bufnr"]) != tc.bufnr || res["modified"] != tc.modified {
			t.Errorf("editor_context {path = %s} = path %v loaded %v bufnr %v modified %v, want %s %v %d %v", tc.path,
				res["path"], res["loaded"], res["bufnr"], res["modified"], rel, loaded, tc.bufnr, tc.modified)
		}
		if loaded && asInt(res["changedtick"]) <= 0 || !loaded && asInt(res["changedtick"]) != 0 {
			t.Errorf("editor_context {path = %s} changedtick = %v", tc.path, res["changedtick"])
		}
		e, ok := c.Snapshot[rel].(map[string]any)
		if !ok || e["disk"].(map[string]any)["exists"] != tc.exists {
			t.Errorf("editor_context {path = %s} snapshot[%s] = %v, want exists %v", tc.path, rel, c.Snapshot[rel], tc.exists)
		}
	}
}

// A current buffer outside the workspace (such as flow://run) does not
// break the context.
func TestToolsEditorContextForeignBuffer(t *testing.T) {
	root := workspace(t, nil)
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('enew'); vim.bo.buftype = 'nofile'; vim.api.nvim_buf_set_name(0, 'flow://run')")
	res := callTool(t, v, "editor_context", map[string]any{})
	if _, err := floweditor.ParseContext(res, root); err != nil || res["modified"] != false || res["path"] != nil {
		t.Errorf("editor_context with a foreign buffer = %v, %v", res, err)
	}
}

// Diagnostics set with vim.diagnostic.set reach editor_diagnostics.
func TestToolsEditorDiagnostics(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	v := editor(t, root, false)
	res := callTool(t, v, "editor_diagnostics", map[string]any{"path": "a.go"})
	if res["status"] != "unavailable" {
		t.Errorf("editor_diagnostics of an unloaded file = %v, want unavailable", res)
	}
	lua(t, v, `
		vim.cmd('edit a.go')
		local ns = vim.api.nvim_create_namespace('flowtest')
		vim.diagnostic.set(ns, 0, {
			{ lnum = 0, col = 8, end_lnum = 0, end_col = 9, severity = vim.diagnostic.severity.ERROR, message = 'boom', source = 'test' },
			{ lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = 'hint' },
		})
		vim.cmd('edit b.go')
	`)
	res = callTool(t, v, "editor_diagnostics", map[string]any{"path": "a.go"})
	items, _ := res["diagnostics"].([]any)
	if res["status"] != "failed" || len(items) != 2 || res["verified"] != false {
		t.Fatalf("editor_diagnostics(a.go) = %v, want failed with 2 items", res)
	}
	first := items[0].(map[string]any)
	if asInt(first["line"]) != 1 || asInt(first["column"]) != 8 || asInt(first["severity"]) != 1 ||
		first["severity_name"] != "error" || first["message"] != "boom" || first["path"] != "a.go" {
		t.Errorf("first diagnostic = %v", first)
	}
	res = callTool(t, v, "editor_diagnostics", map[string]any{})
	if items, _ := res["diagnostics"].([]any); res["status"] != "failed" || len(items) != 2 {
		t.Errorf("editor_diagnostics() over all buffers = %v", res)
	}
	res = callTool(t, v, "editor_diagnostics", map[string]any{"path": "b.go"})
	if res["status"] != "unavailable" {
		t.Errorf("editor_diagnostics(b.go) without clients or items = %v, want unavailable", res)
	}
}

func TestToolsLSPUnavailable(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package a\n"})
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('edit a.go')")
	for _, tool := range []string{"editor_symbols", "editor_references"} {
		res := callTool(t, v, tool, map[string]any{"path": "a.go", "timeout": 100})
		if res["status"] != "unavailable" || !strings.Contains(res["reason"].(string), "no language server is attached to a.go") {
			t.Errorf("%s without clients = %v, want unavailable", tool, res)
		}
	}
	res := callTool(t, v, "editor_symbols", map[string]any{"path": "missing.go"})
	if res["status"] != "unavailable" {
		t.Errorf("editor_symbols of an unloaded file = %v, want unavailable", res)
	}
}
