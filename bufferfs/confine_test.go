package bufferfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flow/bufferfs"

	"golang.org/x/sys/unix"
)

// fixture is a workspace next to an "outside" directory whose name shares
// the workspace's prefix (ws, ws-outside), so a string-prefix containment
// check would be fooled.
type fixture struct {
	base, root, outside string
	noDev, noSock       bool // mknod or bind not permitted here
}

// Deep and long paths at and just over the limits.
var (
	path32 = strings.Repeat("d/", 31) + "f.txt"
	path33 = strings.Repeat("d/", 32) + "f.txt"
	// Five 200-character components and a 19-character one: 1024 in all.
	path1024 = strings.Repeat(strings.Repeat("p", 200)+"/", 5) + strings.Repeat("q", 19)
	path1025 = path1024 + "q"
)

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{base: base, root: filepath.Join(base, "ws"), outside: filepath.Join(base, "ws-outside")}
	r, o := f.root, f.outside
	writeFile(t, filepath.Join(o, "secret.txt"), "secret\n", 0o644)
	writeFile(t, filepath.Join(o, "dir", "inner.txt"), "inner\n", 0o644)
	writeFile(t, filepath.Join(o, "operator.toml"), "[agent]\n", 0o600)

	writeFile(t, filepath.Join(r, "a.txt"), "hello\n", 0o644)
	writeFile(t, filepath.Join(r, "sub", "b.txt"), "bee\n", 0o644)
	writeFile(t, filepath.Join(r, "config.toml"), "x = 1\n", 0o644)
	writeFile(t, filepath.Join(r, ".flow.toml"), "x = 1\n", 0o644)
	writeFile(t, filepath.Join(r, "ops.toml"), "x = 1\n", 0o644)
	writeFile(t, filepath.Join(r, "ops2.toml"), "x = 1\n", 0o644)
	writeFile(t, filepath.Join(r, "hard.txt"), "hard\n", 0o644)
	writeFile(t, filepath.Join(r, "somedir", "c.txt"), "c\n", 0o644)
	writeFile(t, filepath.Join(r, "big.bin"), strings.Repeat("x", bufferfs.MaxFileBytes+1), 0o644)
	writeFile(t, filepath.Join(r, "exact.bin"), strings.Repeat("x", bufferfs.MaxFileBytes), 0o644)
	writeFile(t, filepath.Join(r, path32), "deep\n", 0o644)
	writeFile(t, filepath.Join(r, path1024), "long\n", 0o644)
	must(t, os.Link(filepath.Join(r, "hard.txt"), filepath.Join(r, "hard2.txt")))
	must(t, os.Link(filepath.Join(o, "secret.txt"), filepath.Join(r, "hardout.txt")))
	must(t, os.Symlink(o, filepath.Join(r, "linkdir")))
	must(t, os.Symlink("sub", filepath.Join(r, "inlinkdir")))
	must(t, os.Symlink(filepath.Join(o, "secret.txt"), filepath.Join(r, "linkfile")))
	must(t, os.Symlink("a.txt", filepath.Join(r, "inlinkfile")))
	must(t, os.Symlink(filepath.Join(o, "created.txt"), filepath.Join(r, "dangling")))
	must(t, os.Symlink(filepath.Join(o, "newdir"), filepath.Join(r, "danglingdir")))
	// The operator's configuration reached through a symlink: protected
	// by where it resolves to.
	must(t, os.Symlink(filepath.Join(r, "ops2.toml"), filepath.Join(base, "opslink.toml")))
	must(t, unix.Mkfifo(filepath.Join(r, "fifo"), 0o644))
	if err := unix.Mknod(filepath.Join(r, "chardev"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		f.noDev = true
	}
	if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err != nil {
		f.noSock = true
	} else {
		if unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(r, "sock")}) != nil {
			f.noSock = true
		}
		unix.Close(fd)
	}
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// confinementCase is one adversarial path, run through Read, List and Write
// in that order.
type confinementCase struct {
	name              string
	path              string
	read, list, write want
	untrusted         bool   // write through an untrusted Disk
	data              []byte // content to write (default: a short line)
	needs             string // "dev" or "sock": skip when not creatable
}

