package bufferfs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"flow/bufferfs"
)

// benchTree is a generated workspace of benchFiles files (100 directories
// of 100 files of 1 KiB, plus a .gitignore), built once per process.
const benchFiles = 10000

var (
	benchOnce sync.Once
	benchRoot string
	benchErr  error
)

func benchWorkspace(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchRoot, benchErr = os.MkdirTemp("", "flow-bufferfs-bench-")
		if benchErr != nil {
			return
		}
		content := bytes.Repeat([]byte("x"), 1024)
		benchErr = os.WriteFile(filepath.Join(benchRoot, ".gitignore"), []byte("*.o\n/out/\n"), 0o644)
		for i := 0; i < benchFiles/100 && benchErr == nil; i++ {
			dir := filepath.Join(benchRoot, fmt.Sprintf("pkg%03d", i))
			if benchErr = os.Mkdir(dir, 0o755); benchErr != nil {
				return
			}
			for j := 0; j < 100 && benchErr == nil; j++ {
				benchErr = os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.go", j)), content, 0o644)
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRoot
}

// removeBenchWorkspace runs after all tests and benchmarks (TestMain).
func removeBenchWorkspace() {
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
}

func benchModes(b *testing.B, f func(b *testing.B, d *bufferfs.Disk)) {
	for _, m := range resolveModes {
		b.Run(m.name, func(b *testing.B) {
			d, err := bufferfs.NewDisk(benchWorkspace(b), bufferfs.DiskOptions{Trusted: true})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if m.openat2 && !bufferfs.UsesOpenat2(d) {
				b.Skip("openat2 is not available on this kernel")
			}
			bufferfs.SetOpenat2(d, m.openat2)
			f(b, d)
		})
	}
}

func reportFiles(b *testing.B, perOp int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(perOp)*float64(b.N)/s, "files/s")
	}
}

func BenchmarkDiskRead(b *testing.B) {
	benchModes(b, func(b *testing.B, d *bufferfs.Disk) {
		ctx := b.Context()
		for b.Loop() {
			if _, err := d.Read(ctx, "pkg050/file050.go", 0); err != nil {
				b.Fatal(err)
			}
		}
		reportFiles(b, 1)
	})
}

func BenchmarkDiskWrite(b *testing.B) {
	benchModes(b, func(b *testing.B, d *bufferfs.Disk) {
		ctx := b.Context()
		data := bytes.Repeat([]byte("y"), 4096)
		for b.Loop() {
			if _, err := d.Write(ctx, "scratch/bench.txt", data, bufferfs.WriteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		reportFiles(b, 1)
	})
}

func BenchmarkDiskList(b *testing.B) {
	benchModes(b, func(b *testing.B, d *bufferfs.Disk) {
		ctx := b.Context()
		n := 0
		for b.Loop() {
			l, err := d.List(ctx, ".")
			if err != nil || !l.Truncated {
				b.Fatalf("List(.) = %d files, truncated %v, %v", len(l.Files), l.Truncated, err)
			}
			n = len(l.Files)
		}
		reportFiles(b, n)
	})
}

func BenchmarkDiskWalk(b *testing.B) {
	benchModes(b, func(b *testing.B, d *bufferfs.Disk) {
		ctx := b.Context()
		n := 0
		for b.Loop() {
			n = 0
			err := d.Walk(ctx, ".", func(string, bufferfs.Info) error { n++; return nil })
			if err != nil {
				b.Fatal(err)
			}
		}
		if n < benchFiles {
			b.Fatalf("Walk(.) visited %d files, want %d", n, benchFiles)
		}
		reportFiles(b, n)
	})
}

// BenchmarkDiskReadPrivate is BenchmarkDiskRead with flow's usual private
// paths (state directory, log file, configuration) outside the workspace:
// the cost of refusing them by identity. Compare with BenchmarkDiskRead.
func BenchmarkDiskReadPrivate(b *testing.B) {
	root := benchWorkspace(b)
	var private []string
	for _, name := range []string{"state", "flow.log", "config.toml"} {
		p := filepath.Join(b.TempDir(), name)
		if err := os.Mkdir(p, 0o700); err != nil {
			b.Fatal(err)
		}
		private = append(private, p)
	}
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Private: private})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := b.Context()
	for b.Loop() {
		if _, err := d.Read(ctx, "pkg050/file050.go", 0); err != nil {
			b.Fatal(err)
		}
	}
	reportFiles(b, 1)
}
