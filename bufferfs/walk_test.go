package bufferfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"flow/bufferfs"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// listingTree builds a workspace exercising the skip list, .gitignore
// rules and invisible file kinds, and returns the files List(".") must
// return.
func listingTree(t *testing.T) (root string, visible []string) {
	t.Helper()
	root = t.TempDir()
	files := map[string]string{
		".gitignore":        "# build output\n*.tmp\n/build/\ncache/\n/x\r\n\n",
		".git/info/exclude": "secret.env\n",
		".git/config":       "[core]\n",
		".env":              "TOKEN=1\n",
		"secret.env":        "excluded by .git/info/exclude\n",
		"a.go":              "package a\n",
		"app.tmp":           "ignored by *.tmp\n",
		"x":                 "ignored by anchored /x\n",
		"sub/x":             "anchored /x does not apply here\n",
		"build/out.o":       "ignored by /build/\n",
		"src/build/main.go": "a source folder named build stays visible\n",
		"cache/c.bin":       "ignored by dir-only cache/\n",
		"pkg/cache":         "a file named cache is not a directory\n",
		"pkg/.gitignore":    "*.txt\n!keep.txt\n",
		"pkg/a.txt":         "ignored by nested *.txt\n",
		"pkg/keep.txt":      "re-included by !keep.txt\n",
		"pkg/deep/b.txt":    "nested *.txt applies below pkg\n",
		"top.txt":           "nested pkg/.gitignore does not apply here\n",
		"notes/venv":        "a file named venv is not a skipped directory\n",
		".Git/x":            "skipped: .git case-insensitively\n",
		"sub/.git/HEAD":     "skipped: nested .git\n",
		"hard1.txt":         "hard linked\n",
	}
	for _, dir := range []string{".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
		".mypy_cache", ".pytest_cache", ".tox", ".next"} {
		files[dir+"/f.txt"] = "skipped directory\n"
	}
	for p, content := range files {
		writeFile(t, filepath.Join(root, p), content, 0o644)
	}
	// Over 32 components: never listed, since the tools would refuse it.
	writeFile(t, filepath.Join(root, strings.Repeat("d/", 32)+"deep.txt"), "too deep\n", 0o644)
	must(t, os.Link(filepath.Join(root, "hard1.txt"), filepath.Join(root, "hard2.txt")))
	must(t, os.Symlink("a.go", filepath.Join(root, "link.go")))
	must(t, os.Symlink("src", filepath.Join(root, "linkdir")))
	must(t, os.Symlink("/etc", filepath.Join(root, "etc")))
	must(t, unix.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	writeFile(t, filepath.Join(root, bufferfs.TempPrefix+"123-0123456789abcdef"), "temp", 0o600)
	visible = []string{
		".env", ".gitignore", "a.go", "notes/venv", "pkg/.gitignore", "pkg/cache", "pkg/keep.txt",
		"src/build/main.go", "sub/x", "top.txt",
	}
	return root, visible
}

func TestListVisibility(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root, visible := listingTree(t)
		d := newDisk(t, root, bufferfs.DiskOptions{}, openat2)
		ctx := t.Context()
		tests := []struct {
			dir  string
			want []string
		}{
			{".", visible},
			{"pkg", []string{"pkg/.gitignore", "pkg/cache", "pkg/keep.txt"}},
			{"pkg/deep", []string{}},
			{"src", []string{"src/build/main.go"}},
			// A directory asked for by name is listed even when ignored.
			{"build", []string{"build/out.o"}},
		}
		for _, tc := range tests {
			got, err := d.List(ctx, tc.dir)
			if err != nil {
				t.Errorf("List(%q) = %v", tc.dir, err)
				continue
			}
			if diff := cmp.Diff(bufferfs.Listing{Files: tc.want}, got); diff != "" {
				t.Errorf("List(%q) mismatch (-want +got):\n%s", tc.dir, diff)
			}
		}
		var walked []string
		err := d.Walk(ctx, ".", func(p string, info bufferfs.Info) error {
			walked = append(walked, p)
			if info.Path != p || !info.Exists || info.Size <= 0 || info.Mode != 0o644 || info.ModTime.IsZero() {
				t.Errorf("Walk info for %s = %+v", p, info)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Walk(.) = %v", err)
		}
		if diff := cmp.Diff(visible, walked); diff != "" {
			t.Errorf("Walk(.) mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestListNoGitignore checks that without ignore rules a folder named
// build, dist or target is listed.
func TestListNoGitignore(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"build/main.go", "dist/x.js", "target/y.rs"} {
		writeFile(t, filepath.Join(root, p), "x", 0o644)
	}
	d := newDisk(t, root, bufferfs.DiskOptions{}, true)
	got, err := d.List(t.Context(), ".")
	want := bufferfs.Listing{Files: []string{"build/main.go", "dist/x.js", "target/y.rs"}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("List(.) = %+v, %v; want %+v", got, err, want)
	}
}

func TestListSortedPaths(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		root := t.TempDir()
		// "a-b.txt" sorts before "a/x.txt" as a string although the
		// directory name "a" sorts before "a-b.txt".
		names := []string{"a/x.txt", "a-b.txt", "a.txt", "ab/c", "B.txt", "a/y/z", "a/y-", "a b"}
		for _, p := range names {
			writeFile(t, filepath.Join(root, p), "x", 0o644)
		}
		d := newDisk(t, root, bufferfs.DiskOptions{}, openat2)
		got, err := d.List(t.Context(), ".")
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(slices.Values(names))
		if diff := cmp.Diff(want, got.Files); diff != "" {
			t.Errorf("List(.) order (-want +got):\n%s", diff)
		}
	})
}

func makeFiles(t *testing.T, dir string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("f%04d.txt", i)
		writeFile(t, filepath.Join(dir, name), "x", 0o644)
		names = append(names, name)
	}
	return names
}

func TestListCaps(t *testing.T) {
	tests := []struct {
		name           string
		files          int // regular files in the root
		extra          int // invisible names (symlinks) in the root
		capFiles       int // 0: the real caps
		capVisited     int
		wantFiles      int
		wantTruncation bool
	}{
		{"exactly MaxListFiles", bufferfs.MaxListFiles, 0, 0, 0, bufferfs.MaxListFiles, false},
		{"one over MaxListFiles", bufferfs.MaxListFiles + 1, 0, 0, 0, bufferfs.MaxListFiles, true},
		{"exactly the file cap", 5, 0, 5, 100, 5, false},
		{"one over the file cap", 6, 0, 5, 100, 5, true},
		{"exactly the visited cap", 4, 6, 100, 10, 4, false},
		{"one over the visited cap", 4, 7, 100, 10, 4, true},
		{"visited cap cuts files", 12, 0, 100, 10, 10, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			names := makeFiles(t, root, tc.files)
			for i := range tc.extra {
				// "z" sorts after the files, so the files are visited first.
				must(t, os.Symlink(names[0], filepath.Join(root, fmt.Sprintf("z%02d", i))))
			}
			d := newDisk(t, root, bufferfs.DiskOptions{}, true)
			if tc.capFiles > 0 {
				bufferfs.SetListCaps(d, tc.capFiles, tc.capVisited)
			}
			got, err := d.List(t.Context(), ".")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Files) != tc.wantFiles || got.Truncated != tc.wantTruncation {
				t.Errorf("List(.) = %d files, truncated %v; want %d, %v", len(got.Files), got.Truncated, tc.wantFiles, tc.wantTruncation)
			}
			if !slices.Equal(got.Files, names[:len(got.Files)]) {
				t.Errorf("List(.) files are not the first %d sorted names", len(got.Files))
			}
		})
	}
}

