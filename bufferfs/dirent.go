package bufferfs

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// dirent is one directory entry: its name and the type getdents reported
// (unix.DT_UNKNOWN on file systems that do not fill it in).
type dirent struct {
	name string
	typ  uint8
}

// readEntries returns the entries of the open directory fd, without "." and
// "..", in directory order. buf, if not nil, is the scratch buffer.
func readEntries(fd int, buf []byte) ([]dirent, error) {
	if len(buf) < 4096 {
		buf = make([]byte, 32*1024)
	}
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(buf[:n], out)
	}
}

// parseDirents appends the linux_dirent64 records in b to out:
// d_ino u64, d_off s64, d_reclen u16, d_type u8, then a NUL-terminated name.
func parseDirents(b []byte, out []dirent) []dirent {
	const nameOff = 19
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		name := rec[nameOff:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		out = append(out, dirent{name: string(name), typ: rec[18]})
	}
	return out
}
