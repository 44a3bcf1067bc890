package bufferfs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"flow/bufferfs"
)

func TestNewDiskResolvesRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	must(t, os.Mkdir(real, 0o755))
	must(t, os.Symlink("real", filepath.Join(base, "link")))
	d, err := bufferfs.NewDisk(filepath.Join(base, "link"), bufferfs.DiskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want, _ := filepath.EvalSymlinks(real)
	if got := d.Root(); got != want {
		t.Errorf("Root() = %q, want %q", got, want)
	}
}

func TestNewDiskErrors(t *testing.T) {
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "file"), "x", 0o644)
	for _, root := range []string{"", filepath.Join(base, "missing"), filepath.Join(base, "file")} {
		if d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{}); err == nil {
			d.Close()
			t.Errorf("NewDisk(%q) = nil error, want an error", root)
		}
	}
}

func TestStaleRoot(t *testing.T) {
	tests := []struct {
		name    string
		replace func(t *testing.T, root string)
		msg     string
	}{
		{"renamed and recreated", func(t *testing.T, root string) {
			must(t, os.Rename(root, root+".old"))
			must(t, os.Mkdir(root, 0o755))
		}, "stale workspace: root was replaced; restart flow"},
		{"replaced by a symlink", func(t *testing.T, root string) {
			must(t, os.Rename(root, root+".old"))
			must(t, os.Symlink(root+".old", root))
		}, "stale workspace: root was replaced; restart flow"},
		{"removed", func(t *testing.T, root string) {
			must(t, os.Rename(root, root+".old"))
		}, "stale workspace: root is unavailable; restart flow"},
	}
	forEachMode(t, func(t *testing.T, openat2 bool) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "ws")
				writeFile(t, filepath.Join(root, "a.txt"), "a\n", 0o644)
				d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
				ctx := t.Context()
				if err := d.CheckRoot(ctx); err != nil {
					t.Fatalf("CheckRoot() before replacing = %v", err)
				}
				tc.replace(t, root)
				w := fails(bufferfs.ErrStaleRoot, tc.msg)
				check(t, "CheckRoot()", d.CheckRoot(ctx), w)
				_, err := d.Read(ctx, "a.txt", 0)
				check(t, "Read(a.txt)", err, w)
				_, err = d.Write(ctx, "a.txt", []byte("new"), bufferfs.WriteOptions{})
				check(t, "Write(a.txt)", err, w)
				_, err = d.List(ctx, ".")
				check(t, "List(.)", err, w)
				_, err = d.Stat(ctx, "a.txt")
				check(t, "Stat(a.txt)", err, w)
				check(t, "Remove(a.txt)", d.Remove(ctx, "a.txt"), w)
				if got, err := os.ReadFile(filepath.Join(root+".old", "a.txt")); err != nil || string(got) != "a\n" {
					t.Errorf("old root a.txt = %q, %v; want it untouched", got, err)
				}
			})
		}
	})
}

func TestReadWriteRoundTrip(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		ctx := t.Context()
		data := []byte("package main\n\x00\xff binary is fine\n")
		info, err := d.Write(ctx, "./src//main.go", data, bufferfs.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		wantSum := hex.EncodeToString(sum[:])
		if info.Path != "src/main.go" || !info.Exists || info.Size != int64(len(data)) ||
			info.SHA256 != wantSum || info.Mode != 0o644 || info.ModTime.IsZero() {
			t.Errorf("Write() info = %+v, want path src/main.go, size %d, mode 0644, sha %s", info, len(data), wantSum)
		}
		f, err := d.Read(ctx, "src/main.go", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Data, data) || f.Info != info {
			t.Errorf("Read() = %q %+v, want %q %+v", f.Data, f.Info, data, info)
		}
		st, err := d.Stat(ctx, "src/main.go")
		if err != nil || st != info {
			t.Errorf("Stat() = %+v, %v; want %+v", st, err, info)
		}
	})
}

