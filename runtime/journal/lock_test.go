package journal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readWord reads one "<word> <pid>" line of a lock helper.
func readWord(t *testing.T, r io.Reader) (string, int) {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("helper output %q: %v", line, err)
	}
	var word string
	var pid int
	if _, err := fmt.Sscanf(line, "%s %d", &word, &pid); err != nil {
		t.Fatalf("helper output %q: %v", line, err)
	}
	return word, pid
}

func lockEnv(state, root string) []string {
	return []string{helperState + "=" + state, helperRoot + "=" + root}
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	f := newFixture(t, Options{})
	cmd, out, _ := startHelper(t, "lock", true, lockEnv(f.state, f.root)...)
	if word, pid := readWord(t, out); word != "locked" || pid != cmd.Process.Pid {
		t.Fatalf("helper = %s %d, want locked %d", word, pid, cmd.Process.Pid)
	}

	l, err := f.store.Lock()
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) || busy.PID != cmd.Process.Pid {
		t.Fatalf("Lock() = %v, %v; want a BusyError naming pid %d", l, err, cmd.Process.Pid)
	}
	want := fmt.Sprintf("busy: workspace %s is locked by flow process %d", f.store.Root(), cmd.Process.Pid)
	if err.Error() != want {
		t.Errorf("Lock() error = %q, want %q", err, want)
	}
	if pid, isBusy, err := f.store.Busy(); !isBusy || pid != cmd.Process.Pid || err != nil {
		t.Errorf("Busy() = %d, %v, %v; want %d, true", pid, isBusy, err, cmd.Process.Pid)
	}

	// SIGKILL: the kernel drops the flock with the process.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if pid, isBusy, err := f.store.Busy(); isBusy || err != nil {
		t.Errorf("Busy() after SIGKILL = %d, %v, %v; want not busy", pid, isBusy, err)
	}
	l, err = f.store.Lock()
	if err != nil {
		t.Fatalf("Lock() after the holder was killed = %v", err)
	}
	if pid, isBusy, _ := f.store.Busy(); !isBusy || pid != os.Getpid() {
		t.Errorf("Busy() while held here = %d, %v; want %d, true", pid, isBusy, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock() = %v, want nil", err)
	}
	if _, isBusy, _ := f.store.Busy(); isBusy {
		t.Error("Busy() after Unlock = true")
	}
}

// Two processes started together on one workspace: exactly one gets the
// lock, the other is told the holder's pid. Different workspaces do not
// block each other.
func TestLockTwoProcesses(t *testing.T) {
	f := newFixture(t, Options{})
	otherRoot := filepath.Join(t.TempDir(), "other")
	os.Mkdir(otherRoot, 0o755)
	tests := []struct {
		name        string
		roots       [2]string
		wantOneBusy bool
	}{
		{"same workspace", [2]string{f.root, f.root}, true},
		{"different workspaces", [2]string{f.root, otherRoot}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				word string
				pid  int
			}
			var (
				cmds   [2]int
				stdins [2]io.WriteCloser
				outs   [2]io.Reader
			)
			for i, root := range tc.roots {
				cmd, out, in := startHelper(t, "lock", true, lockEnv(f.state, root)...)
				cmds[i], stdins[i], outs[i] = cmd.Process.Pid, in, out
			}
			var res [2]result
			for i := range res {
				res[i].word, res[i].pid = readWord(t, outs[i])
			}
			for _, in := range stdins {
				in.Close()
			}
			words := res[0].word + " " + res[1].word
			if !tc.wantOneBusy {
				if words != "locked locked" {
					t.Fatalf("helpers = %+v, want both locked", res)
				}
				return
			}
			if words != "locked busy" && words != "busy locked" {
				t.Fatalf("helpers = %+v, want one locked and one busy", res)
			}
			for i, r := range res {
				if r.word == "busy" && r.pid != cmds[1-i] {
					t.Errorf("busy helper named pid %d, want the holder %d", r.pid, cmds[1-i])
				}
			}
		})
	}
}

func TestLockInProcessAndAcrossPaths(t *testing.T) {
	f := newFixture(t, Options{})
	l, err := f.store.Lock()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(f.root, link); err != nil {
		t.Fatal(err)
	}
	viaLink, err := Open(f.state, link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{f.store, viaLink} {
		if _, err := s.Lock(); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
			t.Errorf("second Lock() = %v, want busy naming this process", err)
		}
	}
	l.Unlock()
	l2, err := viaLink.Lock()
	if err != nil {
		t.Fatalf("Lock() after Unlock = %v", err)
	}
	l2.Unlock()
}

func TestBusyErrorWithoutPID(t *testing.T) {
	err := &BusyError{Root: "/w"}
	if got, want := err.Error(), "busy: workspace /w is locked by another flow process"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestLockFileReplacedWhileLocking: when the lock file is replaced between
// open and flock, and someone locks the new file, Lock must not hold the
// old inode as if it were the lock: it starts again on the new file, which
// is busy.
func TestLockFileReplacedWhileLocking(t *testing.T) {
	f := newFixture(t, Options{})
	var other *os.File
	f.store.beforeCheck = func() {
		f.store.beforeCheck = nil
		tmp := f.store.lockPath + ".new"
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%-*d\n", pidWidth, os.Getpid())), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.store.lockPath); err != nil {
			t.Fatal(err)
		}
		var err error
		if other, err = os.OpenFile(f.store.lockPath, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	l, err := f.store.Lock()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Lock() with its file replaced and the new one locked = %v, %v; want busy", l, err)
	}
	if other == nil {
		t.Fatal("the replacement hook did not run")
	}
	other.Close()
	l, err = f.store.Lock()
	if err != nil {
		t.Fatalf("Lock() after the other holder closed = %v", err)
	}
	l.Unlock()
}

// TestLockFileMode: the lock file is never a symlink or a FIFO, and one
// writable by others is made private.
func TestLockFileMode(t *testing.T) {
	f := newFixture(t, Options{})
	if err := os.WriteFile(f.store.lockPath, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.store.lockPath, 0o666); err != nil {
		t.Fatal(err)
	}
	l, err := f.store.Lock()
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if fi, err := os.Stat(f.store.lockPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	target := filepath.Join(t.TempDir(), "target")
	for name, make := range map[string]func() error{
		"symlink": func() error { return os.Symlink(target, f.store.lockPath) },
		"fifo":    func() error { return syscall.Mkfifo(f.store.lockPath, 0o600) },
	} {
		os.Remove(f.store.lockPath)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		if l, err := f.store.Lock(); err == nil {
			l.Unlock()
			t.Errorf("Lock() on a %s lock path succeeded, want an error", name)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("Lock() on a %s lock path created its target", name)
		}
	}
}