func confinementCases(f fixture) []confinementCase {
	var (
		empty    = fails(bufferfs.ErrInvalidPath, "path must be a nonempty relative string")
		abs      = fails(bufferfs.ErrInvalidPath, "absolute and Windows-style paths are not allowed")
		trav     = fails(bufferfs.ErrInvalidPath, "parent traversal and .git access are not allowed")
		long     = fails(bufferfs.ErrInvalidPath, "path exceeds 1024 characters")
		deep     = fails(bufferfs.ErrInvalidPath, "path exceeds 32 components")
		isRoot   = fails(bufferfs.ErrInvalidPath, "expected a file path, not workspace root")
		link     = fails(bufferfs.ErrSymlink, "symlinks are not allowed in file paths")
		multi    = fails(bufferfs.ErrMultiLink, "multiply linked files are not allowed in file paths")
		notDir   = fails(bufferfs.ErrNotDir, "directory not found")
		noDir    = fails(bufferfs.ErrNotFound, "directory not found")
		noFile   = fails(bufferfs.ErrNotFound, "no such file")
		prot     = fails(bufferfs.ErrProtected, "operator configuration cannot be modified by file tools")
		dirFile  = fails(bufferfs.ErrNotRegular, "a directory")
		parent   = fails(bufferfs.ErrNotDir, "a parent of the path is not a directory")
		readOnly = fails(bufferfs.ErrReadOnly, "workspace is read-only; pass --trusted to allow edits")
	)
	lexical := func(name, p string, w want) confinementCase {
		return confinementCase{name: name, path: p, read: w, list: w, write: w}
	}
	return []confinementCase{
		lexical("empty", "", empty),
		lexical("NUL byte", "a.txt\x00", empty),
		lexical("absolute system file", "/etc/passwd", abs),
		lexical("absolute outside file", filepath.Join(f.outside, "secret.txt"), abs),
		lexical("absolute inside root", filepath.Join(f.root, "a.txt"), abs),
		lexical("slash UNC", "//server/share/x", abs),
		lexical("backslash", `sub\b.txt`, abs),
		lexical("backslash UNC", `\\server\share\x`, abs),
		lexical("Windows drive", `C:\Windows\win.ini`, abs),
		lexical("Windows drive relative", "c:foo", abs),
		lexical("Windows drive bare", "C:", abs),
		lexical("Windows drive after ./", "./C:", abs),
		lexical("parent", "..", trav),
		lexical("parent file", "../secret.txt", trav),
		lexical("sibling prefix escape", "../ws-outside/secret.txt", trav),
		lexical("parent of parent", "a/../..", trav),
		lexical("nested parent", "sub/../../ws-outside/secret.txt", trav),
		lexical("parent staying inside", "sub/../a.txt", trav),
		lexical("parent to protected", "sub/../config.toml", trav),
		lexical("trailing parent", "sub/..", trav),
		lexical(".git/config", ".git/config", trav),
		lexical(".GIT/HEAD", ".GIT/HEAD", trav),
		lexical("sub/.Git/x", "sub/.Git/x", trav),
		lexical(".git itself", ".git", trav),
		lexical("1025 characters", path1025, long),
		{name: "1024 characters", path: path1024, read: ok, list: notDir, write: ok},
		lexical("33 components", path33, deep),
		{name: "32 components", path: path32, read: ok, list: notDir, write: ok},
		{name: "root", path: ".", read: isRoot, list: ok, write: isRoot},
		{name: "root with slash", path: "./", read: isRoot, list: ok, write: isRoot},
		{name: "dot slash file", path: "./a.txt", read: ok, list: notDir, write: ok},
		{name: "double slash", path: "sub//b.txt", read: ok, list: notDir, write: ok},
		{name: "trailing slash on directory", path: "sub/", read: dirFile, list: ok, write: dirFile},
		{name: "symlinked dir to outside", path: "linkdir/secret.txt", read: link, list: link, write: link},
		{name: "symlinked dir itself", path: "linkdir", read: link, list: link, write: link},
		{name: "symlinked dir inside", path: "inlinkdir/b.txt", read: link, list: link, write: link},
		{name: "symlinked file to outside", path: "linkfile", read: link, list: link, write: link},
		{name: "symlinked file inside", path: "inlinkfile", read: link, list: link, write: link},
		{name: "dangling symlink to outside", path: "dangling", read: link, list: link, write: link},
		{name: "symlink intermediate for new file", path: "linkdir/new.txt", read: link, list: link, write: link},
		{name: "symlink intermediate for new dirs", path: "linkdir/newdir/new.txt", read: link, list: link, write: link},
		{name: "dangling symlink intermediate", path: "danglingdir/x/new.txt", read: link, list: link, write: link},
		{name: "hard link", path: "hard.txt", read: multi, list: notDir, write: multi},
		{name: "hard link to outside file", path: "hardout.txt", read: multi, list: notDir, write: multi},
		{name: "FIFO", path: "fifo", read: fails(bufferfs.ErrNotRegular, "a named pipe"), list: notDir,
			write: fails(bufferfs.ErrNotRegular, "a named pipe")},
		{name: "character device", path: "chardev", needs: "dev",
			read: fails(bufferfs.ErrNotRegular, "a character device"), list: notDir,
			write: fails(bufferfs.ErrNotRegular, "a character device")},
		{name: "socket", path: "sock", needs: "sock", read: fails(bufferfs.ErrNotRegular, "socket"), list: notDir,
			write: fails(bufferfs.ErrNotRegular, "a socket")},
		{name: "directory as file", path: "somedir", read: dirFile, list: ok, write: dirFile},
		{name: "file as directory", path: "a.txt/x", read: parent, list: notDir, write: parent},
		{name: "missing file", path: "missing.txt", read: noFile, list: noDir, write: ok},
		{name: "missing directory", path: "nodir/x.txt", read: noFile, list: noDir, write: ok},
		{name: "new nested directories", path: "sub/x/y/z.txt", read: noFile, list: noDir, write: ok},
		{name: "workspace config.toml", path: "config.toml", read: ok, list: notDir, write: prot},
		{name: "workspace .flow.toml", path: ".flow.toml", read: ok, list: notDir, write: prot},
		{name: "explicit config path", path: "ops.toml", read: ok, list: notDir, write: prot},
		{name: "explicit config through symlinked path", path: "ops2.toml", read: ok, list: notDir, write: prot},
		{name: "config.toml other case", path: "CONFIG.TOML", read: noFile, list: noDir, write: prot},
		{name: "config.toml dotted", path: "./config.toml", read: ok, list: notDir, write: prot},
		{name: "untrusted write", path: "a.txt", untrusted: true, read: ok, list: notDir, write: readOnly},
		{name: "untrusted new file", path: "new/untrusted.txt", untrusted: true, read: noFile, list: noDir, write: readOnly},
		{name: "oversize write", path: "a.txt", data: bytes.Repeat([]byte("y"), bufferfs.MaxFileBytes+1),
			read: ok, list: notDir, write: fails(bufferfs.ErrTooLarge, "content exceeds 262144 byte limit")},
		{name: "exact size write", path: "exact-new.bin", data: bytes.Repeat([]byte("y"), bufferfs.MaxFileBytes),
			read: noFile, list: noDir, write: ok},
		{name: "oversize read", path: "big.bin", read: fails(bufferfs.ErrTooLarge, "file exceeds 262144 byte limit"),
			list: notDir, write: ok},
		{name: "exact size read", path: "exact.bin", read: ok, list: notDir, write: ok},
		{name: "plain nested file", path: "sub/b.txt", read: ok, list: notDir, write: ok},
	}
}

