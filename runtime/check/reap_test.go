package check

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"flow/runtime/report"
)

// escapeScript double-forks: a background subshell runs setsid, whose new
// session's shell starts `sleep 3071` in the background, records its pid
// in escaped.pid and exits. The sleep has left the check's process group
// and session, and its parents are dead. With hold, it keeps the check's
// stdout and stderr open. After starting it the script runs then.
func escapeScript(hold bool, then string) string {
	redirect := " >/dev/null 2>&1"
	if hold {
		redirect = ""
	}
	return `(setsid sh -c 'sleep 3071` + redirect + ` & echo $! > escaped.pid' &); ` +
		`while [ ! -s escaped.pid ]; do sleep 0.01; done; echo parent; ` + then
}

// escapedAlive reports whether the process recorded in root/escaped.pid is
// still a `sleep 3071`.
func escapedAlive(t *testing.T, root string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "escaped.pid"))
	if err != nil {
		t.Fatalf("the check did not start its escaping process: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		t.Fatalf("escaped.pid = %q", data)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false // gone (and reaped: a zombie still has a cmdline file, empty)
	}
	if bytes.Equal(cmdline, []byte("sleep\x003071\x00")) {
		t.Cleanup(func() { _ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run() })
		return true
	}
	return false
}

// TestEscapedProcessesAreKilled: a process a check started that left its
// process group and session does not outlive the check, whether the check
// ends by itself, times out or is cancelled; and when it holds the check's
// pipes the check does not wait for it (drain grace is an hour here, so a
// wait would trip the test's guard).
func TestEscapedProcessesAreKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatalf("BecomeSubreaper: %v", err)
	}
	saved := drainGrace
	drainGrace = time.Hour
	t.Cleanup(func() { drainGrace = saved })

	tests := []struct {
		name   string
		hold   bool
		then   string
		cancel bool
		want   string
	}{
		{"ends, holding the pipes", true, "exit 0", false, report.StatusOK},
		{"ends, pipes closed", false, "exit 3", false, report.StatusFailed},
		{"times out", true, "sleep 30", false, report.StatusTimeout},
		{"cancelled", false, "touch started; sleep 30", true, report.StatusCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			c := required("escape", sh(escapeScript(tc.hold, tc.then))...)
			if tc.want == report.StatusTimeout {
				c.Timeout = 2000 // ample for the script to reach its sleep
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				go func() {
					if waitFor(t, filepath.Join(r.Root, "started")) {
						cancel()
					}
				}()
			}
			res := runGuarded(t, ctx, r, c)
			if res.Status != tc.want || !strings.HasPrefix(res.Stdout, "parent\n") {
				t.Errorf("RunCheck = %q (%s), stdout %q; want %q after %q", res.Status, res.Error, res.Stdout, tc.want, "parent\n")
			}
			if escapedAlive(t, r.Root) {
				t.Error("the process that left the check's session outlived the check")
			}
		})
	}
}

// TestLeftoversSpareOtherProcesses: the cleanup after a check kills only
// what that check started: a process flow started itself (in flow's own
// process group) and a process that was there before the check survive it.
func TestLeftoversSpareOtherProcesses(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatalf("BecomeSubreaper: %v", err)
	}
	before := exec.Command("sleep", "3072")
	if err := before.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { before.Process.Kill(); before.Wait() })
	r := newRunner(t)
	during := exec.Command("sleep", "3073")
	// The check waits until the process it must spare has started.
	c := required("starts", sh("touch started; while [ ! -e go ]; do sleep 0.01; done")...)
	go func() {
		if waitFor(t, filepath.Join(r.Root, "started")) {
			if err := during.Start(); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(filepath.Join(r.Root, "go"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}()
	if res := runGuarded(t, t.Context(), r, c); res.Status != report.StatusOK {
		t.Fatalf("RunCheck = %q (%s)", res.Status, res.Error)
	}
	t.Cleanup(func() {
		if during.Process != nil {
			during.Process.Kill()
			during.Wait()
		}
	})
	for _, p := range []*exec.Cmd{before, during} {
		if p.Process == nil {
			t.Fatal("the process started during the check did not start")
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(p.Process.Pid)); err != nil || p.ProcessState != nil {
			t.Errorf("%v was killed or reaped by a check's cleanup", p.Args)
		}
	}
}

// BenchmarkLeftoverScan is the cost every check pays at its end when it
// left nothing behind: one scan of /proc and its verdict.
func BenchmarkLeftoverScan(b *testing.B) {
	procs := 0
	for b.Loop() {
		all := scanProcs()
		procs = len(all)
		if left := findLeftovers(all, -1, ^uint64(0), ""); len(left.live) != 0 {
			b.Fatalf("findLeftovers found %d processes of no check", len(left.live))
		}
	}
	b.ReportMetric(float64(procs), "procs")
}
