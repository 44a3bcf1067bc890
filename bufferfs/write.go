package bufferfs

import (
	"context"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Write atomically replaces (or creates) the file path with data. It
// requires a trusted Disk, refuses protected files, symlinks, hard-linked
// and non-regular targets, and creates missing parent directories (0755).
//
// The content goes to an exclusive temporary file in the target directory
// (see temp.go), which is fsynced, given its final mode, and renamed over
// the target; then the directory is fsynced. rename replaces the directory
// entry itself, so a symlink planted at the target after the checks is
// replaced, never written through. The kept mode is opts.Mode if set, else
// the existing file's permission bits, else 0644, whatever the umask.
func (d *Disk) Write(ctx context.Context, path string, data []byte, opts WriteOptions) (Info, error) {
	o, err := d.begin(ctx, "write", path)
	if err != nil {
		return Info{}, err
	}
	defer o.release()
	if err := d.checkWritable(o.clean); err != nil {
		return Info{}, o.fail(err)
	}
	if len(data) > MaxFileBytes {
		return Info{}, o.fail(tooLarge("content", MaxFileBytes))
	}
	dir, base := splitPath(o.clean)
	dirfd, err := d.openDir(o.rootfd, dir, true)
	if err != nil {
		return Info{}, o.fail(err)
	}
	defer unix.Close(dirfd)

	mode := fs.FileMode(0o644)
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err {
	case nil:
		if err := regularRule(&st, "overwritten"); err != nil {
			return Info{}, o.fail(err)
		}
		if d.isProtectedID(statID(&st)) {
			return Info{}, o.fail(errProtected)
		}
		if err := d.refusePrivateID(&st); err != nil {
			return Info{}, o.fail(err)
		}
		mode = fs.FileMode(st.Mode & 0o777)
	case unix.ENOENT:
	default:
		return Info{}, o.fail(classify(err))
	}
	if opts.Mode != 0 {
		mode = opts.Mode.Perm()
	}
	d.cleanTemps(dirfd)
	if err := ctx.Err(); err != nil {
		return Info{}, o.fail(err)
	}
	info, err := d.replace(o, dirfd, base, data, mode)
	if err != nil {
		return Info{}, o.fail(err)
	}
	return info, nil
}

// replace writes data to a new temporary file in dirfd and renames it over
// base. The temporary file is removed on every failure.
func (d *Disk) replace(o *op, dirfd int, base string, data []byte, mode fs.FileMode) (Info, error) {
	tmp, fd, err := createTemp(dirfd)
	if err != nil {
		return Info{}, fmt.Errorf("create temporary file: %w", err)
	}
	renamed := false
	defer func() {
		unix.Close(fd)
		if !renamed {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if err := writeAll(fd, data); err != nil {
		return Info{}, fmt.Errorf("write temporary file: %w", err)
	}
	if err := unix.Fchmod(fd, uint32(mode)); err != nil {
		return Info{}, fmt.Errorf("chmod temporary file: %w", err)
	}
	if err := unix.Fsync(fd); err != nil {
		return Info{}, fmt.Errorf("sync temporary file: %w", err)
	}
	if d.beforeRename != nil {
		d.beforeRename()
	}
	if err := d.checkRoot(o.rootfd); err != nil {
		return Info{}, err
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		if err == unix.EISDIR || err == unix.ENOTEMPTY || err == unix.EEXIST {
			return Info{}, rule(ErrNotRegular, "only singly-linked regular files can be overwritten",
				"a directory appeared at the path while writing")
		}
		return Info{}, fmt.Errorf("rename temporary file: %w", err)
	}
	renamed = true
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Info{}, err
	}
	if err := unix.Fsync(dirfd); err != nil {
		return Info{}, fmt.Errorf("sync directory: %w", err)
	}
	info := makeInfo(o.clean, &st)
	info.SHA256 = hashHex(data)
	return info, nil
}

// writeAll writes all of data to fd.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// Remove deletes the regular, singly-linked file path. It requires a trusted
// Disk and refuses protected files. The directory is fsynced afterwards.
func (d *Disk) Remove(ctx context.Context, path string) error {
	o, err := d.begin(ctx, "remove", path)
	if err != nil {
		return err
	}
	defer o.release()
	if err := d.checkWritable(o.clean); err != nil {
		return o.fail(err)
	}
	dir, base := splitPath(o.clean)
	dirfd, err := d.openDir(o.rootfd, dir, false)
	if err != nil {
		return o.fail(err)
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return o.fail(classify(err))
	}
	if err := regularRule(&st, "removed"); err != nil {
		return o.fail(err)
	}
	if d.isProtectedID(statID(&st)) {
		return o.fail(errProtected)
	}
	if err := d.refusePrivateID(&st); err != nil {
		return o.fail(err)
	}
	// unlinkat removes the entry without following it: if the file was
	// swapped for a symlink meanwhile, the link goes, not its target.
	if err := unix.Unlinkat(dirfd, base, 0); err != nil {
		return o.fail(classify(err))
	}
	if err := unix.Fsync(dirfd); err != nil {
		return o.fail(fmt.Errorf("sync directory: %w", err))
	}
	return nil
}
