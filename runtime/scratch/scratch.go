// Package scratch makes a private copy of a workspace, in which flow runs
// checks against contents other than the workspace's own: the production
// code as it was before a run together with the run's new tests, to prove
// that the tests fail without the change and so test it (fail-then-pass
// evidence).
//
// The copy is flow's own: a 0700 directory under the system's temporary
// directory, filled by a walk that never follows a symlink, changed only
// through [bufferfs.Disk] (confined and atomic like every write), and removed
// by Close. It costs a full copy of the workspace (minus .git) per use, which
// is why the operator opts in to it.
package scratch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"flow/bufferfs"
)

// Default bounds of a copy.
const (
	DefaultMaxBytes = 2 << 30
	DefaultMaxFiles = 200000
)

// ErrTooLarge reports a workspace over the copy's bounds.
var ErrTooLarge = errors.New("workspace too large for a scratch copy")

// Options bound a copy.
type Options struct {
	// MaxBytes bounds the bytes copied (0: DefaultMaxBytes).
	MaxBytes int64
	// MaxFiles bounds the files and directories copied (0: DefaultMaxFiles).
	MaxFiles int
}

// Copy is a private copy of a workspace.
type Copy struct {
	// Dir is the copy's root, to run checks in.
	Dir  string
	disk *bufferfs.Disk
}

// New copies the workspace at root. Regular files keep their permission
// bits; symlinks are recreated when their target is relative and stays
// inside the workspace (node_modules/.bin), and left out otherwise; .git,
// __pycache__, sockets, devices and FIFOs are left out.
func New(ctx context.Context, root string, opts Options) (c *Copy, err error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("scratch copy: %w", err)
	}
	dir, err := os.MkdirTemp("", "flow-scratch-")
	if err != nil {
		return nil, fmt.Errorf("scratch copy: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	var bytes int64
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			return walkErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "__pycache__") {
			// Python's bytecode caches are left out: a restored source
			// of the same size written in the same second as the cached
			// one would otherwise run the cached new code.
			return filepath.SkipDir
		}
		files++
		if files > opts.MaxFiles {
			return fmt.Errorf("%w: more than %d files", ErrTooLarge, opts.MaxFiles)
		}
		dst := filepath.Join(dir, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(dst, 0o755)
		case t&fs.ModeSymlink != 0:
			return copyLink(root, p, dst)
		case t.IsRegular():
			n, err := copyFile(p, dst)
			bytes += n
			if bytes > opts.MaxBytes {
				return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, opts.MaxBytes)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scratch copy of %s: %w", root, err)
	}
	disk, err := bufferfs.NewDisk(dir, bufferfs.DiskOptions{Trusted: true})
	if err != nil {
		return nil, fmt.Errorf("scratch copy: %w", err)
	}
	return &Copy{Dir: disk.Root(), disk: disk}, nil
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, err // replaced by something else since the walk saw it
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// copyLink recreates a relative symlink whose target stays inside root.
func copyLink(root, p, dst string) error {
	target, err := os.Readlink(p)
	if err != nil {
		return err
	}
	if filepath.IsAbs(target) {
		return nil
	}
	resolved := filepath.Join(filepath.Dir(p), target)
	if rel, err := filepath.Rel(root, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	return os.Symlink(target, dst)
}

// Set makes the copy's file at the workspace path p hold data, or removes
// it when exists is false.
func (c *Copy) Set(ctx context.Context, p string, data []byte, exists bool) error {
	if !exists {
		err := c.disk.Remove(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	_, err := c.disk.Write(ctx, p, data, bufferfs.WriteOptions{})
	return err
}

// Close removes the copy.
func (c *Copy) Close() error {
	c.disk.Close()
	return os.RemoveAll(c.Dir)
}
