package main

import (
	"context"
	"errors"

	"flow/runtime/review"
)

// cmdReview implements `flow review [RUN]` (doc/design.md §12.7): with
// --keep or --revert it applies those decisions, with --list (or off a
// terminal) it lists the hunks, and on a terminal without them it walks
// the pending hunks one by one. A review that cannot be made as asked is
// a usage-class error: exit 2, nothing written.
func cmdReview(ctx context.Context, e *env) (any, string, error) {
	rt, err := openRuntime(e, true)
	if err != nil {
		return nil, "", err
	}
	defer rt.Close()
	svc := rt.service(nil)
	runID := ""
	if len(e.opts.args) == 1 {
		runID = e.opts.args[0]
	}
	if len(e.opts.keep)+len(e.opts.revert) == 0 && !e.opts.reviewList && !e.opts.json && isTerminal(e.stdin) && isTerminal(e.stdout) {
		return walkReview(ctx, e, svc, runID)
	}
	rep, err := svc.Review(ctx, runID, e.opts.keep, e.opts.revert)
	var in *review.InputError
	if errors.As(err, &in) {
		return nil, "", err
	}
	return rep, rep.Status, err
}
