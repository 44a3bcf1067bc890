package bufferfs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"flow/bufferfs"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// resolveModes are the two ways a Disk resolves paths; every confinement
// test runs in both.
var resolveModes = []struct {
	name    string
	openat2 bool
}{
	{"openat2", true},
	{"fallback", false},
}

// forEachMode runs f as a subtest per resolve mode, skipping openat2 where
// the kernel lacks it.
func forEachMode(t *testing.T, f func(t *testing.T, openat2 bool)) {
	t.Helper()
	for _, m := range resolveModes {
		t.Run(m.name, func(t *testing.T) {
			if m.openat2 && !kernelHasOpenat2(t) {
				t.Skip("openat2 is not available on this kernel")
			}
			f(t, m.openat2)
		})
	}
}

func kernelHasOpenat2(t *testing.T) bool {
	d, err := bufferfs.NewDisk(t.TempDir(), bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return bufferfs.UsesOpenat2(d)
}

// newDisk opens root in the given resolve mode and closes it at cleanup.
func newDisk(t *testing.T, root string, opts bufferfs.DiskOptions, openat2 bool) *bufferfs.Disk {
	t.Helper()
	d, err := bufferfs.NewDisk(root, opts)
	if err != nil {
		t.Fatalf("NewDisk(%q) = %v", root, err)
	}
	bufferfs.SetOpenat2(d, openat2)
	t.Cleanup(func() { d.Close() })
	return d
}

// want is an expected outcome: kind nil means success.
type want struct {
	kind error
	msg  string
}

var ok = want{}

func fails(kind error, msg string) want { return want{kind: kind, msg: msg} }

// check compares err with w; call names the call for the message.
func check(t *testing.T, call string, err error, w want) {
	t.Helper()
	if w.kind == nil {
		if err != nil {
			t.Errorf("%s = %v, want success", call, err)
		}
		return
	}
	if err == nil {
		t.Errorf("%s = nil error, want %v (%q)", call, w.kind, w.msg)
		return
	}
	if !errors.Is(err, w.kind) {
		t.Errorf("%s = %v, want errors.Is %v", call, err, w.kind)
	}
	if !strings.Contains(err.Error(), w.msg) {
		t.Errorf("%s = %q, want message containing %q", call, err.Error(), w.msg)
	}
	var pe *bufferfs.PathError
	if !errors.As(err, &pe) && !errors.Is(err, bufferfs.ErrStaleRoot) {
		t.Errorf("%s = %T, want *bufferfs.PathError", call, err)
	}
}

// within runs f and fails the test if it does not return in time (a FIFO
// opened without O_NONBLOCK would hang forever).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
	}
}

// snapshot records every entry under dir: type, mode, size, mtime, and
// content hash or link target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v size=%d mtime=%d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			desc += " sha=" + hex.EncodeToString(sum[:8])
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		}
		out[strings.TrimPrefix(p, dir)] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// sameSnapshot fails the test when a snapshot changed.
func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("%s changed outside the workspace (-before +after):\n%s", what, diff)
	}
}

// writeFile creates a file and its parents, failing the test on error.
func writeFile(t *testing.T, p, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// tempFiles returns the names in dir that look like temporary files.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), bufferfs.TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// inode returns the inode number of p (without following a symlink).
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}
