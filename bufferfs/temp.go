package bufferfs

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Temporary files of atomic writes are named
//
//	.flow-tmp-<pid>-<16 hex digits>
//
// in the target's directory: recognisable, short enough for any base name,
// and carrying the writer's pid. A writer killed between create and rename
// leaves one behind; later writes to the same directory remove it when it
// is stale:
//
//   - its mtime is older than staleTempAge (no write is that slow), or
//   - its mtime is older than deadTempAge and no process has its pid (the
//     writer died). The short grace keeps an in-flight temp of a writer in
//     another pid namespace, where the pid means nothing, safe.
//
// Only regular files with exactly this name shape are touched, so a user's
// file is never mistaken for one. Listings hide them.
const (
	tempPrefix   = ".flow-tmp-"
	tempHexLen   = 16
	staleTempAge = time.Minute
	deadTempAge  = 3 * time.Second
)

// tempName returns a fresh temporary file name for this process.
func tempName() string {
	var b [tempHexLen / 2]byte
	rand.Read(b[:])
	return tempPrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// parseTempName returns the pid embedded in a temporary file name, and
// whether name has the shape tempName makes.
func parseTempName(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok {
		return 0, false
	}
	pidText, hexText, ok := strings.Cut(rest, "-")
	if !ok || len(hexText) != tempHexLen || pidText == "" || len(pidText) > 10 {
		return 0, false
	}
	for _, c := range hexText {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || pidText[0] == '0' || pid > 1<<22 {
		return 0, false
	}
	return pid, true
}

// createTemp creates a new, empty temporary file (mode 0600) in dirfd.
func createTemp(dirfd int) (string, int, error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for tries := 0; ; tries++ {
		name := tempName()
		fd, err := unix.Openat(dirfd, name, flags, 0o600)
		if err == nil {
			return name, fd, nil
		}
		if (err != unix.EEXIST && err != unix.EINTR) || tries >= 8 {
			return "", -1, err
		}
	}
}

// pidAlive reports whether a process with this pid exists (EPERM means it
// exists but belongs to someone else).
func pidAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

// cleanTemps removes stale temporary files from dirfd. It scans a given
// directory at most once per d.scanEvery; failures are ignored, since the
// cleanup is a courtesy and must never fail a write.
func (d *Disk) cleanTemps(dirfd int) {
	var st unix.Stat_t
	if unix.Fstat(dirfd, &st) != nil {
		return
	}
	id, now := statID(&st), time.Now()
	d.scanMu.Lock()
	last, seen := d.scanned[id]
	if seen && now.Sub(last) < d.scanEvery {
		d.scanMu.Unlock()
		return
	}
	if len(d.scanned) > 4096 {
		clear(d.scanned)
	}
	d.scanned[id] = now
	d.scanMu.Unlock()

	// Read through a separate descriptor so dirfd's offset is untouched.
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	entries, err := readEntries(fd, nil)
	unix.Close(fd)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := parseTempName(e.name)
		if !ok {
			continue
		}
		var fst unix.Stat_t
		if unix.Fstatat(dirfd, e.name, &fst, unix.AT_SYMLINK_NOFOLLOW) != nil ||
			fst.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		sec, nsec := fst.Mtim.Unix()
		age := now.Sub(time.Unix(sec, nsec))
		if age > staleTempAge || age > deadTempAge && !pidAlive(pid) {
			unix.Unlinkat(dirfd, e.name, 0)
		}
	}
}
