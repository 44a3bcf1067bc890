package journal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy is matched (errors.Is) by the [*BusyError] of [Store.Lock].
var ErrBusy = errors.New("busy")

// BusyError reports that another flow process holds the workspace lock.
type BusyError struct {
	// Root is the workspace.
	Root string
	// PID is the holder's process id, or 0 when it could not be read.
	PID int
}

// Error returns "busy: workspace <root> is locked by flow process <pid>".
func (e *BusyError) Error() string {
	if e.PID <= 0 {
		return "busy: workspace " + e.Root + " is locked by another flow process"
	}
	return "busy: workspace " + e.Root + " is locked by flow process " + strconv.Itoa(e.PID)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Lock is a held workspace lock. The kernel releases it when the process
// exits, however it exits.
type Lock struct {
	mu sync.Mutex
	f  *os.File
}

// pidWidth is the fixed width of the pid record in the lock file, so that a
// new holder overwrites a dead holder's pid with one write.
const pidWidth = 20

// How long Lock waits for a holder that has not yet written its pid (it is
// between flock and write, or it is a [Store.Busy] probe).
const (
	lockRetries    = 40
	lockRetryPause = 5 * time.Millisecond
)

// Lock takes the workspace's exclusive lock without waiting: flock
// (LOCK_EX|LOCK_NB) on a file in the state directory, keyed by the root's
// identity, so every path to one directory shares the lock. The holder's
// pid is written into the file. When another process (or another Lock of
// this process) holds it, Lock returns a [*BusyError] naming the holder's
// pid. run, check and undo hold this lock while they work.
//
// The lock is robust to the replacement of its file: after flock, Lock
// checks that its descriptor is still the file at the lock path (fstat
// against lstat) and starts again on the new file when it is not, so two
// processes can never hold locks on two different inodes.
func (s *Store) Lock() (*Lock, error) {
	for replaced := 0; ; replaced++ {
		f, err := s.lockOnce()
		if err != errReplaced {
			return f, err
		}
		if replaced >= lockRetries {
			return nil, fmt.Errorf("journal: lock %s: the lock file keeps being replaced; remove it when no flow is running", s.lockPath)
		}
	}
}

// errReplaced reports that the lock file was replaced while it was locked.
var errReplaced = errors.New("lock file replaced")

// lockOnce is one attempt of Lock.
func (s *Store) lockOnce() (*Lock, error) {
	f, err := s.openLockFile()
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("journal: lock %s: %w", s.lockPath, err)
		}
		pid := readPID(f)
		if pid > 0 && !alive(pid) {
			pid = 0 // a dead holder's record; the live holder has not written yet
		}
		if pid > 0 || try >= lockRetries {
			f.Close()
			return nil, &BusyError{Root: s.root, PID: pid}
		}
		time.Sleep(lockRetryPause)
	}
	if s.beforeCheck != nil {
		s.beforeCheck()
	}
	if !s.stillAtPath(f) {
		f.Close()
		return nil, errReplaced
	}
	rec := fmt.Sprintf("%-*d\n", pidWidth, os.Getpid())
	if _, err := f.WriteAt([]byte(rec), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: lock %s: %w", s.lockPath, err)
	}
	return &Lock{f: f}, nil
}

// stillAtPath reports whether f is the file at the lock path.
func (s *Store) stillAtPath(f *os.File) bool {
	var fst, lst unix.Stat_t
	if unix.Fstat(int(f.Fd()), &fst) != nil || unix.Lstat(s.lockPath, &lst) != nil {
		return false
	}
	return fst.Dev == lst.Dev && fst.Ino == lst.Ino
}

// Unlock releases the lock. It clears the pid first, so a reader never sees
// a released holder's pid. Unlock is idempotent.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil { // closing the last descriptor drops the flock
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("journal: unlock: %w", err)
	}
	return nil
}

// Busy reports whether a process holds the workspace lock and, when it
// does, the holder's pid (0 when unknown). It never blocks and never takes
// the lock for more than an instant: it probes with a shared lock, which a
// concurrent [Store.Lock] tolerates by retrying briefly. `flow status` uses
// it.
func (s *Store) Busy() (pid int, busy bool, err error) {
	f, err := s.openLockFile()
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		return 0, false, nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return 0, false, fmt.Errorf("journal: lock %s: %w", s.lockPath, err)
	}
	return readPID(f), true, nil
}

// openLockFile opens (creating) the lock file without following symlinks.
// It must be a regular file; a group- or world-writable one is made 0600
// (the kernel gives the lock to whoever can open the file, and a writer
// could also forge the pid).
func (s *Store) openLockFile() (*os.File, error) {
	f, err := os.OpenFile(s.lockPath, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: lock %s: %w", s.lockPath, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: lock %s: %w", s.lockPath, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("journal: lock %s: not a regular file; remove it when no flow is running", s.lockPath)
	}
	if st.Mode&0o022 != 0 {
		if err := unix.Fchmod(int(f.Fd()), 0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal: lock %s: writable by others and cannot be made private: %w", s.lockPath, err)
		}
	}
	return f, nil
}

// flock applies how to f, retrying on EINTR.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// readPID returns the pid recorded in a lock file, or 0.
func readPID(f *os.File) int {
	buf := make([]byte, pidWidth+1)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// alive reports whether a process with the given pid exists.
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}
