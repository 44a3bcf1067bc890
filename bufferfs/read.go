package bufferfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// readFlags open a file for reading: non-blocking so a FIFO cannot hang
// flow, and never making a terminal our controlling terminal.
const readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY

// Read returns the content of a regular, singly-linked file of at most limit
// bytes (limit <= 0 or above MaxFileBytes means MaxFileBytes); a larger file
// is an [ErrTooLarge] error.
func (d *Disk) Read(ctx context.Context, path string, limit int64) (File, error) {
	return d.read(ctx, path, limit, true)
}

// ReadUnhashed is [Disk.Read] without the SHA-256 of the content (Info's
// SHA256 is empty); searches read many files and never use their hashes.
func (d *Disk) ReadUnhashed(ctx context.Context, path string, limit int64) (File, error) {
	return d.read(ctx, path, limit, false)
}

// read implements Read and ReadUnhashed.
func (d *Disk) read(ctx context.Context, path string, limit int64, hash bool) (File, error) {
	o, err := d.begin(ctx, "read", path)
	if err != nil {
		return File{}, err
	}
	defer o.release()
	if o.clean == "." {
		return File{}, o.fail(errRootPath)
	}
	if limit <= 0 || limit > MaxFileBytes {
		limit = MaxFileBytes
	}
	fd, st, err := d.openRead(o.rootfd, o.clean)
	if err != nil {
		return File{}, o.fail(err)
	}
	defer unix.Close(fd)
	if st.Size > limit {
		return File{}, o.fail(tooLarge("file", limit))
	}
	data, err := readAtMost(fd, limit, st.Size)
	if err != nil {
		return File{}, o.fail(err)
	}
	if int64(len(data)) > limit {
		return File{}, o.fail(tooLarge("file", limit))
	}
	info := makeInfo(o.clean, &st)
	// The file may have changed size between fstat and read.
	info.Size = int64(len(data))
	if hash {
		info.SHA256 = hashHex(data)
	}
	return File{Info: info, Data: data}, nil
}

// openRead opens the file clean for reading and requires it to be a
// regular file with one link. The caller closes the descriptor.
func (d *Disk) openRead(rootfd int, clean string) (int, unix.Stat_t, error) {
	fd, err := d.openFile(rootfd, clean, readFlags)
	if err != nil {
		return -1, unix.Stat_t{}, err
	}
	st, err := checkRegular(fd, "read")
	if err == nil {
		// Private paths are refused by identity too, whatever the spelling.
		err = d.refusePrivateID(&st)
	}
	if err != nil {
		unix.Close(fd)
		return -1, st, err
	}
	return fd, st, nil
}

// Stat describes a file and hashes its content (streaming, so files over
// MaxFileBytes are hashed too). A missing file is not an error.
func (d *Disk) Stat(ctx context.Context, path string) (Info, error) {
	o, err := d.begin(ctx, "stat", path)
	if err != nil {
		return Info{}, err
	}
	defer o.release()
	if o.clean == "." {
		return Info{}, o.fail(errRootPath)
	}
	fd, err := d.openFile(o.rootfd, o.clean, readFlags)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotDir) {
		return Info{Path: o.clean}, nil
	}
	if err != nil {
		return Info{}, o.fail(err)
	}
	defer unix.Close(fd)
	st, err := checkRegular(fd, "read")
	if err == nil {
		err = d.refusePrivateID(&st)
	}
	if err != nil {
		return Info{}, o.fail(err)
	}
	h := sha256.New()
	buf := make([]byte, 32*1024)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return Info{}, o.fail(err)
		}
		m, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Info{}, o.fail(err)
		}
		if m == 0 {
			break
		}
		h.Write(buf[:m])
		n += int64(m)
	}
	info := makeInfo(o.clean, &st)
	info.Size = n
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	return info, nil
}

// checkRegular requires fd to be a regular file with one link; verb names
// the operation for the message ("read", "overwritten", "removed").
func checkRegular(fd int, verb string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, err
	}
	return st, regularRule(&st, verb)
}

// regularRule is the rule of checkRegular for a stat result.
func regularRule(st *unix.Stat_t, verb string) error {
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return errSymlinkPath
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return notRegular(verb, st.Mode)
	}
	// Nlink 0 is a file unlinked or replaced by a rename after we looked
	// it up; it was singly linked, and its content is still consistent.
	if st.Nlink > 1 {
		return errMultiLink
	}
	return nil
}

// readAtMost reads up to limit+1 bytes from fd, so a caller can tell a file
// of exactly limit bytes from a larger one. sizeHint sizes the buffer.
func readAtMost(fd int, limit, sizeHint int64) ([]byte, error) {
	n := min(max(sizeHint+1, 512), limit+1)
	buf := make([]byte, 0, n)
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			bigger := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(bigger, buf)
			buf = bigger
		}
		m, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		buf = buf[:len(buf)+m]
	}
	return buf, nil
}

// makeInfo builds the Info of an existing file from its stat result.
func makeInfo(clean string, st *unix.Stat_t) Info {
	sec, nsec := st.Mtim.Unix()
	return Info{
		Path:    clean,
		Exists:  true,
		Size:    st.Size,
		Mode:    fs.FileMode(st.Mode & 0o777),
		ModTime: time.Unix(sec, nsec),
	}
}

// hashHex returns the lower-case hex SHA-256 of data.
func hashHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
