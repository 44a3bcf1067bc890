package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"flow/runtime/config"
	"flow/runtime/report"
)

func TestArgvIsLiteral(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	c := required("literal", "printf", "%s|", "$(touch pwned)", ";", "a && b", "`touch pwned2`", "*")
	res := runGuarded(t, t.Context(), r, c)
	if res.Status != report.StatusOK {
		t.Fatalf("RunCheck(literal) status = %q (%s), want ok", res.Status, res.Error)
	}
	if want := "$(touch pwned)|;|a && b|`touch pwned2`|*|"; res.Stdout != want {
		t.Errorf("RunCheck(literal) stdout = %q, want %q", res.Stdout, want)
	}
	for _, name := range []string{"pwned", "pwned2"} {
		if exists(t, filepath.Join(r.Root, name)) {
			t.Errorf("RunCheck(literal) created %s: the argv went through a shell", name)
		}
	}
}

func TestCwdIsWorkspaceRoot(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	res := runGuarded(t, t.Context(), r, required("pwd", sh("pwd -P")...))
	want, err := filepath.EvalSymlinks(r.Root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(res.Stdout); got != want {
		t.Errorf("RunCheck(pwd) stdout = %q, want %q", got, want)
	}
}

func TestStdoutAndStderrSeparate(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	res := runGuarded(t, t.Context(), r, required("streams", sh("echo out; echo err >&2; echo out2")...))
	if res.Stdout != "out\nout2\n" || res.Stderr != "err\n" {
		t.Errorf("RunCheck(streams) stdout, stderr = %q, %q, want %q, %q", res.Stdout, res.Stderr, "out\nout2\n", "err\n")
	}
	if res.StdoutTruncated || res.StderrTruncated {
		t.Errorf("RunCheck(streams) truncated = %v, %v, want false, false", res.StdoutTruncated, res.StderrTruncated)
	}
}

func TestStdinIsNull(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	res := runGuarded(t, t.Context(), r, required("cat", "cat"))
	if res.Status != report.StatusOK || res.Stdout != "" {
		t.Errorf("RunCheck(cat) = %q, stdout %q, want ok with empty stdout", res.Status, res.Stdout)
	}
}

func TestInvalidUTF8Replaced(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	res := runGuarded(t, t.Context(), r, required("bytes", "printf", `a\377b`))
	if want := "a\uFFFDb"; res.Stdout != want {
		t.Errorf("RunCheck(bytes) stdout = %q, want %q", res.Stdout, want)
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	seven, minusKill := 7, -int(syscall.SIGKILL)
	zero := 0
	tests := []struct {
		name   string
		cmd    []string
		status string
		code   *int
	}{
		{"exit 0", sh("exit 0"), report.StatusOK, &zero},
		{"exit 7", sh("exit 7"), report.StatusFailed, &seven},
		{"signal death", sh("kill -KILL $$"), report.StatusFailed, &minusKill},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			res := runGuarded(t, t.Context(), r, required("c", tc.cmd...))
			if res.Status != tc.status || res.Returncode == nil || *res.Returncode != *tc.code {
				t.Errorf("RunCheck(%q) = %q, returncode %v, want %q, %d", tc.cmd, res.Status, fmtCode(res.Returncode), tc.status, *tc.code)
			}
			if res.Error != "" {
				t.Errorf("RunCheck(%q) error = %q, want none", tc.cmd, res.Error)
			}
		})
	}
}

