package agent

import (
	"context"

	"flow/runtime/config"
	"flow/runtime/report"
	"flow/runtime/verify"
)

// cycleOutcome is the result of one coder → verification → reviewer cycle.
type cycleOutcome struct {
	coder        report.Role
	reviewer     report.Role // zero when the reviewer did not run
	verification report.Verification
	changed      []string
	edits        []verify.Edit // the changed files with their pre-run content
	cancelled    bool
	verified     bool // the gate's decision: all of SPEC §8
}

// reason explains in one sentence why a cycle did not verify, for the run
// report.
func (o cycleOutcome) reason(cfg *config.Config) string {
	switch {
	case o.coder.Status != report.StatusOK:
		return roleReason(cfg, o.coder)
	case len(o.changed) == 0 && o.verification.Reason == verify.ReasonNoChange:
		return verify.ReasonNoChange
	case len(o.changed) == 0 && !o.verification.Verified && o.verification.Reason != "":
		return reasonNoChange + ", and " + lowerFirst(o.verification.Reason)
	case !o.verification.Verified:
		return o.verification.Reason
	case o.reviewer.Approved != nil && !*o.reviewer.Approved:
		return rejectedReason(o.reviewer)
	case o.reviewer.Status != report.StatusOK:
		return roleReason(cfg, o.reviewer)
	}
	return ""
}

// lowerFirst lowers the first letter of a sentence that does not start with
// a name (a capital followed by a lower-case letter).
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// cycle runs one cycle (reference §6.4): the coder; host verification,
// which always runs; the read-only reviewer; and the recheck that marks the
// verification stale when something changed underneath. What "verified"
// means is the gate's (package verify); the cycle only orders the steps
// and records what they found. The reviewer is skipped when the coder hit a
// backend failure (the run ends in error) and when no file changed (there
// is nothing to review, and the run cannot verify).
func (r *run) cycle(ctx context.Context, coderCtx map[string]any) cycleOutcome {
	var o cycleOutcome
	o.coder = r.role(ctx, config.RoleCoder, coderCtx)
	if o.coder.Status == report.StatusCancelled {
		o.cancelled = true
		return o
	}
	o.changed = r.changedList()
	pass := r.gate().Begin(ctx, o.changed)
	o.edits = pass.Edits()

	r.setPhase(PhaseVerification)
	v := pass.Verify(ctx)
	o.cancelled = pass.Cancelled()
	idx := len(r.rep.VerificationHistory)
	r.record(idx, v)
	r.rep.Checks = v.Checks
	r.rep.ChangedFiles = o.changed
	r.rep.Summary = o.coder.Summary
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

	rc := reviewerContext(r.plan, o)
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
	o.verified = pass.Verified(verify.Roles{Planner: r.planner, Coder: o.coder, Reviewer: o.reviewer})
	return o
}

// gate returns the verification gate over the run's dependencies. The
// run's own check runner (built with its hooks) runs the checks.
func (r *run) gate() verify.Gate {
	d := r.a.deps
	g := verify.Gate{FS: d.FS, Evidence: d.Editor, Editor: d.EditorState, Guard: r.verifyGuard()}
	if r.checks != nil {
		g.Checks = r.checks
	}
	return g
}

// record stores v as the cycle's history entry idx and as the report's
// current verification.
func (r *run) record(idx int, v report.Verification) {
	if idx == len(r.rep.VerificationHistory) {
		r.rep.VerificationHistory = append(r.rep.VerificationHistory, v)
	} else {
		r.rep.VerificationHistory[idx] = v
	}
	cur := v
	r.rep.Verification = &cur
}

// emitVerification sends a verification event.
func (r *run) emitVerification(v report.Verification) {
	cp := v
	r.emit(Event{Kind: EventVerification, Role: PhaseVerification, Status: v.Status, Verification: &cp})
}
