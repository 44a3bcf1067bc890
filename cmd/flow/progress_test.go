package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"flow/runtime/diff"
)

// TestEditHunks: an edit's diff in the progress stream is its hunks without
// the file header, indented under the edit line, coloured on request and
// bounded with a note of what was left out.
func TestEditHunks(t *testing.T) {
	d := diff.File("calc.go", []byte("package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"),
		[]byte("package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"), true, true, 0)
	got := editHunks(d, 24, false)
	want := "           @@ -1,5 +1,5 @@\n           package calc\n            \n           func Add(a, b int) int {\n           -\treturn a - b\n           +\treturn a + b\n           }\n"
	want = strings.ReplaceAll(want, "           package", "            package")
	want = strings.ReplaceAll(want, "           func", "            func")
	want = strings.ReplaceAll(want, "           }", "            }")
	if got != want {
		t.Errorf("editHunks() =\n%q\nwant\n%q", got, want)
	}
	if c := editHunks(d, 24, true); !strings.Contains(c, "\x1b[31m-\treturn a - b\x1b[0m") || !strings.Contains(c, "\x1b[32m+\treturn a + b\x1b[0m") {
		t.Errorf("coloured hunks lack red and green lines:\n%q", c)
	}

	var before, after strings.Builder
	for i := range 100 {
		fmt.Fprintf(&before, "line %d\n", i)
		fmt.Fprintf(&after, "LINE %d\n", i)
	}
	big := diff.File("big.txt", []byte(before.String()), []byte(after.String()), true, true, 0)
	out := editHunks(big, 10, false)
	if n := strings.Count(out, "\n"); n != 11 || !strings.HasSuffix(out, "… 191 more lines (the report's diffs have the whole change)\n") {
		t.Errorf("bounded hunks = %d lines:\n%s", n, out)
	}
	if strings.Contains(out, "--- a/") || strings.Contains(out, "+++ b/") {
		t.Errorf("hunks repeat the file header:\n%s", out)
	}
}

// TestRunPrintsOnboardingWarnings: flow run says, on stderr and before it
// starts, why its runs cannot be verified, even when stderr is a pipe.
func TestRunPrintsOnboardingWarnings(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	env := hermeticEnv(t)
	// A blank task ends the run before any model call.
	r := runFlow(t, ws, env, "run", "-w", ws, " ")
	for _, want := range []string{
		"flow: warning: No configuration file was loaded, so flow runs on its defaults with no checks: create ",
		"flow: warning: No checks are configured, so runs cannot be verified: ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("flow run stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "warning") || !strings.HasPrefix(r.stdout, `{"status":"error",`) ||
		!strings.Contains(r.stdout, `"error":"The task is empty: say what to change"`) {
		t.Errorf("flow run stdout is not just the report:\n%s", r.stdout)
	}
}

// TestInterruptedMessages: an interrupt says what it left behind, and a
// check, which edits nothing, does not speak of edits.
func TestInterruptedMessages(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for cmd, want := range map[string]string{
		"run":   "flow interrupted; edits already written remain (see flow undo)\n",
		"check": "flow interrupted; the running check was stopped\n",
	} {
		var stderr, stdout bytes.Buffer
		e := &env{opts: &options{command: cmd}, stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := finish(ctx, e, nil, "", nil); code != exitInterrupted || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%s interrupted: exit %d, stderr %q, stdout %q; want %d, %q, nothing", cmd, code, stderr.String(), stdout.String(), exitInterrupted, want)
		}
	}
}
