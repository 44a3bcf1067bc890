package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Where the cgroup v2 hierarchy is writable, each check runs in a cgroup of
// its own, created below flow's cgroup, and is started directly into it
// (clone3 with CLONE_INTO_CGROUP). Nothing the check starts can leave it
// without write access to another cgroup, so at the end of the check one
// write to cgroup.kill kills all of it, atomically against concurrent forks.
// The /proc scan of reap.go runs after it in every case: it reaps what was
// reparented to flow and catches what the cgroup could not hold (a process
// that moved itself to another cgroup, or no cgroup at all).

// cgroupPrefix starts the name of every check cgroup; the pid of the flow
// process that made it follows, so stale ones can be recognised.
const cgroupPrefix = "flow-check-"

var cgroups struct {
	once   sync.Once
	parent string // flow's own cgroup directory, "" when unusable
	own    string // flow's own cgroup as /proc/self/cgroup shows it
	seq    atomic.Int64
}

// cgroupParent returns the directory of flow's own cgroup in the cgroup v2
// hierarchy, or "" when there is none (cgroup v1 only, no /proc). On first
// use it also removes empty check cgroups left by flow processes that died.
func cgroupParent() string {
	cgroups.once.Do(func() {
		mount := cgroup2Mount()
		own := ownCgroup()
		if mount == "" || own == "" {
			return
		}
		dir := filepath.Join(mount, own)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
			return
		}
		cgroups.parent, cgroups.own = dir, own
		removeStaleCgroups(dir)
	})
	return cgroups.parent
}

// cgroup2Mount returns the mount point of the cgroup v2 hierarchy from
// /proc/self/mountinfo, or "".
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			return unescapeMount(f[4])
		}
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup returns this process's cgroup v2 path from /proc/self/cgroup
// (the "0::" line), or "".
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return p
		}
	}
	return ""
}

// removeStaleCgroups removes the check cgroups in dir of flow processes
// that no longer run (killed before they could clean up). A cgroup that
// still holds processes is left alone: rmdir refuses it.
func removeStaleCgroups(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, cgroupPrefix+"*"))
	for _, n := range names {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(n), cgroupPrefix), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid != os.Getpid() && unix.Kill(pid, 0) == unix.ESRCH {
			_ = unix.Rmdir(n)
		}
	}
}

// checkCgroup is one check's cgroup.
type checkCgroup struct {
	dir  string
	path string // as /proc/<pid>/cgroup shows it, "/..."
	fd   int    // the directory, for CLONE_INTO_CGROUP
}

// newCheckCgroup creates a cgroup for one check, or returns nil when the
// hierarchy is missing or not writable.
func newCheckCgroup() *checkCgroup {
	parent := cgroupParent()
	if parent == "" {
		return nil
	}
	name := fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroups.seq.Add(1))
	dir := filepath.Join(parent, name)
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(dir)
		return nil
	}
	return &checkCgroup{dir: dir, path: filepath.Join(cgroups.own, name), fd: fd}
}

// pathOf returns the cgroup path of c for [inCgroup], "" for nil.
func (c *checkCgroup) pathOf() string {
	if c == nil {
		return ""
	}
	return c.path
}

// inCgroup reports whether process pid is (or, a zombie, was) in the
// cgroup v2 cgroup path.
func inCgroup(pid int, path string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p == path
		}
	}
	return false
}

// kill SIGKILLs every process in the cgroup: through cgroup.kill (Linux
// 5.14), else by signalling what cgroup.procs lists until it is empty. A
// nil cgroup kills nothing.
func (c *checkCgroup) kill() {
	if c == nil {
		return
	}
	if os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	for round := 0; round < maxRounds; round++ {
		pids := c.procs()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(roundPause)
	}
}

// procs returns the pids cgroup.procs lists.
func (c *checkCgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// remove deletes the cgroup once its killed processes are gone (the kernel
// refuses to remove a populated cgroup); it gives up after maxRounds,
// leaving an empty directory that a later flow removes. A nil cgroup does
// nothing.
func (c *checkCgroup) remove() {
	if c == nil {
		return
	}
	unix.Close(c.fd)
	for round := 0; round < maxRounds; round++ {
		err := unix.Rmdir(c.dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		time.Sleep(roundPause)
	}
}