// TestConfinement runs an adversarial table of paths through Read, List and
// Write, in both resolve modes, and checks both the error and that nothing
// outside the workspace changed.
func TestConfinement(t *testing.T) {
	forEachMode(t, func(t *testing.T, openat2 bool) {
		f := newFixture(t)
		protected := []string{filepath.Join(f.root, "ops.toml"), filepath.Join(f.base, "opslink.toml"),
			filepath.Join(f.outside, "operator.toml")}
		trusted := newDisk(t, f.root, bufferfs.DiskOptions{Trusted: true, Protected: protected}, openat2)
		untrusted := newDisk(t, f.root, bufferfs.DiskOptions{Protected: protected}, openat2)
		cases := confinementCases(f)
		if len(cases) < 40 {
			t.Fatalf("only %d confinement cases, want at least 40", len(cases))
		}
		outside := snapshot(t, f.outside)
		baseNames := dirNames(t, f.base)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if tc.needs == "dev" && f.noDev || tc.needs == "sock" && f.noSock {
					t.Skipf("cannot create a %s here", tc.needs)
				}
				ctx := t.Context()
				var (
					file    bufferfs.File
					listing bufferfs.Listing
					err     error
				)
				within(t, "Read", func() { file, err = trusted.Read(ctx, tc.path, 0) })
				check(t, "Read("+tc.path+")", err, tc.read)
				if err != nil && file.Data != nil {
					t.Errorf("Read(%q) returned %d bytes with error %v", tc.path, len(file.Data), err)
				}
				within(t, "List", func() { listing, err = trusted.List(ctx, tc.path) })
				check(t, "List("+tc.path+")", err, tc.list)
				if err != nil && len(listing.Files) > 0 {
					t.Errorf("List(%q) returned files with error %v", tc.path, err)
				}

				d, data := trusted, tc.data
				if tc.untrusted {
					d = untrusted
				}
				if data == nil {
					data = []byte("written by " + tc.name + "\n")
				}
				before := snapshot(t, f.root)
				var info bufferfs.Info
				within(t, "Write", func() { info, err = d.Write(ctx, tc.path, data, bufferfs.WriteOptions{}) })
				check(t, "Write("+tc.path+")", err, tc.write)
				if err != nil {
					sameSnapshot(t, "failed Write("+tc.path+") changed the workspace", before, snapshot(t, f.root))
				} else {
					got, rerr := trusted.Read(ctx, tc.path, 0)
					if rerr != nil || !bytes.Equal(got.Data, data) || got.SHA256 != info.SHA256 {
						t.Errorf("Read after Write(%q) = %d bytes, %v; want the written %d bytes", tc.path, len(got.Data), rerr, len(data))
					}
				}
				sameSnapshot(t, tc.name, outside, snapshot(t, f.outside))
				if got := dirNames(t, f.base); strings.Join(got, ",") != strings.Join(baseNames, ",") {
					t.Errorf("entries of %s = %v, want %v", f.base, got, baseNames)
				}
			})
		}
	})
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
