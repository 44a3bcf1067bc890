package scratch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func TestCopy(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(root, "calc.go"), "package calc\n", 0o644)
	write(t, filepath.Join(root, "run.sh"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(root, "pkg", "deep", "x.go"), "package deep\n", 0o600)
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(t, filepath.Join(root, "__pycache__", "calc.cpython-311.pyc"), "stale\n", 0o644)
	write(t, filepath.Join(root, "node_modules", "tool", "cli.js"), "//\n", 0o755)
	write(t, filepath.Join(outside, "secret"), "secret\n", 0o644)
	must(t, os.MkdirAll(filepath.Join(root, "node_modules", ".bin"), 0o755))
	must(t, os.Symlink("../tool/cli.js", filepath.Join(root, "node_modules", ".bin", "tool")))
	must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "abs-link")))
	must(t, os.Symlink("../../"+filepath.Base(outside)+"/secret", filepath.Join(root, "escape-link")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))

	c, err := New(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"calc.go": "package calc\n", "pkg/deep/x.go": "package deep\n", "node_modules/.bin/tool": "//\n"} {
		got, err := os.ReadFile(filepath.Join(c.Dir, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", rel, got, err, want)
		}
	}
	for rel, mode := range map[string]os.FileMode{"run.sh": 0o755, "pkg/deep/x.go": 0o600} {
		st, err := os.Stat(filepath.Join(c.Dir, rel))
		if err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, %v; want %v", rel, st.Mode().Perm(), err, mode)
		}
	}
	for _, rel := range []string{".git", "__pycache__", "abs-link", "escape-link", "fifo"} {
		if _, err := os.Lstat(filepath.Join(c.Dir, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was copied (%v); it must be left out", rel, err)
		}
	}
	st, err := os.Stat(c.Dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the copy's root has mode %v (%v); want 0700", st.Mode().Perm(), err)
	}

	ctx := context.Background()
	must(t, c.Set(ctx, "calc.go", []byte("package calc // old\n"), true))
	must(t, c.Set(ctx, "new/added.go", []byte("package added\n"), true))
	must(t, c.Set(ctx, "run.sh", nil, false))
	must(t, c.Set(ctx, "never-there.go", nil, false))
	if got, _ := os.ReadFile(filepath.Join(c.Dir, "calc.go")); string(got) != "package calc // old\n" {
		t.Errorf("Set did not write: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "calc.go")); string(got) != "package calc\n" {
		t.Errorf("Set changed the workspace itself: %q", got)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, "run.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Set(exists=false) left the file: %v", err)
	}
	if err := c.Set(ctx, "../escape.go", []byte("x"), true); err == nil {
		t.Error("Set wrote outside the copy")
	}
	dir := c.Dir
	must(t, c.Close())
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s: %v", dir, err)
	}
}

func TestCopyBounds(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		write(t, filepath.Join(root, string(rune('a'+i))+".txt"), "0123456789", 0o644)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "flow-scratch-*"))
	if _, err := New(context.Background(), root, Options{MaxFiles: 3}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxFiles: err = %v, want ErrTooLarge", err)
	}
	if _, err := New(context.Background(), root, Options{MaxBytes: 25}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxBytes: err = %v, want ErrTooLarge", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(ctx, root, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "flow-scratch-*"))
	if len(after) != len(before) {
		t.Fatalf("a failed copy left its directory behind: %v → %v", before, after)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
