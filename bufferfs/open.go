package bufferfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// resolveFlags confine openat2 to the directory it starts from and refuse
// every symlink on the way, magic /proc links included.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// dirFlags open a directory for reading. O_NONBLOCK is harmless there and
// keeps a FIFO from blocking even if the kernel checked O_DIRECTORY late.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK

// openat2 opens p beneath dirfd with the resolve flags. The kernel answers
// EAGAIN when a rename raced the lookup; a few retries are enough.
func openat2(dirfd int, p string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveFlags}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dirfd, p, &how)
		if err == unix.EINTR || err == unix.EAGAIN && tries < 16 {
			continue
		}
		return fd, err
	}
}

// classify turns an errno from path resolution into a cause for the model.
// Other errors are returned unchanged.
func classify(err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.ELOOP:
		return errSymlinkPath
	case unix.EXDEV:
		return errOutside
	case unix.ENOENT:
		return errNoFile
	case unix.ENOTDIR:
		return errParentNotDir
	case unix.ENAMETOOLONG:
		return errNameTooLong
	case unix.EAGAIN:
		return errBusy
	case unix.ENXIO:
		// open(2) of a socket, or of a device without a driver.
		return rule(ErrNotRegular, "only singly-linked regular files can be read",
			"this is a socket or device, not a file")
	}
	return err
}

// openComp opens the single component name of directory dirfd without
// following a symlink there. flags must not include O_CREAT.
func (d *Disk) openComp(dirfd int, name string, flags int) (int, error) {
	retries := 0
	for {
		var fd int
		var err error
		if d.openat2 {
			fd, err = openat2(dirfd, name, flags|unix.O_NOFOLLOW)
		} else {
			fd, err = unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err == unix.EINTR {
			continue
		}
		if err == nil {
			return fd, nil
		}
		// With O_DIRECTORY|O_NOFOLLOW a symlink fails with ENOTDIR, not
		// ELOOP; look at the entry itself to tell it from a plain file.
		if err == unix.ENOTDIR && flags&unix.O_DIRECTORY != 0 {
			var st unix.Stat_t
			if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFLNK:
					return -1, errSymlinkPath
				case unix.S_IFDIR:
					// It was swapped for a directory meanwhile; look again.
					if retries++; retries < 8 {
						continue
					}
					return -1, errBusy
				}
			}
		}
		return -1, classify(err)
	}
}

// openDir opens the directory clean ("." for the root) for reading and
// returns its descriptor. With create, missing directories are made (0755)
// one component at a time, each re-opened through the same checks, so a
// symlink swapped in meanwhile is refused rather than followed.
func (d *Disk) openDir(rootfd int, clean string, create bool) (int, error) {
	const flags = dirFlags
	if clean == "." {
		return d.openComp(rootfd, ".", flags)
	}
	if d.openat2 {
		fd, err := openat2(rootfd, clean, flags|unix.O_NOFOLLOW)
		if err == nil {
			return fd, nil
		}
		if err != unix.ENOTDIR && !(err == unix.ENOENT && create) {
			return -1, classify(err)
		}
		// ENOTDIR: a file, or a symlink at the last component (O_NOFOLLOW
		// with O_DIRECTORY says ENOTDIR there); walk to say which. ENOENT
		// with create: walk to make the missing directories.
	}
	cur := rootfd
	closeCur := func() {
		if cur != rootfd {
			unix.Close(cur)
		}
	}
	for _, name := range components(clean) {
		fd, err := d.openComp(cur, name, flags)
		if errors.Is(err, ErrNotFound) && create {
			fd, err = d.mkdirComp(cur, name)
		}
		if err != nil {
			closeCur()
			return -1, err
		}
		closeCur()
		cur = fd
	}
	return cur, nil
}

// mkdirComp creates directory name in dirfd with mode 0755 (whatever the
// umask) and opens it.
func (d *Disk) mkdirComp(dirfd int, name string) (int, error) {
	made := true
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil {
		if err != unix.EEXIST {
			return -1, classify(err)
		}
		made = false // created concurrently; open whatever is there
	}
	fd, err := d.openComp(dirfd, name, dirFlags)
	if err != nil {
		return -1, err
	}
	if made {
		if err := unix.Fchmod(fd, 0o755); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// openFile opens the file clean with flags (O_NOFOLLOW is added), refusing
// symlinks on every component.
func (d *Disk) openFile(rootfd int, clean string, flags int) (int, error) {
	if d.openat2 {
		fd, err := openat2(rootfd, clean, flags|unix.O_NOFOLLOW)
		if err != nil {
			return -1, classify(err)
		}
		return fd, nil
	}
	dir, base := splitPath(clean)
	dirfd, err := d.openDir(rootfd, dir, false)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dirfd)
	return d.openComp(dirfd, base, flags)
}

// fileKind names the type in a stat mode for messages.
func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	}
	return "a special file"
}
