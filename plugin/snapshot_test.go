package plugin_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Every kind of path the snapshot can meet is described from what is on
// disk now, and hashed only when it is a regular, singly linked file
// within the size limit: a file too large, a hard-linked file, an observed
// file replaced by a FIFO (never blocking), by a directory or by a
// symlink, and a loaded buffer whose file became a symlink (the buffer
// then maps to the symlink's target).
func TestToolsEditorContextSpecialFiles(t *testing.T) {
	big := strings.Repeat("x", 300000)
	root := workspace(t, map[string]string{
		"big.txt": big, "hard.txt": "h\n", "fifo": "f\n", "dir": "d\n", "link": "l\n",
		"buf.txt": "b\n", "target.txt": "t\n", "plain.txt": "p\n",
	})
	if err := os.Link(filepath.Join(root, "hard.txt"), filepath.Join(root, "hard2.txt")); err != nil {
		t.Fatal(err)
	}
	v := editor(t, root, false)
	lua(t, v, "vim.cmd('edit big.txt | edit hard.txt | edit buf.txt')")
	for _, p := range []string{"fifo", "dir", "link", "plain.txt"} {
		callTool(t, v, "editor_context", map[string]any{"path": p})
	}
	for _, p := range []string{"fifo", "dir", "link", "buf.txt"} {
		if err := os.Remove(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"link", "buf.txt"} {
		if err := os.Symlink("target.txt", filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := flowEditor.ParseContext(callTool(t, v, "editor_context", map[string]any{}), root)
	if err != nil {
		t.Fatalf("ParseEditorContext = %v", err)
	}
	disk := func(p string) map[string]any {
		e, _ := c.Snapshot[p].(map[string]any)
		d, _ := e["disk"].(map[string]any)
		return d
	}
	for _, tc := range []struct {
		path, typ, sha string
		size           int64
	}{
		{"big.txt", "file", "", 300000},
		{"hard.txt", "file", "", 2},
		{"fifo", "fifo", "", 0},
		{"dir", "directory", "", -1},
		{"plain.txt", "file", hash("p\n"), 2},
		{"target.txt", "file", hash("t\n"), 2},
	} {
		d := disk(tc.path)
		if d["exists"] != true || d["type"] != tc.typ || (tc.size >= 0 && asInt(d["size"]) != tc.size) {
			t.Errorf("snapshot[%s].disk = %v, want an existing %s of %d bytes", tc.path, d, tc.typ, tc.size)
		}
		if tc.sha != "" && d["sha256"] != tc.sha || tc.sha == "" && (d["sha256"] != nil || d["hash_status"] != "unavailable") {
			t.Errorf("snapshot[%s].disk = %v, want sha256 %q", tc.path, d, tc.sha)
		}
		for _, k := range []string{"ino", "dev", "mtime", "ctime"} {
			if _, ok := d[k]; !ok {
				t.Errorf("snapshot[%s].disk has no %s", tc.path, k)
			}
		}
	}
	if d := disk("link"); d["status"] != "error" || d["sha256"] != nil {
		t.Errorf("snapshot[link].disk = %v, want an error record (now a symlink)", d)
	}
	if _, ok := c.Snapshot["buf.txt"]; ok {
		t.Errorf("snapshot[buf.txt] = %v, want the buffer under target.txt", c.Snapshot["buf.txt"])
	}
	if e, _ := c.Snapshot["target.txt"].(map[string]any); e == nil || len(e["buffers"].([]any)) != 1 {
		t.Errorf("snapshot[target.txt] = %v, want buf.txt's buffer", c.Snapshot["target.txt"])
	}
}
