package report

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestInterruptOf tells a signal's cancel from a client's: only a context
// cancelled with an [Interrupt] cause is an interrupt.
func TestInterruptOf(t *testing.T) {
	t.Parallel()
	if _, ok := InterruptOf(context.Background()); ok {
		t.Error("a live context is interrupted")
	}
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := InterruptOf(plain); ok {
		t.Error("a plain cancel (a client's tasks/cancel) counts as an interrupt")
	}
	other, cancelOther := context.WithCancelCause(context.Background())
	cancelOther(errors.New("server shutting down"))
	if _, ok := InterruptOf(other); ok {
		t.Error("a cancel with another cause counts as an interrupt")
	}
	parent, stop := context.WithCancelCause(context.Background())
	child, cancelChild := context.WithCancel(parent)
	defer cancelChild()
	stop(&Interrupt{Signal: "SIGTERM"})
	if in, ok := InterruptOf(child); !ok || in.Signal != "SIGTERM" {
		t.Errorf("InterruptOf(child of an interrupted context) = %v, %v; want SIGTERM", in, ok)
	}
}

// TestRunInterrupted: a cancelled run becomes interrupted with a reason
// that counts what it did and says how to undo; a finished one is kept.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	in := &Interrupt{Signal: "SIGINT"}
	cases := []struct {
		name string
		run  Run
		want string
	}{
		{"nothing written", Run{Status: StatusCancelled, RunID: "r1", Cycles: 0, ToolCalls: 1},
			"flow run was interrupted by SIGINT after 0 cycles and 1 tool call; it wrote no file"},
		{"one file", Run{Status: StatusCancelled, RunID: "r1", Cycles: 1, ToolCalls: 4, ChangedFiles: []string{"a.go"}},
			"flow run was interrupted by SIGINT after 1 cycle and 4 tool calls; the file it wrote stays unverified: flow undo r1 reverts it"},
		{"two files", Run{Status: StatusCancelled, RunID: "r1", Cycles: 2, ToolCalls: 9, ChangedFiles: []string{"a.go", "b.go"}},
			"flow run was interrupted by SIGINT after 2 cycles and 9 tool calls; the 2 files it wrote stay unverified: flow undo r1 reverts them"},
	}
	for _, tc := range cases {
		got := tc.run.Interrupted(in)
		if got.Status != StatusInterrupted || got.Verified || got.Reason != tc.want || got.Error != tc.want {
			t.Errorf("%s: Interrupted = status %q, reason %q; want interrupted, %q", tc.name, got.Status, got.Reason, tc.want)
		}
	}
	done := Run{Status: StatusOK, Verified: true, Reason: "all checks pass"}
	if got := done.Interrupted(in); got.Status != StatusOK || !got.Verified || got.Reason != done.Reason {
		t.Errorf("a run that had ended ok = %+v after the interrupt, want it unchanged", got)
	}
	c := CheckReport{Status: StatusCancelled}.Interrupted(in)
	if c.Status != StatusInterrupted || !strings.Contains(c.Reason, "interrupted by SIGINT") {
		t.Errorf("check report = %+v, want interrupted by SIGINT", c)
	}
}
