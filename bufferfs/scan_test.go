package bufferfs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flow/bufferfs"

	"golang.org/x/sys/unix"
)

func TestScan(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		big := strings.Repeat("0123456789abcde\n", 40000) // 640000 bytes
		writeFile(t, filepath.Join(root, "a.txt"), "alpha\n", 0o644)
		writeFile(t, filepath.Join(root, "big.txt"), big, 0o644)
		writeFile(t, filepath.Join(root, "sub/b.txt"), "beta\n", 0o644)
		writeFile(t, filepath.Join(root, "node_modules/x.js"), "x\n", 0o644)
		writeFile(t, filepath.Join(root, ".gitignore"), "ignored.txt\n", 0o644)
		writeFile(t, filepath.Join(root, "ignored.txt"), "i\n", 0o644)
		writeFile(t, filepath.Join(root, "linked.txt"), "l\n", 0o644)
		if err := os.Link(filepath.Join(root, "linked.txt"), filepath.Join(root, "linked2.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("a.txt", filepath.Join(root, "sym.txt")); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		d := newDisk(t, root, bufferfs.DiskOptions{}, openat2)
		ctx := t.Context()
		sc, err := d.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()

		// The scan's walk lists what Walk lists, plus the hard-linked
		// files, which it leaves to Open to refuse.
		var walked, scanned []string
		if err := d.Walk(ctx, ".", func(p string, _ bufferfs.Info) error {
			walked = append(walked, p)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := sc.Walk(ctx, ".", func(p string) error {
			scanned = append(scanned, p)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(walked)
		want = append(want, "linked.txt", "linked2.txt")
		slices.Sort(want)
		if !slices.Equal(scanned, want) {
			t.Errorf("Scan.Walk = %v, want %v", scanned, want)
		}

		for _, tc := range []struct {
			path string
			want string
			err  error
		}{
			{"a.txt", "alpha\n", nil},
			{"./sub/b.txt", "beta\n", nil},
			{"big.txt", big, nil},
			{"sym.txt", "", bufferfs.ErrSymlink},
			{"linked.txt", "", bufferfs.ErrMultiLink},
			{"fifo", "", bufferfs.ErrNotRegular},
			{"missing.txt", "", bufferfs.ErrNotFound},
			{"../x", "", bufferfs.ErrInvalidPath},
			{".", "", bufferfs.ErrInvalidPath},
		} {
			r, err := sc.Open(ctx, tc.path)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("Open(%q) = %v, want %v", tc.path, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("Open(%q) = %v", tc.path, err)
				continue
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(data) != tc.want {
				t.Errorf("read %q: %d bytes, %v; want %d bytes", tc.path, len(data), err, len(tc.want))
			}
			if info := r.Info(); info.Size != int64(len(tc.want)) || info.Path != filepath.Clean(tc.path) {
				t.Errorf("Info(%q) = %+v", tc.path, info)
			}
		}

		sc.Close()
		if _, err := sc.Open(ctx, "a.txt"); !errors.Is(err, bufferfs.ErrClosed) {
			t.Errorf("Open after Close = %v, want ErrClosed", err)
		}
	})
}

// A file that grows after it is opened is read up to its size at open.
func TestScanReadsSizeAtOpen(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "log.txt"), "one\n", 0o644)
	d := newDisk(t, root, bufferfs.DiskOptions{}, false)
	sc, err := d.Scan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	r, err := sc.Open(t.Context(), "log.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.OpenFile(filepath.Join(root, "log.txt"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	if data, err := io.ReadAll(r); err != nil || string(data) != "one\n" {
		t.Errorf("read = %q, %v; want the 4 bytes there at open", data, err)
	}
}
