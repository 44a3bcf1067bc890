package agent

import (
	"flow/internal/text"
	"flow/runtime/report"
)

// reviewerContext is the reviewer's context: the changed files and a
// bounded account of the checks before and after the change (reviewChecks;
// baseline is the run's, nil when none was taken). The task comes with
// every role's message; the diffs are added by the cycle. Neither the
// plan nor the coder's account is shown (doc/design.md §6.10): a small
// reviewer judged the coder's prose instead of the change.
func reviewerContext(o cycleOutcome, baseline []report.CheckResult) map[string]any {
	changed := o.changed
	if len(changed) > 200 {
		changed = changed[:200]
	}
	ctx := map[string]any{
		"changed_files": changed,
		"verification": fit(maxReviewerEvidence, func(l limits) any {
			return newReviewChecks(o.verification, baseline, l)
		}, func() any {
			return verificationSummary{
				Status: o.verification.Status, Verified: o.verification.Verified,
				Reason:  text.Truncate(o.verification.Reason, 200),
				Omitted: "details omitted to stay within the context budget",
			}
		}),
	}
	// Tests and check definitions are listed apart from the production
	// change, with the weakening the host found (guard.go).
	if changes := guardChanges(o.edits); len(changes) > 0 {
		ctx["test_and_check_changes"] = changeList(changes)
	}
	return ctx
}
