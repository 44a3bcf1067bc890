package journal

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"flow/bufferfs"
	"flow/runtime/tools"
)

// The journal's hook is a tools.WriteHook.
var _ tools.WriteHook = (*Run)(nil).BeforeWrite

// helperEnv switches the test binary into a helper process (see
// helpers_test.go) that the crash and lock tests start and kill.
const helperEnv = "FLOW_JOURNAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name))
	}
	os.Exit(m.Run())
}

// fixture is a workspace with a real Disk and a Store in a separate state
// directory.
type fixture struct {
	t     *testing.T
	root  string
	state string
	disk  *bufferfs.Disk
	store *Store
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{t: t, root: filepath.Join(base, "ws"), state: filepath.Join(base, "state")}
	if err := os.Mkdir(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	f.disk = openDisk(t, f.root, true)
	store, err := Open(f.state, f.root, opts)
	if err != nil {
		t.Fatalf("Open(%q, %q) = %v", f.state, f.root, err)
	}
	f.store = store
	return f
}

// openDisk opens a Disk on root, closed when the test ends.
func openDisk(t *testing.T, root string, trusted bool) *bufferfs.Disk {
	t.Helper()
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: trusted})
	if err != nil {
		t.Fatalf("NewDisk(%q) = %v", root, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// put creates a workspace file directly (as the user would), with mode.
func (f *fixture) put(path, content string, mode fs.FileMode) {
	f.t.Helper()
	putFile(f.t, f.root, path, []byte(content), mode)
}

func putFile(t *testing.T, root, path string, data []byte, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// toolWrite does what the file tools do: read the current state, call the
// hook, and write through the Disk only when the hook agreed.
func toolWrite(ctx context.Context, fsys bufferfs.FS, hook tools.WriteHook, path string, data []byte) error {
	info, err := fsys.Stat(ctx, path)
	if err != nil {
		return err
	}
	old := bufferfs.File{Info: info}
	if info.Exists {
		if old, err = fsys.Read(ctx, path, 0); err != nil {
			return err
		}
	}
	if err := hook(ctx, path, old, data); err != nil {
		return err
	}
	_, err = fsys.Write(ctx, path, data, bufferfs.WriteOptions{})
	return err
}

func (f *fixture) toolWrite(r *Run, path, content string) {
	f.t.Helper()
	if err := toolWrite(f.t.Context(), f.disk, r.BeforeWrite, path, []byte(content)); err != nil {
		f.t.Fatalf("write %s: %v", path, err)
	}
}

// fileState is a file's bytes and mode, or its absence.
type fileState struct {
	Exists bool
	Data   string
	Mode   fs.FileMode
}

func stateOf(t *testing.T, root, path string) fileState {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return fileState{}
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi.IsDir() {
		return fileState{Exists: true, Mode: fi.Mode()}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{Exists: true, Data: string(data), Mode: fi.Mode()}
}

// snapshot returns the states of paths.
func (f *fixture) snapshot(paths ...string) map[string]fileState {
	f.t.Helper()
	m := map[string]fileState{}
	for _, p := range paths {
		m[p] = stateOf(f.t, f.root, p)
	}
	return m
}

// begin starts a run with a fresh id.
func (f *fixture) begin(id string) *Run {
	f.t.Helper()
	r, err := f.store.Begin(id, "task "+id)
	if err != nil {
		f.t.Fatalf("Begin(%q) = %v", id, err)
	}
	return r
}

// bigContent returns n deterministic bytes labelled with tag.
func bigContent(tag string, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(tag)
		b.WriteString(" lorem ipsum dolor sit amet\n")
	}
	return b.Bytes()[:n]
}
