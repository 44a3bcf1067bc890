package agent

import (
	"context"
	"fmt"
	"maps"

	"flow/runtime/config"
	"flow/runtime/progress"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// cycle runs one cycle (doc/design.md §6.8): the coder; the imports of the
// Go files it changed mended; host verification,
// which always runs; the read-only reviewer; and the recheck that marks the
// verification stale when something changed underneath. What "verified"
// means is the gate's (package verify); the cycle only orders the steps
// and records what they found. The reviewer is asked only when the host's
// verification passed: not when the coder hit a backend failure (the run
// ends in error), not when no file changed (there is nothing to review),
// and not when a check, the coverage, freshness or the evidence rule
// failed (the cycle cannot verify; the reviewer is recorded as skipped).
// Nor is it asked again about files the repair left exactly as it
// rejected them: the rejection stands and the run stops.
func (r *run) cycle(ctx context.Context, coderCtx map[string]any) cycleOutcome {
	var o cycleOutcome
	o.coder = r.role(ctx, config.RoleCoder, coderCtx)
	if o.coder.Status == report.StatusCancelled {
		o.cancelled = true
		return o
	}
	r.mendImports(ctx)
	o.changed = r.changedList()
	pass := r.gate().Begin(ctx, o.changed)
	o.edits = pass.Edits()

	r.setPhase(progress.PhaseVerification)
	v := pass.Verify(ctx)
	o.cancelled = pass.Cancelled()
	idx := len(r.history)
	r.record(idx, v)
	r.checked = v.Checks
	r.result.summary = o.coder.Summary
	r.emitVerification(v)
	o.verification = v
	if o.cancelled || o.coder.Status == report.StatusError {
		return o
	}
	if len(o.changed) == 0 {
		// An empty diff does no task, and the reviewer's prompt rejects
		// it: the host says so without a model call (a small model's
		// reviewer approved the coder's claim of a change instead).
		return o
	}
	if !v.Verified {
		// The cycle cannot verify whatever the reviewer says: the repair
		// coder gets the failures instead, without a reviewer call.
		o.reviewer = r.skipRole(config.RoleReviewer, msgReviewSkipped)
		return o
	}

	files, hashed := pass.Fingerprints()
	if prev := r.rejectedBefore(files, hashed); prev != nil {
		// The repair left the files exactly as the reviewer rejected
		// them: asking again is asking the same question twice, and a
		// different answer would be chance, not evidence.
		o.reviewer = r.skipRole(config.RoleReviewer, fmt.Sprintf(msgReviewedBefore, prev.cycle))
		o.again = prev
		return o
	}
	rc := reviewerContext(o, r.baseline)
	rc[nowKey] = nowWithTask(nowReviewer, r.task)
	if d := r.diffText(ctx, o.changed); d != "" {
		rc["diffs"] = d
	}
	o.reviewer = r.role(ctx, config.RoleReviewer, rc)
	if o.reviewer.Status == report.StatusCancelled {
		o.cancelled = true
		return o
	}
	if v, stale := pass.Recheck(ctx); stale {
		r.record(idx, v)
		r.emitVerification(v)
		o.verification = v
	}
	o.verified = pass.Verified(verify.Roles{Planner: r.planner, Coder: o.coder.Role, Reviewer: o.reviewer.Role})
	if a := o.reviewer.Approved; a != nil && !*a && hashed {
		r.rejected = append(r.rejected, rejection{cycle: r.cycles, files: files, reviewer: o.reviewer.Role})
	}
	return o
}

// rejectedBefore returns the reviewer's earlier rejection of files, the
// changed files' fingerprints, if there is one; hashed: they all could be
// taken.
func (r *run) rejectedBefore(files map[string]string, hashed bool) *rejection {
	if !hashed {
		return nil
	}
	for i := range r.rejected {
		if maps.Equal(r.rejected[i].files, files) {
			prev := r.rejected[i]
			return &prev
		}
	}
	return nil
}

// gate returns the verification gate over the run's dependencies. The
// run's own check runner (built with its hooks) runs the checks.
func (r *run) gate() verify.Gate {
	d := r.deps
	g := verify.Gate{FS: d.FS, Evidence: d.Editor, Editor: d.EditorState, Guard: r.verifyGuard()}
	if r.checks != nil {
		g.Checks = r.checks
	}
	return g
}

// record stores v as the cycle's history entry idx; the last entry is the
// report's verification.
func (r *run) record(idx int, v report.Verification) {
	if idx == len(r.history) {
		r.history = append(r.history, v)
	} else {
		r.history[idx] = v
	}
}

// emitVerification sends a verification event.
func (r *run) emitVerification(v report.Verification) {
	cp := v
	r.emit(progress.Event{Kind: progress.Verification, Role: progress.PhaseVerification, Status: v.Status, Verification: &cp})
}
