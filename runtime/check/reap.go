package check

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A check can start processes that leave its process group or session (a
// daemonizing test helper double-forks and calls setsid), which the group
// kill misses. flow is therefore a child subreaper: a process whose parent
// dies is reparented to flow rather than to init, so after a check every
// process it left behind is a child of flow, or a descendant of one, and can
// be found in /proc, killed and reaped.

var subreaper struct {
	once sync.Once
	err  error
}

// BecomeSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER) for the rest of its life, so that processes a
// check leaves behind are reparented to it and can be killed when the check
// ends. cmd/flow calls it first thing; a check calls it too, so that every
// user of the package gets the guarantee. Later calls return the first
// call's result.
func BecomeSubreaper() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

// active holds the direct children of the checks running in this process
// (each is also its check's process group id): no check's cleanup touches
// another check's own process. A check starts its child with the lock held
// and registers it before releasing it, so a cleanup that saw the new
// process in /proc also sees it registered.
var active struct {
	sync.Mutex
	pids map[int]bool
}

// startRegistered starts cmd and registers its process as a running
// check's.
func startRegistered(start func() error, pid func() int) error {
	active.Lock()
	defer active.Unlock()
	if err := start(); err != nil {
		return err
	}
	if active.pids == nil {
		active.pids = make(map[int]bool)
	}
	active.pids[pid()] = true
	return nil
}

func unregister(pid int) {
	active.Lock()
	defer active.Unlock()
	delete(active.pids, pid)
}

// activeNow returns a copy of the registered pids.
func activeNow() map[int]bool {
	active.Lock()
	defer active.Unlock()
	m := make(map[int]bool, len(active.pids))
	for p := range active.pids {
		m[p] = true
	}
	return m
}

// proc is one process of a /proc scan.
type proc struct {
	pid, ppid, pgid, sid int
	zombie               bool
	start                uint64 // clock ticks after boot
}

// readProc reads /proc/<pid>/stat.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold anything, so
	// the fields start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{pid: pid, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgid, _ = strconv.Atoi(string(f[2]))
	p.sid, _ = strconv.Atoi(string(f[3]))
	p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return p, true
}

// scanProcs reads every process of /proc.
func scanProcs() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]proc, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// leftovers is one scan's verdict: the live processes the check left behind
// and the dead ones that are flow's children to reap.
type leftovers struct {
	live   []proc
	zombie []int
}

// findLeftovers returns what the check whose direct child is pid (started
// at start, in process group pid) left behind: its own descendants while it
// still runs, and every child of flow that the check's processes left to
// flow, with all their descendants. Such a child started after the check
// did and is not in flow's own process group (a check runs in its own
// group; its processes may move to other groups or sessions, but a process
// flow itself starts stays in flow's group), and it is no other running
// check's process or process group.
//
// cgroup, when not "", is the check's cgroup (see cgroup.go): a child of
// flow in flow's own group that is in it is the check's too.
func findLeftovers(procs []proc, pid int, start uint64, cgroup string) leftovers {
	self, pgrp := os.Getpid(), unix.Getpgrp()
	running := activeNow()
	children := make(map[int][]proc)
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out leftovers
	var add func(p proc)
	add = func(p proc) {
		if p.zombie {
			if p.ppid == self {
				out.zombie = append(out.zombie, p.pid)
			}
		} else {
			out.live = append(out.live, p)
		}
		for _, c := range children[p.pid] {
			add(c)
		}
	}
	for _, c := range children[pid] {
		add(c)
	}
	for _, p := range children[self] {
		if p.pid == pid || p.start < start || running[p.pid] || p.pgid != pid && running[p.pgid] {
			continue
		}
		if p.pgid == pgrp && (cgroup == "" || !inCgroup(p.pid, cgroup)) {
			continue
		}
		add(p)
	}
	return out
}

// Bounds of the cleanup after a check.
const (
	// maxRounds bounds the scan-and-kill rounds: each round kills what the
	// scan saw; children forked meanwhile are found by the next one.
	maxRounds = 200
	// roundPause separates rounds that still found processes, so that the
	// kernel can deliver the SIGKILLs and reparent their children.
	roundPause = 2 * time.Millisecond
)

// killLeftovers SIGKILLs every process the check whose direct child is pid
// left behind, including those that left its process group or session, and
// reaps those that were reparented to flow. It returns when a scan finds
// nothing alive, or after maxRounds. It needs flow to be a subreaper (see
// [BecomeSubreaper]); without it, escaped processes are init's and only
// the check's own descendants are found.
//
// cgroup is the check's cgroup path, or "" (see [findLeftovers]).
func killLeftovers(pid int, cgroup string) {
	p, ok := readProc(pid)
	if !ok {
		return
	}
	start := p.start
	for round := 0; round < maxRounds; round++ {
		left := findLeftovers(scanProcs(), pid, start, cgroup)
		for _, z := range left.zombie {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(z, &ws, unix.WNOHANG, nil)
		}
		if len(left.live) == 0 && len(left.zombie) == 0 {
			return
		}
		for _, v := range left.live {
			// A descendant's pid could have been reaped by its parent and
			// reused since the scan: signal it only if it is still the
			// process that was seen.
			if now, ok := readProc(v.pid); ok && now.start == v.start {
				_ = unix.Kill(v.pid, unix.SIGKILL)
			}
		}
		time.Sleep(roundPause)
	}
}