func fmtCode(p *int) string {
	if p == nil {
		return "<nil>"
	}
	return strconv.Itoa(*p)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cmd     []string
		setup   func(t *testing.T, root string)
		root    func(root string) string
		status  string
		errPart string
	}{
		{name: "missing on PATH", cmd: []string{"flow-no-such-executable-x9"}, status: report.StatusUnavailable, errPart: "not found"},
		{name: "missing relative path", cmd: []string{"./nope"}, status: report.StatusUnavailable, errPart: "no such file"},
		{name: "missing absolute path", cmd: []string{"/nonexistent/flow/tool"}, status: report.StatusUnavailable, errPart: "no such file"},
		{
			name: "not executable", cmd: []string{"./script"}, status: report.StatusUnavailable, errPart: "permission denied",
			setup: func(t *testing.T, root string) { writeFile(t, root, "script", []byte("#!/bin/sh\nexit 0\n"), 0o644) },
		},
		{
			name: "directory", cmd: []string{"./dir"}, status: report.StatusUnavailable,
			setup: func(t *testing.T, root string) { os.Mkdir(filepath.Join(root, "dir"), 0o755) },
		},
		{
			name: "root missing", cmd: sh("exit 0"), status: report.StatusUnavailable, errPart: "no such file",
			root: func(root string) string { return filepath.Join(root, "gone") },
		},
		{name: "empty command", cmd: nil, status: report.StatusError, errPart: "empty command"},
		{
			name: "exec format error", cmd: []string{"./garbage"}, status: report.StatusError, errPart: "exec format error",
			setup: func(t *testing.T, root string) { writeFile(t, root, "garbage", []byte{0x7f, 0, 1, 2, 3}, 0o755) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			if tc.setup != nil {
				tc.setup(t, r.Root)
			}
			if tc.root != nil {
				r.Root = tc.root(r.Root)
			}
			res := runGuarded(t, t.Context(), r, required("c", tc.cmd...))
			if res.Status != tc.status || !strings.Contains(res.Error, tc.errPart) || res.Error == "" {
				t.Errorf("RunCheck(%q) = %q, %q, want %q with error containing %q", tc.cmd, res.Status, res.Error, tc.status, tc.errPart)
			}
			if res.Returncode != nil {
				t.Errorf("RunCheck(%q) returncode = %d, want none", tc.cmd, *res.Returncode)
			}
		})
	}
}

func TestRelativeExecutableResolvesAgainstRoot(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	writeFile(t, r.Root, "run.sh", []byte("#!/bin/sh\necho ran \"$0\"\n"), 0o755)
	// The test's own working directory is the package directory, which has
	// no run.sh: only resolution against Root can find it.
	res := runGuarded(t, t.Context(), r, required("rel", "./run.sh"))
	if res.Status != report.StatusOK || !strings.HasPrefix(res.Stdout, "ran ") {
		t.Errorf("RunCheck(./run.sh) = %q (%s), stdout %q, want ok", res.Status, res.Error, res.Stdout)
	}
}

// pattern returns n bytes of distinct-looking text.
func pattern(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	return b.Bytes()[:n]
}