func TestReadLimit(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "ten.txt"), "0123456789", 0o644)
	d := newDisk(t, root, bufferfs.DiskOptions{}, true)
	ctx := t.Context()
	if _, err := d.Read(ctx, "ten.txt", 10); err != nil {
		t.Errorf("Read(ten.txt, 10) = %v, want success", err)
	}
	_, err := d.Read(ctx, "ten.txt", 9)
	check(t, "Read(ten.txt, 9)", err, fails(bufferfs.ErrTooLarge, "file exceeds 9 byte limit"))
	if f, err := d.Read(ctx, "ten.txt", bufferfs.MaxFileBytes+100); err != nil || len(f.Data) != 10 {
		t.Errorf("Read(ten.txt, over max) = %d bytes, %v; want 10 bytes", len(f.Data), err)
	}
}

func TestStat(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		big := strings.Repeat("z", bufferfs.MaxFileBytes*2)
		writeFile(t, filepath.Join(root, "big.txt"), big, 0o600)
		writeFile(t, filepath.Join(root, "dir", "x"), "x", 0o644)
		must(t, os.Symlink("big.txt", filepath.Join(root, "link")))
		d := newDisk(t, root, bufferfs.DiskOptions{}, openat2)
		ctx := t.Context()

		for _, p := range []string{"missing.txt", "nodir/missing.txt", "big.txt/below"} {
			info, err := d.Stat(ctx, p)
			if err != nil || info.Exists || info.Path != p {
				t.Errorf("Stat(%q) = %+v, %v; want Exists false and no error", p, info, err)
			}
		}
		info, err := d.Stat(ctx, "big.txt")
		sum := sha256.Sum256([]byte(big))
		if err != nil || info.SHA256 != hex.EncodeToString(sum[:]) || info.Size != int64(len(big)) || info.Mode != 0o600 {
			t.Errorf("Stat(big.txt) = %+v, %v; want the hash of %d bytes, mode 0600", info, err, len(big))
		}
		_, err = d.Stat(ctx, "link")
		check(t, "Stat(link)", err, fails(bufferfs.ErrSymlink, "symlinks are not allowed"))
		_, err = d.Stat(ctx, "dir")
		check(t, "Stat(dir)", err, fails(bufferfs.ErrNotRegular, "a directory"))
		_, err = d.Stat(ctx, ".")
		check(t, "Stat(.)", err, fails(bufferfs.ErrInvalidPath, "not workspace root"))
	})
}

func TestWriteModes(t *testing.T) {
	// A strict umask must not change the modes flow sets.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "private.txt"), "p", 0o600)
		writeFile(t, filepath.Join(root, "run.sh"), "#!/bin/sh\n", 0o755)
		writeFile(t, filepath.Join(root, "undo.txt"), "u", 0o644)
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		tests := []struct {
			path string
			opts bufferfs.WriteOptions
			want fs.FileMode
		}{
			{"new.txt", bufferfs.WriteOptions{}, 0o644},
			{"private.txt", bufferfs.WriteOptions{}, 0o600},
			{"run.sh", bufferfs.WriteOptions{}, 0o755},
			{"undo.txt", bufferfs.WriteOptions{Mode: 0o640}, 0o640},
			{"new-exec.sh", bufferfs.WriteOptions{Mode: 0o750 | fs.ModeSetuid}, 0o750},
			{"a/b/c/nested.txt", bufferfs.WriteOptions{}, 0o644},
		}
		for _, tc := range tests {
			info, err := d.Write(t.Context(), tc.path, []byte("content"), tc.opts)
			if err != nil {
				t.Errorf("Write(%q) = %v", tc.path, err)
				continue
			}
			fi, err := os.Stat(filepath.Join(root, tc.path))
			if err != nil || fi.Mode() != tc.want || info.Mode != tc.want {
				t.Errorf("Write(%q, %v) mode on disk %v, info %v; want %v", tc.path, tc.opts.Mode, fi.Mode(), info.Mode, tc.want)
			}
		}
		for _, dir := range []string{"a", "a/b", "a/b/c"} {
			fi, err := os.Stat(filepath.Join(root, dir))
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("created directory %s mode = %v, %v; want 0755", dir, fi.Mode().Perm(), err)
			}
		}
		for _, dir := range []string{".", "a/b/c"} {
			if tmp := tempFiles(t, filepath.Join(root, dir)); len(tmp) > 0 {
				t.Errorf("temporary files left in %s: %v", dir, tmp)
			}
		}
	})
}

