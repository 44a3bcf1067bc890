package agent

import (
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/config"
	"flow/runtime/report"
)

// The run's reasons: one sentence a person can act on for every way a run
// ends without being verified. A report that is not ok carries it as both
// its reason and its error (MCP hosts show the error). The roles keep the
// reference's fixed messages in their own error fields; these sentences
// name the role and what to do.
const (
	// reasonNoChange leads when the coder changed nothing.
	reasonNoChange = "The coder made no change"
)

// rejectedReason is the sentence of a reviewer's rejection: its first issue,
// or its summary without issues.
func rejectedReason(st report.Role) string {
	for _, is := range st.Issues {
		if s := strings.TrimSpace(is); s != "" {
			return "The reviewer rejected the change: " + text.OneLine(s, 300)
		}
	}
	if s := strings.TrimSpace(st.Summary); s != "" {
		return "The reviewer rejected the change: " + text.OneLine(s, 300)
	}
	return ReasonRejected
}

// advisoryNote adds to a rejection's reason what an advisory reviewer's
// word is worth (verify.reviewer = "advisory", doc/design.md §8.9).
func advisoryNote(cfg *config.Config, reason string) string {
	if !cfg.Verify.ReviewerIsAdvisory() {
		return reason
	}
	return reason + " (the reviewer is advisory, verify.reviewer, so the run is unverified, not failed: read its issues and the diff)"
}

// rejectedAgainReason is the reason of a run whose repair gave back the
// change the reviewer (its verdict: rv) rejected in an earlier cycle.
func rejectedAgainReason(cycle int, rv report.Role) string {
	return fmt.Sprintf("The repair left the files as they were when the reviewer rejected them in cycle %d, so the run stopped: %s; "+
		"read the diff, and run again with a task that says more if the change is wrong", cycle, text.LowerFirst(rejectedReason(rv)))
}

// invalidTaskReason is the sentence of a task that cannot run.
func invalidTaskReason(cfg *config.Config, task string) string {
	if strings.TrimSpace(task) == "" {
		return "The task is empty: say what to change"
	}
	return fmt.Sprintf("The task is longer than agent.max_task_chars (%d characters): shorten it or raise the limit", cfg.Agent.MaxTaskChars)
}

// settle makes the report's reason and error agree: a report that is not
// ok has a sentence in both (the reason when there is one, else the
// error); an ok report has neither.
func settle(rep *report.Run) {
	if rep.Status == report.StatusOK {
		rep.Reason, rep.Error = "", ""
		return
	}
	if rep.Reason == "" {
		rep.Reason = rep.Error
	}
	if rep.Reason == "" {
		rep.Reason = "The run ended " + rep.Status
	}
	rep.Error = rep.Reason
}

// withReviewer stamps the reviewer's standing on rep and, when its
// measurement says it does not discriminate and it gave a verdict in this
// run, the sentence every front end shows next to the verdict
// (doc/design.md §8.10): its word is worth no more than a verdict that
// ignores the change, whichever way it went.
func withReviewer(rep report.Run, st report.ReviewerStanding) report.Run {
	if st.Measured != nil && !st.Measured.Discriminates {
		for _, r := range rep.Roles {
			if r.Role == config.RoleReviewer && r.Approved != nil {
				st.Warning = undiscriminating(st.Measured)
			}
		}
	}
	rep.Reviewer = &st
	return rep
}

// undiscriminating is the sentence of a reviewer whose measurement says
// it does not tell right from wrong.
func undiscriminating(m *report.ReviewerMeasured) string {
	return fmt.Sprintf("The reviewer's verdict carries little weight: flow doctor --reviewer measured trust %s + approval %s, below the %d%% of a reviewer that tells right from wrong.",
		pct(m.TrustPct), pct(m.ApprovalPct), report.DiscriminatesAt)
}

// pct prints a measured percentage ("n/a" for -1).
func pct(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", v)
}