func TestOutputTail(t *testing.T) {
	t.Parallel()
	big, exact, over := pattern(100000), pattern(OutputTail), pattern(OutputTail+1)
	tests := []struct {
		name             string
		script           string
		stdout, stderr   []byte
		outTrunc, errTrn bool
	}{
		{"100kB stdout", "cat big", big[len(big)-OutputTail:], nil, true, false},
		{"exactly the limit", "cat exact", exact, nil, false, false},
		{"one byte over", "cat over", over[1:], nil, true, false},
		{"100kB stderr", "cat small; cat big >&2", []byte("small"), big[len(big)-OutputTail:], false, true},
		{"both", "cat big; cat exact >&2", big[len(big)-OutputTail:], exact, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			writeFile(t, r.Root, "big", big, 0o644)
			writeFile(t, r.Root, "exact", exact, 0o644)
			writeFile(t, r.Root, "over", over, 0o644)
			writeFile(t, r.Root, "small", []byte("small"), 0o644)
			res := runGuarded(t, t.Context(), r, required("out", sh(tc.script)...))
			if res.Status != report.StatusOK {
				t.Fatalf("RunCheck(%q) status = %q (%s), want ok", tc.script, res.Status, res.Error)
			}
			if res.Stdout != string(tc.stdout) {
				t.Errorf("RunCheck(%q) stdout: %d bytes, want the %d bytes expected", tc.script, len(res.Stdout), len(tc.stdout))
			}
			if res.Stderr != string(tc.stderr) {
				t.Errorf("RunCheck(%q) stderr: %d bytes, want the %d bytes expected", tc.script, len(res.Stderr), len(tc.stderr))
			}
			if res.StdoutTruncated != tc.outTrunc || res.StderrTruncated != tc.errTrn {
				t.Errorf("RunCheck(%q) truncated = %v, %v, want %v, %v", tc.script, res.StdoutTruncated, res.StderrTruncated, tc.outTrunc, tc.errTrn)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	c := required("slow", sh("echo started; sleep 30")...)
	// Long enough for the shell to start and echo on a loaded machine
	// (50 ms was not, with a model server busy on both cores).
	c.Timeout = 500
	res := runGuarded(t, t.Context(), r, c)
	if res.Status != report.StatusTimeout || res.Error != "Check exceeded 500ms" {
		t.Errorf("RunCheck(slow) = %q, %q, want timeout, %q", res.Status, res.Error, "Check exceeded 500ms")
	}
	if res.Returncode != nil {
		t.Errorf("RunCheck(slow) returncode = %d, want none", *res.Returncode)
	}
	if res.Stdout != "started\n" {
		t.Errorf("RunCheck(slow) stdout = %q, want the output before the timeout", res.Stdout)
	}
}

func TestTimeoutSIGKILLsAfterGrace(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	// Both the shell and its sleep ignore SIGTERM; only SIGKILL ends them
	// before the 30 s sleep would.
	c := required("stubborn", sh("trap '' TERM; sleep 30; echo survived")...)
	c.Timeout = 50
	res := runGuarded(t, t.Context(), r, c)
	if res.Status != report.StatusTimeout {
		t.Errorf("RunCheck(stubborn) status = %q, want timeout", res.Status)
	}
	// SIGTERM came first and was given its grace before SIGKILL.
	if min := c.Timeout + int(killGrace.Milliseconds()) - 100; res.DurationMS < int64(min) {
		t.Errorf("RunCheck(stubborn) duration = %dms, want at least %dms (timeout + SIGTERM grace)", res.DurationMS, min)
	}
	if strings.Contains(res.Stdout, "survived") {
		t.Errorf("RunCheck(stubborn) stdout = %q: the check survived", res.Stdout)
	}
}

// grandchild is a script fragment that starts a background process which
// writes marker after 1 s and then keeps flow's pipes open for 30 s.
func grandchild(marker string) string {
	return fmt.Sprintf("(sleep 1; touch %s; sleep 30) & ", marker)
}

// assertNoLateMarker waits long enough for an orphaned grandchild to have
// written marker, and fails if it did.
func assertNoLateMarker(t *testing.T, marker string) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	if exists(t, marker) {
		t.Errorf("%s was written after the check ended: a grandchild outlived it", filepath.Base(marker))
	}
}

// TestGrandchildScriptControl shows that the grandchild fragment does write
// its marker when nothing kills it, so the tests below can fail.
func TestGrandchildScriptControl(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	marker := filepath.Join(root, "marker")
	cmd := exec.Command("sh", "-c", "(sleep 1; touch marker) & exit 0")
	cmd.Dir = root
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, marker) {
		t.Fatalf("an unsupervised grandchild did not write its marker: the grandchild tests prove nothing")
	}
}

func TestGrandchildKilled(t *testing.T) {
	t.Parallel()
	t.Run("after timeout", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t)
		c := required("c", sh(grandchild("marker")+"sleep 30")...)
		c.Timeout = 50
		if res := runGuarded(t, t.Context(), r, c); res.Status != report.StatusTimeout {
			t.Errorf("RunCheck = %q, want timeout", res.Status)
		}
		assertNoLateMarker(t, filepath.Join(r.Root, "marker"))
	})
	t.Run("after normal exit", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t)
		// The grandchild holds the pipes for 31 s: the check can only
		// return within guard if flow kills the group instead of waiting
		// for EOF.
		res := runGuarded(t, t.Context(), r, required("c", sh(grandchild("marker")+"echo parent; exit 0")...))
		if res.Status != report.StatusOK || res.Stdout != "parent\n" {
			t.Errorf("RunCheck = %q (%s), stdout %q, want ok, %q", res.Status, res.Error, res.Stdout, "parent\n")
		}
		assertNoLateMarker(t, filepath.Join(r.Root, "marker"))
	})
	t.Run("after cancellation", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		r := newRunner(t,
			required("first", sh("touch started; "+grandchild("marker")+"sleep 30")...),
			required("second", "touch", "marker2"),
		)
		go func() {
			if waitFor(t, filepath.Join(r.Root, "started")) {
				cancel()
			}
		}()
		done := make(chan report.CheckReport, 1)
		go func() { done <- r.Run(ctx, "") }()
		var rep report.CheckReport
		select {
		case rep = <-done:
		case <-time.After(guard):
			t.Fatalf("Run did not return within %v of cancellation", guard)
		}
		if rep.Status != report.StatusCancelled || rep.Verified {
			t.Errorf("Run status = %q, verified %v, want cancelled, false", rep.Status, rep.Verified)
		}
		if len(rep.Checks) != 2 {
			t.Fatalf("Run returned %d results, want 2", len(rep.Checks))
		}
		for _, res := range rep.Checks {
			if res.Status != report.StatusCancelled || res.Error != "check cancelled" {
				t.Errorf("result %s = %q, %q, want cancelled, %q", res.Name, res.Status, res.Error, "check cancelled")
			}
		}
		assertNoLateMarker(t, filepath.Join(r.Root, "marker"))
		if exists(t, filepath.Join(r.Root, "marker2")) {
			t.Errorf("the check after the cancelled one was executed")
		}
	})
}

func TestCancelledBeforeStartExecutesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := newRunner(t, required("a", "touch", "marker"))
	rep := r.Run(ctx, "")
	if rep.Status != report.StatusCancelled || rep.Checks[0].Status != report.StatusCancelled {
		t.Errorf("Run(cancelled ctx) = %q with check %q, want cancelled, cancelled", rep.Status, rep.Checks[0].Status)
	}
	if exists(t, filepath.Join(r.Root, "marker")) {
		t.Errorf("Run(cancelled ctx) executed the check")
	}
}

func TestEnvAllowlist(t *testing.T) {
	t.Setenv("FLOW_CHECK_TEST_FOO", "foo")
	t.Setenv("FLOW_CHECK_TEST_BAR", "bar")
	script := `echo "${FLOW_CHECK_TEST_FOO-unset} ${FLOW_CHECK_TEST_BAR-unset}"`
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"nil inherits", nil, "foo bar\n"},
		{"allowlist", []string{"FLOW_CHECK_TEST_FOO"}, "foo unset\n"},
		{"allowlist with unset name", []string{"FLOW_CHECK_TEST_BAR", "FLOW_CHECK_TEST_NOPE"}, "unset bar\n"},
		{"empty allowlist", []string{}, "unset unset\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			c := required("env", sh(script)...)
			c.Env = tc.env
			res := runGuarded(t, t.Context(), r, c)
			if res.Stdout != tc.want {
				t.Errorf("RunCheck with Env %q: stdout = %q (%s %s), want %q", tc.env, res.Stdout, res.Status, res.Error, tc.want)
			}
		})
	}
}

func TestEnvForDeduplicates(t *testing.T) {
	t.Setenv("FLOW_CHECK_TEST_DUP", "x")
	got := envFor([]string{"FLOW_CHECK_TEST_DUP", "FLOW_CHECK_TEST_DUP"})
	if len(got) != 1 || got[0] != "FLOW_CHECK_TEST_DUP=x" {
		t.Errorf("envFor(dup) = %q, want [FLOW_CHECK_TEST_DUP=x]", got)
	}
}

// TestDefaultTimeout checks that a non-positive configured timeout does not
// mean "time out at once".
func TestDefaultTimeout(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	c := config.Check{Name: "zero", Cmd: sh("sleep 0.1"), Required: true}
	if res := runGuarded(t, t.Context(), r, c); res.Status != report.StatusOK {
		t.Errorf("RunCheck(timeout 0) = %q (%s), want ok", res.Status, res.Error)
	}
}
