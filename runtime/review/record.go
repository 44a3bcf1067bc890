package review

import (
	"fmt"
	"strings"

	"flow/internal/text"
	"flow/runtime/report"
)

// record is the review as the run's record keeps it, with the sentence
// that keeps the host's verdict and the person's apart.
func (rv *Review) record() report.Review {
	r := report.Review{By: "person", At: rv.at}
	for _, f := range rv.files {
		for _, h := range f.hunks {
			switch rv.stateOf(h) {
			case report.HunkKept:
				r.Accepted++
			case report.HunkReverted:
				r.Rejected++
			default:
				r.Pending++
			}
		}
	}
	r.Summary = summary(rv.rep, r)
	return r
}

// summary says in one sentence whose verdict is whose, and what to do next.
func summary(rep *report.Run, r report.Review) string {
	host := "the host's verdict is unknown (the run has no report)"
	if rep != nil {
		host = hostVerdict(rep)
	}
	total := r.Accepted + r.Rejected + r.Pending
	if r.Accepted+r.Rejected == 0 {
		return fmt.Sprintf("No one has reviewed the %s yet; %s.", text.Count(total, "hunk"), host)
	}
	var parts []string
	if r.Accepted > 0 {
		parts = append(parts, fmt.Sprintf("kept %d", r.Accepted))
	}
	if r.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("reverted %d", r.Rejected))
	}
	if r.Pending > 0 {
		parts = append(parts, fmt.Sprintf("left %d pending", r.Pending))
	}
	s := fmt.Sprintf("A person %s of %s; %s, and the person's review does not change it", strings.Join(parts, ", "), text.Count(total, "hunk"), host)
	if r.Rejected > 0 {
		s += "; run flow check to see whether what remains still passes"
	}
	return s + "."
}

// hostVerdict names the host's verdict of the run.
func hostVerdict(rep *report.Run) string {
	if rep.Verified {
		return "the host verified the whole change from its checks"
	}
	return "the host's verdict stays " + rep.Status + " (from its checks)"
}

// evidenceFor is what the run's last verification says about path.
func evidenceFor(rep *report.Run, path string) report.HunkEvidence {
	ev := report.HunkEvidence{Shows: report.ShowsNone}
	if rep == nil || rep.Verification == nil {
		ev.Sentence = "The run was never verified: read the change yourself."
		return ev
	}
	v := rep.Verification
	for _, c := range v.Coverage {
		if c.Path == path {
			ev.Checks = append(ev.Checks, c.Checks...)
		}
	}
	if v.Verified && showsFile(v, path) {
		ev.Shows = v.Evidence
	}
	ev.Sentence = evidenceSentence(ev)
	return ev
}

// showsFile reports whether v's evidence covers path: fail-then-pass
// shows the tests and the files put back for them; the other kinds show
// the whole change.
func showsFile(v *report.Verification, path string) bool {
	if v.Evidence != report.EvidenceFailThenPass || v.FailFirst == nil {
		return v.Evidence != ""
	}
	for _, p := range append(append([]string(nil), v.FailFirst.Tests...), v.FailFirst.Restored...) {
		if p == path {
			return true
		}
	}
	return false
}

// evidenceSentence says ev for a person.
func evidenceSentence(ev report.HunkEvidence) string {
	checks := strings.Join(ev.Checks, ", ")
	switch ev.Shows {
	case report.EvidenceFixed:
		return "A check that failed before the run passes now (fixed)."
	case report.EvidenceFailThenPass:
		return "The run's tests fail on the old code and pass on the new (fail_then_pass)."
	case report.EvidenceBehaviourPreserving:
		return "The operator said the task changes no behaviour, and nothing that passed fails (behaviour_preserving)."
	}
	if checks != "" {
		return "Covered by " + checks + ", but no check shows this change: read it yourself."
	}
	return "No check covers this file: read the change yourself."
}
