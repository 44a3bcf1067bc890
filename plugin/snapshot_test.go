package plugin_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	flowEditor "flow/runtime/editor"
)

// The snapshot hashes the bytes on disk at every call: a same-size rewrite
// that keeps the modification time still changes sha256.
func TestToolsEditorContextHashesCurrentBytes(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "aaaa\n"})
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('edit a.txt')")
	p := filepath.Join(root, "a.txt")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	diskOf := func() map[string]any {
		t.Helper()
		res := callTool(t, v, "editor_context", map[string]any{})
		c, err := flowEditor.ParseContext(res, root)
		if err != nil {
			t.Fatalf("ParseEditorContext = %v", err)
		}
		return c.Snapshot["a.txt"].(map[string]any)["disk"].(map[string]any)
	}
	if got := diskOf()["sha256"]; got != hash("aaaa\n") {
		t.Fatalf("sha256 = %v, want the hash of aaaa", got)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("bbbb\n"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, time.Time{}, st.ModTime()); err != nil {
		t.Fatal(err)
	}
	disk := diskOf()
	if disk["sha256"] != hash("bbbb\n") || asInt(disk["size"]) != 5 {
		t.Errorf("after a same-size rewrite: disk = %v, want the hash of bbbb", disk)
	}
}

// A buffer is mapped to the real path of its file, also when its name
// goes through a symlink or a directory became one after it was loaded
// (and after a snapshot looked at that directory: what a snapshot learns
// about directories is not kept for the next one).
func TestToolsEditorContextBufferPaths(t *testing.T) {
	root := workspace(t, map[string]string{"sub/x.txt": "x\n", "d/y.txt": "y\n"})
	if err := os.Symlink("sub", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('edit link/x.txt | edit d/y.txt')")
	before, err := flowEditor.ParseContext(callTool(t, v, "editor_context", map[string]any{}), root)
	if err != nil {
		t.Fatalf("ParseEditorContext = %v", err)
	}
	if _, ok := before.Snapshot["d/y.txt"]; !ok {
		t.Fatalf("snapshot before the rename = %v, want d/y.txt", before.Snapshot)
	}
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d2", filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, v, "editor_context", map[string]any{})
	c, err := flowEditor.ParseContext(res, root)
	if err != nil {
		t.Fatalf("ParseEditorContext = %v", err)
	}
	for rel, want := range map[string]string{"sub/x.txt": "x\n", "d2/y.txt": "y\n"} {
		e, ok := c.Snapshot[rel].(map[string]any)
		if !ok {
			t.Errorf("snapshot has no %s: %v", rel, c.Snapshot)
			continue
		}
		if bufs, _ := e["buffers"].([]any); len(bufs) != 1 || e["disk"].(map[string]any)["sha256"] != hash(want) {
			t.Errorf("snapshot[%s] = %v, want its buffer and hash", rel, e)
		}
	}
	if len(c.Snapshot) != 2 {
		t.Errorf("snapshot = %v, want sub/x.txt and d2/y.txt only", c.Snapshot)
	}
}
