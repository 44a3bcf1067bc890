package agent

import (
	"strings"

	"flow/internal/text"
	"flow/runtime/report"
)

// reviewChecks is what the reviewer learns of the checks, in words
// (doc/design.md §6.10): which required checks failed before the change,
// with the end of their output; how every check ends after it; and what
// the host took as the evidence that the checks show the change. As one
// JSON object (status, "verified": true, the passing names) a 1.5B
// reviewer answered that the test the task names was "still failing"
// after the change had fixed it.
type reviewChecks struct {
	// Before are the required checks that failed in the baseline.
	Before []checkSummary `json:"before,omitempty"`
	// Measured is false when no baseline was taken.
	Measured bool `json:"measured"`
	// Fixed names the checks that failed before and pass now.
	Fixed []string `json:"fixed,omitempty"`
	// Now is the verification after the change.
	Now verificationSummary `json:"now"`
	// Evidence is verification.evidence; Tests, for fail_then_pass, the
	// test files that fail on the code before the change.
	Evidence string   `json:"evidence,omitempty"`
	Tests    []string `json:"tests,omitempty"`
}

// newReviewChecks bounds v and baseline (the required checks' results
// before the first edit, nil when none was taken) with l.
func newReviewChecks(v report.Verification, baseline []report.CheckResult, l limits) reviewChecks {
	s := reviewChecks{Measured: baseline != nil, Now: summariseVerification(v, l, true), Evidence: v.Evidence}
	for _, c := range baseline {
		if c.Required && (c.Status == report.StatusFailed || c.Status == report.StatusTimeout) && len(s.Before) < l.checks {
			s.Before = append(s.Before, summariseCheck(c, l))
		}
	}
	for _, c := range v.Checks {
		if c.Baseline == report.BaselineFixed {
			s.Fixed = append(s.Fixed, text.Truncate(c.Name, 64))
		}
	}
	if v.FailFirst != nil && v.FailFirst.Status == report.FailFirstFailedBefore {
		for _, t := range v.FailFirst.Tests {
			if len(s.Tests) < l.gaps {
				s.Tests = append(s.Tests, text.Truncate(t, l.text))
			}
		}
	}
	return s
}

// promptText is the checks as the reviewer reads them: before the
// change, after it, and what shows the change.
func (s reviewChecks) promptText() string {
	var b strings.Builder
	switch {
	case len(s.Before) > 0:
		b.WriteString("Before the change:\n")
		b.WriteString(checkList(s.Before).promptText())
	case s.Measured:
		b.WriteString("Before the change, every required check passed.\n")
	}
	b.WriteString("\nAfter the change:")
	v := s.Now
	if len(v.FailingChecks) == 0 && len(v.PassedChecks) > 0 {
		b.WriteString(" every check passes: " + strings.Join(v.PassedChecks, ", ") + ".\n")
	} else {
		b.WriteString("\n")
		b.WriteString(checkList(v.FailingChecks).promptText())
		if len(v.PassedChecks) > 0 {
			b.WriteString("Checks that pass: " + strings.Join(v.PassedChecks, ", ") + ".\n")
		}
	}
	switch s.Evidence {
	case report.EvidenceFixed:
		if len(s.Fixed) == 0 {
			break
		}
		b.WriteString(quoteList(s.Fixed) + " failed before the change and " + verbFor(s.Fixed, "passes", "pass") + " now.\n")
	case report.EvidenceFailThenPass:
		b.WriteString("The tests this run added or changed")
		if len(s.Tests) > 0 {
			b.WriteString(" (" + strings.Join(s.Tests, ", ") + ")")
		}
		b.WriteString(" fail on the code as it was before the change and pass on the new code.\n")
	case report.EvidenceBehaviourPreserving:
		b.WriteString("The operator declared that this task changes no behaviour: nothing that passed before fails now.\n")
	}
	if len(v.Covered) > 0 {
		files := make([]string, len(v.Covered))
		for i, c := range v.Covered {
			files[i] = c.Path
			if len(c.Checks) > 0 {
				files[i] += " (" + strings.Join(c.Checks, ", ") + ")"
			}
		}
		b.WriteString("Static analysis covers the changed files: " + strings.Join(files, ", ") + ".\n")
	}
	v.writeGaps(&b)
	return b.String()
}

// verbFor is one when names has one element, many otherwise.
func verbFor(names []string, one, many string) string {
	if len(names) == 1 {
		return one
	}
	return many
}
