package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"flow/runtime/report"
)

// needCgroup skips a test where no check cgroup can be made (no writable
// cgroup v2 hierarchy); the /proc scan is then flow's only mechanism.
func needCgroup(t *testing.T) {
	t.Helper()
	cg := newCheckCgroup()
	if cg == nil {
		t.Skip("no writable cgroup v2 hierarchy")
	}
	cg.remove()
}

// checkCgroups lists this process's check cgroups.
func checkCgroups(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(cgroupParent(), cgroupPrefix+strconv.Itoa(os.Getpid())+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestCheckRunsInItsOwnCgroup: where cgroup v2 is writable, a check's
// processes run in a cgroup of their own, removed when the check ends.
func TestCheckRunsInItsOwnCgroup(t *testing.T) {
	needCgroup(t)
	r := newRunner(t)
	res := runGuarded(t, t.Context(), r, required("cgroup", "cat", "/proc/self/cgroup"))
	if res.Status != report.StatusOK || !strings.Contains(res.Stdout, "0::"+filepath.Join(cgroups.own, cgroupPrefix+strconv.Itoa(os.Getpid())+"-")) {
		t.Errorf("RunCheck(cat /proc/self/cgroup) = %q (%s), stdout %q; want the check's own cgroup", res.Status, res.Error, res.Stdout)
	}
	if left := checkCgroups(t); len(left) != 0 {
		t.Errorf("check cgroups left after the check: %v", left)
	}
}

// TestCgroupHoldsWhatJoinedFlowsGroup: a check's process that moved itself
// into flow's own process group (which the /proc scan spares, as flow's
// own children live there) is still killed and reaped, through the
// check's cgroup.
func TestCgroupHoldsWhatJoinedFlowsGroup(t *testing.T) {
	needCgroup(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	script := `python3 -c 'import os, time
os.setpgid(0, ` + strconv.Itoa(unix.Getpgrp()) + `)
open("moved.pid", "w").write(str(os.getpid()))
time.sleep(3174)' >/dev/null 2>&1 &
while [ ! -s moved.pid ]; do sleep 0.01; done`
	res := runGuarded(t, t.Context(), r, required("join", sh(script)...))
	if res.Status != report.StatusOK {
		t.Fatalf("RunCheck = %q (%s), stderr %q", res.Status, res.Error, res.Stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.Root, "moved.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	if p, ok := readProc(pid); ok {
		if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.Contains(string(cmdline), "3174") {
			unix.Kill(pid, unix.SIGKILL)
			t.Fatalf("the process that joined flow's group outlived the check (pgid %d)", p.pgid)
		}
		if p.zombie && p.ppid == os.Getpid() {
			t.Errorf("the process that joined flow's group was killed but not reaped")
		}
	}
	if left := checkCgroups(t); len(left) != 0 {
		t.Errorf("check cgroups left after the check: %v", left)
	}
}

// TestStaleCgroupsAreRemoved: an empty check cgroup of a flow process that
// died is removed; one of a live process is kept.
func TestStaleCgroupsAreRemoved(t *testing.T) {
	needCgroup(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cgroupParent(), cgroupPrefix+strconv.Itoa(dead.Process.Pid)+"-1")
	live := filepath.Join(cgroupParent(), cgroupPrefix+strconv.Itoa(os.Getppid())+"-1")
	for _, d := range []string{stale, live} {
		if err := unix.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Rmdir(d) })
	}
	removeStaleCgroups(cgroupParent())
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s of a dead process was kept", stale)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of a live process was removed: %v", live, err)
	}
}