func TestWriteIsAtomicReplacement(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		p := filepath.Join(root, "f.txt")
		writeFile(t, p, "old", 0o644)
		before := inode(t, p)
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		if _, err := d.Write(t.Context(), "f.txt", []byte("new"), bufferfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if after := inode(t, p); after == before {
			t.Errorf("inode after Write = %d, want a new inode (rename, not rewrite in place)", after)
		}
		if got, _ := os.ReadFile(p); string(got) != "new" {
			t.Errorf("content after Write = %q, want %q", got, "new")
		}
	})
}

// TestWritePlantedSymlinkIsReplaced plants a symlink to an outside file at
// the destination after Write's checks, just before the rename: the rename
// must replace the link, not write through it.
func TestWritePlantedSymlinkIsReplaced(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		base := t.TempDir()
		root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside.txt")
		writeFile(t, filepath.Join(root, "f.txt"), "old", 0o644)
		writeFile(t, outside, "outside", 0o644)
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		bufferfs.SetBeforeRename(d, func() {
			must(t, os.Remove(filepath.Join(root, "f.txt")))
			must(t, os.Symlink(outside, filepath.Join(root, "f.txt")))
		})
		if _, err := d.Write(t.Context(), "f.txt", []byte("new"), bufferfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(outside); string(got) != "outside" {
			t.Errorf("outside file = %q, want it untouched", got)
		}
		fi, err := os.Lstat(filepath.Join(root, "f.txt"))
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("f.txt after Write = %v, %v; want a regular file", fi.Mode(), err)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(got) != "new" {
			t.Errorf("f.txt = %q, want %q", got, "new")
		}
	})
}

// TestFailedWriteLeavesNoTemp makes the rename fail (a directory appears at
// the destination) and checks the error and that no temporary file stays.
func TestFailedWriteLeavesNoTemp(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "f.txt"), "old", 0o644)
		must(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		ctx := t.Context()

		_, err := d.Write(ctx, "dir", []byte("x"), bufferfs.WriteOptions{})
		check(t, "Write(dir)", err, fails(bufferfs.ErrNotRegular, "a directory"))

		bufferfs.SetBeforeRename(d, func() {
			must(t, os.Remove(filepath.Join(root, "f.txt")))
			must(t, os.Mkdir(filepath.Join(root, "f.txt"), 0o755))
			writeFile(t, filepath.Join(root, "f.txt", "keep"), "k", 0o644)
		})
		_, err = d.Write(ctx, "f.txt", []byte("new"), bufferfs.WriteOptions{})
		check(t, "Write(f.txt) racing a directory", err, fails(bufferfs.ErrNotRegular, "directory"))
		if tmp := tempFiles(t, root); len(tmp) > 0 {
			t.Errorf("temporary files left after failed writes: %v", tmp)
		}
	})
}

func TestRemove(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		base := t.TempDir()
		root := filepath.Join(base, "ws")
		outside := filepath.Join(base, "outside.txt")
		writeFile(t, outside, "outside", 0o644)
		writeFile(t, filepath.Join(root, "sub", "gone.txt"), "x", 0o644)
		writeFile(t, filepath.Join(root, "config.toml"), "x", 0o644)
		writeFile(t, filepath.Join(root, "hard.txt"), "x", 0o644)
		must(t, os.Link(filepath.Join(root, "hard.txt"), filepath.Join(root, "hard2.txt")))
		must(t, os.Symlink(outside, filepath.Join(root, "link")))
		must(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, openat2)
		ro := newDisk(t, root, bufferfs.DiskOptions{}, openat2)
		ctx := t.Context()

		check(t, "untrusted Remove(sub/gone.txt)", ro.Remove(ctx, "sub/gone.txt"),
			fails(bufferfs.ErrReadOnly, "read-only"))
		check(t, "Remove(sub/gone.txt)", d.Remove(ctx, "sub/gone.txt"), ok)
		if _, err := os.Lstat(filepath.Join(root, "sub", "gone.txt")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("sub/gone.txt after Remove: %v, want it gone", err)
		}
		check(t, "Remove(sub/gone.txt) again", d.Remove(ctx, "sub/gone.txt"), fails(fs.ErrNotExist, "no such file"))
		check(t, "Remove(config.toml)", d.Remove(ctx, "config.toml"), fails(bufferfs.ErrProtected, "operator configuration"))
		check(t, "Remove(hard.txt)", d.Remove(ctx, "hard.txt"), fails(bufferfs.ErrMultiLink, "multiply linked"))
		check(t, "Remove(link)", d.Remove(ctx, "link"), fails(bufferfs.ErrSymlink, "symlinks"))
		check(t, "Remove(dir)", d.Remove(ctx, "dir"), fails(bufferfs.ErrNotRegular, "a directory"))
		check(t, "Remove(link/x)", d.Remove(ctx, "link/x"), fails(bufferfs.ErrSymlink, "symlinks"))
		check(t, "Remove(.)", d.Remove(ctx, "."), fails(bufferfs.ErrInvalidPath, "not workspace root"))
		for _, p := range []string{"config.toml", "hard.txt", "link", "dir"} {
			if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s after refused Remove: %v, want it kept", p, err)
			}
		}
		if got, _ := os.ReadFile(outside); string(got) != "outside" {
			t.Errorf("outside file = %q, want it untouched", got)
		}
	})
}

