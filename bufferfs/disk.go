package bufferfs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DiskOptions configure a [Disk].
type DiskOptions struct {
	// Trusted enables Write and Remove. Trust is never read from a file.
	Trusted bool
	// ProtectGlobs are workspace globs ([verify] protect) of further files
	// no Write or Remove may touch, nor anything below a matching
	// directory: the definitions of what the checks run.
	ProtectGlobs []string
	// Protected lists absolute paths no Write or Remove may touch, or write
	// below when the path is a directory (the loaded
	// configuration file); a relative one is taken from the current
	// directory. The workspace's config.toml and .flow.toml are always
	// protected, whether listed or not. A protected path is matched by name
	// (case-insensitively, symlinks in it resolved) and by file identity.
	Protected []string
	// Private lists absolute paths (files or directories) that no
	// operation may read, stat, list, walk, write or remove, nor anything
	// below them: flow's own state directory, its log file, the loaded
	// configuration. A private path is matched by name
	// (case-insensitively, symlinks in it resolved) and by identity: a path
	// is refused when it or any directory on the way to it is a private
	// file or directory, however it is spelled (a bind mount, a
	// case-insensitive file system). Walks skip private entries.
	Private []string
}

// Disk is the [FS] of doc/design.md §4: descriptor-relative, symlink-refusing,
// atomic disk I/O confined to one root directory. Every operation first
// checks that the root path still names the directory that was opened. Its
// methods are safe for concurrent use.
type Disk struct {
	root string // absolute, symlink-free
	id   fileID // identity of root at NewDisk

	trusted bool
	// protectGlobs are the lower-cased globs of DiskOptions.ProtectGlobs.
	protectGlobs []string
	// protectedRel holds the protected paths inside the root, cleaned and
	// relative; protectedAbs holds every protected path for identity checks.
	protectedRel []string
	protectedAbs []string
	// privateRel and privateAbs are the same for the private paths.
	privateRel []string
	privateAbs []string
	private    privateCache

	// openat2 is true when the kernel's openat2 with RESOLVE_BENEATH works;
	// otherwise paths are walked component by component with openat.
	openat2 bool

	// Listing caps; fields so tests can lower them.
	maxListFiles   int
	maxListVisited int

	// beforeRename, when set (tests only), runs after the temporary file is
	// complete and just before it is renamed over the target.
	beforeRename func()

	// Temporary-file cleanup throttle: directory identity → last scan.
	scanEvery time.Duration
	scanMu    sync.Mutex
	scanned   map[fileID]time.Time

	// fdMu guards the root descriptor against Close while operations run.
	fdMu   sync.Mutex
	rootfd int
	users  int
	closed bool
}

var _ FS = (*Disk)(nil)

// fileID is a file's identity.
type fileID struct{ dev, ino uint64 }

func statID(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} }

// NewDisk opens root (resolved to an absolute, symlink-free path) as the
// workspace of a new Disk. The caller must Close it.
func NewDisk(root string, opts DiskOptions) (*Disk, error) {
	if root == "" {
		return nil, errors.New("workspace: empty path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", real, err)
	}
	var fst, lst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("workspace %s: %w", real, err)
	}
	if err := unix.Lstat(real, &lst); err != nil || statID(&lst) != statID(&fst) {
		unix.Close(fd)
		return nil, fmt.Errorf("workspace %s: changed while it was opened", real)
	}
	d := &Disk{
		root:           real,
		id:             statID(&fst),
		trusted:        opts.Trusted,
		protectGlobs:   lowerGlobs(opts.ProtectGlobs),
		rootfd:         fd,
		maxListFiles:   MaxListFiles,
		maxListVisited: MaxListVisited,
		scanEvery:      10 * time.Second,
		scanned:        make(map[fileID]time.Time),
	}
	d.protectedAbs, d.protectedRel = d.spellings(append([]string{
		filepath.Join(real, "config.toml"),
		filepath.Join(real, ".flow.toml"),
	}, opts.Protected...))
	d.privateAbs, d.privateRel = d.spellings(opts.Private)
	d.openat2 = probeOpenat2(fd)
	return d, nil
}

