package bufferfs

import (
	"context"
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// The Disk's confinement, reused by [Editor]: every path passes the same
// rules (root freshness, ValidPath, no symlink anywhere, regular singly
// linked files, protected names) before its content reaches the editor.

// inspect starts operation name on path and describes the file there
// without reading it. A missing file is not an error (st is nil); an
// existing one must be a regular, singly-linked file. The caller must
// release o.
func (d *Disk) inspect(ctx context.Context, name, path string) (o *op, st *unix.Stat_t, err error) {
	o, err = d.begin(ctx, name, path)
	if err != nil {
		return nil, nil, err
	}
	if o.clean == "." {
		o.release()
		return nil, nil, o.fail(errRootPath)
	}
	fd, err := d.openFile(o.rootfd, o.clean, readFlags)
	if errors.Is(err, ErrNotFound) {
		return o, nil, nil
	}
	if err != nil {
		o.release()
		return nil, nil, o.fail(err)
	}
	defer unix.Close(fd)
	s, err := checkRegular(fd, "read")
	if err == nil {
		err = d.refusePrivateID(&s)
	}
	if err != nil {
		o.release()
		return nil, nil, o.fail(err)
	}
	return o, &s, nil
}

// prepareWrite applies the write rules of [Disk.Write] that come before the
// content is written: trust, protected names and identities, the size
// limit, a regular singly-linked target, and missing parent directories,
// which it creates (0755) through the same confined walk. It returns the
// target's current state (nil when it does not exist). The caller must
// release o.
func (d *Disk) prepareWrite(ctx context.Context, path string, size int) (o *op, st *unix.Stat_t, err error) {
	o, err = d.begin(ctx, "write", path)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*op, *unix.Stat_t, error) {
		o.release()
		return nil, nil, o.fail(err)
	}
	if err := d.checkWritable(o.clean); err != nil {
		return fail(err)
	}
	if size > MaxFileBytes {
		return fail(tooLarge("content", MaxFileBytes))
	}
	dir, base := splitPath(o.clean)
	dirfd, err := d.openDir(o.rootfd, dir, true)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(dirfd)
	var s unix.Stat_t
	switch err := unix.Fstatat(dirfd, base, &s, unix.AT_SYMLINK_NOFOLLOW); err {
	case nil:
		if err := regularRule(&s, "overwritten"); err != nil {
			return fail(err)
		}
		if d.isProtectedID(statID(&s)) {
			return fail(errProtected)
		}
		if err := d.refusePrivateID(&s); err != nil {
			return fail(err)
		}
		return o, &s, nil
	case unix.ENOENT:
		return o, nil, nil
	default:
		return fail(classify(err))
	}
}

// statAfterWrite describes the file the editor just wrote and, when mode is
// non-zero, sets its permission bits through a confined descriptor.
func (d *Disk) statAfterWrite(o *op, mode fs.FileMode) (Info, error) {
	fd, err := d.openFile(o.rootfd, o.clean, readFlags)
	if err != nil {
		return Info{}, err
	}
	defer unix.Close(fd)
	st, err := checkRegular(fd, "read")
	if err != nil {
		return Info{}, err
	}
	if mode != 0 && fs.FileMode(st.Mode&0o777) != mode.Perm() {
		if err := unix.Fchmod(fd, uint32(mode.Perm())); err != nil {
			return Info{}, err
		}
		st.Mode = st.Mode&^0o777 | uint32(mode.Perm())
	}
	return makeInfo(o.clean, &st), nil
}