// TestProtectedByIdentity protects the operator configuration through a
// symlink that appears only after NewDisk: its name inside the workspace
// was never known, so only the file identity can catch it.
func TestProtectedByIdentity(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		base := t.TempDir()
		root := filepath.Join(base, "ws")
		writeFile(t, filepath.Join(root, "settings.toml"), "x = 1\n", 0o644)
		link := filepath.Join(base, "operator.toml")
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true, Protected: []string{link}}, openat2)
		must(t, os.Symlink(filepath.Join(root, "settings.toml"), link))
		ctx := t.Context()
		_, err := d.Write(ctx, "settings.toml", []byte("x = 2\n"), bufferfs.WriteOptions{})
		check(t, "Write(settings.toml)", err, fails(bufferfs.ErrProtected, "operator configuration"))
		check(t, "Remove(settings.toml)", d.Remove(ctx, "settings.toml"), fails(bufferfs.ErrProtected, "operator configuration"))
		if got, _ := os.ReadFile(filepath.Join(root, "settings.toml")); string(got) != "x = 1\n" {
			t.Errorf("settings.toml = %q, want it untouched", got)
		}
	})
}

func TestProtectedDirectory(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		state := filepath.Join(root, ".local", "state", "flow")
		writeFile(t, filepath.Join(state, "journal.log"), "log\n", 0o600)
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true, Protected: []string{state}}, openat2)
		ctx := t.Context()
		for _, p := range []string{".local/state/flow/journal.log", ".local/state/flow/new.txt", ".local/state/FLOW/x/y"} {
			_, err := d.Write(ctx, p, []byte("forged"), bufferfs.WriteOptions{})
			check(t, "Write("+p+")", err, fails(bufferfs.ErrProtected, "operator configuration"))
		}
		check(t, "Remove(journal.log)", d.Remove(ctx, ".local/state/flow/journal.log"), fails(bufferfs.ErrProtected, "operator configuration"))
		if _, err := d.Write(ctx, ".local/state/flowers.txt", []byte("ok"), bufferfs.WriteOptions{}); err != nil {
			t.Errorf("Write(.local/state/flowers.txt) = %v, want a sibling with the same prefix writable", err)
		}
		if got, _ := os.ReadFile(filepath.Join(state, "journal.log")); string(got) != "log\n" {
			t.Errorf("journal.log = %q, want it untouched", got)
		}
	})
}

func TestClose(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "a", 0o644)
	d, err := bufferfs.NewDisk(root, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	ctx := t.Context()
	_, err = d.Read(ctx, "a.txt", 0)
	check(t, "Read after Close", err, fails(bufferfs.ErrClosed, "closed"))
	if err := d.CheckRoot(ctx); !errors.Is(err, bufferfs.ErrClosed) {
		t.Errorf("CheckRoot after Close = %v, want ErrClosed", err)
	}
}

func TestCancelledContext(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "a", 0o644)
	d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true}, true)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.Read(ctx, "a.txt", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with cancelled context = %v, want context.Canceled", err)
	}
	if _, err := d.Write(ctx, "b.txt", []byte("b"), bufferfs.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with cancelled context = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("b.txt after cancelled Write: %v, want it absent", err)
	}
}

