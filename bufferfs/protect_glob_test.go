package bufferfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
)

func TestProtectGlobsRefuseWrites(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, f := range []string{"Makefile", "ci/lint.sh", "sub/Makefile", "calc.go"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true, ProtectGlobs: []string{"Makefile", "ci/**", ".golangci.*", "scripts"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := t.Context()
	for _, p := range []string{"Makefile", "sub/Makefile", "MAKEFILE", "ci/lint.sh", "ci/new/check.sh", ".golangci.yml", "scripts/run.sh"} {
		_, err := d.Write(ctx, p, []byte("x\n"), bufferfs.WriteOptions{})
		if !errors.Is(err, bufferfs.ErrProtected) || !strings.Contains(err.Error(), "[verify] protect") {
			t.Errorf("Write(%s) = %v, want ErrProtected naming [verify] protect", p, err)
		}
	}
	if err := d.Remove(ctx, "ci/lint.sh"); !errors.Is(err, bufferfs.ErrProtected) {
		t.Errorf("Remove(ci/lint.sh) = %v, want ErrProtected", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "Makefile")); string(got) != "old\n" {
		t.Errorf("Makefile = %q after refused writes, want it untouched", got)
	}
	for _, p := range []string{"calc.go", "cinema/x.go", "Makefile.md/x", "docs/golangci.txt"} {
		if _, err := d.Write(ctx, p, []byte("ok\n"), bufferfs.WriteOptions{}); err != nil {
			t.Errorf("Write(%s) = %v, want nil (not protected)", p, err)
		}
	}
}
