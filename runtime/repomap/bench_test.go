package repomap

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"
)

// BenchmarkBuildGOROOT maps $(go env GOROOT)/src, a tree far larger than
// the caps: the cost one role pays for its brief on a big repository.
func BenchmarkBuildGOROOT(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	d, err := bufferfs.NewDisk(filepath.Join(strings.TrimSpace(string(out)), "src"), bufferfs.DiskOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	b.ReportAllocs()
	for b.Loop() {
		m, err := Build(context.Background(), d)
		if err != nil || len(m.Files) != maxFiles {
			b.Fatalf("Build = %d files, %v; want the %d-file cap", len(m.Files), err, maxFiles)
		}
	}
}