func TestWalkStops(t *testing.T) {
	root := t.TempDir()
	makeFiles(t, filepath.Join(root, "many"), 600)
	d := newDisk(t, root, bufferfs.DiskOptions{}, true)
	ctx := t.Context()

	n := 0
	if err := d.Walk(ctx, ".", func(string, bufferfs.Info) error { n++; return nil }); err != nil || n != 600 {
		t.Errorf("Walk(.) = %d files, %v; want all 600 (no caps)", n, err)
	}
	n = 0
	err := d.Walk(ctx, ".", func(string, bufferfs.Info) error { n++; return fs.SkipAll })
	if err != nil || n != 1 {
		t.Errorf("Walk(.) returning SkipAll = %d calls, %v; want 1 call, nil", n, err)
	}
	boom := errors.New("boom")
	n = 0
	err = d.Walk(ctx, ".", func(string, bufferfs.Info) error { n++; return boom })
	if err != boom || n != 1 {
		t.Errorf("Walk(.) returning an error = %d calls, %v; want 1 call, %v", n, err, boom)
	}
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err = d.Walk(cctx, ".", func(string, bufferfs.Info) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n >= 600 {
		t.Errorf("Walk(.) cancelled = %d calls, %v; want context.Canceled before the end", n, err)
	}
	err = d.Walk(ctx, "many/f0001.txt", func(string, bufferfs.Info) error { return nil })
	check(t, "Walk(file)", err, fails(bufferfs.ErrNotDir, "directory not found"))
}
