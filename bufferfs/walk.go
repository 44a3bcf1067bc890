package bufferfs

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"
)

// skipDirs are never entered by List and Walk (.git is matched
// case-insensitively, like the path rule).
var skipDirs = map[string]bool{
	".hg": true, ".svn": true, "node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, ".mypy_cache": true, ".pytest_cache": true, ".tox": true, ".next": true,
}

func skipDir(name string) bool {
	return skipDirs[name] || strings.EqualFold(name, ".git")
}

// errStop ends a walk early without error (caps reached, fs.SkipAll).
var errStop = errors.New("stop walk")

// List returns the visible files under dir (see [Disk.Walk] for what is
// visible), in sorted order, at most MaxListFiles of them after visiting at
// most MaxListVisited names. Truncated is true only when the listing stopped
// before the walk was complete.
func (d *Disk) List(ctx context.Context, dir string) (Listing, error) {
	w, fd, err := d.startWalk(ctx, "list", dir)
	if err != nil {
		return Listing{}, err
	}
	defer w.done()
	defer unix.Close(fd)
	out := Listing{Files: []string{}}
	w.maxVisited = d.maxListVisited
	w.fn = func(rel string, _ *unix.Stat_t) error {
		if len(out.Files) >= d.maxListFiles {
			out.Truncated = true
			return errStop
		}
		out.Files = append(out.Files, rel)
		return nil
	}
	err = w.walkDir(fd, w.start, w.patterns)
	if w.truncated {
		out.Truncated = true
	}
	if err != nil && err != errStop {
		return Listing{}, w.op.fail(err)
	}
	return out, nil
}

// Walk calls fn for every visible file under dir, in sorted path order, with
// no caps. Visible means: a regular file with one link, reached without
// following any symlink, not inside a skipped directory (.git, .hg, .svn,
// node_modules, .venv, venv, __pycache__, .mypy_cache, .pytest_cache, .tox,
// .next), not ignored by the workspace's .gitignore files (the root's, those
// of dir's ancestors, nested ones) or .git/info/exclude, and whose path
// passes the path rules. The rules apply below dir: dir itself is walked
// when asked for, even if it is a skipped or ignored directory. fn returning fs.SkipAll stops the walk without error.
func (d *Disk) Walk(ctx context.Context, dir string, fn WalkFunc) error {
	return d.walk(ctx, dir, false, func(rel string, st *unix.Stat_t) error {
		return fn(rel, makeInfo(rel, st))
	})
}

// walk implements Walk and [Scan.Walk]. With noStat, files are not stat'ed
// (fn gets a nil st) and the regular-file rule is left to the opener.
func (d *Disk) walk(ctx context.Context, dir string, noStat bool, fn func(rel string, st *unix.Stat_t) error) error {
	w, fd, err := d.startWalk(ctx, "walk", dir)
	if err != nil {
		return err
	}
	defer w.done()
	defer unix.Close(fd)
	w.noStat = noStat
	var fnErr error
	w.fn = func(rel string, st *unix.Stat_t) error {
		err := fn(rel, st)
		if err == nil {
			return nil
		}
		if err != fs.SkipAll {
			fnErr = err
		}
		return errStop
	}
	err = w.walkDir(fd, w.start, w.patterns)
	if fnErr != nil {
		return fnErr
	}
	if err != nil && err != errStop {
		return w.op.fail(err)
	}
	return nil
}

// walker holds the state of one List or Walk.
type walker struct {
	d          *Disk
	ctx        context.Context
	op         *op
	start      []string            // components of the start directory
	patterns   []gitignore.Pattern // ignore patterns of the start's ancestors
	fn         func(rel string, st *unix.Stat_t) error
	maxVisited int  // 0: no cap
	noStat     bool // files are not stat'ed: fn gets a nil st
	visited    int
	truncated  bool
	buf        []byte
	private    []fileID // identities of the Disk's private paths
}

func (w *walker) done() { w.op.release() }

