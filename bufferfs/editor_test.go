package bufferfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"flow/bufferfs"
)

// edBuffer is one loaded buffer of the fake editor.
type edBuffer struct {
	bufnr    int
	text     string
	modified bool
}

// edFake is an editor tool module in memory with the rules of flow.tools:
// file_read prefers a loaded buffer, file_write refuses a modified buffer
// or a stale expected_sha256 and then refreshes the buffer. It records the
// calls so tests can tell whether a path ever reached the editor. The real
// module is tested against a real Neovim in package plugin.
type edFake struct {
	root string

	mu      sync.Mutex
	buffers map[string]*edBuffer
	calls   []string
	fail    error // returned by every call when set
}

func (f *edFake) Call(_ context.Context, tool string, args map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, _ := args["path"].(string)
	f.calls = append(f.calls, tool+" "+p)
	if f.fail != nil {
		return nil, f.fail
	}
	abs := filepath.Join(f.root, p)
	switch tool {
	case "file_read":
		if b := f.buffers[p]; b != nil {
			return map[string]any{"status": "ok", "content": b.text, "sha256": edHash(b.text), "source": "buffer"}, nil
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return map[string]any{"status": "error", "error": "no such file", "code": "not_found"}, nil
		}
		return map[string]any{"status": "ok", "content": string(data), "sha256": edHash(string(data))}, nil
	case "file_write":
		content := args["content"].(string)
		old, err := os.ReadFile(abs)
		if want, ok := args["expected_sha256"].(string); ok && (err != nil || edHash(string(old)) != want) {
			return map[string]any{"status": "error", "error": "disk changed since read", "code": "conflict"}, nil
		}
		if b := f.buffers[p]; b != nil && b.modified {
			return map[string]any{"status": "error", "error": "refusing to overwrite an unsaved buffer",
				"code": "dirty_buffer", "bufnr": int64(b.bufnr)}, nil
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			return map[string]any{"status": "error", "error": err.Error()}, nil
		}
		if b := f.buffers[p]; b != nil {
			b.text = content
		}
		return map[string]any{"status": "ok", "path": p, "bytes": int64(len(content)), "sha256": edHash(content)}, nil
	case "editor_context":
		res := map[string]any{"status": "ok", "workspace": f.root, "loaded": false}
		if b := f.buffers[p]; b != nil {
			res["loaded"], res["bufnr"] = true, float64(b.bufnr)
		}
		return res, nil
	}
	return map[string]any{"status": "error", "error": "unknown tool"}, nil
}

func (f *edFake) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func edHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// edSetup returns an Editor on a fresh workspace holding files, its fake
// editor, and the root.
func edSetup(t *testing.T, trusted bool, files map[string]string) (*bufferfs.Editor, *edFake, string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		abs := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: trusted})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	f := &edFake{root: d.Root(), buffers: map[string]*edBuffer{}}
	return bufferfs.NewEditor(d, f), f, d.Root()
}

func edDisk(t *testing.T, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEditorReadPrefersBuffer(t *testing.T) {
	ed, fake, _ := edSetup(t, true, map[string]string{"a.go": "disk\n", "b.go": "only disk\n"})
	fake.buffers["a.go"] = &edBuffer{bufnr: 3, text: "unsaved\n", modified: true}
	ctx := t.Context()
	for _, tc := range []struct{ path, want string }{{"a.go", "unsaved\n"}, {"b.go", "only disk\n"}, {"./a.go", "unsaved\n"}} {
		f, err := ed.Read(ctx, tc.path, 0)
		if err != nil {
			t.Fatalf("Read(%q) = %v", tc.path, err)
		}
		if string(f.Data) != tc.want || f.SHA256 != edHash(tc.want) || f.Size != int64(len(tc.want)) || !f.Exists {
			t.Errorf("Read(%q) = %q %+v, want %q with its hash", tc.path, f.Data, f.Info, tc.want)
		}
	}
	if _, err := ed.Read(ctx, "a.go", 3); !errors.Is(err, bufferfs.ErrTooLarge) {
		t.Errorf("Read(a.go, limit 3) = %v, want ErrTooLarge", err)
	}
	if _, err := ed.Read(ctx, "missing.go", 0); !errors.Is(err, bufferfs.ErrNotFound) {
		t.Errorf("Read(missing.go) = %v, want ErrNotFound", err)
	}
}

func TestEditorWriteRefusesDirtyBuffer(t *testing.T) {
	ed, fake, root := edSetup(t, true, map[string]string{"a.go": "disk\n"})
	fake.buffers["a.go"] = &edBuffer{bufnr: 3, text: "unsaved\n", modified: true}
	_, err := ed.Write(t.Context(), "a.go", []byte("new\n"), bufferfs.WriteOptions{})
	if !errors.Is(err, bufferfs.ErrDirtyBuffer) {
		t.Fatalf("Write(a.go) = %v, want ErrDirtyBuffer", err)
	}
	const want = "file has unsaved changes in Neovim (buffer 3); save or discard them first"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Write(a.go) error = %q, want containing %q", err, want)
	}
	if got := edDisk(t, root, "a.go"); got != "disk\n" {
		t.Errorf("disk after refused write = %q, want unchanged", got)
	}
	if fake.buffers["a.go"].text != "unsaved\n" {
		t.Errorf("buffer after refused write = %q, want unchanged", fake.buffers["a.go"].text)
	}
}

