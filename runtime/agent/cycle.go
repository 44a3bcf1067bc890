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
	cancelled    bool
}

// reason explains why a cycle did not verify, for the run report.
func (o cycleOutcome) reason() string {
	switch {
	case o.coder.Status != report.StatusOK:
		return "coder " + o.coder.Status + ": " + o.coder.Error
	case !o.verification.Verified:
		return o.verification.Reason
	case o.reviewer.Approved != nil && !*o.reviewer.Approved:
		return ReasonRejected
	case o.reviewer.Status != report.StatusOK:
		return "reviewer " + o.reviewer.Status + ": " + o.reviewer.Error
	}
	return ""
}

// cycle runs one cycle (reference §6.4): the coder; fingerprints of the
// changed files taken as soon as it finished; host verification, which
// always runs; the read-only reviewer; and a freshness check that marks the
// verification stale when a changed file moved meanwhile. The reviewer is
// skipped when the coder hit a backend failure (the run ends in error).
func (r *run) cycle(ctx context.Context, coderCtx any) cycleOutcome {
	var o cycleOutcome
	o.coder = r.role(ctx, config.RoleCoder, coderCtx)
	if o.coder.Status == report.StatusCancelled {
		o.cancelled = true
		return o
	}
	o.changed = r.changedList()
	before, fpErr := verify.Fingerprints(ctx, r.a.deps.FS, o.changed)

	r.setPhase(PhaseVerification)
	checks := r.runChecks(ctx)
	if ctx.Err() != nil {
		o.cancelled = true
	}
	// With an editor attached, the snapshot after the checks is what review
	// must leave unchanged (SPEC §12.4).
	var snap map[string]any
	var editorReason string
	if es := r.a.deps.EditorState; es != nil && !o.cancelled {
		snap, editorReason = verify.EditorSnapshot(ctx, es)
	}
	cov := verify.Coverage(ctx, o.changed, checks.Checks, r.a.deps.Editor)
	v := verify.Decide(checks, cov, before)
	if fpErr != nil {
		verify.MarkStale(&v, ReasonFingerprint+fpErr.Error())
	}
	if editorReason != "" {
		verify.MarkStale(&v, editorReason)
	}
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

	o.reviewer = r.role(ctx, config.RoleReviewer, reviewerContext(r.plan, o))
	if o.reviewer.Status == report.StatusCancelled {
		o.cancelled = true
		return o
	}
	if fpErr == nil {
		after, err := verify.Fingerprints(ctx, r.a.deps.FS, o.changed)
		stale := true
		switch {
		case err != nil:
			verify.MarkStale(&v, ReasonFingerprint+err.Error())
		case len(verify.Changed(before, after)) > 0:
			verify.MarkStale(&v, verify.ReasonStale)
		default:
			stale = false
		}
		if !stale && snap != nil {
			if reason := verify.EditorUnchanged(ctx, r.a.deps.EditorState, snap); reason != "" {
				verify.MarkStale(&v, reason)
				stale = true
			}
		}
		if stale {
			r.record(idx, v)
			r.emitVerification(v)
			o.verification = v
		}
	}
	return o
}

// runChecks runs every configured check for host verification.
func (r *run) runChecks(ctx context.Context) report.CheckReport {
	if r.checks == nil {
		return report.CheckReport{
			Status: report.StatusUnverified,
			Checks: []report.CheckResult{},
			Reason: "No named checks can run: no check runner is configured",
		}
	}
	return r.checks.Run(ctx, "")
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