// startWalk validates dir, opens it one component at a time, and collects
// the ignore patterns of .git/info/exclude and of the .gitignore files of
// every directory above it.
func (d *Disk) startWalk(ctx context.Context, name, dir string) (*walker, int, error) {
	o, err := d.begin(ctx, name, dir)
	if err != nil {
		return nil, -1, err
	}
	w := &walker{d: d, ctx: ctx, op: o, buf: make([]byte, 32*1024)}
	if len(d.privateAbs) > 0 {
		w.private = d.cachedPrivateIDs()
	}
	fd, err := d.openComp(o.rootfd, ".", dirFlags)
	if err != nil {
		o.release()
		return nil, -1, o.fail(err)
	}
	w.patterns = d.readExclude(fd)
	comps := components(o.clean)
	for i, c := range comps {
		w.patterns = append(w.patterns, d.readIgnore(fd, comps[:i])...)
		next, err := d.openComp(fd, c, dirFlags)
		unix.Close(fd)
		if err != nil {
			o.release()
			switch {
			case errors.Is(err, ErrNotFound):
				err = errNoDir
			case errors.Is(err, ErrNotDir):
				err = errFileNotDir
			}
			return nil, -1, o.fail(err)
		}
		fd = next
	}
	if len(comps) > 0 && w.isPrivate(o.clean, fd, nil) {
		unix.Close(fd)
		o.release()
		return nil, -1, o.fail(errPrivate)
	}
	w.start = comps
	w.patterns = exemptStart(w.patterns, comps)
	return w, fd, nil
}

// exemptStart drops the patterns that exclude the start directory or one
// of its ancestors: a directory asked for by name is walked even when the
// workspace ignores it (its own nested rules still apply).
func exemptStart(ps []gitignore.Pattern, start []string) []gitignore.Pattern {
	if len(start) == 0 {
		return ps
	}
	kept := ps[:0:0]
	for _, p := range ps {
		excludes := false
		for i := 1; i <= len(start) && !excludes; i++ {
			excludes = p.Match(start[:i], true) == gitignore.Exclude
		}
		if !excludes {
			kept = append(kept, p)
		}
	}
	return kept
}

// entry is a directory entry ready for sorting.
type entry struct {
	name  string
	isDir bool
	typ   uint8
}

// key orders entries so that the walk yields paths in sorted string order:
// a directory sorts as its name followed by "/".
func (e entry) key() string {
	if e.isDir {
		return e.name + "/"
	}
	return e.name
}

// walkDir visits the directory dirfd, whose path components are comps,
// with the ignore patterns of its ancestors.
func (w *walker) walkDir(dirfd int, comps []string, patterns []gitignore.Pattern) error {
	if own := w.d.readIgnore(dirfd, comps); len(own) > 0 {
		// A full slice expression makes append copy, so siblings never see
		// each other's patterns.
		patterns = append(patterns[:len(patterns):len(patterns)], own...)
	}
	var matcher gitignore.Matcher
	if len(patterns) > 0 {
		matcher = gitignore.NewMatcher(patterns)
	}
	entries, err := listEntries(dirfd, w.buf)
	if err != nil {
		return err
	}
	prefix := strings.Join(comps, "/")
	child := make([]string, len(comps)+1)
	copy(child, comps)
	for _, e := range entries {
		if err := w.count(); err != nil {
			return err
		}
		rel := e.name
		if prefix != "" {
			rel = prefix + "/" + e.name
		}
		child[len(comps)] = e.name
		ignored := func(isDir bool) bool { return matcher != nil && matcher.Match(child, isDir) }
		switch {
		case e.isDir:
			err = w.visitDir(dirfd, e.name, rel, child, ignored, patterns)
		case e.typ == unix.DT_REG:
			err = w.visitFile(dirfd, e.name, rel, ignored)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// listEntries reads the entries of the directory dirfd, sorted so that the
// walk yields paths in sorted string order; an entry whose type the
// directory does not say and that cannot be stat'ed is left out.
func listEntries(dirfd int, buf []byte) ([]entry, error) {
	// Read through a separate descriptor: walkDir's dirfd is also used
	// for openat, and getdents moves the offset.
	listfd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	raw, err := readEntries(listfd, buf)
	unix.Close(listfd)
	if err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(raw))
	for _, r := range raw {
		e := entry{name: r.name, typ: r.typ}
		if e.typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if unix.Fstatat(dirfd, r.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			e.typ = dtype(st.Mode)
		}
		e.isDir = e.typ == unix.DT_DIR
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key(), b.key()) })
	return entries, nil
}

