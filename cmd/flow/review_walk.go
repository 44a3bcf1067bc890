package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"flow/cmd/flow/internal/human"
	"flow/runtime/agent"
	"flow/runtime/report"
	"flow/runtime/review"
)

// reviewHelp is the walk's `?` (and an unknown answer's) text.
const reviewHelp = `y - keep this hunk
n - revert this hunk (its old lines go back)
a - keep this hunk and the rest of this file's
d - revert this hunk and the rest of this file's
q - stop; the hunks not answered stay pending
? - this help`

// walkReview walks the run's pending hunks on a terminal as `git add -p`
// does: each hunk with its file's evidence, then a question. Every answer
// is applied at once, as `flow review --keep/--revert` would (each under
// the workspace lock), so stopping anywhere loses nothing. It returns the
// review as it stands at the end.
func walkReview(ctx context.Context, e *env, svc *agent.Service, runID string) (any, string, error) {
	rep, err := svc.Review(ctx, runID, nil, nil)
	if err != nil || rep.Status != report.StatusOK {
		return rep, rep.Status, err
	}
	runID = rep.RunID
	var pending []report.Hunk
	for _, h := range rep.Hunks {
		if h.State == report.HunkPending {
			pending = append(pending, h)
		}
	}
	w := &reviewWalk{e: e, svc: svc, runID: runID, in: bufio.NewReader(e.stdin), rest: map[string]string{}}
	for i, h := range pending {
		if !w.hunk(ctx, h, i+1, len(pending)) {
			break
		}
	}
	rep, err = svc.Review(ctx, runID, nil, nil)
	var in *review.InputError
	if errors.As(err, &in) {
		return nil, "", err
	}
	return rep, rep.Status, err
}

// reviewWalk is the state of one walk.
type reviewWalk struct {
	e     *env
	svc   *agent.Service
	runID string
	in    *bufio.Reader
	// rest maps a file to the decision its remaining hunks get (a, d).
	rest map[string]string
}

// hunk shows h and applies the answer; it returns false to stop.
func (w *reviewWalk) hunk(ctx context.Context, h report.Hunk, n, of int) bool {
	if d := w.rest[h.Path]; d != "" {
		w.apply(ctx, h, d)
		return true
	}
	_ = human.RenderHunk(w.e.stdout, h, n, of, human.Options{Color: w.e.color()})
	for {
		fmt.Fprintf(w.e.stdout, "(%d/%d) Keep this hunk [y,n,a,d,q,?]? ", n, of)
		line, err := w.in.ReadString('\n')
		answer := strings.TrimSpace(line)
		if err != nil && answer == "" {
			fmt.Fprintln(w.e.stdout)
			return false // end of input: the rest stays pending
		}
		switch answer {
		case "y", "n":
			w.apply(ctx, h, answer)
			return true
		case "a", "d":
			w.rest[h.Path] = map[string]string{"a": "y", "d": "n"}[answer]
			w.apply(ctx, h, w.rest[h.Path])
			return true
		case "q":
			return false
		}
		fmt.Fprintln(w.e.stdout, reviewHelp)
	}
}

// apply keeps (y) or reverts (n) h and says what happened in one line.
func (w *reviewWalk) apply(ctx context.Context, h report.Hunk, answer string) {
	var keep, revert []string
	verb := "kept"
	if answer == "y" {
		keep = []string{h.ID}
	} else {
		revert, verb = []string{h.ID}, "reverted"
	}
	rep, err := w.svc.Review(ctx, w.runID, keep, revert)
	switch {
	case err != nil:
		fmt.Fprintf(w.e.stdout, "  ✗ %s: %v\n", h.ID, err)
	case rep.Status != report.StatusOK:
		reason := rep.Message
		if len(rep.Conflicts) > 0 {
			reason = rep.Conflicts[len(rep.Conflicts)-1].Reason
		}
		fmt.Fprintf(w.e.stdout, "  ✗ %s not %s: %s\n", h.ID, verb, reason)
	default:
		fmt.Fprintf(w.e.stdout, "  %s %s (%s)\n", verb, h.ID, h.Path)
	}
}