func TestEditorWriteDetectsConflict(t *testing.T) {
	ed, _, root := edSetup(t, true, map[string]string{"a.go": "v1\n"})
	ctx := t.Context()
	if _, err := ed.Read(ctx, "a.go", 0); err != nil {
		t.Fatal(err)
	}
	// Someone else saves the file after flow read it.
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ed.Write(ctx, "a.go", []byte("ours\n"), bufferfs.WriteOptions{})
	if !errors.Is(err, bufferfs.ErrConflict) {
		t.Fatalf("Write after an external change = %v, want ErrConflict", err)
	}
	if got := edDisk(t, root, "a.go"); got != "theirs\n" {
		t.Errorf("disk = %q, want the external change kept", got)
	}
	// Reading again makes the write go through.
	if _, err := ed.Read(ctx, "a.go", 0); err != nil {
		t.Fatal(err)
	}
	info, err := ed.Write(ctx, "a.go", []byte("ours\n"), bufferfs.WriteOptions{})
	if err != nil {
		t.Fatalf("Write after re-reading = %v", err)
	}
	if info.SHA256 != edHash("ours\n") || info.Size != 5 || info.Path != "a.go" {
		t.Errorf("Write info = %+v, want the new content's", info)
	}
}

func TestEditorWriteCreatesParentsAndMode(t *testing.T) {
	ed, fake, root := edSetup(t, true, nil)
	info, err := ed.Write(t.Context(), "x/y/new.sh", []byte("echo\n"), bufferfs.WriteOptions{Mode: 0o755})
	if err != nil {
		t.Fatalf("Write(x/y/new.sh) = %v", err)
	}
	if got := edDisk(t, root, "x/y/new.sh"); got != "echo\n" {
		t.Errorf("disk = %q", got)
	}
	if info.Mode != 0o755 {
		t.Errorf("Write mode = %v, want 0755", info.Mode)
	}
	if st, _ := os.Stat(filepath.Join(root, "x/y/new.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("file mode = %v, want 0755", st.Mode().Perm())
	}
	if fake.callCount() != 1 {
		t.Errorf("editor calls = %v, want one file_write", fake.calls)
	}
}

// Paths the Disk refuses never reach the editor.
func TestEditorConfinementBeforeEditor(t *testing.T) {
	ed, fake, root := edSetup(t, true, map[string]string{"a.go": "x", "config.toml": "k = 1\n"})
	if err := os.Symlink(filepath.Join(root, "a.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "a.go"), filepath.Join(root, "hard.go")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cases := []struct {
		path string
		kind error
	}{
		{"../etc/passwd", bufferfs.ErrInvalidPath},
		{"/etc/passwd", bufferfs.ErrInvalidPath},
		{".git/config", bufferfs.ErrInvalidPath},
		{"link.go", bufferfs.ErrSymlink},
		{"out/x.go", bufferfs.ErrSymlink},
		{"hard.go", bufferfs.ErrMultiLink},
		{".", bufferfs.ErrInvalidPath},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			if _, err := ed.Read(ctx, tc.path, 0); !errors.Is(err, tc.kind) {
				t.Errorf("Read(%q) = %v, want %v", tc.path, err, tc.kind)
			}
			if _, err := ed.Write(ctx, tc.path, []byte("x"), bufferfs.WriteOptions{}); !errors.Is(err, tc.kind) {
				t.Errorf("Write(%q) = %v, want %v", tc.path, err, tc.kind)
			}
		})
	}
	if _, err := ed.Write(ctx, "config.toml", []byte("x"), bufferfs.WriteOptions{}); !errors.Is(err, bufferfs.ErrProtected) {
		t.Errorf("Write(config.toml) = %v, want ErrProtected", err)
	}
	if _, err := ed.Write(ctx, "big.txt", make([]byte, bufferfs.MaxFileBytes+1), bufferfs.WriteOptions{}); !errors.Is(err, bufferfs.ErrTooLarge) {
		t.Errorf("Write(oversized) = %v, want ErrTooLarge", err)
	}
	if n := fake.callCount(); n != 0 {
		t.Errorf("editor calls = %v, want none", fake.calls)
	}
}

func TestEditorUntrustedWriteNeverReachesEditor(t *testing.T) {
	ed, fake, _ := edSetup(t, false, map[string]string{"a.go": "x"})
	ctx := t.Context()
	if _, err := ed.Write(ctx, "a.go", []byte("y"), bufferfs.WriteOptions{}); !errors.Is(err, bufferfs.ErrReadOnly) {
		t.Errorf("Write on an untrusted workspace = %v, want ErrReadOnly", err)
	}
	if err := ed.Remove(ctx, "a.go"); !errors.Is(err, bufferfs.ErrReadOnly) {
		t.Errorf("Remove on an untrusted workspace = %v, want ErrReadOnly", err)
	}
	if fake.callCount() != 0 {
		t.Errorf("editor calls = %v, want none", fake.calls)
	}
}