// count counts one visited entry: errStop past the walk's bound, the
// context's error every 64 entries once it is done.
func (w *walker) count() error {
	if w.maxVisited > 0 && w.visited >= w.maxVisited {
		w.truncated = true
		return errStop
	}
	w.visited++
	if w.visited%64 == 0 {
		return w.ctx.Err()
	}
	return nil
}

// visitDir walks the subdirectory name of dirfd (path rel, components
// child), unless it is skipped, too deep, ignored, not a plain directory
// any more, or private.
func (w *walker) visitDir(dirfd int, name, rel string, child []string, ignored func(isDir bool) bool, patterns []gitignore.Pattern) error {
	if skipDir(name) || len(child) >= MaxPathComponents || !validRel(rel) || ignored(true) {
		return nil
	}
	fd, err := w.d.openComp(dirfd, name, dirFlags)
	if err != nil {
		return nil // replaced by a symlink, unreadable, gone
	}
	defer unix.Close(fd)
	if w.isPrivate(rel, fd, nil) {
		return nil
	}
	return w.walkDir(fd, slices.Clone(child), patterns)
}

// visitFile hands the regular file name of dirfd (path rel) to the walk's
// function, unless it is one of flow's temporary files, ignored, private,
// or no longer a regular, singly linked file.
func (w *walker) visitFile(dirfd int, name, rel string, ignored func(isDir bool) bool) error {
	if _, temp := parseTempName(name); temp || !validRel(rel) || ignored(false) {
		return nil
	}
	if w.noStat {
		// Without a stat, private files are left out by name here and by
		// identity when they are opened.
		if underAny(w.d.privateRel, rel) {
			return nil
		}
		return w.fn(rel, nil)
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil ||
		regularRule(&st, "read") != nil || w.isPrivate(rel, -1, &st) {
		return nil
	}
	return w.fn(rel, &st)
}

// isPrivate reports whether the walked entry rel (a directory open as fd, or
// a file described by st) is one of the Disk's private paths.
func (w *walker) isPrivate(rel string, fd int, st *unix.Stat_t) bool {
	if len(w.d.privateAbs) == 0 {
		return false
	}
	if underAny(w.d.privateRel, rel) {
		return true
	}
	if len(w.private) == 0 {
		return false
	}
	if st == nil {
		var fst unix.Stat_t
		if unix.Fstat(fd, &fst) != nil {
			return true
		}
		st = &fst
	}
	return slices.Contains(w.private, statID(st))
}

// validRel reports whether a walked path passes the path rules, so a
// listing never offers a path the file tools would refuse.
func validRel(rel string) bool {
	clean, err := ValidPath(rel)
	return err == nil && clean == rel
}

// dtype converts a stat mode to a getdents type.
func dtype(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return dtOther
}

// dtOther marks an entry that is neither file, directory nor symlink.
const dtOther uint8 = 0xFF

// readIgnore returns the patterns of the .gitignore in dirfd, whose path
// components are domain. A missing, unreadable, oversized, symlinked or
// hard-linked .gitignore contributes nothing.
func (d *Disk) readIgnore(dirfd int, domain []string) []gitignore.Pattern {
	return d.readPatterns(dirfd, ".gitignore", domain)
}

// readExclude returns the patterns of .git/info/exclude under rootfd.
func (d *Disk) readExclude(rootfd int) []gitignore.Pattern {
	gitfd, err := d.openComp(rootfd, ".git", dirFlags)
	if err != nil {
		return nil
	}
	defer unix.Close(gitfd)
	infofd, err := d.openComp(gitfd, "info", dirFlags)
	if err != nil {
		return nil
	}
	defer unix.Close(infofd)
	return d.readPatterns(infofd, "exclude", nil)
}

// readPatterns parses the ignore file name in dirfd.
func (d *Disk) readPatterns(dirfd int, name string, domain []string) []gitignore.Pattern {
	fd, err := d.openComp(dirfd, name, readFlags)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	st, err := checkRegular(fd, "read")
	if err != nil || st.Size > MaxFileBytes {
		return nil
	}
	data, err := readAtMost(fd, MaxFileBytes, st.Size)
	if err != nil || len(data) > MaxFileBytes {
		return nil
	}
	var ps []gitignore.Pattern
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