// spellings returns paths both as given (made absolute) and with symlinks
// resolved, and those inside the root as relative slash-separated paths.
func (d *Disk) spellings(paths []string) (abs, rel []string) {
	seen := make(map[string]bool)
	add := func(p string) {
		if p == "" || seen[p] {
			return
		}
		seen[p] = true
		abs = append(abs, p)
		r, err := filepath.Rel(d.root, p)
		if err != nil || r == "." || r == ".." || strings.HasPrefix(r, "../") {
			return
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		add(a)
		// The parent may be reached through a symlink (a symlinked home
		// directory, say); resolve it so the path compares with the root.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
			add(filepath.Join(dir, filepath.Base(a)))
		}
		if real, err := filepath.EvalSymlinks(a); err == nil {
			add(real)
		}
	}
	return abs, rel
}

// probeOpenat2 reports whether openat2 with the resolve flags works here.
// ENOSYS (kernel < 5.6), EPERM (seccomp) and EINVAL (unknown flags) select
// the fallback walk, as does any other surprise.
func probeOpenat2(rootfd int) bool {
	fd, err := openat2(rootfd, ".", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// Root returns the absolute, symlink-free path of the workspace root.
func (d *Disk) Root() string { return d.root }

// Close releases the root descriptor once running operations finish.
// Operations started after Close fail with [ErrClosed].
func (d *Disk) Close() error {
	d.fdMu.Lock()
	defer d.fdMu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.users == 0 {
		return unix.Close(d.rootfd)
	}
	return nil
}

// acquire pins the root descriptor for one operation; release undoes it.
func (d *Disk) acquire() (int, error) {
	d.fdMu.Lock()
	defer d.fdMu.Unlock()
	if d.closed {
		return -1, ErrClosed
	}
	d.users++
	return d.rootfd, nil
}

func (d *Disk) release() {
	d.fdMu.Lock()
	defer d.fdMu.Unlock()
	d.users--
	if d.closed && d.users == 0 {
		unix.Close(d.rootfd)
	}
}

// CheckRoot returns an error wrapping [ErrStaleRoot] when the root path no
// longer names the directory opened by NewDisk (it was replaced, turned into
// a symlink, or removed), and [ErrClosed] after Close.
func (d *Disk) CheckRoot(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fd, err := d.acquire()
	if err != nil {
		return err
	}
	defer d.release()
	return d.checkRoot(fd)
}

func (d *Disk) checkRoot(rootfd int) error {
	var st unix.Stat_t
	if err := unix.Lstat(d.root, &st); err != nil {
		return errGone
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || statID(&st) != d.id {
		return errStale
	}
	// A removed root whose inode number was reused by a new directory at
	// the same path: our descriptor points at a directory with no links.
	var fst unix.Stat_t
	if err := unix.Fstat(rootfd, &fst); err != nil || fst.Nlink == 0 {
		return errStale
	}
	return nil
}

// op is one running operation: the pinned root descriptor and the cleaned
// path.
type op struct {
	name    string // read, write, ...
	path    string // as given
	clean   string
	rootfd  int
	release func()
}

// fail wraps a cause in a PathError for this operation.
func (o *op) fail(err error) error {
	return &PathError{Op: o.name, Path: o.path, Err: err}
}

// begin starts an operation: context, descriptor, root freshness, then the
// lexical path rules, in that order. On success the caller must call
// o.release.
func (d *Disk) begin(ctx context.Context, name, p string) (*op, error) {
	o := &op{name: name, path: p}
	if err := ctx.Err(); err != nil {
		return nil, o.fail(err)
	}
	fd, err := d.acquire()
	if err != nil {
		return nil, o.fail(err)
	}
	if err := d.checkRoot(fd); err != nil {
		d.release()
		return nil, o.fail(err)
	}
	clean, err := ValidPath(p)
	if err == nil {
		err = d.checkPrivate(fd, clean)
	}
	if err != nil {
		d.release()
		return nil, o.fail(err)
	}
	o.clean, o.rootfd, o.release = clean, fd, d.release
	return o, nil
}

// checkWritable applies the write-only rules that need no I/O: trust, the
// root itself, and the protected names.
func (d *Disk) checkWritable(clean string) error {
	if err := d.checkProtectGlobs(clean); err != nil {
		return err
	}
	if clean == "." {
		return errRootPath
	}
	if !d.trusted {
		return errReadOnly
	}
	if underAny(d.protectedRel, clean) {
		return errProtected
	}
	return nil
}

// underAny reports whether clean is one of paths or lies below one of them,
// comparing case-insensitively.
func underAny(paths []string, clean string) bool {
	for _, p := range paths {
		if strings.EqualFold(p, clean) || len(clean) > len(p) && clean[len(p)] == '/' && strings.EqualFold(p, clean[:len(p)]) {
			return true
		}
	}
	return false
}

// privateTTL bounds how long the identities of the private paths, and the
// directories found not to be private, are remembered. Searches read
// thousands of files below the same directories; without the cache every
// read would stat every private path and every directory on its way.
// Nothing a model does can change a directory's identity (file tools
// create no symlinks, mounts or renamed directories).
const privateTTL = time.Second

// maxPrivateDirs bounds the directories remembered.
const maxPrivateDirs = 4096

// privateCache is the Disk's memory of recent private-path checks.
type privateCache struct {
	mu   sync.Mutex
	at   time.Time
	ids  []fileID
	dirs map[string]bool // directories checked and not private
}

// privateIDs returns the identities of the private paths that exist now.
func (d *Disk) privateIDs() []fileID {
	var ids []fileID
	for _, p := range d.privateAbs {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			ids = append(ids, statID(&st))
		}
	}
	return ids
}

// cachedPrivateIDs returns the private identities, taken at most
// privateTTL ago, and whether dirs still holds.
func (d *Disk) cachedPrivateIDs() []fileID {
	c := &d.private
	c.mu.Lock()
	fresh := c.dirs != nil && time.Since(c.at) < privateTTL
	ids := c.ids
	c.mu.Unlock()
	if fresh {
		return ids
	}
	ids = d.privateIDs()
	c.mu.Lock()
	c.at, c.ids, c.dirs = time.Now(), ids, make(map[string]bool)
	c.mu.Unlock()
	return ids
}

func (d *Disk) knownPublicDir(dir string) bool {
	d.private.mu.Lock()
	defer d.private.mu.Unlock()
	return d.private.dirs[dir]
}

func (d *Disk) rememberPublicDir(dir string) {
	d.private.mu.Lock()
	defer d.private.mu.Unlock()
	if d.private.dirs != nil && len(d.private.dirs) < maxPrivateDirs {
		d.private.dirs[dir] = true
	}
}

// checkPrivate refuses clean when it names a private path or lies below
// one: by name, and by the identity of every directory on the way to it
// (the root excluded), so that no other spelling of the path (a bind mount,
// a case-insensitive file system) reaches it. The identity of the path
// itself is checked by the operation once it has the file's status (see
// [Disk.refusePrivateID]), which spares a path walk per file.
func (d *Disk) checkPrivate(rootfd int, clean string) error {
	if len(d.privateAbs) == 0 || clean == "." {
		return nil
	}
	if underAny(d.privateRel, clean) {
		return errPrivate
	}
	ids := d.cachedPrivateIDs()
	if len(ids) == 0 {
		return nil
	}
	for i := 0; i < len(clean); i++ {
		if clean[i] != '/' {
			continue
		}
		dir := clean[:i]
		if d.knownPublicDir(dir) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(rootfd, dir, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return nil // missing (or unreadable): nothing below it exists either
		}
		if slices.Contains(ids, statID(&st)) {
			return errPrivate
		}
		d.rememberPublicDir(dir)
	}
	return nil
}

// refusePrivateID returns the private-path refusal when st is the status of
// a private file or directory, and nil otherwise.
func (d *Disk) refusePrivateID(st *unix.Stat_t) error {
	if len(d.privateAbs) == 0 {
		return nil
	}
	if slices.Contains(d.cachedPrivateIDs(), statID(st)) {
		return errPrivate
	}
	return nil
}

// isProtectedID reports whether id is the identity of a protected file.
// Identities are taken afresh, so a protected file created after NewDisk
// still counts.
func (d *Disk) isProtectedID(id fileID) bool {
	for _, p := range d.protectedAbs {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && statID(&st) == id {
			return true
		}
	}
	return false
}