func TestPathErrorText(t *testing.T) {
	root := t.TempDir()
	d := newDisk(t, root, bufferfs.DiskOptions{}, true)
	_, err := d.Read(t.Context(), "missing.txt", 0)
	want := "read missing.txt: no such file; check the path with file_list"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Read(missing.txt) = %v, want prefix %q", err, want)
	}
	_, err = d.Read(t.Context(), "a\x00b", 0)
	want = `read "a\x00b": path must be a nonempty relative string`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Read(a NUL b) = %v, want prefix %q", err, want)
	}
}

// TestPrivate: flow's private paths (its state directory, log file and
// configuration) are refused to every operation, read or write, whichever
// spelling reaches them, and walks never show them.
func TestPrivate(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		base := t.TempDir()
		root := filepath.Join(base, "ws")
		state := filepath.Join(root, ".local", "state", "flow")
		writeFile(t, filepath.Join(state, "locks", "w.lock"), "1\n", 0o600)
		writeFile(t, filepath.Join(root, "flow.log"), "log\n", 0o600)
		writeFile(t, filepath.Join(root, "cache", "keep.txt"), "k", 0o644)
		writeFile(t, filepath.Join(root, "src", "main.go"), "package main\n", 0o644)
		// A private directory whose name is not known when the Disk is
		// opened (a symlink made later): only its identity can catch it.
		late := filepath.Join(base, "late")
		d := newDisk(t, root, bufferfs.DiskOptions{Trusted: true, Private: []string{state, filepath.Join(root, "flow.log"), late}}, openat2)
		must(t, os.Symlink(filepath.Join(root, "cache"), late))
		ctx := t.Context()
		priv := fails(bufferfs.ErrProtected, "off limits to file tools")
		for _, p := range []string{
			".local/state/flow", ".local/state/flow/locks/w.lock", ".local/state/FLOW/locks/w.lock",
			".local/state/flow/./locks//w.lock", ".local/state/flow/new.txt", "flow.log", "FLOW.LOG",
			"cache/keep.txt", "cache/new.txt",
		} {
			_, err := d.Read(ctx, p, 0)
			check(t, "Read("+p+")", err, priv)
			_, err = d.Stat(ctx, p)
			check(t, "Stat("+p+")", err, priv)
			_, err = d.Write(ctx, p, []byte("forged"), bufferfs.WriteOptions{})
			check(t, "Write("+p+")", err, priv)
			check(t, "Remove("+p+")", d.Remove(ctx, p), priv)
		}
		for _, dir := range []string{".local/state/flow", ".local/state/flow/locks", "cache"} {
			_, err := d.List(ctx, dir)
			check(t, "List("+dir+")", err, priv)
		}
		l, err := d.List(ctx, ".")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Files) != 1 || l.Files[0] != "src/main.go" {
			t.Errorf("List(.) = %q, want only src/main.go (no private file)", l.Files)
		}
		var walked []string
		err = d.Walk(ctx, ".local", func(rel string, _ bufferfs.Info) error {
			walked = append(walked, rel)
			return nil
		})
		if err != nil || len(walked) != 0 {
			t.Errorf("Walk(.local) = %v, %v; want no files", walked, err)
		}
		if got, _ := os.ReadFile(filepath.Join(state, "locks", "w.lock")); string(got) != "1\n" {
			t.Errorf("lock file = %q, want it untouched", got)
		}
		if _, err := d.Write(ctx, ".local/state/flowers.txt", []byte("ok"), bufferfs.WriteOptions{}); err != nil {
			t.Errorf("Write(.local/state/flowers.txt) = %v, want a sibling with the same prefix writable", err)
		}
		if _, err := d.Read(ctx, "src/main.go", 0); err != nil {
			t.Errorf("Read(src/main.go) = %v, want project files readable", err)
		}
		// A search's Scan neither walks into nor opens private files.
		sc, err := d.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		var scanned []string
		if err := sc.Walk(ctx, ".", func(p string) error { scanned = append(scanned, p); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, p := range scanned {
			if p != "src/main.go" && p != ".local/state/flowers.txt" {
				t.Errorf("Scan.Walk visited %s, a private file", p)
			}
		}
		for _, p := range []string{".local/state/flow/locks/w.lock", ".local/state/FLOW/locks/w.lock", "flow.log", "cache/keep.txt"} {
			r, err := sc.Open(ctx, p)
			if err == nil {
				r.Close()
			}
			check(t, "Scan.Open("+p+")", err, priv)
		}
	})
}