// A bridge failure makes every later editor operation fail closed, without
// touching the disk or calling the editor again.
func TestEditorFailsClosed(t *testing.T) {
	ed, fake, root := edSetup(t, true, map[string]string{"a.go": "disk\n"})
	fake.fail = errors.New("Neovim request timed out")
	ctx := t.Context()
	if _, err := ed.Read(ctx, "a.go", 0); !errors.Is(err, bufferfs.ErrEditorUnavailable) {
		t.Fatalf("Read with a failing bridge = %v, want ErrEditorUnavailable", err)
	}
	fake.fail = nil
	calls := fake.callCount()
	if _, err := ed.Write(ctx, "a.go", []byte("new\n"), bufferfs.WriteOptions{}); !errors.Is(err, bufferfs.ErrEditorUnavailable) ||
		!strings.Contains(err.Error(), "timed out") {
		t.Errorf("Write after a bridge failure = %v, want ErrEditorUnavailable naming the cause", err)
	}
	if _, err := ed.Read(ctx, "a.go", 0); !errors.Is(err, bufferfs.ErrEditorUnavailable) {
		t.Errorf("Read after a bridge failure = %v, want ErrEditorUnavailable", err)
	}
	if fake.callCount() != calls {
		t.Errorf("editor called again after failing: %v", fake.calls)
	}
	if got := edDisk(t, root, "a.go"); got != "disk\n" {
		t.Errorf("disk = %q, want unchanged", got)
	}
	if ed.Err() == nil {
		t.Error("Err() = nil, want the bridge failure")
	}
	// Disk-only operations keep working.
	if info, err := ed.Stat(ctx, "a.go"); err != nil || info.SHA256 != edHash("disk\n") {
		t.Errorf("Stat = %+v, %v, want the disk file", info, err)
	}
}

func TestEditorRemove(t *testing.T) {
	ed, fake, root := edSetup(t, true, map[string]string{"open.go": "x", "closed.go": "y"})
	fake.buffers["open.go"] = &edBuffer{bufnr: 7, text: "x"}
	ctx := t.Context()
	err := ed.Remove(ctx, "open.go")
	if !errors.Is(err, bufferfs.ErrConflict) || !strings.Contains(err.Error(), "buffer 7") {
		t.Errorf("Remove(open.go) = %v, want ErrConflict naming buffer 7", err)
	}
	if _, err := os.Stat(filepath.Join(root, "open.go")); err != nil {
		t.Errorf("open.go was removed: %v", err)
	}
	if err := ed.Remove(ctx, "closed.go"); err != nil {
		t.Errorf("Remove(closed.go) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "closed.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("closed.go still exists: %v", err)
	}
}

func TestEditorListAndWalkUseDisk(t *testing.T) {
	ed, fake, _ := edSetup(t, true, map[string]string{"a.go": "x", "d/b.go": "y"})
	l, err := ed.List(t.Context(), ".")
	if err != nil || strings.Join(l.Files, ",") != "a.go,d/b.go" {
		t.Errorf("List(.) = %v, %v, want a.go,d/b.go", l, err)
	}
	var walked []string
	err = ed.Walk(t.Context(), ".", func(p string, _ bufferfs.Info) error {
		walked = append(walked, p)
		return nil
	})
	if err != nil || strings.Join(walked, ",") != "a.go,d/b.go" {
		t.Errorf("Walk(.) = %v, %v", walked, err)
	}
	if fake.callCount() != 0 {
		t.Errorf("editor calls = %v, want none", fake.calls)
	}
}

// A refusal from Rose's rose.tools carries no code; its reference message
// still selects the error kind.
func TestEditorRoseMessages(t *testing.T) {
	tests := []struct {
		res  map[string]any
		want error
	}{
		{map[string]any{"status": "error", "error": "refusing to overwrite an unsaved buffer"}, bufferfs.ErrDirtyBuffer},
		{map[string]any{"status": "error", "error": "disk changed since read"}, bufferfs.ErrConflict},
		{map[string]any{"status": "error", "error": "disk differs from loaded buffer; reload manually"}, bufferfs.ErrConflict},
		{map[string]any{"status": "unavailable", "error": "Neovim bridge unavailable: x"}, bufferfs.ErrEditorUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.res["error"].(string), func(t *testing.T) {
			root := t.TempDir()
			d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ed := bufferfs.NewEditor(d, bridgeFunc(func(context.Context, string, map[string]any) (map[string]any, error) {
				return tc.res, nil
			}))
			_, err = ed.Write(t.Context(), "a.txt", []byte("x"), bufferfs.WriteOptions{})
			if !errors.Is(err, tc.want) {
				t.Errorf("Write with result %v = %v, want %v", tc.res, err, tc.want)
			}
		})
	}
}

// bridgeFunc adapts a function to bufferfs.EditorBridge.
type bridgeFunc func(context.Context, string, map[string]any) (map[string]any, error)

func (f bridgeFunc) Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	return f(ctx, tool, args)
}
