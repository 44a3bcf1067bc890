package report

import (
	"context"
	"errors"
	"fmt"
)

// StatusInterrupted is a run or a check that a signal to the flow process
// (SIGINT, SIGTERM) stopped, as opposed to one a client cancelled
// (doc/design.md §6.13).
const StatusInterrupted = "interrupted"

// Interrupt is the cause of a context that a front end cancelled because
// the process received Signal ("SIGINT", "SIGTERM").
type Interrupt struct{ Signal string }

func (i *Interrupt) Error() string { return "flow received " + i.Signal }

// InterruptOf returns the signal that cancelled ctx, when one did.
func InterruptOf(ctx context.Context) (*Interrupt, bool) {
	var in *Interrupt
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &in) {
		return nil, false
	}
	return in, true
}

// Interrupted returns the run's report as stopped by in: status
// interrupted, not verified, and a reason that says what the run did so
// far and how to revert it. A run that had already ended keeps its status.
func (r Run) Interrupted(in *Interrupt) Run {
	if r.Status != StatusCancelled {
		return r
	}
	r.Status, r.Verified = StatusInterrupted, false
	done := fmt.Sprintf("flow run was interrupted by %s after %s and %s", in.Signal, plural(r.Cycles, "cycle"), plural(r.ToolCalls, "tool call"))
	wrote, them := fmt.Sprintf("the %s it wrote stay", plural(len(r.ChangedFiles), "file")), "them"
	if len(r.ChangedFiles) == 1 {
		wrote, them = "the file it wrote stays", "it"
	}
	switch {
	case len(r.ChangedFiles) == 0:
		r.Reason = done + "; it wrote no file"
	case r.RunID != "":
		r.Reason = fmt.Sprintf("%s; %s unverified: flow undo %s reverts %s", done, wrote, r.RunID, them)
	default:
		r.Reason = fmt.Sprintf("%s; %s unverified", done, wrote)
	}
	r.Error = r.Reason
	return r
}

// Interrupted returns the check report as stopped by in.
func (c CheckReport) Interrupted(in *Interrupt) CheckReport {
	if c.Status != StatusCancelled {
		return c
	}
	c.Status, c.Verified = StatusInterrupted, false
	c.Reason = fmt.Sprintf("flow check was interrupted by %s; the running check was stopped and the rest did not run", in.Signal)
	c.Error = c.Reason
	return c
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
