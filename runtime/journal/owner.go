package journal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Owner identifies a process across pid reuse and reboots: its pid, its
// start time in clock ticks since boot, and the boot it ran in.
type Owner struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Boot is the kernel's boot id (/proc/sys/kernel/random/boot_id);
	// after a reboot no process of the old boot is alive, whatever pid and
	// start time a new one has. "" in records of older flows.
	Boot string `json:"boot,omitempty"`
}

// CancelSignal is the signal that asks a task's worker process to cancel
// its task (MCP tasks/cancel), as a cancel in the server that started it
// would; SIGTERM and SIGINT stop the worker too, but as an interruption.
const CancelSignal = syscall.SIGUSR1

// ErrOwnerGone reports that a task's owner process no longer runs.
var ErrOwnerGone = errors.New("the process running the task is gone")

// selfOwner identifies this process.
func selfOwner() Owner {
	pid := os.Getpid()
	st, _ := readStat(pid)
	return Owner{PID: pid, Start: st.start, Boot: bootID()}
}

// Alive reports whether the owner process still runs: the same boot, a
// process with its pid that is not a zombie (a dead worker whose parent
// has not reaped it yet must not look alive) and has its start time (a
// reused pid has another).
func (o Owner) Alive() bool {
	if o.PID <= 0 || (o.Boot != "" && o.Boot != bootID()) {
		return false
	}
	st, err := readStat(o.PID)
	if err != nil {
		// No /proc: only whether the pid exists can be known.
		return errors.Is(err, errNoProc) && alive(o.PID)
	}
	if st.state == 'Z' || st.state == 'X' {
		return false
	}
	return o.Start == 0 || st.start == o.Start
}

// Signal sends sig to the owner process, and only to it: the process is
// pinned with a pidfd before its start time is compared, so a pid reused
// in between is never signalled. It returns [ErrOwnerGone] when the owner
// no longer runs.
func (o Owner) Signal(sig syscall.Signal) error {
	if !o.Alive() {
		return ErrOwnerGone
	}
	fd, err := unix.PidfdOpen(o.PID, 0)
	if errors.Is(err, unix.ENOSYS) {
		// Before Linux 5.3: the liveness check above is the best there is.
		return unix.Kill(o.PID, sig)
	}
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrOwnerGone
		}
		return fmt.Errorf("journal: signal process %d: %w", o.PID, err)
	}
	defer unix.Close(fd)
	if !o.Alive() {
		return ErrOwnerGone
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return ErrOwnerGone
		}
		return fmt.Errorf("journal: signal process %d: %w", o.PID, err)
	}
	return nil
}

// procStat is what flow reads of /proc/PID/stat.
type procStat struct {
	state byte   // field 3: R, S, D, Z, X, …
	start uint64 // field 22: start time in clock ticks since boot
}

// errNoProc reports that /proc cannot be read at all.
var errNoProc = errors.New("no /proc")

// readStat reads a process's state and start time.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil {
			return procStat{}, errNoProc
		}
		return procStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("journal: /proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("journal: /proc/%d/stat: too few fields", pid)
	}
	n, _ := strconv.ParseUint(fields[19], 10, 64)
	return procStat{state: fields[0][0], start: n}, nil
}

var boot struct {
	once sync.Once
	id   string
}

// bootID returns the kernel's boot id, or "" where it cannot be read.
func bootID() string {
	boot.once.Do(func() {
		b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if err == nil {
			boot.id = strings.TrimSpace(string(b))
		}
	})
	return boot.id
}
